#include "kernels/cuda/stage_graphs.hpp"

#include "core/error.hpp"
#include "kernels/cuda/cuda_error.hpp"

namespace pipesim {
namespace {

constexpr const char* kName[] = {"forward", "backward_input", "backward_weight"};

std::int64_t aligned(std::int64_t bytes) { return (bytes + 255) / 256 * 256; }

CudaStageCache views(const CudaStageCache& c) {
  CudaStageCache v;
  v.reserve(c.size());
  for (const CudaBlockCache& b : c) v.push_back(b.view());
  return v;
}

// Whether every buffer of the cache lives in an arena (its F, and I, were replayed).
bool all_borrowed(const CudaStageCache& c) {
  if (c.empty()) return false;
  for (const CudaBlockCache& b : c)
    if (!b.borrowed()) return false;
  return true;
}

std::vector<const void*> key_of(const CudaStage& stage, CudaContext& ctx, const CudaStageCache* cache) {
  std::vector<const void*> key = stage.addresses();
  key.push_back(ctx.ones(stage.config().tokens()));
  if (cache != nullptr && !cache->empty()) key.insert(key.end(), {cache->front().xn1.data(), cache->back().xn1.data()});
  return key;
}

}  // namespace

CudaStageGraphs::CudaStageGraphs(CudaContext& ctx, bool enabled) : ctx_(ctx), enabled_(enabled) {}

CudaStageGraphs::~CudaStageGraphs() {
  for (auto& [k, e] : entries_) destroy(e);
}

void CudaStageGraphs::destroy(Entry& e) {
  if (e.exec != nullptr) (void)cudaGraphExecDestroy(e.exec);
  if (e.graph != nullptr) (void)cudaGraphDestroy(e.graph);
  e.exec = nullptr;
  e.graph = nullptr;
}

DeviceMatrix CudaStageGraphs::forward(const CudaStage& stage, const DeviceMatrix& x, CudaStageCache& cache, int slot) {
  return run(F, slot, key_of(stage, ctx_, nullptr), &x, cache,
             [&](const DeviceMatrix* in) { return stage.forward(*in, cache); }, stage.config().tokens());
}

DeviceMatrix CudaStageGraphs::backward_input(const CudaStage& stage, const DeviceMatrix& dy, CudaStageCache& cache,
                                             int slot) {
  return run(I, slot, key_of(stage, ctx_, &cache), &dy, cache,
             [&](const DeviceMatrix* in) { return stage.backward_input(*in, cache); }, stage.config().tokens());
}

void CudaStageGraphs::backward_weight(CudaStage& stage, CudaStageCache& cache, int slot) {
  run(W, slot, key_of(stage, ctx_, &cache), nullptr, cache,
      [&](const DeviceMatrix*) {
        stage.backward_weight(cache);
        return DeviceMatrix{};
      },
      stage.config().tokens());
}

DeviceMatrix CudaStageGraphs::run(Kind kind, int slot, std::vector<const void*> key, const DeviceMatrix* in,
                                  CudaStageCache& cache, const Body& body, int tokens) {
  ++counts_.stage_ops;
  if (!enabled_) {
    ++counts_.direct_ops;
    return body(in);
  }
  if (sized_[kind] < 0) {  // the first call of this kind: directly, its allocations laid out on paper
    DeviceArena paper;
    DeviceMatrix out;
    {
      ArenaScope scope(paper);
      out = body(in);
    }
    sized_[kind] = paper.peak();
    ++counts_.direct_ops;
    return out;
  }
  if (kind != F && !all_borrowed(cache)) {  // its F (or I) ran directly: so does it
    ++counts_.direct_ops;
    return body(in);
  }
  Entry& e = entries_[{kind, slot}];
  const char* what = kName[kind];
  try {
    if (e.exec == nullptr || e.key != key) capture(e, kind, slot, std::move(key), in, cache, body, tokens);
    return launch(e, in, cache, what);
  } catch (const CudaError& err) {
    // capture() puts the cache back as it was; launch() changes it only once launched.
    fallback_ = std::string(what) + " of slot " + std::to_string(slot) + ": " + err.what();
    enabled_ = false;
    (void)cudaGetLastError();
    ++counts_.direct_ops;
    return body(in);
  }
}

void CudaStageGraphs::capture(Entry& e, Kind kind, int slot, std::vector<const void*> key, const DeviceMatrix* in,
                              CudaStageCache& cache, const Body& body, int tokens) {
  const std::string op = std::string("graph of ") + kName[kind];
  const cudaStream_t st = ctx_.stream();
  std::unique_ptr<DeviceArena>& arena = arenas_[{kind, slot}];
  if (!arena) arena = std::make_unique<DeviceArena>();
  const std::int64_t in_count = in != nullptr ? in->buf.size() : 0;
  const std::int64_t need = aligned(in_count * 4) + sized_[kind];
  if (!arena->reserved() || arena->capacity() < need) arena->reserve(need, op + ": arena");
  arena->reset();
  (void)ctx_.ones(tokens);  // before the scope: it must not move (it is part of the key)

  CudaStageCache before = views(cache);  // what to put back if the capture fails
  cudaGraph_t body_graph = nullptr;
  DeviceMatrix staged, y;
  {
    ArenaScope scope(*arena);
    if (in != nullptr) {
      staged.buf = DeviceBuffer<float>(in_count, st, op + ": staged input");
      staged.rows = in->rows;
      staged.cols = in->cols;
    }
    cuda_check(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture", op);
    try {
      y = body(in != nullptr ? &staged : nullptr);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      (void)cudaStreamEndCapture(st, &broken);
      if (broken != nullptr) (void)cudaGraphDestroy(broken);
      (void)cudaGetLastError();
      cache = std::move(before);
      throw;
    }
    const cudaError_t ended = cudaStreamEndCapture(st, &body_graph);
    if (ended != cudaSuccess) cache = std::move(before);
    cuda_check(ended, "cudaStreamEndCapture", op);
  }
  ++counts_.captures;
  e.key = std::move(key);
  e.after = views(cache);
  cache = std::move(before);  // launch() sets it, once the graph has run
  e.in_dst = staged.data();
  e.in_count = in_count;
  e.out_src = y.data();
  e.out_count = y.buf.size();
  e.out_rows = y.rows;
  e.out_cols = y.cols;

  // head: staged input <- payload; the captured body; tail: fresh buffer <- output.
  cudaGraph_t outer = nullptr;
  cudaGraphNode_t in_node = nullptr, body_node = nullptr, out_node = nullptr;
  DeviceBuffer<float> placeholder;  // a valid destination until launch() sets the real one
  try {
    cuda_check(cudaGraphCreate(&outer, 0), "cudaGraphCreate", op);
    if (in != nullptr)
      cuda_check(cudaGraphAddMemcpyNode1D(&in_node, outer, nullptr, 0, e.in_dst, in->data(),
                                          static_cast<std::size_t>(in_count) * 4, cudaMemcpyDeviceToDevice),
                 "cudaGraphAddMemcpyNode1D", op + ": input");
    cuda_check(cudaGraphAddChildGraphNode(&body_node, outer, in_node != nullptr ? &in_node : nullptr,
                                          in_node != nullptr ? 1 : 0, body_graph),
               "cudaGraphAddChildGraphNode", op);
    if (e.out_count > 0) {
      placeholder = DeviceBuffer<float>(e.out_count, st, op + ": output");
      cuda_check(cudaGraphAddMemcpyNode1D(&out_node, outer, &body_node, 1, placeholder.data(), e.out_src,
                                          static_cast<std::size_t>(e.out_count) * 4, cudaMemcpyDeviceToDevice),
                 "cudaGraphAddMemcpyNode1D", op + ": output");
    }
  } catch (...) {
    if (outer != nullptr) (void)cudaGraphDestroy(outer);
    (void)cudaGraphDestroy(body_graph);
    throw;
  }
  (void)cudaGraphDestroy(body_graph);  // the child node holds a copy

  if (e.exec != nullptr) {  // the same kernels on other addresses: update in place if the driver can
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(e.exec, outer, &info) == cudaSuccess) {
      ++counts_.updates;
      (void)cudaGraphDestroy(outer);  // parameters are set per node of e.graph from now on
      return;
    }
    (void)cudaGetLastError();
    destroy(e);
  }
  const cudaError_t made = cudaGraphInstantiate(&e.exec, outer, 0);
  if (made != cudaSuccess) {
    e.exec = nullptr;
    (void)cudaGraphDestroy(outer);
    cuda_check(made, "cudaGraphInstantiate", op);
  }
  ++counts_.instantiations;
  e.graph = outer;
  e.in_node = in_node;
  e.out_node = out_node;
}

DeviceMatrix CudaStageGraphs::launch(Entry& e, const DeviceMatrix* in, CudaStageCache& cache, const char* what) {
  const std::string op = std::string("graph of ") + what;
  const cudaStream_t st = ctx_.stream();
  if (in != nullptr) {
    if (in->buf.size() != e.in_count)
      throw CudaError("cuda: " + op + ": input of " + std::to_string(in->buf.size()) + " numbers, captured with " +
                      std::to_string(e.in_count));
    cuda_check(cudaGraphExecMemcpyNodeSetParams1D(e.exec, e.in_node, e.in_dst, in->data(),
                                                  static_cast<std::size_t>(e.in_count) * 4, cudaMemcpyDeviceToDevice),
               "cudaGraphExecMemcpyNodeSetParams1D", op + ": input");
  }
  DeviceMatrix out;
  if (e.out_count > 0) {
    out.buf = DeviceBuffer<float>(e.out_count, st, op + ": output");
    out.rows = e.out_rows;
    out.cols = e.out_cols;
    cuda_check(cudaGraphExecMemcpyNodeSetParams1D(e.exec, e.out_node, out.data(), e.out_src,
                                                  static_cast<std::size_t>(e.out_count) * 4, cudaMemcpyDeviceToDevice),
               "cudaGraphExecMemcpyNodeSetParams1D", op + ": output");
  }
  cuda_check(cudaGraphLaunch(e.exec, st), "cudaGraphLaunch", op);
  ++counts_.graph_launches;
  cache = views(e.after);
  return out;
}

}  // namespace pipesim
