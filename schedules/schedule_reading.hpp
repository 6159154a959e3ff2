#pragma once
// What schedules/schedule_io.cpp's CSV reader and schedules/schedule_json.cpp's JSON reader
// share: the places of a source they name in messages, and the shape (placement, counts)
// checked or inferred from the ops once a reader has them. Internal to schedules/.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim::schedule_reading {

std::string_view trim(std::string_view s);
std::string_view strip_bom(std::string_view s);
// "runs/sched.v2.json" -> "sched.v2": the default schedule name.
std::string stem(std::string_view path);

// Names op `index` of device `device` in messages, in the terms of the input format:
// "sched.csv:3: cell 5" (cells skip empty ones, so they are remembered) or "sched.json: /ops/2/7".
struct OpSource {
  std::string source;
  bool json = false;
  std::vector<std::vector<int>> cells;  // CSV only: 1-based cell number of each op

  std::string ref(std::size_t d, std::size_t i) const;
  std::string at(std::size_t d, std::size_t i) const;
};

// What the input said explicitly; the rest is inferred from the ops.
struct Explicit {
  std::optional<int> num_stages, num_pipelines, microbatches, iterations;
  bool placement = false;
  std::string placement_path;  // where divisibility problems are reported
};

// InputError "where: what".
[[noreturn]] void fail(const std::string& where, const std::string& what);

// Both readers' tail: placement (given, or inferred from where each stage's ops run), the
// consistency checks, and the counts the input did not give (iterations from the OptSteps,
// micro-batches from the ids).
void finish(Schedule& s, const OpSource& src, const Explicit& given);

}  // namespace pipesim::schedule_reading
