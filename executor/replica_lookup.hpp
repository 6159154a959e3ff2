#pragma once
// The look-ups both compute backends (cpu_backend, cuda_backend) make into their replicas,
// by one set of rules and messages. A backend's Replica has `current` (its weights, with
// `version`), `kept` (older versions by number) and `caches` (by micro-batch id).
#include <cstdint>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {

// The replica of (pipeline, stage): created by create_replica, or a broken invariant.
template <class Replicas>
auto& find_replica(Replicas& replicas, int pipeline, int stage) {
  auto it = replicas.find(std::pair{pipeline, stage});
  PIPESIM_ASSERT(it != replicas.end());
  return it->second;
}

// The weights of `version`: the current ones or a kept copy; InputError naming `op` if the
// replica holds neither.
template <class Replica>
const auto& weights_of(const Replica& r, std::int32_t version, const Op& op) {
  if (r.current.version == version) return r.current;
  auto it = r.kept.find(version);
  if (it == r.kept.end())
    throw InputError(to_string(op) + " needs weight version " + std::to_string(version) + ", but the replica holds version " +
                     std::to_string(r.current.version) + (r.kept.empty() ? "" : " and older kept copies") + " only");
  return it->second;
}

// The activation cache of op's micro-batch, made if `create` (a forward); InputError naming
// `op` if it is missing otherwise.
template <class Replica>
auto& cache_of(Replica& r, const Op& op, bool create) {
  auto it = r.caches.find(op.microbatch);
  if (it == r.caches.end()) {
    if (!create)
      throw InputError(to_string(op) + ": no activations of micro-batch " + std::to_string(op.microbatch) +
                       " are held (its forward did not run here)");
    it = r.caches.try_emplace(op.microbatch).first;
  }
  return it->second;
}

}  // namespace pipesim
