// sim_bench: how fast, and how lean, is simulate()?
//
// For 1F1B under the uniform cost model (F = 1 ms, B = 2 ms, zero-cost links, no
// observer) at several (p, m), three benchmarks run in the same process:
//
//   BM_Simulate/p/m      Simulator::run(schedule, costs) and nothing else in the timed
//                        loop, one Simulator for all iterations (as a sweep runs it)
//   BM_SimulateEventLoop/p/m  BM_Simulate with the ready pass turned off: the event loop
//   BM_SimulateOnce/p/m  simulate(schedule, costs): a fresh Simulator every time, so a
//                        schedule over a million ops also pays for fresh pages (engine.hpp)
//   BM_Baseline/p/m      visits every op of the same schedule once and sums its duration
//                        from the same cost model: the least any simulator has to do
//
// The ratio Simulate / Baseline of one run factors out the speed of the machine (clock,
// CPU model), and is printed in the summary at the end. It does not factor out all the
// noise of a shared machine: the engine's working set is large and random-access, so it
// suffers from other jobs' cache use far more than the streaming baseline does.
//
// Counters (times are CPU time of the benchmark thread):
//   ops_per_s     simulated compute ops per second (every op but GradSync)
//   time_per_op   CPU time per compute op (the summary gives it in ns)
//   bytes_per_op  peak heap bytes during one run above what was live before it, divided
//                 by the op count (operator new/delete are replaced below to keep track of
//                 live and peak bytes); for BM_Simulate, the warm-up run of its
//                 Simulator, which allocates the array it then keeps
//
// The schedule is generated once per benchmark, outside the timed loop. The summary
// after the console table gives, per size, Simulate ns/op, Baseline ns/op and their
// ratio, and for the p = 64 series how much the time grows each time m (and so the op
// count) doubles. With --benchmark_repetitions=N it gives the median and the fastest
// repetition ("min", added to the usual mean/median/stddev/cv): on a shared machine other
// jobs only ever add time, so the minimum is the steadiest estimate, the median the
// typical one. docs/performance.md has the commands.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>  // isatty

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"

// ---- heap accounting -------------------------------------------------------------------
// Every allocation through operator new gets a header holding its size: 16 bytes (which
// keeps malloc's alignment), or one alignment unit for over-aligned types (the engine's
// 32-byte slots).
namespace heap {

std::atomic<std::int64_t> live{0};  // bytes requested and not yet freed
std::atomic<std::int64_t> peak{0};  // high-water mark of `live` since the last reset

constexpr std::size_t kHeader = 16;

std::size_t header(std::size_t align) { return std::max(kHeader, align); }

void* allocate(std::size_t size, std::size_t align = kHeader) noexcept {
  const std::size_t h = header(align);
  void* block = align <= kHeader ? std::malloc(size + h) : std::aligned_alloc(h, (size + 2 * h - 1) / h * h);
  if (block == nullptr) return nullptr;
  *static_cast<std::size_t*>(block) = size;
  const std::int64_t now = live.fetch_add(static_cast<std::int64_t>(size), std::memory_order_relaxed) +
                           static_cast<std::int64_t>(size);
  std::int64_t high = peak.load(std::memory_order_relaxed);
  while (now > high && !peak.compare_exchange_weak(high, now, std::memory_order_relaxed)) {
  }
  return static_cast<char*>(block) + h;
}

void release(void* ptr, std::size_t align = kHeader) noexcept {
  if (ptr == nullptr) return;
  void* block = static_cast<char*>(ptr) - header(align);
  live.fetch_sub(static_cast<std::int64_t>(*static_cast<std::size_t*>(block)), std::memory_order_relaxed);
  std::free(block);
}

void* allocate_or_throw(std::size_t size, std::size_t align = kHeader) {
  void* p = allocate(size, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Starts a measurement: peak := live; returns live.
std::int64_t reset_peak() {
  const std::int64_t now = live.load(std::memory_order_relaxed);
  peak.store(now, std::memory_order_relaxed);
  return now;
}

}  // namespace heap

void* operator new(std::size_t size) { return heap::allocate_or_throw(size); }
void* operator new[](std::size_t size) { return heap::allocate_or_throw(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return heap::allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return heap::allocate(size); }
void operator delete(void* ptr) noexcept { heap::release(ptr); }
void operator delete[](void* ptr) noexcept { heap::release(ptr); }
void operator delete(void* ptr, std::size_t) noexcept { heap::release(ptr); }
void operator delete[](void* ptr, std::size_t) noexcept { heap::release(ptr); }
void operator delete(void* ptr, const std::nothrow_t&) noexcept { heap::release(ptr); }
void operator delete[](void* ptr, const std::nothrow_t&) noexcept { heap::release(ptr); }
void* operator new(std::size_t size, std::align_val_t a) { return heap::allocate_or_throw(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return heap::allocate_or_throw(size, static_cast<std::size_t>(a)); }
void operator delete(void* ptr, std::align_val_t a) noexcept { heap::release(ptr, static_cast<std::size_t>(a)); }
void operator delete[](void* ptr, std::align_val_t a) noexcept { heap::release(ptr, static_cast<std::size_t>(a)); }
void operator delete(void* ptr, std::size_t, std::align_val_t a) noexcept { heap::release(ptr, static_cast<std::size_t>(a)); }
void operator delete[](void* ptr, std::size_t, std::align_val_t a) noexcept { heap::release(ptr, static_cast<std::size_t>(a)); }

namespace {

using namespace pipesim;

Schedule make_schedule(const benchmark::State& state) {
  ScheduleParams params;
  params.p = static_cast<int>(state.range(0));
  params.m = static_cast<int>(state.range(1));
  return generate("1f1b", params);
}

UniformCostModel make_costs() {
  UniformCostConfig config;
  config.stage.fwd = 1 * kNsPerMs;
  config.stage.bwd = 2 * kNsPerMs;
  return UniformCostModel(config);  // no link settings: links cost nothing
}

std::int64_t compute_ops(const Schedule& s) {
  std::int64_t n = 0;
  for (const auto& list : s.ops)
    for (const Op& op : list) n += is_compute(op.kind) ? 1 : 0;
  return n;
}

// ops_per_s and time_per_op from the op count; both use the CPU time of all iterations.
void set_rate_counters(benchmark::State& state, std::int64_t ops) {
  const auto n = static_cast<double>(ops);
  state.counters["ops_per_s"] = benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["time_per_op"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// `reuse`: one Simulator for every iteration, warmed up by one untimed run (Google
// Benchmark calls this function anew for each batch of iterations it times, and a fresh
// Simulator's first run pays for fresh pages: the one-off cost BM_SimulateOnce measures).
// Otherwise simulate(), a fresh Simulator each time.
// `event_loop`: the Simulator runs every schedule in its event loop (Simulator::always_event_loop),
// where otherwise 1F1B takes the ready pass (sim/ready_pass.hpp): the two paired in one run.
void simulate_bench(benchmark::State& state, bool reuse, bool event_loop = false) {
  const Schedule schedule = make_schedule(state);
  const UniformCostModel costs = make_costs();
  const std::int64_t ops = compute_ops(schedule);
  std::int64_t extra_peak = 0;
  Simulator simulator;
  simulator.always_event_loop(event_loop);
  if (reuse) {  // the warm-up run allocates the array the Simulator keeps: it counts
    const std::int64_t before = heap::reset_peak();
    benchmark::DoNotOptimize(simulator.run(schedule, costs).makespan);
    extra_peak = heap::peak.load(std::memory_order_relaxed) - before;
  }
  for (auto _ : state) {
    const std::int64_t before = heap::reset_peak();
    SimResult r = reuse ? simulator.run(schedule, costs) : simulate(schedule, costs);
    extra_peak = std::max(extra_peak, heap::peak.load(std::memory_order_relaxed) - before);
    benchmark::DoNotOptimize(r.makespan);
  }
  set_rate_counters(state, ops);
  state.counters["bytes_per_op"] = static_cast<double>(extra_peak) / static_cast<double>(ops);
}

void BM_Simulate(benchmark::State& state) { simulate_bench(state, true); }
void BM_SimulateOnce(benchmark::State& state) { simulate_bench(state, false); }
void BM_SimulateEventLoop(benchmark::State& state) { simulate_bench(state, true, true); }

void BM_Baseline(benchmark::State& state) {
  const Schedule schedule = make_schedule(state);
  const UniformCostModel costs = make_costs();
  const CostModel& model = costs;  // through the interface, as the engine calls it
  const OpScale scale = scale_of(schedule);
  const std::int64_t ops = compute_ops(schedule);
  for (auto _ : state) {
    Tick total = 0;
    for (const auto& list : schedule.ops)
      for (const Op& op : list)
        if (is_compute(op.kind)) total += model.compute_time(op, scale);
    benchmark::DoNotOptimize(total);
  }
  set_rate_counters(state, ops);
}

// (p, m): the sizes of the issue, plus p = 64 with m doubling from 1024 to 8192.
void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"p", "m"});
  for (auto [p, m] : std::vector<std::pair<int, int>>{
           {8, 64}, {64, 1024}, {64, 2048}, {64, 4096}, {64, 8192}, {128, 2048}})
    b->Args({p, m});
  b->Unit(benchmark::kMillisecond);
  b->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
}

BENCHMARK(BM_Simulate)->Apply(sizes);
BENCHMARK(BM_SimulateOnce)->Apply(sizes);
BENCHMARK(BM_SimulateEventLoop)->Apply(sizes);
BENCHMARK(BM_Baseline)->Apply(sizes);

// ---- summary ---------------------------------------------------------------------------
// A console reporter that also keeps time_per_op and bytes_per_op of every run, preferring
// the "min" aggregate when repetitions are on, and prints the ratios at the end.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  explicit SummaryReporter(OutputOptions options) : ConsoleReporter(options) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const bool aggregate = run.run_type == Run::RT_Aggregate;
      const bool min = aggregate && run.aggregate_name == "min";
      const bool median = aggregate && run.aggregate_name == "median";
      if (aggregate && !min && !median) continue;
      Entry& e = results_[run.run_name.str()];
      const double ns = value(run, "time_per_op") * 1e9;
      if (median) {
        e.ns_median = ns;
        continue;
      }
      if (e.from_min && !min) continue;
      e.from_min = min;
      e.ns_min = ns;
      e.bytes_per_op = value(run, "bytes_per_op");
    }
  }

  void print_summary() const {
    const bool reps = any_min();
    std::printf("\nsummary (%s)\n", reps ? "median and fastest of the repetitions" : "one run each");
    std::printf("sim: Simulator::run, one Simulator per size; once: simulate(), a fresh one per run\n");
    std::printf("%-14s %11s %11s %11s %11s %10s %11s %11s %10s\n", "size", "sim ns/op", "sim min", "once ns/op",
                "base ns/op", "sim/base", "sim Mops/s", "Mops/s max", "bytes/op");
    std::map<int, std::map<int, std::pair<Entry, Entry>>> series;  // p -> m -> (sim, once)
    for (const auto& [name, e] : results_) {
      const std::string prefix = "BM_Simulate/";
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string size = name.substr(prefix.size());
      const Entry once = entry("BM_SimulateOnce/" + size);
      const double base_ns = entry("BM_Baseline/" + size).typical();
      std::printf("%-14s %11.1f %11.1f %11.1f %11.2f %10.1f %11.2f %11.2f %10.1f\n", size.c_str(), e.typical(), e.ns_min,
                  once.typical(), base_ns, base_ns > 0 ? e.typical() / base_ns : 0.0, 1e3 / e.typical(), 1e3 / e.ns_min,
                  e.bytes_per_op);
      int p = 0, m = 0;
      if (std::sscanf(size.c_str(), "p:%d/m:%d", &p, &m) == 2) series[p][m] = {e, once};
    }
    // Time ratio when the op count doubles: (ns/op at 2m * 2 ops) / (ns/op at m * ops).
    for (const auto& [p, by_m] : series) {
      for (const auto& [m, e] : by_m) {
        auto next = by_m.find(2 * m);
        if (next == by_m.end()) continue;
        const auto& [sim, once] = e;
        const auto& [sim2, once2] = next->second;
        std::printf("doubling p=%d m=%d -> m=%d: time x%.2f (median), x%.2f (fastest); once x%.2f (median)\n", p, m,
                    2 * m, 2.0 * sim2.typical() / sim.typical(), 2.0 * sim2.ns_min / sim.ns_min,
                    once.typical() > 0 ? 2.0 * once2.typical() / once.typical() : 0.0);
      }
    }
  }

 private:
  struct Entry {
    double ns_min = 0;     // fastest repetition (or the only run)
    double ns_median = 0;  // median of the repetitions; 0 without repetitions
    double bytes_per_op = 0;
    bool from_min = false;
    double typical() const { return ns_median > 0 ? ns_median : ns_min; }
  };
  Entry entry(const std::string& name) const {
    auto it = results_.find(name);
    return it == results_.end() ? Entry{} : it->second;
  }
  static double value(const Run& run, const char* counter) {
    auto it = run.counters.find(counter);
    return it == run.counters.end() ? 0.0 : it->second.value;
  }
  bool any_min() const {
    for (const auto& [name, e] : results_)
      if (e.from_min) return true;
    return false;
  }
  std::map<std::string, Entry> results_;
};

}  // namespace

int main(int argc, char** argv) {
  // A reporter passed in does not see --benchmark_color, so look for it here.
  bool color = isatty(STDOUT_FILENO) != 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--benchmark_color=false" || arg == "--benchmark_color=no") color = false;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  SummaryReporter reporter(color ? benchmark::ConsoleReporter::OO_ColorTabular : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_summary();
  benchmark::Shutdown();
  return 0;
}
