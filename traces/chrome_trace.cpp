#include "traces/chrome_trace.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <ostream>

#include "core/error.hpp"
#include "traces/chrome_trace_events.hpp"
#include "traces/chrome_trace_writer.hpp"

namespace pipesim {
namespace {

Tick reported(const OpRecord& r) { return r.end; }
Tick reported(const TransferRecord& r) { return r.arrival; }
Tick reported(const CollectiveRecord& r) { return r.end; }
Tick reported(const MemoryRecord& r) { return r.time; }

// A vector's records in report order: by time, ties in vector order (a Timeline from the
// engine is in that order already; the executor's is assembled per device).
template <class Record>
std::vector<std::uint32_t> in_report_order(const std::vector<Record>& records) {
  std::vector<std::uint32_t> order(records.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return reported(records[a]) < reported(records[b]); });
  return order;
}

// The batch driver: the timeline's records merged into report order, into the one writer.
void replay(chrome::TraceWriter& writer, const Timeline& t, const TraceOptions& options) {
  const auto ops = in_report_order(t.ops), transfers = in_report_order(t.transfers),
             collectives = in_report_order(t.collectives), memory = in_report_order(t.memory);
  const std::size_t total = ops.size() + transfers.size() + collectives.size() + memory.size();
  constexpr std::size_t kProgressEvery = 1 << 16;
  const auto& progress = options.progress;
  if (progress) progress(0, total);
  std::size_t o = 0, x = 0, c = 0, m = 0;
  constexpr Tick kEnd = std::numeric_limits<Tick>::max();
  for (std::size_t done = 1; done <= total; ++done) {
    const Tick to = o < ops.size() ? reported(t.ops[ops[o]]) : kEnd;
    const Tick tx = x < transfers.size() ? reported(t.transfers[transfers[x]]) : kEnd;
    const Tick tc = c < collectives.size() ? reported(t.collectives[collectives[c]]) : kEnd;
    const Tick tm = m < memory.size() ? reported(t.memory[memory[m]]) : kEnd;
    const Tick first = std::min({to, tx, tc, tm});
    // Within an instant the writer takes the kinds in its own order: any order works here.
    if (to == first && o < ops.size())
      writer.add(t.ops[ops[o++]]);
    else if (tx == first && x < transfers.size())
      writer.add(t.transfers[transfers[x++]]);
    else if (tc == first && c < collectives.size())
      writer.add(t.collectives[collectives[c++]]);
    else
      writer.add(t.memory[memory[m++]]);
    if (progress && done % kProgressEvery == 0) progress(done, total);
  }
  writer.finish();
  if (progress) progress(total, total);
}

// Group g's processes are g * (the most devices of any group) + device, named
// "<label>: device N" when `labelled`.
void write_groups(std::ostream& out, const std::vector<TraceGroup>& groups, const TraceOptions& options,
                  bool labelled) {
  PIPESIM_ASSERT(!groups.empty());
  int pid_stride = 0;
  for (const TraceGroup& g : groups)
    pid_stride = std::max({pid_stride, g.schedule.num_devices, static_cast<int>(g.schedule.ops.size())});
  JsonWriter w(out);
  chrome::write_trace_header(w, groups.front().schedule, options);
  chrome::EventList list(w);
  std::uint64_t flow_base = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const TraceGroup& g = groups[i];
    chrome::TraceWriter writer(list, g.schedule, options,
                               {static_cast<int>(i) * pid_stride, labelled ? g.label + ": " : std::string(), flow_base});
    replay(writer, g.timeline, options);
    flow_base += 2 * g.timeline.transfers.size();
  }
  chrome::write_trace_footer(w);
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Schedule& schedule, const Timeline& timeline,
                        const TraceOptions& options) {
  write_groups(out, {TraceGroup{"", schedule, timeline}}, options, false);
}

void write_chrome_trace_groups(std::ostream& out, const std::vector<TraceGroup>& groups, const TraceOptions& options) {
  write_groups(out, groups, options, true);
}

}  // namespace pipesim
