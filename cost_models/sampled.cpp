#include "cost_models/sampled.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "core/percentile.hpp"

namespace pipesim {
namespace {

// Domains of the hashed keys, so an op's draw never equals a link's.
enum Domain : std::uint64_t { kCompute = 1, kLink = 2, kAllreduce = 3, kSyncWork = 4 };

std::uint64_t hash_all(std::initializer_list<std::uint64_t> values) {
  std::uint64_t h = 0;
  for (std::uint64_t v : values) h = mix64(h ^ v);
  return h;
}

// The element of `items` whose size(item) is nearest `target` (the first of two as near).
template <typename T, typename Size>
const T& nearest(const std::vector<T>& items, double target, Size size) {
  PIPESIM_ASSERT(!items.empty());
  const auto distance = [&](const T& x) { return std::abs(static_cast<double>(size(x)) - target); };
  return *std::min_element(items.begin(), items.end(), [&](const T& x, const T& y) { return distance(x) < distance(y); });
}

Tick scaled(Tick t, double factor) { return static_cast<Tick>(std::llround(static_cast<double>(t) * factor)); }

// Sums the expected times (what the profiled model predicts, TimingStats::expected) and the
// u-quantiles of a set of measurements, each `count` times.
struct Draw {
  double u = 0.5;
  double expected = 0, drawn = 0;
  void add(double count, const TimingStats& t) {
    expected += count * t.expected();
    drawn += count * timing_quantile(t, u);
  }
  double factor() const { return expected > 0 ? drawn / expected : 1.0; }
};

}  // namespace

double timing_quantile(const TimingStats& t, double q) { return t.at_quantile(std::clamp(q, 0.0, 1.0)); }

namespace {

// The median over `times` of (p90 - p10) / median.
double median_spread(const std::vector<const TimingStats*>& times) {
  std::vector<double> spreads;
  for (const TimingStats* t : times)
    if (t->median > 0) spreads.push_back((t->p90 - t->p10) / t->median);
  if (spreads.empty()) return 0;
  std::sort(spreads.begin(), spreads.end());
  return percentile(spreads, 0.5);
}

}  // namespace

double repeat_spread(const Profile& p) {
  std::vector<const TimingStats*> times;
  for (const MicroBatchProfile& mb : p.micro_batches)
    for (const TimingStats* t : {&mb.block.forward, &mb.block.input_grad, &mb.block.weight_grad}) times.push_back(t);
  return median_spread(times);
}

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double unit_interval(std::uint64_t hash) { return static_cast<double>(hash >> 11) * 0x1.0p-53; }

SampledCostModel::SampledCostModel(const ProfiledCostModel& base, std::uint64_t seed, std::uint64_t draw)
    : RetimedCostModel(base), base_(base), seed_(seed), draw_(draw) {}

std::uint64_t SampledCostModel::key(std::uint64_t what) const { return hash_all({seed_, draw_, what}); }

double SampledCostModel::compute_factor(const Op& op, OpScale scale, double u) const {
  const ProfiledCostConfig& c = base_.config();
  const Profile& p = c.profile;
  const StageLayout l = stage_layout(c.model.layers, op.stage, scale.num_stages);
  Draw d{u};
  if (op.kind == OpKind::OptStep) {
    d.add(l.blocks, base_.optimizer_step(p.block_optimizer));
    if (l.embedding) d.add(1, base_.optimizer_step(p.embedding_optimizer));
    if (l.head) d.add(1, base_.optimizer_step(p.head_norm_optimizer));
    if (l.head && base_.head_holds_weight(scale.num_stages)) d.add(1, base_.optimizer_step(p.head_weight_optimizer));
    return d.factor();
  }
  const MicroBatchProfile& mb = nearest(p.micro_batches, static_cast<double>(c.micro_batch_size) / scale.microbatch_split,
                                        [](const MicroBatchProfile& m) { return m.size; });
  const auto pass = [&](double count, const PassProfile& pp) {
    if (op.kind == OpKind::F) d.add(count, pp.forward);
    if (op.kind == OpKind::B || op.kind == OpKind::I) d.add(count, pp.input_grad);  // the embedding's: 0
    if (op.kind == OpKind::B || op.kind == OpKind::W) d.add(count, pp.weight_grad);
  };
  pass(l.blocks, mb.block);
  if (l.embedding) pass(1, mb.embedding);
  if (l.head) pass(1, mb.head);
  return d.factor();
}

Tick SampledCostModel::compute_time(const Op& op, OpScale scale) const {
  const Tick median = base_.compute_time(op, scale);  // checks the op and the scale first
  const double u = unit_interval(key(hash_all({kCompute, static_cast<std::uint64_t>(op.kind),
                                               static_cast<std::uint32_t>(op.stage),
                                               static_cast<std::uint32_t>(op.microbatch),
                                               static_cast<std::uint32_t>(op.pipeline)})));
  return scaled(median, compute_factor(op, scale, u));
}

double SampledCostModel::link_factor(std::int64_t bytes, std::uint64_t what) const {
  const std::vector<LinkSample>& samples = base_.config().profile.link.samples;
  if (samples.empty()) return 1.0;
  const LinkSample& near = nearest(samples, static_cast<double>(bytes), [](const LinkSample& l) { return l.bytes; });
  Draw d{unit_interval(key(what))};
  d.add(1, near.time);
  return d.factor();
}

TransferCost SampledCostModel::transfer(int src_device, int dst_device, std::int64_t bytes) const {
  const TransferCost median = base_.transfer(src_device, dst_device, bytes);
  const double f = link_factor(bytes, hash_all({kLink, static_cast<std::uint32_t>(src_device),
                                                static_cast<std::uint32_t>(dst_device)}));
  TransferCost cost = median;
  cost.occupancy = scaled(median.occupancy, f);
  cost.latency = scaled(median.latency, f);
  cost.sender = scaled(median.sender, f);
  cost.wake = scaled(median.wake, f);
  return cost;
}

double SampledCostModel::sync_work_factor(const Op& grad_sync) const {
  const ProfileGradientCopies& g = base_.config().profile.gradient_copies;
  Draw d{unit_interval(key(hash_all({kSyncWork, static_cast<std::uint32_t>(grad_sync.stage),
                                     static_cast<std::uint32_t>(grad_sync.pipeline)})))};
  d.add(1, g.copy_out);
  d.add(1, g.copy_in);
  return d.factor();
}

Tick SampledCostModel::grad_sync_work(const Op& grad_sync, OpScale scale) const {
  const Tick expected = base_.grad_sync_work(grad_sync, scale);
  if (expected == 0) return 0;
  return scaled(expected, sync_work_factor(grad_sync));
}

Tick SampledCostModel::grad_sync_work_after(const Op& grad_sync, OpScale scale) const {
  const Tick expected = base_.grad_sync_work_after(grad_sync, scale);
  if (expected == 0) return 0;
  // The same draw as the whole work's, so the part never exceeds the whole.
  const double f = sync_work_factor(grad_sync);
  return std::min(scaled(base_.grad_sync_work(grad_sync, scale), f), scaled(expected, f));
}

Tick SampledCostModel::allreduce_time(int participants, std::int64_t bytes) const {
  const Tick median = base_.allreduce_time(participants, bytes);
  if (median == 0) return 0;
  const std::uint64_t what = hash_all({kAllreduce, static_cast<std::uint32_t>(participants), static_cast<std::uint64_t>(bytes)});
  if (base_.collective_style() == CollectiveStyle::MemberThreads) {  // the last member's sums
    Draw d{unit_interval(key(what))};
    d.add(1, base_.config().profile.gradient_copies.sum);
    return scaled(median, d.factor());
  }
  return scaled(median, link_factor(bytes, what));
}

}  // namespace pipesim
