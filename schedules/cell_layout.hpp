#pragma once
// CellLayout: where a schedule's ops stood in the PyTorch CSV they were read from, so that
// writing the schedule back keeps PyTorch's alignment (docs/schedule-format.md):
//
//   0F0,0F1,,0B0                      blank cells: PyTorch's idle time steps
//   (0F7;7B3)OVERLAP_F_B              one cell holding two ops (DualPipeV's F&B pairs)
//   0UNSHARD                          FSDP actions, kept as text (pipesim has no FSDP model)
//
// Data only: the readers fill it, the writers use it when it still matches the ops
// (matches()); anything that changes the op lists (a generator, the lowering pass) leaves
// it empty, and the writers then put one op per cell.
#include <cstdint>
#include <string>
#include <vector>

namespace pipesim {

struct CellLayout {
  // column[d][i]: the cell (from 0) of op i of device d. Ops sharing a cell were one
  // OVERLAP_F_B action; cells no op names were blank, or hold a kept action.
  std::vector<std::vector<std::uint32_t>> column;
  // Cells per row, trailing blanks included.
  std::vector<std::uint32_t> width;
  // Actions kept as text (UNSHARD, RESHARD): device, cell, text.
  struct Kept {
    int device = 0;
    std::uint32_t column = 0;
    std::string text;
    friend bool operator==(const Kept&, const Kept&) = default;
  };
  std::vector<Kept> kept;

  bool empty() const { return column.empty(); }
  // True if the layout describes op lists of these lengths (one row per device, columns
  // non-decreasing within a row and inside its width).
  template <class OpLists>
  bool matches(const OpLists& ops) const {
    if (column.size() != ops.size() || width.size() != ops.size()) return false;
    for (std::size_t d = 0; d < ops.size(); ++d) {
      if (column[d].size() != ops[d].size()) return false;
      for (std::size_t i = 0; i < column[d].size(); ++i)
        if (column[d][i] >= width[d] || (i > 0 && column[d][i] < column[d][i - 1])) return false;
    }
    return true;
  }
};

}  // namespace pipesim
