#pragma once
// `pipesim sweep` on the ranks of an MPI job (docs/sweep.md#mpi). Every rank builds the same
// SweepWork from the same command line. Rank 0 evaluates groups on its own threads and hands
// the others chunks of groups on demand, about a quarter of the remaining work per rank at a
// time (so chunks shrink towards the end and a slow group holds no one up) but at least a few
// milliseconds of it; each rank's first chunk comes from the plan, without a request, and a
// rank asks for the next one while half of its last one is still to start. Each rank
// evaluates its chunk on its own threads and sends the outcomes back with its next request
// (tools/sweep_wire.hpp). Rank 0 collects them in a SweepCollector: the result, and so every
// output, is the one of a single process. Only the main thread of a rank calls MPI
// (MPI_THREAD_FUNNELED), polling between waits, so that a waiting rank leaves its core to
// the threads that evaluate.
#include <cstddef>
#include <functional>
#include <optional>

#include "tools/mpi_job.hpp"
#include "tools/sweep_work.hpp"

namespace pipesim {

// Called on rank 0 about ten times a second: combinations done, all of them, and the ranks
// still working (rank 0 counts while its own threads do).
using RanksProgress = std::function<void(std::size_t done, std::size_t total, int working)>;

// Rank 0: the result; the others: nothing (they print nothing). A combination that fails on
// a rank ends the job on every rank once the others finish their groups in flight: rank 0
// throws a SweepFailure naming the rank and the configuration, the others end quietly.
std::optional<SweepResult> run_sweep_on_ranks(const MpiJob& job, SweepWork& work, const RanksProgress& progress);

}  // namespace pipesim
