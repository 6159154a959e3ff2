#include "schedules/pytorch_format.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "schedules/lowering.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {
namespace {

std::string join_row(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t c = 0; c < cells.size(); ++c) line += (c ? "," : "") + cells[c];
  return line + "\n";
}

void require_expressible(const Schedule& s, const char* flag) {
  const std::string name = "'" + s.name + "'";
  if (s.num_pipelines != 1)
    throw InputError(std::string(flag) + ": PyTorch pipelining runs one pipeline; " + name + " has " +
                     std::to_string(s.num_pipelines) + " (its ops like 1:2F0 have no PyTorch form)");
  if (s.iterations != 1)
    throw InputError(std::string(flag) + ": a PyTorch schedule covers one iteration; " + name + " has " +
                     std::to_string(s.iterations) + " (use --iterations 1)");
  if (s.microbatch_split != 1)
    throw InputError(std::string(flag) + ": PyTorch has no split micro-batches; " + name + " splits each in " +
                     std::to_string(s.microbatch_split));
}

bool has_comm_ops(const Schedule& s) {
  for (const auto& list : s.ops)
    for (const Op& op : list)
      if (is_comm(op.kind)) return true;
  return false;
}

// The F, B, I, W ops only, in order.
Schedule compute_only(const Schedule& s) {
  Schedule out = s;
  out.cells = CellLayout{};
  for (auto& list : out.ops) std::erase_if(list, [](const Op& op) { return !is_microbatch_op(op.kind); });
  return out;
}

// One op per cell, ops whose text is empty left out: written straight into one string.
std::string plain_rows(const Schedule& s, const OpTextFn& text) {
  std::size_t ops = 0;
  for (const auto& list : s.ops) ops += list.size();
  std::string out;
  out.reserve(ops * 9 + s.ops.size());  // "12F1234," is typical
  for (const auto& list : s.ops) {
    bool first = true;
    for (const Op& op : list) {
      const std::size_t before = out.size();
      if (!first) out += ',';
      const std::size_t at = out.size();
      text(op, out);
      if (out.size() == at) out.resize(before);  // nothing to write: no cell
      else first = false;
    }
    out += '\n';
  }
  return out;
}

}  // namespace

std::string csv_rows(const Schedule& s, const OpTextFn& text, bool kept_cells) {
  if (!s.cells.matches(s.ops)) return plain_rows(s, text);
  std::vector<std::vector<std::string>> texts(s.ops.size());
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (const Op& op : s.ops[d]) {
      text(op, texts[d].emplace_back());
      if (texts[d].back().empty()) return plain_rows(s, text);  // an op left out: the layout no longer holds
    }
  std::string out;
  for (std::size_t d = 0; d < s.ops.size(); ++d) {
    std::vector<std::vector<std::string>> cells(s.cells.width[d]);
    for (std::size_t i = 0; i < texts[d].size(); ++i) cells[s.cells.column[d][i]].push_back(texts[d][i]);
    if (kept_cells)
      for (const CellLayout::Kept& k : s.cells.kept)
        if (k.device == static_cast<int>(d) && k.column < cells.size() && cells[k.column].empty())
          cells[k.column].push_back(k.text);
    std::vector<std::string> row;
    for (const auto& ops : cells) {
      if (ops.size() <= 1) {
        row.push_back(ops.empty() ? std::string() : ops.front());
        continue;
      }
      std::string pair = "(";
      for (std::size_t k = 0; k < ops.size(); ++k) pair += (k ? ";" : "") + ops[k];
      row.push_back(pair + ")OVERLAP_F_B");
    }
    out += join_row(row);
  }
  return out;
}

std::string schedule_to_pytorch(const Schedule& schedule, PytorchFormat format) {
  if (format == PytorchFormat::ComputeOnly) {
    require_expressible(schedule, "--format pytorch");
    return csv_rows(
        schedule, [](const Op& op, std::string& out) { if (is_microbatch_op(op.kind)) append_op_text(out, op); }, false);
  }
  require_expressible(schedule, "--format pytorch-comms");
  const auto text = [](const Op& op, std::string& out) {
    if (op.kind == OpKind::GradSync) out += std::to_string(op.stage) + "REDUCE_GRAD";
    else if (op.kind != OpKind::OptStep) append_op_text(out, op);
  };
  if (has_comm_ops(schedule)) return csv_rows(schedule, text, true);
  return csv_rows(add_send_recv(add_reduce_grad(compute_only(schedule))), text, true);
}

}  // namespace pipesim
