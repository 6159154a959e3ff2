#pragma once
// The CPU profile backend: the Eigen kernels of kernels/ in float32, one thread (Eigen's
// own parallelism off: the executor runs one thread per device), timed with
// std::chrono::steady_clock around each call (CpuClock::Wall), or with the calling thread's
// CPU time (CpuClock::ThreadCpu: clock_gettime(CLOCK_THREAD_CPUTIME_ID), which a machine
// shared with other work disturbs far less, but which does not see the op waiting).
//
//   block      block_forward, block_backward_input, block_backward_weight (cpu_block.hpp)
//   embedding  embedding_forward, embedding_backward_weight (embedding.hpp)
//   head       lm_head_forward (with the loss), lm_head_backward_input, _weight (lm_head.hpp)
//   optimizer  sgd_step / adam_step on flat vectors of the group's size (optimizer.hpp), as
//              many copies in turn as make up the stage around it (cpu_optimizer_copies), each
//              gradient zeroed right after its step, as the executor's OptStep does
//   link       a hand-off between two threads: the sender copies the message into a shared
//              buffer and notifies (mutex + condition variable); the receiver wakes and
//              copies it out. Timed from the start of the first copy to the end of the second.
//   neighbour  another CpuWorkload (its own parameters and inputs) on another thread: the
//              OS places it; with at most cores - 1 of them no two share a core while the
//              machine is otherwise idle
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/block_params.hpp"
#include "kernels/profile_backend.hpp"

namespace pipesim {

enum class CpuClock { Wall, ThreadCpu };

class CpuProfileBackend final : public ProfileBackend {
 public:
  explicit CpuProfileBackend(CpuClock clock = CpuClock::Wall);  // sets Eigen to one thread

  std::string name() const override { return "cpu"; }
  std::string link_kind() const override { return "thread-handoff"; }
  void describe(Profile& profile) const override;
  std::unique_ptr<ProfileWorkload> workload(const ModelSpec& model, int micro_batch_size, std::uint64_t seed) override;
  std::unique_ptr<OptimizerProbe> optimizer(std::int64_t count, std::int64_t stage_count, std::uint64_t seed) override;
  std::unique_ptr<LinkProbe> link(std::int64_t bytes) override;
  // The executor's CpuBackend: a device thread packs its gradient into a new vector and
  // unpacks the sum into its gradient tensors.
  std::unique_ptr<GradientCopyProbe> gradient_copies(std::int64_t count, std::uint64_t seed) override;
  int max_neighbours() const override;  // hardware threads - 1
  std::unique_ptr<ProfileWorkload> neighbour(const ModelSpec& model, int micro_batch_size, std::uint64_t seed,
                                             int slot) override;

 private:
  CpuClock clock_;
};

// How many copies of a group of `count` parameters the optimizer probe steps in turn: as
// many as make up `stage_count` (the stage's parameters), at least 1, and no more than keep
// the fp32 weights, gradients and moments within kCpuOptimizerMaxBytes (past the caches,
// more copies change nothing).
inline constexpr std::int64_t kCpuOptimizerMaxBytes = std::int64_t{256} << 20;
std::int64_t cpu_optimizer_copies(std::int64_t count, std::int64_t stage_count);

// The profile workloads' random inputs, the same numbers for the CPU and CUDA backends:
// uniform in [-1, 1] in column-major order, token ids below `vocab`, drawn from `state`.
KMat<float> profile_random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t& state);
std::vector<int> profile_random_ids(int count, int vocab, std::uint64_t& state);

// InputError unless the model is what the kernels implement: a GPT block (LayerNorm,
// GELU MLP, multi-head attention with biases, learned positions). `who` starts the message.
void check_gpt_model(const ModelSpec& model, const std::string& who);

// The CPU's "model name" from /proc/cpuinfo ("unknown" when there is none).
std::string cpu_model_name();
// "GCC 12.2.0" / "clang 14.0.6"; "3.4.0".
std::string compiler_version();
std::string eigen_version();

}  // namespace pipesim
