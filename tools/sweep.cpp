#include "tools/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <thread>

#include "assess/analytical_source.hpp"
#include "assess/assessment.hpp"
#include "cost_models/analytical.hpp"
#include "cost_models/transformer.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "tools/analytical_setup.hpp"
#include "tools/memory_guard.hpp"

namespace pipesim {
namespace {

// The combinations that share one schedule: (variant, pp, batch). The schedule is generated
// once for all hardware, tp, micro-batch sizes and recompute settings that give it the same
// m (with a global batch, m = B / (dp x micro-batch size) changes with tp and b).
struct Group {
  std::size_t variant = 0, pp = 0, batch = 0;
};

// Everything the workers read; immutable while they run.
struct Plan {
  const SweepSettings& settings;
  const SweepGrid& grid;
  int gpus = 0;
  // base[hardware][recompute]: the analytical config with tp 1 on one device; a combination
  // changes only tp, pipeline devices, dp and micro-batch size (with_parallelism, as
  // make_analytical_config does), so the catalog is looked up once per GPU type.
  std::vector<std::vector<AnalyticalConfig>> base;
  std::vector<std::string> model_error;  // per tp value: why the model cannot be split so, or empty
  std::vector<Group> groups;             // the most work first, for an even finish
  std::optional<MemoryLimit> thread_memory;  // what one thread's schedule and engine may use
};

// What the workers write: one slot per combination, so the order never depends on timing.
struct Outcome {
  std::vector<std::optional<SweepRow>> rows;
  std::vector<std::int8_t> reason;  // SkipReason of a skipped combination, -1 if evaluated
  std::array<SkipCount, kNumSkipReasons> skipped;
  std::array<std::size_t, kNumSkipReasons> example_index;
  std::mutex skip_mutex;
  std::atomic<std::size_t> next_group{0};
  std::atomic<std::size_t> done{0};
  std::exception_ptr failure;  // a bug, not bad input: rethrown after the join
};

void skip(Outcome& out, std::size_t index, SkipReason reason, const std::string& message) {
  out.reason[index] = static_cast<std::int8_t>(reason);
  const auto r = static_cast<std::size_t>(reason);
  const std::lock_guard<std::mutex> lock(out.skip_mutex);
  if (index < out.example_index[r]) {
    out.example_index[r] = index;
    out.skipped[r].example = message;
  }
}

// The config of this combination: its GPU type's and recompute setting's with its
// parallelism (the checks before it made sure tp x devices divides the GPUs).
AnalyticalConfig config_of(const Plan& plan, const Schedule& schedule, const GridPoint& point) {
  return with_parallelism(plan.base[point.hardware][point.recompute], plan.grid.tp[point.tp], schedule.num_devices,
                          plan.grid.micro_batch_size[point.micro_batch_size]);
}

SweepRow evaluate(Simulator& simulator, const Plan& plan, const AnalyticalCostModel& model, const Schedule& schedule,
                  const GridPoint& point, std::size_t index) {
  const SweepGrid& g = plan.grid;
  SweepRow row;
  row.index = index;
  row.point = point;
  BreakdownRecorder parts(schedule.num_devices);  // no timeline is kept: only where the time goes
  const AssessedRun run = assess_configuration(simulator, schedule, model, AnalyticalSource(model), &parts);
  const Metrics& metrics = run.metrics;
  const Assessment& a = run.assessment;
  const TimeBreakdown breakdown = time_breakdown(schedule, run.result, model, parts);
  for (TimeCategory c : kTimeCategories)
    row.time_parts[static_cast<std::size_t>(c)] = breakdown.mean_per_iteration_s(c);
  row.tp = a.tp;
  row.pp = g.pp[point.pp];
  row.dp = a.dp;
  row.microbatches = schedule.microbatches;
  row.global_batch = sequences_per_iteration(schedule, model.config().micro_batch_size, a.dp);
  row.micro_batch_size = model.config().micro_batch_size;
  row.gpus = a.gpus;
  row.time_per_iteration = metrics.time_per_iteration;
  row.tokens_per_iteration = a.tokens_per_iteration;
  row.tokens_per_s = a.tokens_per_s;
  row.mfu = a.mfu;
  row.bubble_ratio = metrics.bubble_ratio;
  row.peak_memory = a.peak_memory;
  row.capacity = a.capacity;
  row.overshoot = a.overshoot;
  row.fits = a.fits;
  for (const DeviceMemory& d : a.memory)  // the first device holding the peak
    if (d.total == a.peak_memory) {
      row.peak_device = d;
      break;
    }
  const Staleness& s = metrics.staleness;
  row.max_mismatch = s.max_mismatch;
  row.mean_mismatch = s.mean_mismatch;
  row.mismatched_fraction = s.mismatched_fraction;
  row.max_delay = s.max_delay;
  row.mean_delay = s.mean_delay;
  row.cost_per_million_tokens = a.cost_per_million_tokens;
  return row;
}

void run_group(const Plan& plan, const Group& group, Outcome& out) {
  const SweepGrid& g = plan.grid;
  const SweepVariant& variant = g.variants[group.variant];
  const int pp = g.pp[group.pp];
  std::optional<Schedule> schedule;
  Simulator simulator;  // one per group: the points of a group simulate one schedule again and again
  int generated_m = 0;   // m of `schedule` (0: none generated yet)
  std::string schedule_error;
  SkipReason schedule_reason = SkipReason::Schedule;
  GridPoint p;
  p.variant = group.variant;
  p.pp = group.pp;
  p.batch = group.batch;
  ScheduleParams params = variant.settings;
  params.p = pp;
  params.iterations = plan.settings.iterations;
  const int devices = pipeline_devices(variant.schedule, params);
  for (p.hardware = 0; p.hardware < g.hardware.size(); ++p.hardware)
    for (p.tp = 0; p.tp < g.tp.size(); ++p.tp)
      for (p.micro_batch_size = 0; p.micro_batch_size < g.micro_batch_size.size(); ++p.micro_batch_size)
        for (p.recompute = 0; p.recompute < g.recompute.size(); ++p.recompute) {
          const std::size_t index = grid_index(g, p);
          const int tp = g.tp[p.tp];
          out.done.fetch_add(1, std::memory_order_relaxed);
          const long long group_gpus = static_cast<long long>(tp) * pp;  // values reach 2^20: no int overflow
          if (plan.gpus % group_gpus != 0) {
            skip(out, index, SkipReason::GpusIndivisible,
                 "tp " + std::to_string(tp) + " x pp " + std::to_string(pp) + " = " + std::to_string(group_gpus) +
                     " GPUs per pipeline does not divide " + std::to_string(plan.gpus) + " GPUs");
            continue;
          }
          if (plan.gpus % (static_cast<long long>(tp) * devices) != 0) {  // more devices than pp
            skip(out, index, SkipReason::GpusIndivisible,
                 variant.label + " on pp " + std::to_string(pp) + " uses " + std::to_string(devices) + " devices; x tp " +
                     std::to_string(tp) + " does not divide " + std::to_string(plan.gpus) + " GPUs");
            continue;
          }
          if (!plan.model_error[p.tp].empty()) {
            skip(out, index, SkipReason::ModelShape, plan.model_error[p.tp]);
            continue;
          }
          int m = g.batches()[group.batch];
          if (g.by_global_batch()) {
            const long long dp = plan.gpus / (static_cast<long long>(tp) * devices);
            const long long per_step = dp * g.micro_batch_size[p.micro_batch_size];
            if (m % per_step != 0) {
              skip(out, index, SkipReason::GlobalBatch,
                   "global batch " + std::to_string(m) + " is not a multiple of dp x micro-batch size = " +
                       std::to_string(dp) + " x " + std::to_string(g.micro_batch_size[p.micro_batch_size]));
              continue;
            }
            m = static_cast<int>(m / per_step);
          }
          if (m != generated_m) {
            generated_m = m;
            params.m = m;
            schedule.reset();
            schedule_reason = SkipReason::TooLarge;
            schedule_error = memory_refusal(describe_generation(variant.schedule, params),
                                            estimate_ops(variant.schedule, params),
                                            {kSimulateBytesPerOp + kBreakdownBytesPerOp, 0, 0},
                                            plan.thread_memory,
                                            "make the grid's pp, m or --iterations smaller, or use fewer --jobs")
                                 .value_or("");
            if (schedule_error.empty()) {
              schedule_reason = SkipReason::Schedule;
              try {
                schedule = generate(variant.schedule, params);
              } catch (const InputError& e) {
                schedule_error = e.what();
              }
            }
            if (schedule) schedule_error = stage_count_problem(plan.base.front().front().model, *schedule);
            if (schedule && !schedule_error.empty()) {
              schedule_reason = SkipReason::ModelShape;
              schedule.reset();
            }
          }
          if (!schedule) {
            skip(out, index, schedule_reason, schedule_error);
            continue;
          }
          // The constructor checks the whole config first; anything after it is the engine's
          // or the memory model's.
          SkipReason reason = SkipReason::CostModel;
          try {
            const AnalyticalCostModel model(config_of(plan, *schedule, p));
            reason = SkipReason::Simulation;
            out.rows[index] = evaluate(simulator, plan, model, *schedule, p, index);
          } catch (const InputError& e) {
            skip(out, index, reason, e.what());
          }
        }
}

void worker(const Plan& plan, Outcome& out) {
  try {
    for (std::size_t i; (i = out.next_group.fetch_add(1)) < plan.groups.size();) run_group(plan, plan.groups[i], out);
  } catch (...) {
    const std::lock_guard<std::mutex> lock(out.skip_mutex);
    if (!out.failure) out.failure = std::current_exception();
    out.next_group.store(plan.groups.size());  // the others stop after their group
  }
}

}  // namespace

std::string_view skip_reason_text(SkipReason reason) {
  switch (reason) {
    case SkipReason::GpusIndivisible: return "tp x pp does not divide the GPUs";
    case SkipReason::GlobalBatch: return "the global batch is not a multiple of dp x micro-batch size";
    case SkipReason::ModelShape: return "the model cannot be split so (tp and heads, stages and layers)";
    case SkipReason::Schedule: return "the schedule rejects pp and m";
    case SkipReason::CostModel: return "the cost model rejects the settings";
    case SkipReason::Simulation: return "the simulation fails";
    case SkipReason::TooLarge: return "the schedule needs more memory than a thread may use";
  }
  return "?";
}

std::size_t SweepResult::skipped_total() const {
  std::size_t n = 0;
  for (const SkipCount& s : skipped) n += s.count;
  return n;
}

std::pair<int, int> sweep_cluster_shape(int gpus, int gpus_per_node) {
  if (gpus <= 0) throw InputError("--gpus must be positive, got " + std::to_string(gpus));
  if (gpus_per_node <= 0) throw InputError("--gpus-per-node must be positive, got " + std::to_string(gpus_per_node));
  if (gpus <= gpus_per_node) return {1, gpus};
  if (gpus % gpus_per_node != 0)
    throw InputError("--gpus " + std::to_string(gpus) + " is not a whole number of nodes of " +
                     std::to_string(gpus_per_node) + " GPUs (--gpus-per-node)");
  return {gpus / gpus_per_node, gpus_per_node};
}

SweepResult run_sweep(const SweepSettings& settings, const SweepGrid& grid, int jobs, const SweepProgress& progress) {
  if (jobs < 1) throw InputError("--jobs must be at least 1, got " + std::to_string(jobs));
  PIPESIM_ASSERT(grid.size() > 0);
  const HardwareOptions& ho = settings.hardware;
  Plan plan{settings, grid, ho.nodes * ho.gpus_per_node, {}, {}, {}, {}};
  const std::size_t total = grid.size();
  const std::size_t groups = grid.variants.size() * grid.pp.size() * grid.batches().size();
  const auto threads = static_cast<std::size_t>(std::min<long long>(jobs, static_cast<long long>(groups)));
  // The results' slots come first; what is left is shared by the threads' schedules.
  constexpr double kBytesPerCombination = sizeof(std::optional<SweepRow>) + sizeof(std::int8_t) + sizeof(Group);
  const double results = static_cast<double>(total) * kBytesPerCombination;
  if (auto limit = memory_limit(settings.max_memory)) {
    if (results > static_cast<double>(limit->bytes))
      throw InputError("the grid has " + std::to_string(total) + " combinations, whose results alone need ~" +
                       format_bytes(results) + " (" + limit_text(*limit) + "); make the grid smaller");
    limit->bytes = static_cast<std::uint64_t>((static_cast<double>(limit->bytes) - results) / static_cast<double>(threads));
    plan.thread_memory = limit;
  }
  for (const std::string& gpu : grid.hardware) {
    plan.base.emplace_back();
    for (const std::string& recompute : grid.recompute) {
      HardwareOptions o = ho;
      o.tp = 1;
      o.recompute = recompute;
      plan.base.back().push_back(make_analytical_config(o, gpu, 1));
    }
  }
  for (int tp : grid.tp) {
    try {
      check_model(plan.base.front().front().model, tp, "analytical");
      plan.model_error.emplace_back();
    } catch (const InputError& e) {
      plan.model_error.emplace_back(e.what());
    }
  }
  for (std::size_t v = 0; v < grid.variants.size(); ++v)
    for (std::size_t p = 0; p < grid.pp.size(); ++p)
      for (std::size_t b = 0; b < grid.batches().size(); ++b) plan.groups.push_back({v, p, b});
  std::stable_sort(plan.groups.begin(), plan.groups.end(), [&](const Group& a, const Group& b) {
    return static_cast<long long>(grid.pp[a.pp]) * grid.batches()[a.batch] >
           static_cast<long long>(grid.pp[b.pp]) * grid.batches()[b.batch];
  });

  Outcome out;
  out.rows.resize(total);
  out.reason.assign(total, -1);
  out.example_index.fill(std::numeric_limits<std::size_t>::max());

  std::mutex finished_mutex;
  std::condition_variable finished_cv;
  std::size_t finished = 0;
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      worker(plan, out);
      const std::lock_guard<std::mutex> lock(finished_mutex);
      ++finished;
      finished_cv.notify_one();
    });
  {
    std::unique_lock<std::mutex> lock(finished_mutex);
    while (!finished_cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return finished == threads; }))
      if (progress) progress(out.done.load(std::memory_order_relaxed), total);
  }
  for (std::thread& t : pool) t.join();
  if (out.failure) std::rethrow_exception(out.failure);
  if (progress) progress(total, total);

  SweepResult result;
  result.combinations = total;
  result.threads = threads;
  for (std::size_t i = 0; i < total; ++i)
    if (out.rows[i]) result.rows.push_back(std::move(*out.rows[i]));
    else ++out.skipped[static_cast<std::size_t>(out.reason[i])].count;
  result.skipped = std::move(out.skipped);
  if (!result.rows.empty()) mark_equivalents(grid, result.rows);
  for (SweepRow& r : result.rows)
    r.passes_filters = (settings.max_mismatch < 0 || r.max_mismatch <= settings.max_mismatch) &&
                       (settings.max_delay < 0 || r.max_delay <= settings.max_delay);
  return result;
}

namespace {

// Pareto front of (tokens/s up, every key down) over `among`: a row stays unless another has
// at least its throughput and at most each key, with one of them strictly better.
template <typename Keys>
std::vector<std::size_t> front(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& among, Keys keys) {
  std::vector<std::size_t> order = among;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (keys(rows[a]) != keys(rows[b])) return keys(rows[a]) < keys(rows[b]);
    if (rows[a].tokens_per_s != rows[b].tokens_per_s) return rows[a].tokens_per_s > rows[b].tokens_per_s;
    return rows[a].index < rows[b].index;
  });
  const auto dominates = [&](const SweepRow& x, const SweepRow& y) {  // x dominates y
    const auto kx = keys(x), ky = keys(y);
    bool all = x.tokens_per_s >= y.tokens_per_s, strict = x.tokens_per_s > y.tokens_per_s;
    std::apply([&](auto... a) {
      std::apply([&](auto... b) { ((all = all && a <= b, strict = strict || a < b), ...); }, ky);
    }, kx);
    return all && strict;
  };
  std::vector<std::size_t> out;
  for (std::size_t i : order) {
    bool dominated = false;
    for (std::size_t j : out) dominated = dominated || dominates(rows[j], rows[i]);
    if (!dominated) out.push_back(i);
  }
  return out;
}

// What two equivalent configurations share: the same machine, schedule and parallelism, and
// the same results to the bit.
auto equivalence_key(const SweepGrid& g, const SweepRow& r) {
  return std::make_tuple(r.point.hardware, g.variants[r.point.variant].schedule, r.tp, r.pp, r.dp, r.microbatches,
                         r.micro_batch_size, r.time_per_iteration, r.tokens_per_s, r.peak_memory, r.max_mismatch,
                         r.max_delay, r.mean_mismatch, r.mean_delay, r.peak_device.weights, r.peak_device.gradients,
                         r.peak_device.optimizer, r.peak_device.activations);
}

}  // namespace

void mark_equivalents(const SweepGrid& grid, std::vector<SweepRow>& rows) {
  std::map<decltype(equivalence_key(grid, rows.front())), std::size_t> first;
  for (SweepRow& r : rows) r.same_as = first.emplace(equivalence_key(grid, r), r.index).first->second;
}

std::vector<std::size_t> candidates(const std::vector<SweepRow>& rows, long long global_batch) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepRow& r = rows[i];
    if (r.fits && r.passes_filters && r.same_as == r.index && (global_batch <= 0 || r.global_batch == global_batch))
      out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> closest_rows(const std::vector<SweepRow>& rows, long long global_batch, std::size_t k) {
  std::vector<std::size_t> among;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepRow& r = rows[i];
    if (!r.fits && r.passes_filters && r.same_as == r.index && (global_batch <= 0 || r.global_batch == global_batch))
      among.push_back(i);
  }
  return closest_to_fitting(std::move(among), [&](std::size_t i) { return rows[i].overshoot; }, k);
}

std::vector<FitChange> sweep_fit_changes(const SweepSettings& settings, const SweepGrid& grid, const SweepRow& row) {
  const SweepVariant& variant = grid.variants[row.point.variant];
  FitQuery q;
  q.hardware = settings.hardware;
  q.hardware.hardware = grid.hardware[row.point.hardware];
  q.hardware.tp = row.tp;
  q.hardware.micro_batch_size = row.micro_batch_size;
  q.hardware.recompute = grid.recompute[row.point.recompute];
  q.hardware.global_batch_size = grid.by_global_batch() ? static_cast<int>(row.global_batch) : 0;
  q.generator = variant.schedule;
  q.params = variant.settings;
  q.params.p = row.pp;
  q.params.m = row.microbatches;
  q.params.iterations = settings.iterations;
  q.max_memory = settings.max_memory;
  return fit_changes(q);
}

std::vector<std::size_t> best_rows(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& among,
                                   std::size_t k) {
  std::vector<std::size_t> order = among;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rows[a].tokens_per_s != rows[b].tokens_per_s) return rows[a].tokens_per_s > rows[b].tokens_per_s;
    return rows[a].index < rows[b].index;
  });
  if (order.size() > k) order.resize(k);
  return order;
}

std::vector<std::size_t> memory_front(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& among) {
  return front(rows, among, [](const SweepRow& r) { return std::make_tuple(r.peak_memory); });
}

std::vector<std::size_t> staleness_front(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& among) {
  return front(rows, among, [](const SweepRow& r) { return std::make_tuple(r.max_mismatch, r.max_delay); });
}

}  // namespace pipesim
