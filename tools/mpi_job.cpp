#include "tools/mpi_job.hpp"

#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tools/cli_main.hpp"
#include "tools/exit_codes.hpp"

#if PIPESIM_HAVE_MPI
#include <mpi.h>
#endif

namespace pipesim {
namespace {

// A launcher's variable as a number, or -1 when absent or not a number.
int env_number(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return *end == '\0' && n >= 0 && n < (1L << 30) ? static_cast<int>(n) : -1;
}

}  // namespace

MpiLaunch mpi_launch() {
  // Slurm's own SLURM_PROCID / SLURM_NTASKS are not asked: a batch script's plain commands
  // see them too, and would wait for ranks that never start.
  for (const auto& [rank, size] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                   std::pair{"PMI_RANK", "PMI_SIZE"}, std::pair{"PMIX_RANK", "SLURM_STEP_NUM_TASKS"}}) {
    const int r = env_number(rank), s = env_number(size);
    if (r >= 0 && s > r) return {r, s};
  }
  // A job step's tasks (not a batch script's commands, which have no SLURM_STEP_NUM_TASKS).
  const int task = env_number("SLURM_PROCID"), tasks = env_number("SLURM_STEP_NUM_TASKS");
  if (task >= 0 && tasks > 1 && tasks > task) return {task, tasks, true};
  return {};
}

std::string mpi_version_line() {
#if PIPESIM_HAVE_MPI
#if defined(OMPI_MAJOR_VERSION)
  const std::string library = "Open MPI v" + std::to_string(OMPI_MAJOR_VERSION) + "." +
                              std::to_string(OMPI_MINOR_VERSION) + "." + std::to_string(OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
  const std::string library = "MPICH " MPICH_VERSION;
#else
  const std::string library = "an MPI library";
#endif
  return library + " (MPI " + std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION) +
         "): mpirun -np N pipesim sweep ... (docs/sweep.md)";
#else
  return "not built (PIPESIM_MPI=OFF or no MPI found): sweep runs in one process";
#endif
}

MpiJob::MpiJob() {
  const MpiLaunch launch = mpi_launch();
  if (launch.size == 1) return;
  if (launch.without_pmi)
    throw InputError("started by srun as task " + std::to_string(launch.rank) + " of " + std::to_string(launch.size) +
                     " without an MPI plugin: run srun --mpi=pmix (or set MpiDefault=pmix in slurm.conf; "
                     "docs/sweep.md#a-slurm-batch-script)");
#if PIPESIM_HAVE_MPI
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);  // the errors abort (MPI_ERRORS_ARE_FATAL)
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_FUNNELED) {  // the same on every rank: each ends, rank 0 says why
    MPI_Finalize();
    throw InputError("the MPI library gives no thread support (MPI_THREAD_FUNNELED), which the sweep's threads need");
  }
#else
  throw InputError("this pipesim was built without MPI, but was started as rank " + std::to_string(launch.rank) +
                   " of " + std::to_string(launch.size) +
                   " (mpirun, srun): rebuild with -DPIPESIM_MPI=ON (README), or run it alone");
#endif
}

MpiJob::~MpiJob() {
#if PIPESIM_HAVE_MPI
  if (size_ > 1) MPI_Finalize();
#endif
}

void MpiJob::agree(const std::function<void()>& setup) const {
  if (size_ == 1) return setup();
#if PIPESIM_HAVE_MPI
  std::exception_ptr error;
  try {
    setup();
  } catch (...) {
    error = std::current_exception();
  }
  int mine = error ? rank_ : size_, first = size_;  // the lowest failing rank, size_ if none
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == size_) return;
  auto [code, line] = error ? failure_of(error) : std::pair<int, std::string>{0, ""};
  MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD);
  if (first != 0 && rank_ == first) {
    MPI_Send(line.data(), static_cast<int>(line.size()), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
  } else if (first != 0 && rank_ == 0) {
    MPI_Status status;
    MPI_Probe(first, 0, MPI_COMM_WORLD, &status);
    int n = 0;
    MPI_Get_count(&status, MPI_CHAR, &n);
    line.assign(static_cast<std::size_t>(n), '\0');
    MPI_Recv(line.data(), n, MPI_CHAR, first, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const std::string prefix = line.rfind("error: ", 0) == 0 ? "error: " : "";
    line = prefix + "rank " + std::to_string(first) + ": " + line.substr(prefix.size());
  }
  // Rank 0 writes the line before any rank ends: mpirun ends the whole job as soon as one rank
  // exits with an error, and a line not yet written would be lost. Then every rank ends quietly.
  if (rank_ == 0) report_failure(line);
  MPI_Barrier(MPI_COMM_WORLD);
  throw ExitWith("", code);
#endif
}

}  // namespace pipesim
