#pragma once
// One run's Chrome trace from both drivers of the one writer (traces/chrome_trace_writer.hpp):
// the streaming one while the engine runs, the batch one from the recorded Timeline (the
// stream keeps max_ops ops when that is > 0; the batch trace is always the whole run).
#include <cstddef>
#include <sstream>
#include <string>
#include <utility>

#include "cost_models/cost_model.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/chrome_trace_stream.hpp"

namespace pipesim::testing_trace {

struct Traces {
  std::string batch, stream;
  std::size_t unmatched = 0;       // the stream's unmatched producers
  ChromeTraceStream::Retained left;  // what the stream still held at the end
  Timeline timeline;               // the run's records
  bool truncated = false;          // the stream's cut (max_ops), what it kept and until when
  std::size_t ops_kept = 0;
  Tick cut_time = 0;
};

inline Traces both_traces(const Schedule& s, const CostModel& costs, const TraceOptions& options = {},
                          std::size_t max_ops = 0) {
  std::ostringstream stream_out;
  ChromeTraceStream stream(stream_out, s, options, max_ops);
  TimelineRecorder recorder;
  ObserverList both;
  both.add(&stream);
  both.add(&recorder);
  simulate(s, costs, &both);
  stream.finish();
  std::ostringstream batch_out;
  write_chrome_trace(batch_out, s, recorder.timeline, options);
  return {batch_out.str(),        stream_out.str(),   stream.unmatched_producers(), stream.retained(),
          std::move(recorder.timeline), stream.truncated(), stream.ops_kept(),         stream.cut_time()};
}

}  // namespace pipesim::testing_trace
