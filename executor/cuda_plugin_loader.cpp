// The host's half of executor/cuda_plugin.hpp: finds libpipesim_cuda.so, opens it once with
// dlopen, checks that it comes from this build, and says in one line why a CUDA run cannot
// start when it cannot.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "executor/cuda_plugin.hpp"

namespace pipesim {
namespace {

constexpr const char* kUseCpu = "; use --backend cpu";

[[noreturn]] void unavailable(const std::string& why) { throw CudaUnavailable("--backend cuda: " + why + kUseCpu); }

struct Loaded {
  const CudaPluginApi* api = nullptr;
  std::string error;  // why api is null
};

#ifdef PIPESIM_CUDA_PLUGIN_DIR
Loaded load() {
  const std::string path = cuda_plugin_path();
  // RTLD_LOCAL: the plugin's copies of pipesim's libraries stay its own; RTLD_NOW: a missing
  // symbol of cuBLAS or cudart is an error here, not a crash in the middle of a run.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return {nullptr, "cannot load the CUDA plugin " + quote(path, 256) + ": " + bounded_line(why ? why : "dlopen failed")};
  }
  using Entry = const CudaPluginApi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "pipesim_cuda_plugin"));
  if (entry == nullptr) return {nullptr, quote(path, 256) + " is not a pipesim CUDA plugin (no pipesim_cuda_plugin)"};
  const CudaPluginApi* api = entry();
  // The tag is read only from a table of this layout (abi); its text names the other build.
  const bool same_abi = api != nullptr && api->abi == kCudaPluginAbi;
  if (!same_abi || api->build == nullptr || std::string(api->build) != PIPESIM_CUDA_PLUGIN_TAG)
    return {nullptr, "the CUDA plugin " + quote(path, 256) + " was built by another pipesim (" +
                         (same_abi && api->build ? quote(api->build, 128) : std::string("another plugin interface")) +
                         ", this is " + quote(PIPESIM_CUDA_PLUGIN_TAG, 128) + ")"};
  return {api, ""};
}
#endif

}  // namespace

bool cuda_plugin_built() {
#ifdef PIPESIM_CUDA_PLUGIN_DIR
  return true;
#else
  return false;
#endif
}

std::string cuda_plugin_path() {
#ifdef PIPESIM_CUDA_PLUGIN_DIR
  if (const char* env = std::getenv("PIPESIM_CUDA_PLUGIN"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::path(".") : exe.parent_path();
  const char* name = "libpipesim_cuda.so";
  if (std::filesystem::exists(dir / name, ec)) return (dir / name).string();
  return (dir / PIPESIM_CUDA_PLUGIN_DIR / name).lexically_normal().string();
#else
  return "";
#endif
}

const CudaPluginApi& cuda_plugin() {
#ifdef PIPESIM_CUDA_PLUGIN_DIR
  static const Loaded loaded = load();  // once per process; a plugin is never unloaded
  if (loaded.api == nullptr) unavailable(loaded.error);
  return *loaded.api;
#else
  unavailable("this pipesim was built without CUDA (configure with -DPIPESIM_CUDA=ON where nvcc and cuBLAS are "
              "installed, docs/gpu.md)");
#endif
}

int cuda_gpus() {
  const CudaRuntimeInfo info = cuda_plugin().runtime_info();
  if (info.gpus.empty()) unavailable("no CUDA device is visible (" + info.why_none + ")");
  return static_cast<int>(info.gpus.size());
}

}  // namespace pipesim
