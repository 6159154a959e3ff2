#pragma once
// Where the time goes: each device's time over the window that time per iteration is
// measured over (iteration_window, sim/metrics.hpp), cut into categories that add up,
// to the nanosecond, to per_iteration x counted on every device.
//
//   busy (a compute op runs)  its duration, divided by the cost model (CostModel::compute_parts):
//     recompute     rerunning the forward inside a backward (--recompute full / selective)
//     tp_comm       tensor-parallel collectives not hidden under the op's kernels
//     pipeline      the op waiting for its own send (blocking p2p)
//     dp_sync       gradient reductions inside an OptStep (data-parallel, tied embeddings)
//     contention    the op's time beyond its cost model's duration: what shared hardware
//                   (sim/resources.hpp: shared cores, interference, overlap) slowed it by
//     the rest      the op's own work: forward (F), backward (B), input_grad (I),
//                   weight_grad (W), optimizer (OptStep)
//   not busy
//     host          the device's thread does its own work between two ops (HostWorkRecord,
//                   sim/records.hpp: the executor's work between ops, a message's copy and
//                   the call that wakes its receiver; a profiled CPU cost model's)
//     dp_sync       one of the device's GradSync collectives runs (exposed: nothing computes under it)
//     pipeline      between the device's first op and the end of its last, waiting for an
//                   input from another device (a transfer in flight, another stage's work)
//     idle          before the device's first op and after its last (pipeline fill and drain)
//
// An op that straddles an edge of the window counts its own work first, then its parts in
// the order above. With iterations >= 2 the window holds iterations - 1 whole iterations
// of steady state (the first iteration's fill is left out); with one, [0, makespan].
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "schedules/schedule.hpp"
#include "sim/buffer.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/observer.hpp"

namespace pipesim {

enum class TimeCategory : std::uint8_t {
  Forward, Backward, InputGrad, WeightGrad, Recompute, TpComm, Pipeline, DpSync, Optimizer, Contention, Host, Idle
};
inline constexpr int kNumTimeCategories = 12;
inline constexpr std::array<TimeCategory, kNumTimeCategories> kTimeCategories = {
    TimeCategory::Forward,  TimeCategory::Backward, TimeCategory::InputGrad,  TimeCategory::WeightGrad,
    TimeCategory::Recompute, TimeCategory::TpComm,  TimeCategory::Pipeline,   TimeCategory::DpSync,
    TimeCategory::Optimizer, TimeCategory::Contention, TimeCategory::Host,   TimeCategory::Idle};

// "forward", "backward", "input_grad", "weight_grad", "recompute", "tp_comm", "pipeline",
// "dp_sync", "optimizer", "contention", "host", "idle": JSON keys (docs/json.md).
std::string_view time_category_key(TimeCategory c);
// For tables and charts: "F", "B", "I", "W", "recompute", "TP comm", "pipeline", "DP sync",
// "optimizer", "contention", "host", "idle".
std::string_view time_category_label(TimeCategory c);

// Ticks per category, indexed by TimeCategory.
struct CategoryTicks {
  std::array<Tick, kNumTimeCategories> ticks{};
  Tick& operator[](TimeCategory c) { return ticks[static_cast<std::size_t>(c)]; }
  Tick operator[](TimeCategory c) const { return ticks[static_cast<std::size_t>(c)]; }
  Tick total() const;
  friend bool operator==(const CategoryTicks&, const CategoryTicks&) = default;
};

struct TimeBreakdown {
  IterationWindow window;
  std::vector<CategoryTicks> per_device;  // over the window: each totals window.end - window.start
  Tick window_ticks() const { return window.end - window.start; }
  // Per device: the time a compute op runs in the window (all of it but the not-busy parts).
  std::vector<Tick> busy;
  // The device that computes longest in the window (the first of equals): the bottleneck.
  int critical_device = 0;
  double busy_share(int device) const;
  // Per iteration, in seconds: a device's category, and its mean over the devices.
  double per_iteration_s(int device, TimeCategory c) const;
  double mean_per_iteration_s(TimeCategory c) const;
  // Share of the iteration (of the window) a device's category, or its mean, takes.
  double share(int device, TimeCategory c) const;
  double mean_share(TimeCategory c) const;
};

// Keeps what time_breakdown needs while the engine runs, in one of two ways:
//   totals  where the engine adds the op records up (OpTotals, sim/observer.hpp: the ready
//           pass under a model whose answers are the same for every micro-batch) and the
//           window is the whole run (one iteration): each (pipeline, stage, kind)'s op count
//           and duration, so nothing per op is kept, and time_breakdown multiplies. At
//           p = 1024, m = 8192 the spans below are 268 MB and their pass 16.8 M ops
//           (docs/performance.md, issue 19 part 5).
//   spans   otherwise: when each of a device's compute ops ran, at its position in the
//           device's list (16 bytes per op of the schedule: the position is the op, so no
//           index is kept), and the spans of its GradSync collectives and of its thread's
//           host work; time_breakdown cuts them to the window once it is known.
// Both give the same figures to the nanosecond (tests/breakdown_test.cpp runs every generator
// both ways).
class BreakdownRecorder final : public SimObserver {
 public:
  // For a run of `schedule` (which must outlive the recorder). `keep_spans`: never take
  // totals (tests compare the two ways). Performance: the spans of every device's list have
  // their place in one array, sized for the schedule's ops when the first op record comes,
  // so that nothing grows and the array can have huge pages (sim/buffer.hpp).
  explicit BreakdownRecorder(const Schedule& schedule, bool keep_spans = false);
  std::uint8_t wants() const override {
    return (takes_totals_ ? kOpTotals : kOpRecords) | kCollectiveRecords | kHostWorkRecords;
  }
  bool needs_time_order() const override { return false; }  // one list per device
  void restart() override;
  void on_op(const OpRecord& r) override;
  void on_op_totals(const OpTotals& t) override;
  void on_collective(const CollectiveRecord& r) override;
  void on_host_work(const HostWorkRecord& r) override;

  struct Span {
    Tick start, end;
  };
  int devices() const { return static_cast<int>(begin_.size()); }
  // The engine's totals, if it gave them (then there are no spans).
  const std::optional<OpTotals>& totals() const { return totals_; }
  // Device d's ops by their index in its list: the compute ops' times (the others' entries
  // mean nothing). Empty if no op record came (no compute op ran).
  std::span<const Span> ops(int d) const {
    if (!spans_) return {};
    const auto i = static_cast<std::size_t>(d);
    return {spans_ + begin_[i], size_[i]};
  }
  // How many compute ops of device d have a record.
  std::size_t recorded(int d) const { return count_[static_cast<std::size_t>(d)]; }
  const std::vector<std::vector<Span>>& syncs() const { return syncs_; }
  const std::vector<std::vector<Span>>& host_work() const { return host_work_; }  // per device, in time order

 private:
  const Schedule& schedule_;
  const bool takes_totals_;
  Buffer<Span> buffer_;
  Span* spans_ = nullptr;                          // null until the first op record
  std::vector<std::size_t> begin_, size_, count_;  // per device: its list in spans_, records
  std::vector<Tick> last_end_;                      // per device: its latest record's end
  std::vector<std::vector<Span>> syncs_, host_work_;
  std::optional<OpTotals> totals_;
};

// The breakdown of a run of `schedule` under `costs` (the model it ran under) whose records
// `recorder` kept.
TimeBreakdown time_breakdown(const Schedule& schedule, const SimResult& result, const CostModel& costs,
                             const BreakdownRecorder& recorder);

}  // namespace pipesim
