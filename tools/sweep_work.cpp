#include "tools/sweep_work.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <limits>
#include <new>
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
#include "tools/exit_codes.hpp"
#include "tools/sharing_flags.hpp"
#include "tools/cached_costs.hpp"

namespace pipesim {
namespace {

// The combinations that share one schedule: (variant, pp, batch). The schedule is generated
// once for all hardware, tp, micro-batch sizes and recompute settings that give it the same
// m (with a global batch, m = B / (dp x micro-batch size) changes with tp and b).
struct Group {
  std::size_t variant = 0, pp = 0, batch = 0;
};

// PIPESIM_SWEEP_TEST_FAIL=R or R:abort: the rank that fails, and how (a test hook, not a
// user's setting: tests/sweep_ranks_test.cpp, tests/hostile_input_test.cpp).
struct TestFailure {
  int rank = -1;
  bool abort = false;
};
TestFailure test_failure() {
  TestFailure t;
  const char* v = std::getenv("PIPESIM_SWEEP_TEST_FAIL");
  if (v == nullptr || *v == '\0') return t;
  const std::string s = v;
  t.abort = s.size() > 6 && s.compare(s.size() - 6, 6, ":abort") == 0;
  t.rank = std::atoi(s.c_str());
  return t;
}

thread_local std::string in_progress_text;  // SweepWork::in_progress()

}  // namespace

// Everything the workers read; immutable while they run.
struct SweepWork::Plan {
  const SweepSettings& settings;
  const SweepGrid& grid;
  int gpus = 0;
  // base[hardware][recompute]: the analytical config with tp 1 on one device; a combination
  // changes only tp, pipeline devices, dp and micro-batch size (with_parallelism, as
  // make_analytical_config does), so the catalog is looked up once per GPU type.
  std::vector<std::vector<AnalyticalConfig>> base;
  std::vector<std::string> model_error;  // per tp value: why the model cannot be split so, or empty
  std::vector<Group> groups;             // the most work first, for an even finish
  std::size_t threads = 0;
  std::optional<MemoryLimit> thread_memory;  // what one thread's schedule and engine may use
  TestFailure test_failure;
  int rank = 0;
};

namespace {

using Plan = SweepWork::Plan;

void skip(GroupOutcome& out, std::size_t index, SkipReason reason, const std::string& message) {
  out.skips.emplace_back(index, reason);
  auto& example = out.examples[static_cast<std::size_t>(reason)];
  if (!example) example = SkipExample{index, message};  // a group numbers its combinations upwards
}

// The config of this combination: its GPU type's and recompute setting's with its
// parallelism (the checks before it made sure tp x devices divides the GPUs).
AnalyticalConfig config_of(const Plan& plan, const Schedule& schedule, const GridPoint& point) {
  return with_parallelism(plan.base[point.hardware][point.recompute], plan.grid.tp[point.tp], schedule.num_devices,
                          plan.grid.micro_batch_size[point.micro_batch_size]);
}

SweepRow evaluate_one(Simulator& simulator, const Plan& plan, const AnalyticalCostModel& model,
                      const Schedule& schedule, const GridPoint& point, std::size_t index) {
  const SweepGrid& g = plan.grid;
  SweepRow row;
  row.index = index;
  row.point = point;
  BreakdownRecorder parts(schedule);  // no timeline is kept: only where the time goes
  const CachedCosts costs(model);                   // the model's answers, asked once per stage
  std::vector<int> nodes;  // where the analytical model places the devices: what NICs are shared by
  for (int d = 0; d < schedule.num_devices; ++d) nodes.push_back(model.node_of_device(d));
  const std::optional<SharedHardware> shared =
      shared_hardware_from_flags(plan.settings.sharing, schedule.num_devices, nodes);
  const AssessedRun run =
      assess_configuration(simulator, schedule, costs, AnalyticalSource(model), &parts, shared ? &*shared : nullptr);
  const Metrics& metrics = run.metrics;
  const Assessment& a = run.assessment;
  const TimeBreakdown breakdown = time_breakdown(schedule, run.result, costs, parts);
  for (TimeCategory c : kTimeCategories)
    row.time_parts[static_cast<std::size_t>(c)] = breakdown.mean_per_iteration_s(c);
  row.tp = a.tp;
  row.pp = g.pp[point.pp];
  row.dp = a.dp;
  row.microbatches = schedule.microbatches;
  row.global_batch = sequences_per_iteration(schedule, model.config().micro_batch_size, a.dp);
  row.optimizer_steps = a.optimizer_steps;
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

void run_group(const Plan& plan, const Group& group, GroupOutcome& out, std::atomic<std::size_t>& done) {
  const SweepGrid& g = plan.grid;
  const SweepVariant& variant = g.variants[group.variant];
  const int pp = g.pp[group.pp];
  std::optional<Schedule> schedule;
  // One per group: the points of a group simulate one schedule again and again, and only the
  // first walks its dependencies (the others differ in costs alone).
  Simulator simulator(true);
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
          done.fetch_add(1, std::memory_order_relaxed);
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
                                            {kSimulateBytesPerOp + kBreakdownBytesPerOp + kReusedWalkBytesPerOp, 0, 0},
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
          in_progress_text = configuration_text(g, index);
          try {
            if (plan.test_failure.rank == plan.rank) {
              if (plan.test_failure.abort) std::abort();
              throw std::logic_error("a failure injected by PIPESIM_SWEEP_TEST_FAIL");
            }
            const AnalyticalCostModel model(config_of(plan, *schedule, p));
            reason = SkipReason::Simulation;
            out.rows.push_back(evaluate_one(simulator, plan, model, *schedule, p, index));
          } catch (const InputError& e) {
            skip(out, index, reason, e.what());
          } catch (const std::bad_alloc&) {
            throw SweepFailure(index, configuration_text(g, index), "", exit_code::kOutOfMemory);
          } catch (const std::exception& e) {
            throw SweepFailure(index, configuration_text(g, index), bounded_line(e.what()), exit_code::kInternalError);
          }
          in_progress_text.clear();
        }
}

}  // namespace

SweepFailure::SweepFailure(std::size_t index, const std::string& where, std::string detail, int code)
    : ExitWith(code == exit_code::kOutOfMemory
                   ? "error: out of memory on " + where +
                         ": the sweep needs more memory than this machine gives it (--max-memory, fewer --jobs)"
                   : "internal error: " + where + ": " + detail + " (a bug in pipesim; please report it with the command)",
               code),
      index_(index),
      detail_(std::move(detail)) {}

std::string configuration_text(const SweepGrid& g, std::size_t index) {
  const GridPoint p = grid_point(g, index);
  return "configuration " + std::to_string(index) + " (" + g.hardware[p.hardware] + ", " + g.variants[p.variant].label +
         ", tp " + std::to_string(g.tp[p.tp]) + ", pp " + std::to_string(g.pp[p.pp]) + ", " +
         (g.by_global_batch() ? "global batch " : "m ") + std::to_string(g.batches()[p.batch]) + ", b " +
         std::to_string(g.micro_batch_size[p.micro_batch_size]) + ", recompute " + g.recompute[p.recompute] + ")";
}

SweepWork::SweepWork(const SweepSettings& settings, const SweepGrid& grid, int threads_per_process)
    : plan_(new Plan{settings, grid, settings.hardware.nodes * settings.hardware.gpus_per_node, {}, {}, {}, 0, {},
                     test_failure(), 0}) {
  if (threads_per_process < 1)
    throw InputError("--jobs must be at least 1, got " + std::to_string(threads_per_process));
  PIPESIM_ASSERT(grid.size() > 0);
  Plan& plan = *plan_;
  const HardwareOptions& ho = settings.hardware;
  const std::size_t total = grid.size();
  const std::size_t groups = grid.variants.size() * grid.pp.size() * grid.batches().size();
  plan.threads = static_cast<std::size_t>(std::min<long long>(threads_per_process, static_cast<long long>(groups)));
  // The results' slots come first; what is left is shared by the threads' schedules.
  constexpr double kBytesPerCombination = sizeof(std::optional<SweepRow>) + sizeof(std::int8_t) + sizeof(Group);
  const double results = static_cast<double>(total) * kBytesPerCombination;
  if (auto limit = memory_limit(settings.max_memory)) {
    if (results > static_cast<double>(limit->bytes))
      throw InputError("the grid has " + std::to_string(total) + " combinations, whose results alone need ~" +
                       format_bytes(results) + " (" + limit_text(*limit) + "); make the grid smaller");
    limit->bytes =
        static_cast<std::uint64_t>((static_cast<double>(limit->bytes) - results) / static_cast<double>(plan.threads));
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
}

SweepWork::~SweepWork() = default;

std::string_view SweepWork::in_progress() { return in_progress_text; }

const SweepGrid& SweepWork::grid() const { return plan_->grid; }
const SweepSettings& SweepWork::settings() const { return plan_->settings; }
std::size_t SweepWork::groups() const { return plan_->groups.size(); }
std::size_t SweepWork::group_size() const {
  const SweepGrid& g = plan_->grid;
  return g.hardware.size() * g.tp.size() * g.micro_batch_size.size() * g.recompute.size();
}
double SweepWork::work(std::size_t group) const {
  const Group& g = plan_->groups[group];
  return static_cast<double>(plan_->grid.pp[g.pp]) * plan_->grid.batches()[g.batch];
}
std::size_t SweepWork::threads() const { return plan_->threads; }
const std::optional<MemoryLimit>& SweepWork::thread_memory() const { return plan_->thread_memory; }
void SweepWork::set_thread_memory(const std::optional<MemoryLimit>& limit) { plan_->thread_memory = limit; }
void SweepWork::set_rank(int rank) { plan_->rank = rank; }

GroupOutcome SweepWork::evaluate(std::size_t group, std::atomic<std::size_t>& done) const {
  PIPESIM_ASSERT(group < plan_->groups.size());
  GroupOutcome out;
  run_group(*plan_, plan_->groups[group], out, done);
  return out;
}

SweepCollector::SweepCollector(const SweepWork& work)
    : work_(work), rows_(work.grid().size()), reason_(work.grid().size(), -1) {}

void SweepCollector::add(GroupOutcome&& outcome) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (SweepRow& row : outcome.rows) {
    PIPESIM_ASSERT(row.index < rows_.size() && !rows_[row.index] && reason_[row.index] < 0);
    rows_[row.index] = std::move(row);
  }
  for (const auto& [index, reason] : outcome.skips) {
    PIPESIM_ASSERT(index < rows_.size() && !rows_[index] && reason_[index] < 0);
    reason_[index] = static_cast<std::int8_t>(reason);
  }
  for (std::size_t r = 0; r < kNumSkipReasons; ++r)
    if (auto& e = outcome.examples[r]; e && (!examples_[r] || e->index < examples_[r]->index))
      examples_[r] = std::move(e);
}

SweepResult SweepCollector::finish(std::size_t threads) {
  const std::lock_guard<std::mutex> lock(mutex_);
  SweepResult result;
  result.combinations = rows_.size();
  result.threads = threads;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    PIPESIM_ASSERT(rows_[i] || reason_[i] >= 0);  // every combination came back
    if (rows_[i]) result.rows.push_back(std::move(*rows_[i]));
    else ++result.skipped[static_cast<std::size_t>(reason_[i])].count;
  }
  for (std::size_t r = 0; r < kNumSkipReasons; ++r)
    if (examples_[r]) result.skipped[r].example = examples_[r]->message;
  if (!result.rows.empty()) mark_equivalents(work_.grid(), result.rows);
  const SweepSettings& s = work_.settings();
  for (SweepRow& r : result.rows)
    r.passes_filters = (s.max_mismatch < 0 || r.max_mismatch <= s.max_mismatch) &&
                       (s.max_delay < 0 || r.max_delay <= s.max_delay);
  return result;
}

GroupQueue::GroupQueue(const SweepWork& work) : work_after_(work.groups() + 1, 0.0) {
  for (std::size_t g = work.groups(); g-- > 0;) work_after_[g] = work_after_[g + 1] + work.work(g);
}

std::optional<std::size_t> GroupQueue::next() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (next_ + 1 >= work_after_.size()) return std::nullopt;
  return next_++;
}

std::pair<std::size_t, std::size_t> GroupQueue::take(double share, double at_least) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t end = work_after_.size() - 1, first = next_;
  if (first == end) return {first, first};
  const double budget = std::max(work_after_[first] * share, at_least);
  std::size_t last = first + 1;
  while (last < end && work_after_[first] - work_after_[last + 1] <= budget) ++last;
  next_ = last;
  return {first, last};
}

std::vector<std::pair<std::size_t, std::size_t>> GroupQueue::take_first_chunks(int ranks, double share) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (int r = 1; r < ranks; ++r) out.push_back(take(share));
  return out;
}

double GroupQueue::left() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return work_after_[next_];
}

void GroupQueue::close() {
  const std::lock_guard<std::mutex> lock(mutex_);
  next_ = work_after_.size() - 1;
}

void evaluate_groups(const SweepWork& work, std::size_t threads, std::atomic<std::size_t>& done,
                     const std::function<std::optional<std::size_t>()>& next,
                     const std::function<void(GroupOutcome&&)>& collect, const std::function<void()>& on_failure,
                     std::chrono::microseconds tick_every, const std::function<void()>& tick) {
  std::mutex mutex;
  std::condition_variable finished_cv;
  std::size_t finished = 0;
  std::exception_ptr failure;  // the first; the others stop at their next group
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      try {
        while (!stop.load()) {
          const std::optional<std::size_t> group = next();
          if (!group) break;
          collect(work.evaluate(*group, done));
        }
      } catch (...) {
        bool first = false;
        {
          const std::lock_guard<std::mutex> lock(mutex);
          first = !failure;
          if (first) failure = std::current_exception();
          stop.store(true);
        }
        if (first && on_failure) on_failure();
      }
      const std::lock_guard<std::mutex> lock(mutex);
      ++finished;
      finished_cv.notify_one();
    });
  {
    std::unique_lock<std::mutex> lock(mutex);
    while (!finished_cv.wait_for(lock, tick_every, [&] { return finished == threads; })) {
      lock.unlock();
      if (tick) tick();
      lock.lock();
    }
  }
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace pipesim
