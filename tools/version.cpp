#include "tools/version.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <vector>

#include <sys/types.h>
#include <zlib.h>

#include "executor/cuda_plugin.hpp"
#include "tools/mpi_job.hpp"

namespace pipesim {
namespace {

// "  name    value" lines, the names padded to one width.
std::string rows(const std::vector<std::pair<std::string, std::string>>& lines) {
  std::size_t width = 0;
  for (const auto& [name, value] : lines) width = std::max(width, name.size());
  std::string out;
  for (const auto& [name, value] : lines) out += "  " + name + std::string(width - name.size() + 2, ' ') + value + "\n";
  return out;
}

std::string compiler() {
#if defined(__clang__)
  return "Clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "an unknown compiler";
#endif
}

std::string cuda_line() {
  if (!cuda_plugin_built()) return "not built (PIPESIM_CUDA=OFF): --backend cpu only";
  const std::string path = cuda_plugin_path();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "plugin built, but missing: " + path;
  return "plugin " + path + " (loaded by --backend cuda only; pipesim --check-cuda loads it)";
}

// jemalloc's control interface, weak: null where the process runs on the C library's malloc
// (a build without PIPESIM_JEMALLOC, the tests, the Python module).
extern "C" int mallctl(const char* name, void* old_value, std::size_t* old_size, void* new_value, std::size_t new_size)
    __attribute__((weak));

std::string allocator_line() {
  if (mallctl == nullptr) return "C library malloc (PIPESIM_JEMALLOC off or jemalloc not found)";
  const auto text = [](const char* name) -> std::string {  // a string-valued setting, or "unknown"
    const char* value = nullptr;
    std::size_t size = sizeof value;
    return mallctl(name, &value, &size, nullptr, 0) == 0 && value ? value : "unknown";
  };
  const std::string version = text("version");  // "5.3.0-0-g54eaed1d..."
  ssize_t decay_ms = 0;  // -1: freed pages are never handed back
  std::size_t size = sizeof decay_ms;
  const bool read = mallctl("opt.dirty_decay_ms", &decay_ms, &size, nullptr, 0) == 0;
  const std::string freed = !read            ? "unknown"
                            : decay_ms < 0   ? "kept for reuse"
                                             : "returned to the system within " + std::to_string(decay_ms) + " ms";
  return "jemalloc " + version.substr(0, version.find('-')) + ", transparent huge pages: " + text("opt.thp") +
         ", freed memory " + freed + " (tools/allocator.cpp)";
}

}  // namespace

std::string version_text() {
  std::string text = "pipesim " PIPESIM_VERSION "\n";
  const std::string type = PIPESIM_BUILD_TYPE;
  text += rows({{"build", (type.empty() ? "no build type" : type) + ", " + compiler() + ", C++20"},
                {"zlib", std::string(zlibVersion()) + " (gzip outputs)"},
                {"python", PIPESIM_PYTHON_MODULE ? "module built (python/README.md)" : "module not built"},
                {"cuda", cuda_line()},
                {"mpi", mpi_version_line()},
                {"malloc", allocator_line()}});
  text.pop_back();  // CLI11 prints the version with its own newline
  return text;
}

void check_cuda(std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  const CudaPluginApi& plugin = cuda_plugin();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const CudaRuntimeInfo info = plugin.runtime_info();
  std::vector<std::pair<std::string, std::string>> lines{
      {"plugin", cuda_plugin_path() + " (loaded in " + std::to_string(static_cast<int>(ms + 0.5)) + " ms)"},
      {"runtime", "CUDA " + info.runtime + ", cuBLAS " + info.cublas},
      {"driver", info.driver.empty() ? "none" : info.driver}};
  for (std::size_t i = 0; i < info.gpus.size(); ++i) lines.emplace_back("GPU " + std::to_string(i), info.gpus[i]);
  out << "cuda\n" << rows(lines);
  out.flush();
  cuda_gpus();  // CudaUnavailable when none is visible
}

}  // namespace pipesim
