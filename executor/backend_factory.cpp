#include "executor/backend_factory.hpp"

#include "core/error.hpp"
#include "executor/cpu_backend.hpp"
#include "executor/cuda_plugin.hpp"
#include "kernels/cpu_profile_backend.hpp"

namespace pipesim {
namespace {

[[noreturn]] void unknown_backend(const std::string& name) {
  throw InputError("--backend: expected cpu or cuda, got " + quote(name));
}

}  // namespace

int devices_per_gpu(const std::string& name, int devices) {
  if (name != "cuda" || devices <= 1) return 1;
  const int gpus = cuda_gpus();
  return (devices + gpus - 1) / gpus;
}

BackendFactory make_backend_factory(const std::string& name, const std::string& sm_partition, bool cuda_graphs) {
  if (sm_partition != "auto" && sm_partition != "on" && sm_partition != "off")
    throw InputError("--sm-partition: expected auto, on or off, got " + quote(sm_partition));
  if (name == "cpu")
    return [](int, const ModelSetup& setup, const StopFlag&) -> std::unique_ptr<ComputeBackend> {
      return std::make_unique<CpuBackend>(setup);
    };
  if (name != "cuda") unknown_backend(name);
  const int gpus = cuda_gpus();
  return cuda_plugin().backend_factory(sm_partition, cuda_graphs, gpus);
}

std::unique_ptr<ProfileBackend> make_profile_backend(const std::string& name, const std::string& clock,
                                                     int virtual_devices) {
  if (name == "cpu") {
    const std::string clock_or_default = clock.empty() ? "wall" : clock;
    if (clock_or_default != "wall" && clock_or_default != "thread-cpu")
      throw InputError("--clock: expected wall or thread-cpu, got " + quote(clock_or_default));
    if (virtual_devices != 1)
      throw InputError("--virtual-devices: the cpu backend profiles one thread (only the cuda backend splits a GPU)");
    return std::make_unique<CpuProfileBackend>(clock_or_default == "wall" ? CpuClock::Wall : CpuClock::ThreadCpu);
  }
  if (name != "cuda") unknown_backend(name);
  const std::string clock_or_default = clock.empty() ? "events" : clock;
  if (clock_or_default != "wall" && clock_or_default != "events")
    throw InputError("--clock: the cuda backend times by wall or events, got " + quote(clock_or_default));
  if (virtual_devices < 1)
    throw InputError("--virtual-devices: expected at least 1, got " + std::to_string(virtual_devices));
  const int gpus = cuda_gpus();
  return cuda_plugin().profile_backend(clock_or_default == "events", virtual_devices, gpus);
}

}  // namespace pipesim
