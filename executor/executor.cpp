#include "executor/executor.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <thread>

#include "core/cpu_affinity.hpp"
#include "core/error.hpp"
#include "executor/cpu_backend.hpp"
#include "executor/measure.hpp"
#include "executor/reference.hpp"
#include "executor/text_corpus.hpp"
#include "executor/run_state.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

DependencyGraph dependencies_of(const Schedule& schedule) {
  std::vector<DependencyProblem> problems;
  DependencyGraph g = build_dependencies(schedule, problems);
  if (problems.empty()) return g;
  std::string msg = "schedule is not runnable: ";
  for (std::size_t i = 0; i < problems.size() && i < 5; ++i)
    msg += (i ? "; " : "") + std::string("device ") + std::to_string(problems[i].device) + " op " +
           std::to_string(problems[i].index) + ": " + problems[i].message;
  if (problems.size() > 5) msg += "; and " + std::to_string(problems.size() - 5) + " more";
  throw InputError(msg);
}

void check_options(const RunOptions& o) {
  if (o.timeout.count() <= 0) throw InputError("--timeout: must be positive");
  if (!std::isfinite(o.optimizer.lr) || o.optimizer.lr < 0)
    throw InputError("--lr: expected a finite learning rate >= 0, got " + std::to_string(o.optimizer.lr));
  if (o.validate_every < 0)
    throw InputError("--validate-every: expected a number of iterations >= 1 (or 0: no validation), got " +
                     std::to_string(o.validate_every));
  if (o.validation_sequences < 1)
    throw InputError("validation sequences: expected at least 1, got " + std::to_string(o.validation_sequences));
}

// Optimizer steps per iteration of each stage of pipeline 0 (1 for a synchronous schedule,
// m for PipeDream's step after every backward): validation points are counted in
// iterations, so schedules that step at different rates are compared on the same data.
std::vector<int> steps_per_iteration(const Schedule& schedule) {
  std::vector<int> steps(static_cast<std::size_t>(schedule.num_stages), 0);
  for (const auto& list : schedule.ops)
    for (const Op& op : list)
      if (op.kind == OpKind::OptStep && op.pipeline == 0) ++steps[static_cast<std::size_t>(op.stage)];
  for (int st = 0; st < schedule.num_stages; ++st) {
    int& n = steps[static_cast<std::size_t>(st)];
    if (n == 0 || n % schedule.iterations != 0)
      throw InputError("--validate-every: stage " + std::to_string(st) + " of " + quote(schedule.name) + " takes " +
                       std::to_string(n) + " optimizer steps in " + std::to_string(schedule.iterations) +
                       " iterations, not a whole number per iteration");
    n /= schedule.iterations;
  }
  return steps;
}

ModelSetup run_setup(const Schedule& schedule, const ModelSpec& model, const RunOptions& options) {
  return ModelSetup{model,        options.micro_batch_size, schedule.microbatch_split, schedule.num_stages,
                    options.seed, options.optimizer,        schedule.num_devices,      options.data};
}

// The validation points of a finished run: every iteration after which each stage of
// pipeline 0 left a copy, the stages put together in stage order and evaluated (after the run, so the
// evaluation takes no measured time).
std::vector<ValidationPoint> validation_points(const Schedule& schedule, const ModelSpec& model, const RunOptions& options,
                                               std::vector<DeviceLog>& logs) {
  std::map<std::int32_t, std::vector<const WeightSnapshot*>> by_iteration;
  for (const DeviceLog& log : logs)
    for (const WeightSnapshot& snap : log.snapshots) {
      auto& stages = by_iteration[snap.iteration];
      stages.resize(static_cast<std::size_t>(schedule.num_stages), nullptr);
      stages[static_cast<std::size_t>(snap.stage)] = &snap;
    }
  std::vector<ValidationPoint> out;
  if (by_iteration.empty()) return out;
  Validator validator(model, options, schedule.microbatch_split);
  for (const auto& [iteration, stages] : by_iteration) {
    if (std::count(stages.begin(), stages.end(), nullptr) > 0) continue;  // a stage stopped short
    std::vector<float> whole;
    Tick at = 0;
    for (const WeightSnapshot* snap : stages) {
      whole.insert(whole.end(), snap->weights.begin(), snap->weights.end());
      at = std::max(at, snap->time);
    }
    out.push_back(ValidationPoint{iteration, validator.loss(whole), at});
  }
  for (DeviceLog& log : logs) log.snapshots.clear();
  return out;
}

// Which op's output each op takes, and the reverse lists: the walk's data edges
// (schedules/dependency_walk.hpp). With communication ops the message passes through
// them: F -> SEND_F -> RECV_F -> F, each hop a data edge (a send or a receive hands on
// what it got). The other edges carry no data and stay on one device.
void route_data(RunState& st) {
  const DependencyGraph& g = st.graph;
  st.data_pred.assign(g.size(), kNoOp);
  st.data_succ.assign(g.size(), {});
  for (const GraphId id : g.all()) {
    const GraphId input = g.data_input[at(id)];
    for (const GraphId p : g.preds_of(id))
      // dependencies.hpp has checked placement: a replica's ops share a device.
      PIPESIM_ASSERT(p == input || g.device_of(p) == g.device_of(id));
    if (input == DependencyGraph::kNoDataInput) continue;
    st.data_pred[at(id)] = input;
    st.data_succ[at(input)].push_back(id);
  }
  // A receive is posted, not waited on: the op using its message takes it from the sender
  // itself, as PyTorch's runtime waits at the compute op (sim/engine.hpp).
  for (const GraphId id : g.all()) {
    if (!is_recv(st.op_of(id).kind)) continue;
    const GraphId from = st.data_pred[at(id)];
    for (GraphId consumer : st.data_succ[at(id)]) {
      st.data_pred[at(consumer)] = from;
      if (from != kNoOp) st.data_succ[at(from)].push_back(consumer);
    }
    if (from != kNoOp) std::erase(st.data_succ[at(from)], id);
    st.data_succ[at(id)].clear();
    st.data_pred[at(id)] = kNoOp;
  }
}

void make_channels(RunState& st) {
  const auto devices = static_cast<std::size_t>(st.schedule.num_devices);
  std::vector<std::size_t> messages(devices * devices, 0);
  for (const GraphId id : st.graph.all())
    if (const GraphId p = st.data_pred[at(id)]; p != kNoOp && st.graph.device_of(p) != st.graph.device_of(id))
      ++messages[static_cast<std::size_t>(st.graph.device_of(p)) * devices + static_cast<std::size_t>(st.graph.device_of(id))];
  st.channels.resize(devices * devices);
  for (std::size_t k = 0; k < messages.size(); ++k)
    if (messages[k] > 0)
      st.channels[k] = std::make_unique<Channel<Message>>(st.options.channel_capacity ? st.options.channel_capacity : messages[k]);
}

std::string phase_text(const RunState& st, const WorkerStatus& w) {
  switch (static_cast<Phase>(w.phase.load())) {
    case Phase::Starting: return "has not started";
    case Phase::Running: return "is running";
    case Phase::WaitInput: {
      const GraphId p = w.waiting_on.load();
      return "waits for " + to_string(st.op_of(p)) + " from device " + std::to_string(st.graph.device_of(p));
    }
    case Phase::WaitCollective: return "waits for the other replicas of " + to_string(st.op_of(w.waiting_on.load()));
    case Phase::Sending: return "waits to send to device " + std::to_string(w.send_to.load()) + " (channel full)";
    case Phase::Done: return "is done";
    case Phase::Failed: return "has stopped";
  }
  return "?";
}

// The fault for a run that stopped making progress: the first device still working, then
// what the others wait for.
Fault timeout_fault(const RunState& st, const std::vector<WorkerStatus>& status) {
  Fault f;
  std::string others;
  int listed = 0;
  for (int d = 0; d < st.schedule.num_devices; ++d) {
    const WorkerStatus& w = status[static_cast<std::size_t>(d)];
    if (static_cast<Phase>(w.phase.load()) == Phase::Done) continue;
    const int index = w.index.load();
    const std::string where = "device " + std::to_string(d) + " op " + std::to_string(index) + " (" +
                              to_string(st.schedule.ops[static_cast<std::size_t>(d)][static_cast<std::size_t>(index)]) + ")";
    if (f.device < 0) {
      f.device = d;
      f.index = index;
      f.message = where + ": no op finished and no message moved for " + format_duration(st.options.timeout.count()) +
                  " (--timeout); it " + phase_text(st, w);
    } else if (++listed <= 8) {
      others += "; " + where + " " + phase_text(st, w);
    }
  }
  if (listed > 8) others += "; ...";
  f.message += others;
  return f;
}

// Activations one micro-batch of a stage holds between its forward and its backward: the
// blocks' caches (BlockCache after F, or after I when that is larger) and the head's
// (LmHeadCache: its inputs and the n x vocab probabilities). An upper bound in floats.
std::int64_t stage_activation_bytes(const ModelSetup& setup, const StageLayout& layout) {
  const BlockConfig c = executor_block_config(setup);
  const std::int64_t n = static_cast<std::int64_t>(c.batch) * c.seq, h = c.hidden, f = c.ffn;
  const std::int64_t scores = static_cast<std::int64_t>(c.batch) * c.heads * c.seq * c.seq;
  const std::int64_t block = std::max(8 * n * h + 2 * n * f + 4 * n + scores, 9 * n * h + 2 * n * f + 4 * h);
  std::int64_t numbers = block * layout.blocks;
  if (layout.head) numbers += 2 * n * h + 3 * n + n * setup.model.vocab;
  return 4 * numbers;
}

// The most bytes a run holds at once: every replica's weights, gradients and Adam moments,
// plus on each device the activations of the micro-batches between forward and backward at
// the worst point of its op list (the list's order is the device's run order).
std::int64_t run_memory_bytes(const Schedule& schedule, const ModelSetup& setup) {
  std::int64_t bytes = 0;
  std::vector<std::int64_t> stage_bytes(static_cast<std::size_t>(schedule.num_stages));
  for (int st = 0; st < schedule.num_stages; ++st) {
    const StageLayout layout = stage_layout(setup.model.layers, st, schedule.num_stages);
    bytes += schedule.num_pipelines * replica_state_bytes(setup, layout);
    stage_bytes[static_cast<std::size_t>(st)] = stage_activation_bytes(setup, layout);
  }
  for (const auto& list : schedule.ops) {
    std::int64_t held = 0, peak = 0;
    for (const Op& op : list) {
      const std::int64_t b = is_microbatch_op(op.kind) ? stage_bytes[static_cast<std::size_t>(op.stage)] : 0;
      if (op.kind == OpKind::F) held += b;
      if (op.kind == OpKind::B || op.kind == OpKind::W) held -= b;
      peak = std::max(peak, held);
    }
    bytes += peak;
  }
  return bytes;
}

}  // namespace

std::vector<double> iteration_means(std::vector<LossRecord>& losses) {
  std::sort(losses.begin(), losses.end(), [](const LossRecord& a, const LossRecord& b) {
    return std::tie(a.microbatch, a.pipeline) < std::tie(b.microbatch, b.pipeline);
  });
  std::map<int, std::pair<double, int>> per_iteration;
  for (const LossRecord& l : losses) {
    auto& [sum, count] = per_iteration[l.iteration];
    sum += l.loss;
    ++count;
  }
  std::vector<double> out;
  for (const auto& [t, sc] : per_iteration) {
    if (static_cast<std::size_t>(t) >= out.size()) out.resize(static_cast<std::size_t>(t) + 1, 0);
    out[static_cast<std::size_t>(t)] = sc.first / sc.second;
  }
  return out;
}

void check_run(const Schedule& schedule, const ModelSpec& model, const RunOptions& options) {
  check_options(options);
  check_executor_model(model, options.micro_batch_size, schedule.microbatch_split);
  if (options.data) check_corpus_fits(*options.data, model);
  if (options.validate_every > 0) (void)steps_per_iteration(schedule);
  if (schedule.num_stages > model.layers)
    throw InputError("schedule has " + std::to_string(schedule.num_stages) + " stages per pipeline, but model '" +
                     model.name + "' has only " + std::to_string(model.layers) + " layers to cut into stages");
  if (options.max_memory_bytes > 0) {
    const std::int64_t bytes = run_memory_bytes(schedule, run_setup(schedule, model, options));
    if (bytes > options.max_memory_bytes)
      throw InputError("model " + quote(model.name) + " at micro-batch size " + std::to_string(options.micro_batch_size) +
                       ": the replicas' weights, gradients and optimizer state and the activations in flight need up to " +
                       format_bytes(static_cast<double>(bytes)) + ", more than the " +
                       format_bytes(static_cast<double>(options.max_memory_bytes)) +
                       " this run may use; use a smaller --micro-batch-size or model, or raise --max-memory");
  }
}

MeasuredRun run_schedule(const Schedule& schedule, const ModelSpec& model, const RunOptions& options) {
  check_run(schedule, model, options);
  const DependencyGraph graph = dependencies_of(schedule);
  const ModelSetup setup = run_setup(schedule, model, options);

  RunState state(schedule, graph, options);
  if (options.validate_every > 0) state.steps_per_iteration = steps_per_iteration(schedule);
  route_data(state);
  make_channels(state);
  for (const auto& members : graph.collectives) {
    auto c = std::make_unique<Collective>();
    c->members = members;
    c->parts.resize(members.size());
    c->began.resize(members.size(), 0);
    c->finished.resize(members.size(), 0);
    c->copied_out.resize(members.size(), 0);
    c->copied_in.resize(members.size(), 0);
    state.collectives.push_back(std::move(c));
  }
  const auto devices = static_cast<std::size_t>(schedule.num_devices);
  std::vector<std::unique_ptr<ComputeBackend>> backends;
  for (int d = 0; d < schedule.num_devices; ++d) {
    backends.push_back(options.backend ? options.backend(d, setup, state.stop) : std::make_unique<CpuBackend>(setup));
    PIPESIM_ASSERT(backends.back() != nullptr);
    for (const auto& [pipeline, stage] : schedule.replicas_on(d))
      backends.back()->create_replica(ReplicaSpec{pipeline, stage, stage_layout(model.layers, stage, schedule.num_stages)});
  }

  MeasuredRun run;
  run.hardware_threads = static_cast<int>(std::thread::hardware_concurrency());
  if (run.hardware_threads > 0 && schedule.num_devices > run.hardware_threads)
    run.warnings.push_back(std::to_string(schedule.num_devices) + " devices on " + std::to_string(run.hardware_threads) +
                           " cores: device threads share cores, so measured times include waiting for a core");

  std::vector<WorkerStatus> status(devices);
  std::vector<DeviceLog> logs(devices);
  std::vector<std::thread> threads;
  state.t0 = std::chrono::steady_clock::now();
  try {
    for (std::size_t d = 0; d < devices; ++d) {
      threads.emplace_back(run_worker, std::ref(state), static_cast<int>(d), std::ref(*backends[d]), std::ref(status[d]),
                           std::ref(logs[d]));
      // A refusal (a core outside the process's set) is a warning: the device then runs
      // wherever the system puts it.
      if (const int core = options.pin_cores.empty() ? -1 : options.pin_cores[d % options.pin_cores.size()];
          core >= 0 && !pin_to_core(threads.back().native_handle(), core))
        run.warnings.push_back("could not pin a device thread to core " + std::to_string(core));
    }
  } catch (const std::system_error& e) {
    state.abort_all();
    for (auto& t : threads) t.join();
    throw InputError(std::string("cannot start a thread per device (") + std::to_string(devices) + "): " + e.what());
  }

  // Watchdog: wake on completion or a fault, or every `poll` to look for progress.
  const auto poll = std::clamp<std::chrono::nanoseconds>(options.timeout / 4, std::chrono::milliseconds(1),
                                                         std::chrono::milliseconds(50));
  std::uint64_t seen = 0;
  auto last_change = std::chrono::steady_clock::now();
  {
    std::unique_lock lock(state.mutex);
    // The timeout is about progress, not about how long the system takes to start threads.
    state.cv.wait(lock, [&] { return state.started == schedule.num_devices; });
    seen = state.progress.load();
    last_change = std::chrono::steady_clock::now();
    while (state.finished < schedule.num_devices && !state.fault) {
      state.cv.wait_for(lock, poll);
      if (state.finished == schedule.num_devices || state.fault) break;
      const std::uint64_t now_seen = state.progress.load();
      const auto now = std::chrono::steady_clock::now();
      if (now_seen != seen) {
        seen = now_seen;
        last_change = now;
      } else if (now - last_change >= options.timeout) {
        state.fault = timeout_fault(state, status);
      }
    }
  }
  if (state.fault) state.abort_all();
  for (auto& t : threads) t.join();

  assemble_measurement(schedule, graph, logs, state.collectives, run.timeline, run.result);
  for (const auto& b : backends) run.backend_stats.push_back(b->stats());
  for (const DeviceLog& log : logs) run.thread_cpu.push_back(log.cpu);
  for (const auto& c : state.collectives)
    for (std::size_t k = 0; k < c->members.size(); ++k)
      if (c->finished[k] > 0)  // copied out and back in
        run.sync_work.push_back(
            SyncWork{OpRef{graph.device_of(c->members[k]), graph.index_of(c->members[k])}, c->copied_out[k], c->copied_in[k]});
  for (auto& log : logs) run.losses.insert(run.losses.end(), log.losses.begin(), log.losses.end());
  run.iteration_loss = iteration_means(run.losses);
  run.complete = !state.fault;
  if (!state.fault) run.validation = validation_points(schedule, model, options, logs);
  if (state.fault) {
    const Fault f = *state.fault;
    throw ExecutionError(f.message, f.device, f.index, std::make_shared<MeasuredRun>(std::move(run)));
  }
  run.final_weights.resize(static_cast<std::size_t>(schedule.num_pipelines));
  if (options.keep_final_weights)
    for (int c = 0; c < schedule.num_pipelines; ++c)
      for (int st = 0; st < schedule.num_stages; ++st)
        run.final_weights[static_cast<std::size_t>(c)].push_back(
            backends[static_cast<std::size_t>(schedule.device_of(c, st))]->flat_weights(c, st));
  return run;
}

}  // namespace pipesim
