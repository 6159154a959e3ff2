#include "tools/trace_recorder.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <streambuf>

#include "core/error.hpp"
#include "core/units.hpp"

namespace pipesim {
namespace {

// Counts what is written and keeps none of it.
class CountingBuffer final : public std::streambuf {
 public:
  std::uint64_t count = 0;

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) ++count;
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    count += static_cast<std::uint64_t>(n);
    return n;
  }
};

constexpr std::size_t kMaxRecordOps = 1'000'000;
constexpr const char* kBudgetHint = "pass --trace-budget to change it (0 = no limit)";  // the batch writer's ~600 bytes per op: ~600 MB

// "0-10, 99": sorted iterations as ranges.
std::string ranges_text(const std::vector<int>& sorted) {
  std::string text;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(sorted[i]);
    if (j > i) text += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

std::string format_trace_bytes(std::uint64_t bytes) {
  char buf[32];
  const auto b = static_cast<double>(bytes);
  if (bytes < 1000'000)
    std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  else if (bytes < 1000'000'000)
    std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  return buf;
}

std::size_t budget_record_ops(std::uint64_t budget_bytes) {
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(budget_bytes / kMinTraceBytesPerOp, 1, kMaxRecordOps));
}

int op_iteration(const Schedule& s, OpRef ref) {
  const auto& list = s.ops[static_cast<std::size_t>(ref.device)];
  const auto at = static_cast<std::size_t>(ref.index);
  if (has_microbatch(list[at].kind)) return s.iteration_of(list[at].microbatch);
  for (std::size_t i = at; i-- > 0;)
    if (has_microbatch(list[i].kind)) return s.iteration_of(list[i].microbatch);
  for (std::size_t i = at + 1; i < list.size(); ++i)
    if (has_microbatch(list[i].kind)) return s.iteration_of(list[i].microbatch);
  return 0;
}

std::uint64_t chrome_trace_bytes(const Schedule& s, const Timeline& t, const TraceOptions& options) {
  CountingBuffer counter;
  std::ostream out(&counter);
  write_chrome_trace(out, s, t, options);
  return counter.count;
}

void check_tracks_fit(const Schedule& schedule, std::uint64_t budget, const TraceOptions& options) {
  if (const std::uint64_t tracks = chrome_trace_bytes(schedule, Timeline{}, options); tracks > budget)
    throw InputError("--trace-budget " + format_trace_bytes(budget) + ": the trace's tracks alone (" +
                     std::to_string(schedule.num_devices) + " devices, before any op) take " +
                     format_trace_bytes(tracks) + "; raise --trace-budget, or give 0 for no limit");
}

TraceRecorder::TraceRecorder(const Schedule& schedule, const TraceLimit& limit, bool keep_all)
    : s_(schedule),
      budget_(limit.budgeted() ? limit.budget : 0),
      first_ops_(traced_ops(schedule.total_ops(), limit)),
      keep_all_(keep_all),
      record_ops_(budget_ > 0 ? budget_record_ops(budget_) : first_ops_) {
  for (std::size_t d = 0; d < s_.ops.size(); ++d)
    for (std::size_t i = 0; i < s_.ops[d].size(); ++i) {
      const auto it = static_cast<std::size_t>(op_iteration(s_, OpRef{static_cast<int>(d), static_cast<int>(i)}));
      if (it >= expected_.size()) expected_.resize(it + 1, 0);
      ++expected_[it];
    }
  if (expected_.empty()) expected_.push_back(0);
  recorded_.assign(expected_.size(), 0);
  record_last_ = budget_ > 0 && expected_.back() <= record_ops_;
  const auto devices = static_cast<std::size_t>(std::max(s_.num_devices, static_cast<int>(s_.ops.size())));
  last_start_.assign(devices, kUnknown);
  for (std::size_t d = 0; d < s_.ops.size(); ++d)
    for (std::size_t i = 0; i < s_.ops[d].size() && last_start_[d] == kUnknown; ++i)
      if (op_iteration(s_, OpRef{static_cast<int>(d), static_cast<int>(i)}) == iterations() - 1)
        last_start_[d] = static_cast<std::int32_t>(i);
  pending_index_.resize(devices);
  pending_.resize(devices);
}

void TraceRecorder::on_op(const OpRecord& r) {
  const int it = op_iteration(s_, r.ref);
  const bool keep = keep_all_ || seen_ < record_ops_ || (record_last_ && it == iterations() - 1);
  if (seen_ <= record_ops_)
    marks_.push_back(Mark{static_cast<std::uint32_t>(timeline.transfers.size()),
                          static_cast<std::uint32_t>(timeline.collectives.size()),
                          static_cast<std::uint32_t>(timeline.memory.size())});
  ++seen_;
  if (keep) {
    timeline.ops.push_back(r);
    op_iteration_.push_back(it);
    ++recorded_[static_cast<std::size_t>(it)];
  }
  if (!is_compute(r.op.kind)) return;
  // The memory records this op made (F at its start, B/I/W at their end) came before it.
  const auto d = static_cast<std::size_t>(r.ref.device);
  const std::int32_t position = r.ref.index;
  for (std::size_t i : pending_index_[d]) memory_position_[i] = position;
  pending_index_[d].clear();
  // After the first ops: the device's memory from its first op of the last iteration on.
  if (record_last_ && position >= last_start_[d])
    for (const MemoryRecord& m : pending_[d]) {
      timeline.memory.push_back(m);
      memory_position_.push_back(position);
    }
  pending_[d].clear();
}

void TraceRecorder::on_transfer(const TransferRecord& r) {
  const int it = op_iteration(s_, r.to);
  if (!recording_all() && !(record_last_ && it == iterations() - 1)) return;
  timeline.transfers.push_back(r);
  transfer_iteration_.push_back(it);
}

void TraceRecorder::on_collective(const CollectiveRecord& r) {
  const int it = r.participants.empty() ? 0 : op_iteration(s_, r.participants.front());
  if (!recording_all() && !(record_last_ && it == iterations() - 1)) return;
  timeline.collectives.push_back(r);
  collective_iteration_.push_back(it);
}

void TraceRecorder::on_memory(const MemoryRecord& r) {
  const auto d = static_cast<std::size_t>(r.device);
  PIPESIM_ASSERT(d < pending_.size());
  if (recording_all()) {
    pending_index_[d].push_back(timeline.memory.size());
    timeline.memory.push_back(r);
    memory_position_.push_back(kUnknown);
  } else {
    pending_[d].push_back(r);
  }
}

// ---- after the run -----------------------------------------------------------------------

struct TraceRecorder::Index {
  // Per iteration, the indices of its records in `timeline`, ascending.
  std::vector<std::vector<std::uint32_t>> ops, transfers, collectives;
  // Per device, the indices of its memory records, in order (so by position too).
  std::vector<std::vector<std::uint32_t>> memory;
};

Timeline TraceRecorder::iterations_timeline(const Index& index, const std::vector<int>& chosen) const {
  // In the engine's order, so that the trace is the one all records in order would give.
  const auto gather = [&](const std::vector<std::vector<std::uint32_t>>& by_iteration) {
    std::vector<std::uint32_t> out;
    for (int i : chosen) {
      const auto& list = by_iteration[static_cast<std::size_t>(i)];
      out.insert(out.end(), list.begin(), list.end());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  Timeline t;
  for (std::uint32_t i : gather(index.ops)) t.ops.push_back(timeline.ops[i]);
  for (std::uint32_t i : gather(index.transfers)) t.transfers.push_back(timeline.transfers[i]);
  for (std::uint32_t i : gather(index.collectives)) t.collectives.push_back(timeline.collectives[i]);
  // Memory: per device, what changed while it ran each kept iteration: from its first op
  // (an F, which allocates as it starts) to its last.
  std::vector<std::vector<std::pair<std::int32_t, std::int32_t>>> spans(index.memory.size());
  for (int it : chosen) {
    std::vector<std::pair<std::int32_t, std::int32_t>> span(index.memory.size(), {kUnknown, -1});
    for (std::uint32_t i : index.ops[static_cast<std::size_t>(it)]) {
      const OpRef& ref = timeline.ops[i].ref;
      auto& [lo, hi] = span[static_cast<std::size_t>(ref.device)];
      lo = std::min(lo, ref.index);
      hi = std::max(hi, ref.index);
    }
    for (std::size_t d = 0; d < span.size(); ++d)
      if (span[d].second >= 0) spans[d].push_back(span[d]);
  }
  std::vector<std::uint32_t> memory;
  for (std::size_t d = 0; d < spans.size(); ++d) {
    const auto& list = index.memory[d];
    const auto position = [&](std::uint32_t i) { return memory_position_[i]; };
    auto taken = list.begin();  // where the last span ended (spans of async iterations overlap)
    std::sort(spans[d].begin(), spans[d].end());
    for (const auto& span : spans[d]) {
      const auto lo = span.first, hi = span.second;  // not a structured binding: Clang 14 cannot capture one
      auto first = std::partition_point(taken, list.end(), [&](std::uint32_t i) { return position(i) < lo; });
      auto last = std::partition_point(first, list.end(), [&](std::uint32_t i) { return position(i) <= hi; });
      memory.insert(memory.end(), first, last);
      taken = last;
    }
  }
  std::sort(memory.begin(), memory.end());
  for (std::uint32_t i : memory) t.memory.push_back(timeline.memory[i]);
  return t;
}

Timeline TraceRecorder::prefix_timeline(std::size_t ops) const {
  Mark end{static_cast<std::uint32_t>(timeline.transfers.size()), static_cast<std::uint32_t>(timeline.collectives.size()),
           static_cast<std::uint32_t>(timeline.memory.size())};
  if (ops < marks_.size()) end = marks_[ops];
  const auto first = [](const auto& all, std::size_t n) { return std::vector(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n)); };
  Timeline t;
  t.ops = first(timeline.ops, ops);
  t.transfers = first(timeline.transfers, end.transfers);
  t.collectives = first(timeline.collectives, end.collectives);
  t.memory = first(timeline.memory, end.memory);
  return t;
}

TraceRecorder::Selection TraceRecorder::select_prefix(const TraceOptions& options, const std::string& why) const {
  const std::size_t total = s_.total_ops();
  // The run's first ops as recorded: all of them before the last iteration's were appended.
  std::size_t n = std::min(std::min(marks_.size(), record_ops_), timeline.ops.size());
  // A first guess from the bytes per op of the first few thousand (header included, and
  // later ops have longer times, so a little less than that).
  constexpr std::size_t kSample = 5000;
  if (n > kSample) {
    const std::uint64_t sample = chrome_trace_bytes(s_, prefix_timeline(kSample), options);
    const double fit = static_cast<double>(kSample) * static_cast<double>(budget_) / static_cast<double>(sample);
    n = std::min(n, static_cast<std::size_t>(std::max(1.0, fit * 0.97)));
  }
  for (;;) {
    Selection sel;
    sel.trace = prefix_timeline(n);
    const Tick until = n > 0 ? sel.trace.ops.back().end : 0;
    const std::string notice = truncation_notice(n, total, &until, why + "; " + kBudgetHint);
    sel.metadata = {{"truncated", notice}};
    TraceOptions o = options;
    o.metadata.insert(o.metadata.end(), sel.metadata.begin(), sel.metadata.end());
    sel.bytes = chrome_trace_bytes(s_, sel.trace, o);
    sel.note = notice + " (" + format_trace_bytes(sel.bytes) + ")";
    if (sel.bytes <= budget_ || n <= 1) return sel;
    // Smaller in proportion, with a little to spare for the longer lines of later ops.
    const auto scaled = static_cast<std::size_t>(static_cast<double>(n) * static_cast<double>(budget_) /
                                                 static_cast<double>(sel.bytes) * 0.99);
    n = std::max<std::size_t>(1, std::min(n - 1, scaled));
  }
}

TraceRecorder::Selection TraceRecorder::select(const TraceOptions& options) const {
  const std::size_t total = s_.total_ops();
  if (budget_ == 0) {  // --max-trace-ops N (or everything): the first N ops, not measured
    if (first_ops_ >= total) return Selection{timeline, {}, {}, 0};
    Selection sel;
    sel.trace = prefix_timeline(first_ops_);
    const Tick until = first_ops_ > 0 ? sel.trace.ops.back().end : 0;
    sel.note = truncation_notice(first_ops_, total, &until);
    sel.metadata = {{"truncated", sel.note}};
    return sel;
  }
  check_tracks_fit(s_, budget_, options);  // again, with the static memory counters now known
  const std::string over = "iteration 0 alone is larger than --trace-budget " + format_trace_bytes(budget_);
  const int last = iterations() - 1;
  const auto complete = [&](int i) { return recorded_[static_cast<std::size_t>(i)] == expected_[static_cast<std::size_t>(i)]; };
  if (!complete(0)) return select_prefix(options, over);
  // Fewer bytes per op than any trace has: surely too large, not worth measuring.
  const auto surely_over = [&](std::size_t ops, std::uint64_t room) { return ops * kMinTraceBytesPerOp > room; };
  if (last == 0) {  // one iteration, recorded whole: it fits or it does not
    if (surely_over(total, budget_)) return select_prefix(options, over);
    Selection all{timeline, {}, {}, chrome_trace_bytes(s_, timeline, options)};
    return all.bytes <= budget_ ? all : select_prefix(options, over);
  }

  Index index;
  const auto by_iteration = [&](std::vector<std::vector<std::uint32_t>>& out, const std::vector<std::int32_t>& labels) {
    out.resize(expected_.size());
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (labels[i] >= 0) out[static_cast<std::size_t>(labels[i])].push_back(static_cast<std::uint32_t>(i));
  };
  by_iteration(index.ops, op_iteration_);
  by_iteration(index.transfers, transfer_iteration_);
  by_iteration(index.collectives, collective_iteration_);
  index.memory.resize(pending_.size());
  for (std::size_t i = 0; i < timeline.memory.size(); ++i)
    index.memory[static_cast<std::size_t>(timeline.memory[i].device)].push_back(static_cast<std::uint32_t>(i));

  // Pick by each iteration's own size: first, last, then second, third, ...
  const std::uint64_t base = chrome_trace_bytes(s_, Timeline{}, options);
  std::vector<int> order{0};
  if (last > 0) order.push_back(last);
  for (int i = 1; i < last; ++i) order.push_back(i);
  std::vector<int> chosen;
  std::uint64_t sum = base;
  for (int i : order) {
    if (!complete(i)) {
      if (i == last) continue;
      break;
    }
    const bool over_budget = surely_over(expected_[static_cast<std::size_t>(i)], budget_ - std::min(budget_, sum));
    const std::uint64_t size = over_budget ? 0 : chrome_trace_bytes(s_, iterations_timeline(index, {i}), options);
    const std::uint64_t body = size > base ? size - base : 0;
    if (over_budget || sum + body > budget_) {
      if (i == 0) return select_prefix(options, over);
      if (i == last) continue;
      break;
    }
    sum += body;
    chosen.push_back(i);
  }
  // The chosen trace as a whole, with its notice: drop iterations until it fits.
  for (;; chosen.pop_back()) {
    std::vector<int> sorted = chosen;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> left;
    for (int i = 0; i <= last; ++i)
      if (!std::binary_search(sorted.begin(), sorted.end(), i)) left.push_back(i);
    if (left.empty()) {  // all of it, as recorded, without a notice
      Selection all{timeline, {}, {}, chrome_trace_bytes(s_, timeline, options)};
      if (all.bytes <= budget_) return all;
      continue;
    }
    Selection sel;
    sel.trace = iterations_timeline(index, sorted);
    const std::string kept = ranges_text(sorted) + " of " + std::to_string(last + 1);
    const std::string notice = "left out iterations " + ranges_text(left) + " (" +
                               std::to_string(total - std::min(total, sel.trace.ops.size())) + " of " +
                               std::to_string(total) + " ops) to stay within --trace-budget " +
                               format_trace_bytes(budget_) + "; " + kBudgetHint;
    sel.metadata = {{"iterations shown", kept}, {"truncated", notice}};
    TraceOptions o = options;
    o.metadata.insert(o.metadata.end(), sel.metadata.begin(), sel.metadata.end());
    sel.bytes = chrome_trace_bytes(s_, sel.trace, o);
    if (sel.bytes <= budget_) {
      sel.note = "keeps iterations " + kept + " (" + std::to_string(sel.trace.ops.size()) + " of " +
                 std::to_string(total) + " ops, " + format_trace_bytes(sel.bytes) + ") to stay within --trace-budget " +
                 format_trace_bytes(budget_) + "; " + kBudgetHint;
      return sel;
    }
    if (chosen.size() == 1) return select_prefix(options, over);
  }
}

}  // namespace pipesim
