#pragma once
// ActivationAccount: one device's activation memory as its ops run, and the engine's
// overflow-checked time sum. One rule for both of the engine's paths (sim/event_loop.cpp's
// event loop and sim/ready_pass.cpp): F allocates its activation when it starts; B frees
// all of it, I part of it and W the rest, when they end. The micro-batch counts as held
// until nothing of it is left: after B, or after W.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "core/units.hpp"
#include "cost_models/cost_model.hpp"
#include "schedules/op.hpp"
#include "sim/engine.hpp"

namespace pipesim {

// t + duration. Time is 64-bit nanoseconds (292 years); only absurd inputs (--fwd
// 9000000000s and two micro-batches) get past that, and must not wrap around.
inline Tick later(Tick t, Tick duration) {
  Tick out = 0;
  if (__builtin_add_overflow(t, duration, &out))
    throw InputError("simulated time overflows 2^63 ns (292 years): the durations are too large");
  return out;
}

struct ActivationAccount {
  std::int64_t bytes = 0;        // held now
  std::int32_t count = 0;        // micro-batch-stage activations held now
  std::int32_t peak_count = 0;
  std::int64_t peak_bytes = 0;

  // Applies what `kind` changes (`a`: its activation's cost) on `device`; false for a kind
  // that changes nothing (OptStep, GradSync, comms). Throws InputError on overflow.
  bool change(int device, OpKind kind, const ActivationCost& a) {
    std::int64_t delta = 0;
    int c = 0;
    switch (kind) {
      case OpKind::F: delta = a.bytes; c = 1; break;
      case OpKind::B: delta = -a.bytes; c = -1; break;
      case OpKind::I: delta = -a.freed_by_input_grad; break;
      case OpKind::W: delta = -(a.bytes - a.freed_by_input_grad); c = -1; break;
      default: return false;
    }
    if (__builtin_add_overflow(bytes, delta, &bytes))
      throw InputError("activation memory of device " + std::to_string(device) +
                       " overflows 8 EiB: the activation size is too large");
    count += c;
    peak_count = std::max(peak_count, count);
    peak_bytes = std::max(peak_bytes, bytes);
    return true;
  }
};

// What both paths report of a device at the end of a run.
inline DeviceStats device_stats(Tick busy, Tick first_start, Tick last_end, const ActivationAccount& memory,
                                std::int32_t weight_versions) {
  DeviceStats out;
  out.busy = busy;
  out.first_start = first_start;
  out.last_end = last_end;
  out.peak_activations = memory.peak_count;
  out.peak_activation_bytes = memory.peak_bytes;
  out.final_activation_bytes = memory.bytes;
  out.peak_weight_versions = weight_versions;
  return out;
}

}  // namespace pipesim
