#include "tools/trace_limit.hpp"

#include <algorithm>

#include "cost_models/units.hpp"

namespace pipesim {

void TraceRecorder::on_op(const OpRecord& r) {
  // The engine reports records in time order, so the vectors' lengths at the moment the
  // limit is reached mark a consistent prefix of the run.
  if (!cut_ && max_ops_ > 0 && timeline.ops.size() == max_ops_)
    cut_ = Cut{timeline.ops.size(), timeline.transfers.size(), timeline.collectives.size(), timeline.memory.size(),
               timeline.ops.empty() ? 0 : timeline.ops.back().end};
  if (recording()) timeline.ops.push_back(r);
}

void TraceRecorder::on_transfer(const TransferRecord& r) {
  if (recording()) timeline.transfers.push_back(r);
}

void TraceRecorder::on_collective(const CollectiveRecord& r) {
  if (recording()) timeline.collectives.push_back(r);
}

void TraceRecorder::on_memory(const MemoryRecord& r) {
  if (recording()) timeline.memory.push_back(r);
}

const Timeline& TraceRecorder::trace_timeline() {
  if (!cut_ || !keep_all_) return timeline;  // without keep_all, recording stopped at the cut
  const auto prefix = [](auto& out, const auto& all, std::size_t n) {
    out.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
  };
  prefix(prefix_.ops, timeline.ops, cut_->ops);
  prefix(prefix_.transfers, timeline.transfers, cut_->transfers);
  prefix(prefix_.collectives, timeline.collectives, cut_->collectives);
  prefix(prefix_.memory, timeline.memory, cut_->memory);
  return prefix_;
}

std::string TraceRecorder::notice(const Schedule& schedule) const {
  if (!cut_) return {};
  return truncation_notice(cut_->ops, schedule.total_ops(), &cut_->time);
}

std::size_t traced_ops(std::size_t total_ops, std::size_t max_trace_ops) {
  return max_trace_ops == 0 ? total_ops : std::min(total_ops, max_trace_ops);
}

std::string truncation_notice(std::size_t kept_ops, std::size_t total_ops, const Tick* until) {
  std::string text = "truncated to the first " + std::to_string(kept_ops) + " of " + std::to_string(total_ops) + " ops";
  if (until) text += " (until " + format_duration(*until) + ")";
  return text + "; pass --max-trace-ops to change the limit";
}

}  // namespace pipesim
