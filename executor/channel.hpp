#pragma once
// Channel<T>: a bounded, blocking, multi-producer multi-consumer FIFO (mutex +
// condition_variable), the only way tensors move between device threads.
//
//   producer --push--> [ m0 | m1 | ... | m(capacity-1) ] --pop--> consumer
//                 blocks while full          blocks while empty
//
// close(): no more pushes; pops drain what is left, then report the end.
// abort(): every waiting and future push/pop fails at once with ChannelAborted, so a run
// that has failed somewhere wakes all its threads and they can be joined.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/error.hpp"

namespace pipesim {

// Thrown by a channel operation once the channel is aborted.
class ChannelAborted : public std::runtime_error {
 public:
  ChannelAborted() : std::runtime_error("channel aborted") {}
};

template <class T>
class Channel {
 public:
  explicit Channel(std::size_t capacity) : capacity_(capacity) { PIPESIM_ASSERT(capacity > 0); }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  std::size_t capacity() const { return capacity_; }

  // Blocks while the channel is full. ChannelAborted if aborted (before or while waiting);
  // pushing into a closed channel is a broken invariant.
  void push(T value) {
    push(std::move(value), [] {});
  }

  // push() that calls `on_enqueue()` under the lock just before the value becomes
  // visible, so a timestamp taken there is never later than the consumer's pop.
  template <class F>
  void push(T value, F&& on_enqueue) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return aborted_ || items_.size() < capacity_; });
    if (aborted_) throw ChannelAborted();
    PIPESIM_ASSERT(!closed_);
    on_enqueue();
    items_.push_back(std::move(value));
    lock.unlock();
    not_empty_.notify_one();
  }

  // Blocks while the channel is empty and open. nullopt once closed and drained;
  // ChannelAborted if aborted.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return aborted_ || closed_ || !items_.empty(); });
    return take(lock);
  }

  // Like pop(), but gives up after `timeout` (nullopt; also when closed and drained).
  template <class Duration>
  std::optional<T> pop_for(Duration timeout) {
    std::unique_lock lock(mutex_);
    not_empty_.wait_for(lock, timeout, [&] { return aborted_ || closed_ || !items_.empty(); });
    return take(lock);
  }

  // Never blocks: the oldest item, or nullopt if there is none.
  std::optional<T> try_pop() {
    std::unique_lock lock(mutex_);
    return take(lock);
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    not_empty_.notify_all();
  }

  void abort() {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }

 private:
  std::optional<T> take(std::unique_lock<std::mutex>& lock) {
    if (aborted_) throw ChannelAborted();
    if (items_.empty()) return std::nullopt;
    T value = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    not_full_.notify_one();
    return value;
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> items_;
  bool closed_ = false;
  bool aborted_ = false;
};

}  // namespace pipesim
