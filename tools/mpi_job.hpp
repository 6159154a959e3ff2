#pragma once
// pipesim as one of several processes of an MPI job (`mpirun -np N pipesim sweep ...`, `srun
// pipesim sweep ...`): only `sweep` uses the ranks (docs/sweep.md#mpi), and only rank 0
// prints and writes files. MPI is optional at build time (PIPESIM_MPI, README).
#include <functional>
#include <string>

namespace pipesim {

// How this process was started, read from the launcher's environment without initialising
// MPI (Open MPI's OMPI_COMM_WORLD_RANK/SIZE, MPICH's and Slurm's PMI_RANK/PMI_SIZE, PMIx's
// PMIX_RANK under srun): rank 0 of 1 when started alone.
struct MpiLaunch {
  int rank = 0;
  int size = 1;
  // Started by srun as one of several tasks, but without an MPI plugin (srun --mpi=none, the
  // default of a slurm.conf without MpiDefault): SLURM_PROCID and SLURM_STEP_NUM_TASKS, and
  // no PMI to initialise MPI with. MpiJob refuses it.
  bool without_pmi = false;
};
MpiLaunch mpi_launch();

// For `pipesim --version`: "Open MPI v4.1.4 (MPI 3.1): mpirun -np N pipesim sweep ...", or
// "not built (PIPESIM_MPI=OFF)". Calls no MPI function that needs MPI initialised.
std::string mpi_version_line();

// MPI initialised for the life of the object when this process is one of several ranks
// (mpi_launch().size > 1), and finalised when it ends; a plain process stays one of one.
class MpiJob {
 public:
  // InputError when launched as one of several ranks by a build without MPI.
  MpiJob();
  ~MpiJob();
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Runs `setup` on every rank, then tells every rank whether it succeeded everywhere. When it
  // failed somewhere, rank 0 writes its own error's line, or else the lowest failing rank's line
  // with "rank R: " in it, before any rank ends (mpirun ends the job at the first rank that exits
  // with an error); then every rank ends quietly (an ExitWith without a line) with that exit code.
  void agree(const std::function<void()>& setup) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace pipesim
