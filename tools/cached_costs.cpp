#include "tools/cached_costs.hpp"

#include <algorithm>

namespace pipesim {
namespace {

// The memoised answer of `slot`, asking `ask` the first time.
template <typename T, typename Ask>
T remembered(std::optional<T>* slot, Ask&& ask) {
  if (slot == nullptr) return ask();
  if (!*slot) *slot = ask();
  return **slot;
}

}  // namespace

void CachedCosts::start_over(OpScale scale) const {
  scale_ = scale;
  answers_.assign(static_cast<std::size_t>(kNumOpKinds) * static_cast<std::size_t>(std::max(scale.num_stages, 0)),
                  Answers{});
}

Tick CachedCosts::compute_time(const Op& op, OpScale scale) const {
  Answers* a = answers(op, scale);
  return remembered(a ? &a->time : nullptr, [&] { return model_.compute_time(op, scale); });
}

ComputeParts CachedCosts::compute_parts(const Op& op, OpScale scale) const {
  Answers* a = answers(op, scale);
  return remembered(a ? &a->parts : nullptr, [&] { return model_.compute_parts(op, scale); });
}

ActivationCost CachedCosts::activation(const Op& op, OpScale scale) const {
  Answers* a = answers(op, scale);
  return remembered(a ? &a->activation : nullptr, [&] { return model_.activation(op, scale); });
}

std::int64_t CachedCosts::message_bytes(const Op& producer, OpScale scale) const {
  Answers* a = answers(producer, scale);
  return remembered(a ? &a->message : nullptr, [&] { return model_.message_bytes(producer, scale); });
}

std::int64_t CachedCosts::grad_bytes(const Op& grad_sync, OpScale scale) const {
  Answers* a = answers(grad_sync, scale);
  return remembered(a ? &a->grad : nullptr, [&] { return model_.grad_bytes(grad_sync, scale); });
}

TransferCost CachedCosts::transfer(int src_device, int dst_device, std::int64_t bytes) const {
  if (src_device < 0 || dst_device < 0) return model_.transfer(src_device, dst_device, bytes);
  const auto src = static_cast<std::size_t>(src_device), dst = static_cast<std::size_t>(dst_device);
  if (src >= devices_ || dst >= devices_) [[unlikely]] {  // a device not seen yet: room for it, starting over
    devices_ = std::max(src, dst) + 1;
    transfers_.assign(devices_ * devices_, Sent{});
  }
  Sent& sent = transfers_[src * devices_ + dst];
  if (sent.bytes != bytes) sent = Sent{bytes, model_.transfer(src_device, dst_device, bytes)};
  return sent.cost;
}

Tick CachedCosts::allreduce_time(int participants, std::int64_t bytes) const {
  return model_.allreduce_time(participants, bytes);
}

}  // namespace pipesim
