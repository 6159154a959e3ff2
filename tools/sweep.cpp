#include "tools/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "cost_models/analytical.hpp"
#include "cost_models/transformer.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "tools/memory_guard.hpp"

namespace pipesim {
namespace {

// The combinations that share one schedule: (schedule, pp, microbatches). The schedule is
// generated once for all hardware, tp, micro-batch sizes and recompute settings.
struct Group {
  std::size_t schedule = 0, pp = 0, microbatches = 0;
};

// Everything the workers read; immutable while they run.
struct Plan {
  const SweepSettings& settings;
  const SweepGrid& grid;
  int gpus = 0;
  // base[hardware][recompute]: the analytical config with tp 1 on one device; a combination
  // changes only tp, pipeline devices, dp and micro-batch size (as make_analytical_config
  // would), so the catalog is looked up once per GPU type.
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

// The config make_analytical_config would build for this combination.
AnalyticalConfig config_of(const Plan& plan, const Schedule& schedule, const GridPoint& point) {
  AnalyticalConfig config = plan.base[point.hardware][point.recompute];
  const int tp = plan.grid.tp[point.tp];
  config.tp = tp;
  config.pipeline_devices = schedule.num_devices;
  config.dp = plan.gpus / (tp * schedule.num_devices);
  config.micro_batch_size = plan.grid.micro_batch_size[point.micro_batch_size];
  return config;
}

SweepRow evaluate(Simulator& simulator, const Plan& plan, const AnalyticalCostModel& model, const Schedule& schedule,
                  const GridPoint& point, std::size_t index) {
  const SweepGrid& g = plan.grid;
  SweepRow row;
  row.index = index;
  row.point = point;
  const SimResult result = simulator.run(schedule, model);  // no observer: no timeline is kept
  const Metrics metrics = summarize(schedule, result);
  const Assessment a = assess(model, schedule, result, metrics);
  row.tp = model.config().tp;
  row.pp = g.pp[point.pp];
  row.dp = model.config().dp;
  row.microbatches = g.microbatches[point.microbatches];
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
  const int pp = g.pp[group.pp];
  std::optional<Schedule> schedule;
  Simulator simulator;  // one per group: the points of a group simulate one schedule again and again
  std::string schedule_error;
  SkipReason schedule_reason = SkipReason::Schedule;
  bool generated = false;
  GridPoint p;
  p.schedule = group.schedule;
  p.pp = group.pp;
  p.microbatches = group.microbatches;
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
          if (!plan.model_error[p.tp].empty()) {
            skip(out, index, SkipReason::ModelShape, plan.model_error[p.tp]);
            continue;
          }
          if (!generated) {
            generated = true;
            ScheduleParams params;
            params.p = pp;
            params.m = g.microbatches[group.microbatches];
            params.v = plan.settings.chunks;
            params.iterations = plan.settings.iterations;
            const std::string& name = g.schedules[group.schedule];
            schedule_reason = SkipReason::TooLarge;
            schedule_error = memory_refusal(describe_generation(name, params), estimate_ops(name, params),
                                            {kSimulateBytesPerOp, 0, 0}, plan.thread_memory,
                                            "make the grid's pp, m or --iterations smaller, or use fewer --jobs")
                                 .value_or("");
            if (schedule_error.empty()) {
              schedule_reason = SkipReason::Schedule;
              try {
                schedule = generate(name, params);
              } catch (const InputError& e) {
                schedule_error = e.what();
              }
            }
          }
          if (!schedule) {
            skip(out, index, schedule_reason, schedule_error);
            continue;
          }
          if (const std::string problem = stage_count_problem(plan.base.front().front().model, *schedule);
              !problem.empty()) {
            skip(out, index, SkipReason::ModelShape, problem);
            continue;
          }
          if (plan.gpus % (static_cast<long long>(tp) * schedule->num_devices) != 0) {  // more devices than pp
            skip(out, index, SkipReason::GpusIndivisible,
                 g.schedules[group.schedule] + " on pp " + std::to_string(pp) + " uses " +
                     std::to_string(schedule->num_devices) + " devices; x tp " + std::to_string(tp) +
                     " does not divide " + std::to_string(plan.gpus) + " GPUs");
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
  const std::size_t groups = grid.schedules.size() * grid.pp.size() * grid.microbatches.size();
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
  for (std::size_t s = 0; s < grid.schedules.size(); ++s)
    for (std::size_t p = 0; p < grid.pp.size(); ++p)
      for (std::size_t m = 0; m < grid.microbatches.size(); ++m) plan.groups.push_back({s, p, m});
  std::stable_sort(plan.groups.begin(), plan.groups.end(), [&](const Group& a, const Group& b) {
    return static_cast<long long>(grid.pp[a.pp]) * grid.microbatches[a.microbatches] >
           static_cast<long long>(grid.pp[b.pp]) * grid.microbatches[b.microbatches];
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
  return result;
}

namespace {

// Pareto front of (tokens/s up, key down) over the rows that fit.
template <typename Key>
std::vector<std::size_t> front(const std::vector<SweepRow>& rows, Key key) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].fits) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (key(rows[a]) != key(rows[b])) return key(rows[a]) < key(rows[b]);
    if (rows[a].tokens_per_s != rows[b].tokens_per_s) return rows[a].tokens_per_s > rows[b].tokens_per_s;
    return rows[a].index < rows[b].index;
  });
  std::vector<std::size_t> out;
  for (std::size_t i : order) {
    // Sorted by key, so a row is dominated unless it beats every row before it; an exact
    // tie with the last row on the front is not dominated either.
    const bool tie = !out.empty() && rows[i].tokens_per_s == rows[out.back()].tokens_per_s &&
                     key(rows[i]) == key(rows[out.back()]);
    if (out.empty() || rows[i].tokens_per_s > rows[out.back()].tokens_per_s || tie) out.push_back(i);
  }
  return out;
}

}  // namespace

std::vector<std::size_t> best_rows(const std::vector<SweepRow>& rows, std::size_t k) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].fits) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rows[a].tokens_per_s != rows[b].tokens_per_s) return rows[a].tokens_per_s > rows[b].tokens_per_s;
    return rows[a].index < rows[b].index;
  });
  if (order.size() > k) order.resize(k);
  return order;
}

std::vector<std::size_t> memory_front(const std::vector<SweepRow>& rows) {
  return front(rows, [](const SweepRow& r) { return r.peak_memory; });
}

std::vector<std::size_t> staleness_front(const std::vector<SweepRow>& rows) {
  return front(rows, [](const SweepRow& r) { return r.max_mismatch; });
}

}  // namespace pipesim
