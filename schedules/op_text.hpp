#pragma once
// Op <-> text, compatible with PyTorch pipelining's action strings.
//
//   "2F0"        stage 2, forward, micro-batch 0         (pipeline 0)
//   "3I5" "3W5"  input- / weight-gradient backward       "1B4" full backward
//   "1:2F0"      the same op in pipeline 1 (pipesim extension; PyTorch has one pipeline)
//   "2GRADSYNC"  gradient sync of stage 2 (PyTorch's "2REDUCE_GRAD" is accepted too)
//   "2OPT"       optimizer step of stage 2
//   "0SEND_F3"   stage 0 posts micro-batch 3's activation to stage 1; "1RECV_F3" waits for it
//   "2SEND_B3"   stage 2 posts micro-batch 3's input gradient to stage 1; "1RECV_B3" waits for it
#include <optional>
#include <string>
#include <string_view>

#include "schedules/op.hpp"

namespace pipesim {

std::string to_string(const Op& op);
// The same text appended to `out` (no temporary string: the CSV and JSON writers write
// millions of ops).
void append_op_text(std::string& out, const Op& op);

// Parses one op; on failure returns nullopt and sets `error` to what was expected.
std::optional<Op> parse_op(std::string_view text, std::string* error = nullptr);

}  // namespace pipesim
