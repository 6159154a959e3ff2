#pragma once
// Reading and writing schedules as files (format reference: docs/schedule-format.md).
//
//   CSV   PyTorch pipelining's "compute_only" dump: one row per rank, one action per cell
//         ("0F0,0F1,,0B0"); empty cells (PyTorch's idle steps) are skipped. pipesim's
//         extensions "1:2F0", "2GRADSYNC", "2OPT" are accepted too. The shape (stages,
//         pipelines, placement, micro-batches, iterations) is inferred from the ops.
//   JSON  {"format": "pipesim-schedule", "version": 1, ..., "placement": [[...]],
//          "ops": [["0F0", ...], ...]}: the whole Schedule, ops in text form.
//
// Every problem is an InputError whose message is one line naming the source and the
// place: "sched.csv:3: cell 5: ...", "sched.json: /ops/2/7: ...", "sched.json: line 4,
// column 7: invalid JSON (...)". Readers return only schedules whose shape is consistent
// (placement num_pipelines x num_stages of valid devices, every op on the device that
// placement names, at least one op); dependency problems are the validator's business.
#include <string>
#include <string_view>

#include "schedules/schedule.hpp"

namespace pipesim {

// Reads a schedule file, choosing the format by extension (.csv or .json, any case).
Schedule read_schedule_file(const std::string& path);
// Writes `schedule` to `path` in the format its extension names (.csv or .json).
void write_schedule_file(const Schedule& schedule, const std::string& path);

// `source_name` is used in error messages and, without directory and extension, as the
// schedule's name when the input does not give one.
Schedule parse_schedule_csv(std::string_view text, std::string_view source_name);
Schedule parse_schedule_json(std::string_view text, std::string_view source_name);

// One row per device, cells joined by ','; every row ends with '\n'. Only the ops travel:
// the name, blocking_grad_sync and stages without ops are not representable in CSV.
std::string schedule_to_csv(const Schedule& schedule);
// Pretty, deterministic JSON (byte-identical output for identical schedules).
std::string schedule_to_json(const Schedule& schedule);

}  // namespace pipesim
