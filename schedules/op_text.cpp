#include "schedules/op_text.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "core/error.hpp"

namespace pipesim {
namespace {

// Reads a non-negative decimal int at text[pos..]; advances pos. False if none or overflow
// (then `too_large`, if given, says which).
bool read_int(std::string_view text, std::size_t& pos, std::int32_t& out, bool* too_large = nullptr) {
  const char* first = text.data() + pos;
  const char* last = text.data() + text.size();
  if (first == last || *first < '0' || *first > '9') return false;
  auto [ptr, ec] = std::from_chars(first, last, out);
  if (too_large) *too_large = ec == std::errc::result_out_of_range;
  if (ec != std::errc()) return false;
  pos += static_cast<std::size_t>(ptr - first);
  return true;
}

bool set_error(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

}  // namespace

void append_op_text(std::string& out, const Op& op) {
  // Composed on the stack and appended once: millions of ops, and three small appends each
  // were a third of `schedule --format csv`'s time. Three int32 (11 characters each), a ':'
  // and the longest kind name ("GRADSYNC") fit in 48.
  char text[48];
  char* const last = text + sizeof text;
  char* end = text;
  if (op.pipeline != 0) {
    end = std::to_chars(end, last, op.pipeline).ptr;
    if (end != last) *end++ = ':';
  }
  end = std::to_chars(end, last, op.stage).ptr;
  const std::string_view kind = op_kind_name(op.kind);
  if (static_cast<std::size_t>(last - end) >= kind.size()) end = std::copy(kind.begin(), kind.end(), end);
  if (has_microbatch(op.kind)) end = std::to_chars(end, last, op.microbatch).ptr;
  out.append(text, end);
}

std::string to_string(const Op& op) {
  std::string out;
  append_op_text(out, op);
  return out;
}

std::optional<Op> parse_op(std::string_view text, std::string* error) {
  static constexpr std::string_view kExpected =
      "expected an op like 2F0, 3I5, 3W5, 1B4, 1:2F0, 0SEND_F0, 1RECV_F0, 2GRADSYNC or 2OPT";
  auto bad = [&](std::string_view why) {
    set_error(error, quote(text) + ": " + std::string(why) + " (" + std::string(kExpected) + ")");
    return std::nullopt;
  };
  std::size_t pos = 0;
  Op op;
  std::int32_t first = 0;
  bool too_large = false;
  if (!read_int(text, pos, first, &too_large)) return bad(too_large ? "stage number above 2147483647" : "no stage number");
  if (pos < text.size() && text[pos] == ':') {
    op.pipeline = first;
    ++pos;
    if (!read_int(text, pos, first)) return bad("no stage number after the pipeline prefix");
  }
  op.stage = first;
  const std::string_view rest = text.substr(pos);
  struct Name { std::string_view text; OpKind kind; };
  static constexpr Name kStageOps[] = {{"GRADSYNC", OpKind::GradSync}, {"REDUCE_GRAD", OpKind::GradSync},
                                       {"OPT", OpKind::OptStep}};
  for (const auto& n : kStageOps) {
    if (rest == n.text) {
      op.kind = n.kind;
      op.microbatch = -1;
      return op;
    }
  }
  if (rest.empty()) return bad("no op kind");
  // No name is a prefix of another, so the first match is the only one.
  static constexpr Name kMicrobatchOps[] = {{"SEND_F", OpKind::SendF}, {"RECV_F", OpKind::RecvF},
                                            {"SEND_B", OpKind::SendB}, {"RECV_B", OpKind::RecvB},
                                            {"F", OpKind::F},          {"B", OpKind::B},
                                            {"I", OpKind::I},          {"W", OpKind::W}};
  const Name* kind = nullptr;
  for (const auto& n : kMicrobatchOps)
    if (rest.substr(0, n.text.size()) == n.text) {
      kind = &n;
      break;
    }
  if (!kind) return bad("unknown op kind");
  op.kind = kind->kind;
  pos += kind->text.size();
  if (!read_int(text, pos, op.microbatch, &too_large))
    return bad(too_large ? "micro-batch number above 2147483647" : "no micro-batch number");
  if (pos != text.size()) return bad("trailing characters");
  return op;
}

}  // namespace pipesim
