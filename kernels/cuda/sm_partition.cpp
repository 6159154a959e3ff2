#include "kernels/cuda/sm_partition.hpp"

#include <cuda.h>

#include <string>

#include "kernels/cuda/cuda_error.hpp"

namespace pipesim {
namespace {

// The driver API functions green contexts need, looked up in the loaded driver.
struct GreenApi {
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuGetErrorName) error_name = nullptr;
  decltype(&::cuDeviceGetDevResource) get_resource = nullptr;
  decltype(&::cuDevSmResourceSplitByCount) split = nullptr;
  decltype(&::cuDevResourceGenerateDesc) generate_desc = nullptr;
  decltype(&::cuGreenCtxCreate) create = nullptr;
  decltype(&::cuGreenCtxStreamCreate) stream_create = nullptr;
  decltype(&::cuGreenCtxDestroy) destroy = nullptr;
};

template <class F>
void lookup(const char* symbol, F& fn, const std::string& op) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cuda_check(cudaGetDriverEntryPointByVersion(symbol, &p, CUDA_VERSION, cudaEnableDefault, &found),
             "cudaGetDriverEntryPointByVersion", op);
  if (found != cudaDriverEntryPointSuccess || p == nullptr)
    throw CudaError("cuda: " + op + ": the driver has no " + symbol + " (green contexts need a CUDA 12.4+ driver)");
  fn = reinterpret_cast<F>(p);
}

GreenApi load_green_api(const std::string& op) {
  GreenApi api;
  lookup("cuDeviceGet", api.device_get, op);
  lookup("cuGetErrorName", api.error_name, op);
  lookup("cuDeviceGetDevResource", api.get_resource, op);
  lookup("cuDevSmResourceSplitByCount", api.split, op);
  lookup("cuDevResourceGenerateDesc", api.generate_desc, op);
  lookup("cuGreenCtxCreate", api.create, op);
  lookup("cuGreenCtxStreamCreate", api.stream_create, op);
  lookup("cuGreenCtxDestroy", api.destroy, op);
  return api;
}

void check(const GreenApi& api, CUresult r, const char* call, const std::string& op) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (api.error_name == nullptr || api.error_name(r, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown error";
  throw CudaError("cuda: " + std::string(call) + " in " + op + ": " + name + " (" + std::to_string(static_cast<int>(r)) + ")");
}

}  // namespace

int sms_per_partition(int total, int groups, int min_size, int alignment) {
  if (total <= 0 || groups <= 0 || alignment <= 0) return 0;
  const int each = total / groups / alignment * alignment;
  return each >= min_size && each > 0 ? each : 0;
}

SmPartition::SmPartition(int device, int groups) : device_(device) {
  const std::string op = "SM partition of GPU " + std::to_string(device) + " into " + std::to_string(groups);
  if (groups < 1) throw CudaError("cuda: " + op + ": needs at least one group");
  cuda_check(cudaSetDevice(device), "cudaSetDevice", op);
  cuda_check(cudaFree(nullptr), "cudaFree(0) (runtime initialisation)", op);  // the primary context first
  const GreenApi api = load_green_api(op);
  CUdevice dev = 0;
  check(api, api.device_get(&dev, device), "cuDeviceGet", op);
  CUdevResource all{};
  check(api, api.get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource", op);
  total_sms_ = static_cast<int>(all.sm.smCount);
  sms_per_group_ = sms_per_partition(total_sms_, groups, static_cast<int>(all.sm.minSmPartitionSize),
                                     static_cast<int>(all.sm.smCoscheduledAlignment));
  if (sms_per_group_ == 0)
    throw CudaError("cuda: " + op + ": " + std::to_string(total_sms_) + " SMs do not make " + std::to_string(groups) +
                    " groups of at least " + std::to_string(all.sm.minSmPartitionSize) + " (a multiple of " +
                    std::to_string(all.sm.smCoscheduledAlignment) + ")");
  std::vector<CUdevResource> parts(static_cast<std::size_t>(groups));
  unsigned int made = static_cast<unsigned int>(groups);
  CUdevResource rest{};
  check(api, api.split(parts.data(), &made, &all, &rest, 0, static_cast<unsigned int>(sms_per_group_)),
        "cuDevSmResourceSplitByCount", op);
  if (made < static_cast<unsigned int>(groups))
    throw CudaError("cuda: " + op + ": the driver made only " + std::to_string(made) + " groups of " +
                    std::to_string(sms_per_group_) + " SMs");
  try {
    for (CUdevResource& part : parts) {
      sms_per_group_ = static_cast<int>(part.sm.smCount);  // the driver may round up; all groups are equal
      CUdevResourceDesc desc = nullptr;
      check(api, api.generate_desc(&desc, &part, 1), "cuDevResourceGenerateDesc", op);
      CUgreenCtx ctx = nullptr;
      check(api, api.create(&ctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate", op);
      contexts_.push_back(ctx);
      CUstream stream = nullptr;
      check(api, api.stream_create(&stream, ctx, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate", op);
      streams_.push_back(stream);
    }
  } catch (...) {
    for (cudaStream_t s : streams_) (void)cudaStreamDestroy(s);
    for (void* c : contexts_) (void)api.destroy(static_cast<CUgreenCtx>(c));
    throw;
  }
  destroy_ = reinterpret_cast<void*>(api.destroy);
}

SmPartition::~SmPartition() {
  for (cudaStream_t s : streams_) {
    (void)cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
  }
  const auto destroy = reinterpret_cast<decltype(&::cuGreenCtxDestroy)>(destroy_);
  for (void* c : contexts_) (void)destroy(static_cast<CUgreenCtx>(c));
}

}  // namespace pipesim
