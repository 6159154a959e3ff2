#pragma once
// Op: one unit of work in a schedule, a plain value.
//
//   kind        F (forward), B (full backward), I (input-gradient backward),
//               W (weight-gradient backward), GradSync (gradient reduction over the
//               replicas of a stage), OptStep (optimizer update of one stage replica),
//               and the optional communication ops (docs/schedule-format.md):
//               SendF / RecvF (the activation of micro-batch k leaving stage s / arriving
//               at stage s), SendB / RecvB (the gradient leaving stage s / arriving at s)
//   stage       stage index within its pipeline (a virtual stage for interleaved /
//               V-shaped schedules: the chunk a device holds is derived from placement)
//   microbatch  micro-batch id, counted over the whole run (iteration t of a synchronous
//               schedule uses ids t*m .. t*m+m-1); -1 for GradSync / OptStep
//   pipeline    pipeline (model replica) id: 0 for single-pipeline schedules, 0/1 for
//               Chimera's down/up pipelines, ...
//
// Text form (see op_text.hpp) follows PyTorch pipelining: "2F0" = stage 2, forward,
// micro-batch 0; "0SEND_F0" / "1RECV_F0"; a non-zero pipeline is written as a prefix "1:2F0".
//
// Communication ops are optional: a schedule without them sends each result the moment
// its producer ends (the engine's link model). With them, a send is posted where it stands
// in its device's list, a receive is posted where it stands, the message moves once both
// are, and the op that uses it waits for it (PyTorch's runtime; sim/engine.hpp).
#include <cstdint>
#include <functional>
#include <string_view>

namespace pipesim {

enum class OpKind : std::uint8_t { F, B, I, W, GradSync, OptStep, SendF, SendB, RecvF, RecvB };

inline constexpr int kNumOpKinds = 10;

// Short name used in text forms and traces: "F", "B", "I", "W", "GRADSYNC", "OPT",
// "SEND_F", "RECV_F", "SEND_B", "RECV_B".
std::string_view op_kind_name(OpKind kind);

// True for the point-to-point communication kinds (SEND_F, RECV_F, SEND_B, RECV_B).
constexpr bool is_comm(OpKind k) { return k >= OpKind::SendF; }
// True for kinds that run on a device's compute stream (everything but GradSync and comms).
constexpr bool is_compute(OpKind k) { return k != OpKind::GradSync && !is_comm(k); }
// True for kinds that belong to one micro-batch (F, B, I, W).
constexpr bool is_microbatch_op(OpKind k) { return k == OpKind::F || k == OpKind::B || k == OpKind::I || k == OpKind::W; }
// True for the kinds that compute an input gradient and send it upstream (B, I).
constexpr bool is_backward_input(OpKind k) { return k == OpKind::B || k == OpKind::I; }
// True for the kinds that name a micro-batch: the micro-batch ops and the comms.
constexpr bool has_microbatch(OpKind k) { return is_microbatch_op(k) || is_comm(k); }
// True for the stage-level kinds (GradSync, OptStep), which repeat once per iteration.
constexpr bool is_stage_op(OpKind k) { return k == OpKind::GradSync || k == OpKind::OptStep; }
// A send's or receive's direction: true for the activation (SEND_F / RECV_F).
constexpr bool is_forward_comm(OpKind k) { return k == OpKind::SendF || k == OpKind::RecvF; }
constexpr bool is_send(OpKind k) { return k == OpKind::SendF || k == OpKind::SendB; }
constexpr bool is_recv(OpKind k) { return k >= OpKind::RecvF; }

struct Op {
  OpKind kind = OpKind::F;
  std::int32_t stage = 0;
  std::int32_t microbatch = 0;
  std::int32_t pipeline = 0;

  friend bool operator==(const Op&, const Op&) = default;
};

// Builders that read like the papers: F(s, k), B(s, k), ...
constexpr Op make_op(OpKind kind, int stage, int microbatch, int pipeline = 0) {
  return Op{kind, stage, microbatch, pipeline};
}
constexpr Op grad_sync(int stage, int pipeline = 0) { return Op{OpKind::GradSync, stage, -1, pipeline}; }
constexpr Op opt_step(int stage, int pipeline = 0) { return Op{OpKind::OptStep, stage, -1, pipeline}; }

struct OpHash {
  std::size_t operator()(const Op& op) const noexcept {
    std::uint64_t h = static_cast<std::uint64_t>(op.kind);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(op.stage);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(op.microbatch);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(op.pipeline);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

}  // namespace pipesim
