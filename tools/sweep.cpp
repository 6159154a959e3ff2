#include "tools/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "tools/sweep_work.hpp"

namespace pipesim {

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
  const SweepWork work(settings, grid, jobs);
  return run_sweep(work, progress);
}

SweepResult run_sweep(const SweepWork& work, const SweepProgress& progress) {
  SweepCollector results(work);
  GroupQueue queue(work);
  std::atomic<std::size_t> done{0};
  const std::size_t total = work.grid().size();
  evaluate_groups(
      work, work.threads(), done, [&] { return queue.next(); }, [&](GroupOutcome&& o) { results.add(std::move(o)); },
      [&] { queue.close(); }, std::chrono::milliseconds(100), [&] {
        if (progress) progress(done.load(std::memory_order_relaxed), total);
      });
  if (progress) progress(total, total);
  return results.finish(work.threads());
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
