#include "traces/chrome_trace_stream.hpp"

namespace pipesim {
namespace {

// The header goes first, before the writer's metadata.
JsonWriter& with_header(JsonWriter& w, const Schedule& s, const TraceOptions& options) {
  chrome::write_trace_header(w, s, options);
  return w;
}

}  // namespace

ChromeTraceStream::ChromeTraceStream(std::ostream& out, const Schedule& schedule, const TraceOptions& options,
                                     std::size_t max_ops)
    : w_(out), list_(with_header(w_, schedule, options)), trace_(list_, schedule, options, {}, max_ops) {}

void ChromeTraceStream::finish() {
  trace_.finish();
  chrome::write_trace_footer(w_);
}

}  // namespace pipesim
