#pragma once
// Writing schedules for PyTorch pipelining (torch.distributed.pipelining, schedules.py), in
// the two CSV formats its _load_csv reads (docs/schedule-format.md, "Writing for PyTorch"):
//
//   ComputeOnly   format="compute_only": F, B, I, W and nothing else (no pipesim extension,
//                 no GRADSYNC / OPT: PyTorch's runtime rejects non-compute actions here and
//                 adds REDUCE_GRAD itself)
//   ComputeComms  format="compute_comms": the schedule's own communication ops if it has
//                 any, else PyTorch's lowering of the compute ops (add_reduce_grad, then
//                 add_send_recv, schedules/lowering.hpp); GradSync written as REDUCE_GRAD
//
// Both write one row per rank and keep the CellLayout of a schedule read from a PyTorch
// file (blank cells, OVERLAP_F_B cells; UNSHARD / RESHARD in ComputeComms). Schedules PyTorch
// cannot express are an InputError naming why: several pipelines (Chimera, DualPipe), several
// iterations, split micro-batches.
#include <functional>
#include <string>

#include "schedules/schedule.hpp"

namespace pipesim {

enum class PytorchFormat { ComputeOnly, ComputeComms };

std::string schedule_to_pytorch(const Schedule& schedule, PytorchFormat format);

// Appends an op's text to `out`, or nothing to leave the op out.
using OpTextFn = std::function<void(const Op&, std::string& out)>;

// One row per device, each ending in '\n': every op's `text` (an op whose text is empty is
// left out), laid out as schedule.cells says if it matches the ops and no op is left out,
// else one op per cell. `kept_cells`: write the layout's kept actions (UNSHARD, ...) too.
std::string csv_rows(const Schedule& schedule, const OpTextFn& text, bool kept_cells);

}  // namespace pipesim
