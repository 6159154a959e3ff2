#pragma once
// Profile: what `pipesim profile` measured for one model on one backend, and the JSON file
// it is kept in (docs/profile-format.md). The profiler (kernels/profiler.hpp) fills it;
// the profiled cost model (cost_models/profiled.hpp) answers the engine's questions from it.
//
//   profile.json
//   ├── backend, date, machine, libraries, settings     where and how it was measured
//   ├── model, dtype, parameters                        what was measured
//   ├── optimizer      per block / embedding / head     SGD and Adam steps (no micro-batch)
//   ├── micro_batches  one entry per size b             block F I W, embedding F W,
//   │                                                   head F I W; their bytes; message bytes
//   ├── link           samples of bytes -> seconds, and latency + bytes / bandwidth fitted;
//   │                  (version 6, CPU) the sender's copy and wake-up call of a hand-off
//   ├── interference   (optional) per pass, the slowdown with k = 0..K neighbours busy
//   ├── shared_core    (optional, version 3, CPU; version 5 its ring of threads) per pass
//                      and the optimizer step, the slowdown with more device threads than cores
//   ├── gradient_copies (optional, version 4, CPU) a stage's gradient copied out to a
//                      fresh buffer and a sum copied back in: a GradSync member's own work
//   └── executor       (optional, version 6, CPU) the executor's own time between two ops
//
// Times are seconds; every timed quantity is the median of `repeats` runs after warm-up,
// with its 10th and 90th percentiles and (version 2) its quantile function: the sample
// distribution. Bytes are exact counts. Version 1 files (no quantiles, no interference)
// version 2 files (no shared_core), version 3 files (no gradient_copies), version 4 files
// (the shared-core turns of a pinned pair) and version 5 files (no sender's parts of a
// hand-off: it costs the sender nothing) still read.
#include <cstdint>
#include <string>
#include <vector>

#include "cost_models/model_spec.hpp"

namespace pipesim {

inline constexpr const char* kProfileFormat = "pipesim-profile";
inline constexpr int kProfileVersion = 7;
inline constexpr int kOldestProfileVersion = 1;  // read too: no quantiles, no interference

// The most quantiles a TimingStats keeps: up to this many repeats it keeps them all.
inline constexpr int kMaxQuantiles = 51;

// Summary of repeated runs of one measurement.
struct TimingStats {
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0;  // seconds
  int repeats = 0;
  // The sample distribution: the quantile function at L = min(repeats, kMaxQuantiles)
  // evenly spaced points q = i / (L - 1) (L = 1: the one sample), so with up to 51 repeats
  // these are the sorted samples themselves; front() = min, back() = max. Empty: not
  // recorded (a version-1 profile).
  std::vector<double> quantiles;
  // The repeats' arithmetic mean, seconds; 0: not recorded (profiles written before it).
  double mean = 0;

  // Seconds at quantile q in [0, 1] (PIPESIM_ASSERT), by linear interpolation of the
  // quantiles; without them, of min, p10, median, p90, max at q = 0, 0.1, 0.5, 0.9, 1.
  // at_quantile(0.5) is the median either way; 0 for a quantity never measured.
  double at_quantile(double q) const;
  // What a run's ops of this measurement add up to, per op: the mean of the repeats (a short
  // op's times are skewed: gpt-tiny's block forward has a median of 108 us and a mean 3-6 %
  // above it, from the fifth of its runs that take 128-185 us, and a pipeline's iteration
  // is the sum of all of them); a profile without means, the median as before.
  double expected() const { return mean > 0 ? mean : median; }
};

// Percentiles with linear interpolation between order statistics (numpy's default), and
// the quantiles above. `samples` non-empty (PIPESIM_ASSERT).
TimingStats summarize_timings(std::vector<double> samples);

// How many quantiles a TimingStats of `repeats` runs keeps (the rule above).
int quantile_count(int repeats);

struct ProfileMachine {
  std::string cpu;       // /proc/cpuinfo "model name"
  int cores = 0;         // hardware threads the OS reports
  std::string hostname;  // optional (empty: not recorded)
  std::string device;    // the device timed: "cpu", or a GPU name for CUDA
  int device_count = 1;  // GPUs seen (CUDA); 1 on the CPU
  // A profile of one of a GPU's virtual devices (`pipesim profile --virtual-devices N`): N, and
  // the SMs of the one timed (the GPU's total is the catalog's). 0 (absent in the file): the
  // whole device was timed.
  int virtual_devices = 0;
  int sms = 0;
};

struct ProfileLibraries {
  std::string compiler;  // "GCC 12.2.0"
  std::string eigen;     // "3.4.0"
  std::string cuda;      // empty: not used
};

struct ProfileSettings {
  int repeats = 0;  // timed runs per measurement, at least
  int warmup = 0;   // untimed runs before them
  int threads = 1;  // compute threads per device (Eigen)
  // What the op times count: "wall" (steady clock: what a run on this machine sees),
  // "thread-cpu" (the thread's CPU time: robust on a machine others load, blind to waits) or
  // "events" (CUDA: GPU time between events, without launch and synchronize overhead).
  std::string clock = "wall";
  double min_time = 0;   // seconds: more timed runs until this long has passed (0: exactly `repeats`)
  int stage_blocks = 1;  // the block's passes timed within a stage of this many blocks
};

// Parameter counts of the pieces a stage can hold (fp32 numbers).
struct ProfileParameters {
  std::int64_t block = 0;
  std::int64_t embedding = 0;    // tokens V x h + positions s x h
  std::int64_t head_norm = 0;    // final LayerNorm gain + bias
  std::int64_t head_weight = 0;  // V x h: the head's own matrix, or a tied copy on another stage
};

// One optimizer step over one parameter group.
struct OptimizerTimes {
  TimingStats sgd, adam;
};

// One pass of one piece (block, embedding or head) at one micro-batch size.
struct PassProfile {
  TimingStats forward, input_grad, weight_grad;  // embedding: no input_grad (repeats 0)
  std::int64_t activation_bytes = 0;             // held from F until the backward ends
  std::int64_t held_after_input_grad_bytes = 0;  // of those, still held between I and W
};

struct MicroBatchProfile {
  int size = 0;  // sequences (b)
  PassProfile block, embedding, head;
  std::int64_t message_bytes = 0;  // activation (or gradient) one stage sends the next
};

struct LinkSample {
  std::int64_t bytes = 0;
  TimingStats time;
  TimingStats copy;  // version 6, CPU: the sender's copy of the message; repeats 0: not measured
};

struct LinkProfile {
  std::string kind;  // "thread-handoff" (CPU), "device-to-device" / "peer" (CUDA)
  std::vector<LinkSample> samples;
  double latency = 0;    // seconds
  double bandwidth = 0;  // bytes/s
  double rms_relative_residual = 0;
  double max_relative_residual = 0;
  // Version 6, a hand-off between threads (CPU): what the sender spends on a message (its
  // device thread does it before its next op): each sample's copy, and the call that wakes
  // a receiver sleeping for it, over every sample's runs. 0 repeats: not measured.
  TimingStats wake;
  bool sender_measured() const { return wake.repeats > 0; }
  // The sender's copy of `bytes`: linear between the samples' expected copies, the nearest
  // one's below the first and in proportion beyond the last. Needs sender_measured().
  double sender_copy(double bytes) const;
};

// How one pass slows down while k other devices of the same host (CPU threads, SM groups
// of one GPU) run block passes of their own: times[k] with k = 0..K neighbours busy, and
// slowdown[k] = times[k].median / times[0].median (slowdown[0] = 1). Empty: not measured.
struct InterferenceCurve {
  std::vector<double> slowdown;
  std::vector<TimingStats> times;
};

// A two-point curve's ratio of means, times[1].expected() / times[0].expected(): what a run's
// ops add up to with the slowdown, over without (the shared-core turns' factor).
inline double expected_ratio(const InterferenceCurve& c) { return c.times[1].expected() / c.times[0].expected(); }

struct PassInterference {
  InterferenceCurve forward, input_grad, weight_grad;  // embedding: no input_grad (empty)
};

// The interference curves, measured at one of the profile's micro-batch sizes (the middle
// one): a ratio, taken to hold at every size.
struct ProfileInterference {
  int micro_batch_size = 0;  // 0: nothing measured (version 1, or --neighbours 0)
  PassInterference block, embedding, head;
  bool measured() const { return micro_batch_size > 0; }
  int neighbours() const { return measured() ? static_cast<int>(block.forward.slowdown.size()) - 1 : 0; }
};

// How a device's ops slow down when device threads outnumber the cores and take turns on
// them (AMDP's 4 devices on 2 cores). Version 5: `threads` unpinned threads, each a device
// with its stage's passes and Adam step, in a ring on the machine's `cores` cores with
// `cores` turns in flight, each thread running its turn when the one before hands it on, as
// the executor's device threads wake to their inputs: times[1] their turns' passes and steps,
// times[0] one device's turns back to back (alone), taken in alternation. Versions 3 and 4:
// two threads pinned to one core, handing it to each other (read as threads 2, cores 1). Each
// curve's slowdown = {1, times[1].median / times[0].median}, as every curve's; a prediction
// takes the ratio of their means (TimingStats::expected: a preempted op's long time counts).
// Measured on the block's passes within the profile's stage and on an Adam step over the
// stage's parameters, at one micro-batch size; a ratio, taken to hold at every size and for
// either optimizer.
struct ProfileSharedCore {
  int micro_batch_size = 0;  // 0: not measured (version 1 or 2, not the CPU, or --shared-core off)
  int threads = 0;           // the ring's device threads (more than `cores`)
  int cores = 0;             // the cores they ran on, as many turns at once
  InterferenceCurve forward, input_grad, weight_grad, optimizer;
  bool measured() const { return micro_batch_size > 0; }
};

// The relative standard error of t's median: 1.2533 sigma / sqrt(repeats) / median, sigma
// taken from (p90 - p10) / 2.5631 (a normal distribution's), so that the rare long times that
// move a mean do not sway it. 0 for fewer than 2 repeats.
double relative_median_error(const TimingStats& t);
// The relative standard error of t's mean (TimingStats::expected): the repeats' standard
// deviation / sqrt(repeats) / mean, the deviation of the kept quantiles (every repeat up to
// 51: exact; beyond, the quantile function's). 0 for fewer than 2 repeats or quantiles.
double relative_mean_error(const TimingStats& t);

// What a GradSync member does on its own device, between its ops, where the executor does it
// there (the CPU's device threads): its replica's gradient of `parameters` fp32 numbers copied
// out to a freshly allocated buffer for the collective (copy_out), and the sum copied back
// into the gradient before the OptStep (copy_in). Measured on a stage of the profile's
// stage_blocks blocks, each copy after a stage pass where the profile's optimizer steps had
// one; taken to scale with the parameters copied.
struct ProfileGradientCopies {
  std::int64_t parameters = 0;  // 0: not measured (versions 1-3, or not the CPU)
  TimingStats copy_out, copy_in;
  // One copy added into another, as the member that arrives last sums the copies (version 7;
  // repeats 0: not measured).
  TimingStats sum;
  bool measured() const { return parameters > 0; }
  bool sum_measured() const { return measured() && sum.repeats > 0; }
};

// The executor's own work on a device between two of its ops, where a device is a thread
// (the CPU): taking the next op's input, its weight version, its records. Measured as the
// gaps between the ops of a run of the executor on one device (executor/op_gap_probe.hpp).
struct ProfileExecutor {
  TimingStats op_gap;  // repeats 0: not measured (versions 1-5, or not the CPU)
  bool measured() const { return op_gap.repeats > 0; }
};

struct Profile {
  std::string backend;  // "cpu" or "cuda"
  std::string date;     // UTC, ISO 8601: "2026-11-30T07:51:38Z"
  ProfileMachine machine;
  ProfileLibraries libraries;
  ProfileSettings settings;
  ModelSpec model;  // GPT family: name, layers, hidden, heads, ffn_hidden, seq_len, vocab, tied
  std::string dtype = "fp32";
  ProfileParameters parameters;
  OptimizerTimes block_optimizer, embedding_optimizer, head_norm_optimizer, head_weight_optimizer;
  std::vector<MicroBatchProfile> micro_batches;  // by increasing size
  LinkProfile link;
  ProfileInterference interference;  // version 2, optional
  ProfileSharedCore shared_core;      // version 3, optional
  ProfileGradientCopies gradient_copies;  // version 4, optional
  ProfileExecutor executor;               // version 6, optional
};

// The operand dtype of the profile's GEMMs, whose peak rate an MFU is against and whose
// mixed-precision accounting its memory follows: the CUDA backend always times bf16 GEMMs
// on fp32 master weights (kernels/cuda_profile_backend.hpp; its libraries line says so),
// the CPU backend computes in the profile's dtype.
std::string gemm_dtype(const Profile& p);

// The JSON text of a profile (2-space indented, fields in the documented order).
std::string profile_json_text(const Profile& p);

// The slowdowns a profile may hold: below 0.5 (twice as fast beside busy neighbours) or
// above 100 is a broken measurement, not interference.
inline constexpr double kMinSlowdown = 0.5, kMaxSlowdown = 100;

// Reads and validates everything (docs/profile-format.md): format and version (1 to 4), no
// unknown or missing fields, positive finite times with p10 <= median <= p90, quantiles
// non-decreasing from min to max and as many as the repeats say, strictly increasing
// micro-batch sizes, positive byte counts, a consistent model shape and link fit, and
// interference curves of one length with slowdown[0] = 1, every slowdown in
// kMinSlowdown..kMaxSlowdown and equal to its times' median ratio, gradient copies of a
// whole number of blocks' parameters (at least one). Every
// problem is an InputError of one line: "<source>: /micro_batches/1/block/forward/median_s: ...".
Profile parse_profile(const std::string& json_text, const std::string& source);
Profile read_profile_file(const std::string& path);

}  // namespace pipesim
