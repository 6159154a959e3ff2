#include "executor/cuda_backend.hpp"

#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

#include "executor/cpu_backend.hpp"
#include "executor/replica_lookup.hpp"
#include "executor/training_data.hpp"
#include "kernels/cuda/cuda_error.hpp"
#include "kernels/cuda/device_ops.hpp"
#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

// Which GPU executor device `device` runs on, with the count checked.
int pick_gpu(int device) {
  std::string why;
  const int count = cuda_device_count(&why);
  if (count == 0) throw CudaError("cuda: no CUDA device for executor device " + std::to_string(device) + ": " + why);
  return device % count;
}

}  // namespace

std::int64_t CudaBackend::Cache::bytes() const {
  std::int64_t b = head.bytes() + static_cast<std::int64_t>(ids.size()) * 4 + embed_dx.buf.bytes();
  for (const auto& c : blocks) b += c.bytes();
  return b;
}

CudaBackend::CudaBackend(int device, const ModelSetup& setup, CudaBackendOptions options)
    : setup_(setup), config_(executor_block_config(setup)), options_(options), device_(device) {
  check_executor_model(setup.model, setup.micro_batch_size, setup.microbatch_split);
  check_block_config(config_);
  gpu_ = pick_gpu(device);
  if (const auto& part = options_.partition) {
    PIPESIM_ASSERT(part->device() == gpu_);
    ctx_ = std::make_shared<CudaContext>(gpu_, part->stream(options_.partition_group), part);
  } else {
    ctx_ = std::make_shared<CudaContext>(gpu_);
  }
  keep_pool_memory(gpu_);  // every op ends with a synchronize: keep the pool's memory mapped
  op_start_ = std::make_unique<CudaEvent>(true, "op timing");
  op_end_ = std::make_unique<CudaEvent>(true, "op timing");
}

CudaBackend::~CudaBackend() {
  // Buffers are freed stream-ordered on this GPU; bind it on the destroying thread.
  if (cudaSetDevice(gpu_) != cudaSuccess) (void)cudaGetLastError();
}

void CudaBackend::bind() const {
  cuda_check(cudaSetDevice(gpu_), "cudaSetDevice", "executor device " + std::to_string(device_));
}

void CudaBackend::create_replica(const ReplicaSpec& spec) {
  bind();
  Replica r;
  r.spec = spec;
  r.graphs = std::make_unique<CudaStageGraphs>(*ctx_, options_.cuda_graphs);
  // The CPU backend's initialisation, number for number (cpu_backend.cpp).
  std::uint64_t seed_state = setup_.seed;
  const std::uint64_t base = splitmix64(seed_state);
  if (spec.layout.blocks > 0) {
    std::vector<BlockParams<float>> params;
    for (int i = 0; i < spec.layout.blocks; ++i) {
      std::uint64_t state = base + static_cast<std::uint64_t>(spec.layout.first_block + i);
      params.push_back(init_block_params<float>(config_, splitmix64(state)));
    }
    r.current.blocks.emplace(*ctx_, params, options_.precision);
  }
  const int vocab = setup_.model.vocab;
  if (spec.layout.embedding)
    r.current.embedding.emplace(*ctx_, config_, init_embedding<float>(config_, vocab, base ^ 0xE3B0C44298FC1C14ULL));
  if (spec.layout.head)
    r.current.head.emplace(*ctx_, config_, init_lm_head<float>(config_, vocab, /*tied=*/false, base ^ 0x9B71D224BD62A6E5ULL),
                           options_.precision);
  sync("create replica");
  const auto [it, inserted] = replicas_.emplace(std::pair{spec.pipeline, spec.stage}, std::move(r));
  PIPESIM_ASSERT(inserted);
  (void)it;
}

CudaBackend::Replica& CudaBackend::replica(int pipeline, int stage) { return find_replica(replicas_, pipeline, stage); }

const CudaBackend::Replica& CudaBackend::replica(int pipeline, int stage) const {
  return find_replica(replicas_, pipeline, stage);
}

const CudaBackend::Weights& CudaBackend::weights(const Replica& r, std::int32_t version, const Op& op) const {
  return weights_of(r, version, op);
}

CudaBackend::Cache& CudaBackend::cache(Replica& r, const Op& op, bool create) { return cache_of(r, op, create); }

int CudaBackend::take_slot(Replica& r) {
  std::size_t s = 0;
  while (s < r.slot_used.size() && r.slot_used[s]) ++s;
  if (s == r.slot_used.size()) r.slot_used.push_back(false);
  r.slot_used[s] = true;
  return static_cast<int>(s);
}

void CudaBackend::wait_for(const Payload* p, const std::string& op) {
  const auto* cuda = dynamic_cast<const CudaPayload*>(p);
  if (cuda != nullptr && cuda->ready) cuda->ready->wait_on(ctx_->stream(), op + ": wait for the message");
}

void CudaBackend::start_op(const Op& op) { op_start_->record(ctx_->stream(), to_string(op)); }

void CudaBackend::finish_op(const Op& op) {
  const std::string what = to_string(op);
  op_end_->record(ctx_->stream(), what);
  cuda_check(cudaEventSynchronize(op_end_->get()), "cudaEventSynchronize", what);
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, op_start_->get(), op_end_->get()), "cudaEventElapsedTime", what);
  device_ns_ += std::llround(static_cast<double>(ms) * 1e6);
  ++timed_ops_;
}

DeviceMatrix CudaBackend::copy_matrix(const DeviceMatrix& from, int from_gpu, const std::string& op) {
  DeviceMatrix to;
  to.rows = from.rows;
  to.cols = from.cols;
  to.buf = DeviceBuffer<float>(from.buf.size(), ctx_->stream(), op);
  if (from.buf.empty()) return to;
  const auto bytes = static_cast<std::size_t>(from.buf.bytes());
  if (from_gpu == gpu_)
    cuda_check(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, ctx_->stream()),
               "cudaMemcpyAsync", op);
  else
    cuda_check(cudaMemcpyPeerAsync(to.data(), gpu_, from.data(), from_gpu, bytes, ctx_->stream()), "cudaMemcpyPeerAsync",
               op);
  return to;
}

const DeviceMatrix& CudaBackend::local(const Payload* p, const Op& op, const char* what, DeviceMatrix& tmp) {
  const auto* cuda = dynamic_cast<const CudaPayload*>(p);
  if (cuda == nullptr)
    throw InputError(to_string(op) + ": the " + std::string(what) + " is missing or not a CUDA tensor");
  if (cuda->owner->device() == gpu_) return cuda->matrix;
  tmp = copy_matrix(cuda->matrix, cuda->owner->device(), to_string(op) + ": " + what + " to this GPU");
  return tmp;
}

std::unique_ptr<Payload> CudaBackend::forward(const OpArgs& a, const Payload* input, double* loss) {
  bind();
  Replica& r = replica(a.op.pipeline, a.op.stage);
  const Weights& w = weights(r, a.version, a.op);
  if (r.caches.count(a.op.microbatch)) throw InputError(to_string(a.op) + ": this micro-batch's forward already ran");
  Cache& c = cache(r, a.op, true);
  c.slot = take_slot(r);
  wait_for(input, to_string(a.op));
  start_op(a.op);
  const std::int64_t before = c.bytes();
  std::optional<MicrobatchData> data;
  if (w.embedding || w.head)
    data = training_microbatch(setup_, a.op.microbatch, config_.batch);
  DeviceMatrix tmp, x;
  const DeviceMatrix* in = nullptr;
  if (w.embedding) {
    x = w.embedding->forward(data->ids);
    c.ids = data->ids;
    in = &x;
  } else {
    in = &local(input, a.op, "input activation", tmp);
  }
  if (w.blocks) {
    x = r.graphs->forward(*w.blocks, *in, c.blocks, c.slot);
    in = &x;
  }
  c.forward_done = true;
  std::unique_ptr<Payload> out;
  if (w.head) {
    const float l = w.head->forward(*in, data->targets, c.head);  // synchronises
    if (loss) *loss = l;
  } else {
    out = wrap(in == &x ? std::move(x) : copy_matrix(*in, gpu_, "forward: pass the input on"));
  }
  finish_op(a.op);
  account(before, c.bytes());
  return out;
}

std::unique_ptr<Payload> CudaBackend::backward_input(const OpArgs& a, const Payload* grad) {
  bind();
  Replica& r = replica(a.op.pipeline, a.op.stage);
  const Weights& w = weights(r, a.version, a.op);
  Cache& c = cache(r, a.op, false);
  if (!c.forward_done || c.input_grad_done)
    throw InputError(to_string(a.op) + ": the input gradient of this micro-batch was already computed");
  wait_for(grad, to_string(a.op));
  start_op(a.op);
  const std::int64_t before = c.bytes();
  DeviceMatrix tmp, d;
  const DeviceMatrix* g = nullptr;
  if (w.head) {
    d = w.head->backward_input(c.head);
    g = &d;
  } else {
    g = &local(grad, a.op, "output gradient", tmp);
  }
  if (w.blocks) {
    d = r.graphs->backward_input(*w.blocks, *g, c.blocks, c.slot);
    g = &d;
  }
  if (g != &d) d = copy_matrix(*g, gpu_, "backward_input: pass the gradient on");
  c.input_grad_done = true;
  std::unique_ptr<Payload> out;
  if (r.spec.layout.embedding)
    c.embed_dx = std::move(d);  // the embedding's W needs it; nothing goes upstream
  else
    out = wrap(std::move(d));
  finish_op(a.op);
  account(before, c.bytes());
  return out;
}

void CudaBackend::backward_weight(const OpArgs& a) {
  bind();
  Replica& r = replica(a.op.pipeline, a.op.stage);
  Cache& c = cache(r, a.op, false);
  if (!c.input_grad_done) throw InputError(to_string(a.op) + ": the weight gradient needs the input gradient (I) first");
  start_op(a.op);
  const std::int64_t before = c.bytes();
  // Into the current weights' gradient, whichever version F and I used (as the CPU backend).
  if (r.current.blocks) r.graphs->backward_weight(*r.current.blocks, c.blocks, c.slot);
  if (r.current.head) r.current.head->backward_weight(c.head);
  if (r.current.embedding) r.current.embedding->backward_weight(c.ids, c.embed_dx);
  ++r.contributions;
  r.slot_used[static_cast<std::size_t>(c.slot)] = false;
  r.caches.erase(a.op.microbatch);
  finish_op(a.op);
  account(before, 0);
}

std::unique_ptr<Payload> CudaBackend::backward(const OpArgs& a, const Payload* grad) {
  std::unique_ptr<Payload> out = backward_input(a, grad);
  backward_weight(a);
  return out;
}

void CudaBackend::optimizer_step(int pipeline, int stage) {
  bind();
  Replica& r = replica(pipeline, stage);
  Weights& w = r.current;
  if (r.contributions > 1) {
    const float scale = 1.0f / static_cast<float>(r.contributions);
    if (w.blocks) w.blocks->scale_grads(scale);
    if (w.embedding) w.embedding->params().scale_grads(scale);
    if (w.head) w.head->params().scale_grads(scale);
  }
  const OptimizerConfig& o = setup_.optimizer;
  AdamConfig adam;
  adam.lr = o.lr;
  auto step = [&](auto& target) {
    if (o.kind == OptimizerKind::Sgd)
      target.sgd_step(o.lr);
    else
      target.adam_step(adam);
    target.zero_grads();
  };
  if (w.blocks) step(*w.blocks);
  if (w.embedding) step(w.embedding->params());
  if (w.head) step(w.head->params());
  r.contributions = 0;
  ++w.version;
  sync("optimizer step");
}

// The flat layout of cpu_backend.cpp: embedding tokens and positions, blocks, head gain,
// bias and weight. Calls `f(device pointer, count)` for each gradient tensor in that order.
template <class F>
void CudaBackend::for_each_gradient(Weights& w, const BlockConfig& config, F&& f) {
  if (w.embedding) f(w.embedding->params().grad(), w.embedding->params().size());
  if (w.blocks)
    for (int i = 0; i < w.blocks->blocks(); ++i) f(w.blocks->block(i).grad_data(), block_parameter_count(config));
  if (w.head) f(w.head->params().grad(), w.head->params().size());
}

namespace {
template <class G>  // GradientBuffer or const GradientBuffer
auto& cuda_gradients(G& g) {
  auto* c = dynamic_cast<std::conditional_t<std::is_const_v<G>, const CudaGradients, CudaGradients>*>(&g);
  if (c == nullptr) throw InputError("GradSync: a gradient from another backend reached the CUDA backend");
  return *c;
}
}  // namespace

std::unique_ptr<GradientBuffer> CudaBackend::export_gradients(int pipeline, int stage) {
  bind();
  Replica& r = replica(pipeline, stage);
  const std::string op = "GradSync export";
  std::int64_t n = 0;
  for_each_gradient(r.current, config_, [&](float*, std::int64_t count) { n += count; });
  auto out = std::make_unique<CudaGradients>(ctx_, n, op);
  out->contributions = r.contributions;
  float* at = out->values.data();
  for_each_gradient(r.current, config_, [&](float* g, std::int64_t count) {
    cuda_check(cudaMemcpyAsync(at, g, static_cast<std::size_t>(count) * sizeof(float), cudaMemcpyDeviceToDevice,
                               ctx_->stream()),
               "cudaMemcpyAsync", op);
    at += count;
  });
  sync(op);
  return out;
}

// sum += other on sum's GPU: on this backend's stream where that is its GPU (virtual devices
// of one GPU), else on the stream of the context that made `sum`; a part on another GPU is
// peer-copied over first.
void CudaBackend::add_gradients(GradientBuffer& sum, const GradientBuffer& other) {
  CudaGradients& s = cuda_gradients(sum);
  const CudaGradients& o = cuda_gradients(other);
  PIPESIM_ASSERT(s.size() == o.size());
  const std::string op = "GradSync sum";
  const int gpu = s.owner->device();
  const cudaStream_t stream = gpu == gpu_ ? ctx_->stream() : s.owner->stream();
  cuda_check(cudaSetDevice(gpu), "cudaSetDevice", op);
  const float* src = o.values.data();
  DeviceBuffer<float> tmp;
  if (o.owner->device() != gpu) {
    tmp = DeviceBuffer<float>(o.size(), stream, op);
    cuda_check(cudaMemcpyPeerAsync(tmp.data(), gpu, o.values.data(), o.owner->device(),
                                   static_cast<std::size_t>(o.values.bytes()), stream),
               "cudaMemcpyPeerAsync", op);
    src = tmp.data();
  }
  add_into(s.values.data(), src, s.size(), stream, op);
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize", op);
  tmp = DeviceBuffer<float>{};
  bind();
}

void CudaBackend::import_gradients(int pipeline, int stage, const GradientBuffer& reduced) {
  bind();
  Replica& r = replica(pipeline, stage);
  const CudaGradients& g = cuda_gradients(reduced);
  const std::string op = "GradSync import";
  const float* at = g.values.data();
  const int from = g.owner->device();
  for_each_gradient(r.current, config_, [&](float* dst, std::int64_t count) {
    const auto bytes = static_cast<std::size_t>(count) * sizeof(float);
    if (from == gpu_)
      cuda_check(cudaMemcpyAsync(dst, at, bytes, cudaMemcpyDeviceToDevice, ctx_->stream()), "cudaMemcpyAsync", op);
    else
      cuda_check(cudaMemcpyPeerAsync(dst, gpu_, at, from, bytes, ctx_->stream()), "cudaMemcpyPeerAsync", op);
    at += count;
  });
  PIPESIM_ASSERT(at == g.values.data() + g.size());
  sync(op);
  r.contributions = reduced.contributions;
}

void CudaBackend::keep_version(int pipeline, int stage) {
  bind();
  Replica& r = replica(pipeline, stage);
  Weights copy;  // a real copy, device to device
  copy.version = r.current.version;
  if (r.current.blocks) copy.blocks.emplace(r.current.blocks->weight_copy());
  if (r.current.embedding) copy.embedding.emplace(r.current.embedding->weight_copy());
  if (r.current.head) copy.head.emplace(r.current.head->weight_copy());
  r.kept.insert_or_assign(r.current.version, std::move(copy));
  sync("keep weight version");
}

void CudaBackend::drop_version(int pipeline, int stage, std::int32_t version) {
  bind();
  Replica& r = replica(pipeline, stage);
  PIPESIM_ASSERT(r.kept.erase(version) == 1);
}

int CudaBackend::versions_held() const {
  int n = 0;
  for (const auto& [key, r] : replicas_) n += 1 + static_cast<int>(r.kept.size());
  return n;
}

std::unique_ptr<Payload> CudaBackend::copy_for_send(const Payload& p) {
  bind();
  const auto* cuda = dynamic_cast<const CudaPayload*>(&p);
  if (cuda == nullptr) throw InputError("copy for send: the output is not a CUDA tensor (a CudaPayload)");
  wait_for(cuda, "copy for send");  // a message passed on: its own copy first
  auto out = std::make_unique<CudaPayload>(ctx_, copy_matrix(cuda->matrix, cuda->owner->device(), "copy for send"));
  // The receiver's stream waits for this event before it reads the copy; nobody's host does.
  out->ready = std::make_shared<CudaEvent>(false, "copy for send");
  out->ready->record(ctx_->stream(), "copy for send");
  return out;
}

int CudaBackend::activations_held() const {
  int n = 0;
  for (const auto& [key, r] : replicas_) n += static_cast<int>(r.caches.size());
  return n;
}

BackendStats CudaBackend::stats() const {
  BackendStats s;
  std::string fallback;
  for (const auto& [key, r] : replicas_) {
    s.launches += r.graphs->counts();
    if (fallback.empty()) fallback = r.graphs->fallback();
  }
  s.path = !options_.cuda_graphs ? "direct (graphs off)" : fallback.empty() ? "graphs" : "direct (fallback: " + fallback + ")";
  s.timed_ops = timed_ops_;
  s.device_ns = device_ns_;
  return s;
}

std::vector<float> CudaBackend::flat_weights(int pipeline, int stage) const {
  bind();
  const Weights& w = replica(pipeline, stage).current;
  std::vector<float> out;
  auto append = [&](const KVec<float>& v) { out.insert(out.end(), v.data(), v.data() + v.size()); };
  if (w.embedding) append(w.embedding->params().get());
  if (w.blocks)
    for (const BlockParams<float>& p : w.blocks->params()) append(p.data);
  if (w.head) append(w.head->params().get());
  return out;
}

}  // namespace pipesim
