#pragma once
// EventQueue: events (sim/events.hpp) ordered by (time, insertion number). Equal times pop in insertion
// order (FIFO), so a run is a pure function of its input. Like ns-3's scheduler, an event is
// identified by (time, uid); unlike ns-3 nothing is ever cancelled, so there is no lookup.
//
// Layout: a FIFO bucket per distinct time, and a min-heap of buckets.
//
//   heap of buckets (time, creation number)       bucket: events in insertion order
//     (3 ms, #7) ----------------------------->   [finish 12] -> [arrive 40] -> [finish 9]
//     (4 ms, #5)   (5 ms, #8)  ...
//
// Pipeline schedules put most events on few distinct times (uniform costs: multiples of one
// duration; a zero-latency transfer arrives when its producer ends), so a push usually
// appends to an existing bucket and a pop takes the head of the first one: no heap work,
// where a heap of single events paid about log2(events queued) steps per pop (~20% of the
// engine's instructions at p = 64, and most of its branch mispredictions before the heap
// was made branch-free).
//
// Exactness: a push for time t appends to the bucket that `open_` names for t, which is
// always the newest bucket created for t. Every event in it, and every event in older
// buckets for t, was pushed earlier, so appending keeps insertion order. When `open_` has
// forgotten t (two times share its entry), the push starts a new bucket for t, and buckets
// of one time pop in creation order, which is again insertion order. A bucket that has run
// empty stays in the heap (and open) until the next pop finds it empty, so events pushed
// for the current time while its last event is handled go to the same bucket.
#include <array>
#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "core/error.hpp"
#include "sim/events.hpp"

namespace pipesim {

class EventQueue {
 public:
  EventQueue() { open_.fill(kNil); }

  void push(Tick time, const Event& event) {
    PIPESIM_ASSERT(time >= now_);  // nothing is scheduled in the past
    ++pushed_;
    ++size_;
    const std::uint32_t node = new_node(event);
    std::uint32_t& open = open_[open_index(time)];
    if (open != kNil && buckets_[open].time == time) [[likely]] {
      Bucket& bucket = buckets_[open];
      if (bucket.head == kNil)
        bucket.head = node;
      else
        nodes_[bucket.tail].next = node;
      bucket.tail = node;
      return;
    }
    open_bucket(open, time, node);
  }

  bool empty() const { return size_ == 0; }

  TimedEvent pop() {
    Bucket& bucket = buckets_[front_bucket()];
    const std::uint32_t id = bucket.head;
    Node& n = nodes_[id];
    bucket.head = n.next;
    n.next = free_nodes_;
    free_nodes_ = id;
    --size_;
    now_ = bucket.time;
    return TimedEvent{bucket.time, n.event};
  }

  // The time of the event pop() returns next (not empty()).
  Tick next_time() { return buckets_[front_bucket()].time; }

  std::uint64_t pushed() const { return pushed_; }

 private:
  // The earliest bucket with an event: buckets that ran empty at an earlier pop are closed
  // (no longer open_ for their time) on the way.
  std::uint32_t front_bucket() {
    PIPESIM_ASSERT(size_ > 0);
    for (;;) {
      const std::uint32_t b = heap_.front().bucket;
      Bucket& bucket = buckets_[b];
      if (bucket.head != kNil) return b;
      std::uint32_t& open = open_[open_index(bucket.time)];
      if (open == b) open = kNil;
      bucket.head = free_buckets_;
      free_buckets_ = b;
      pop_heap();
    }
  }

  static constexpr std::uint32_t kNil = 0xFFFFFFFFu;
  static constexpr int kOpenBits = 6;

  struct Node {
    Event event;
    std::uint32_t next = kNil;  // next event of its bucket, or next free node
  };
  struct Bucket {
    Tick time = 0;
    std::uint32_t head = kNil;  // kNil: empty (or, while free, the next free bucket)
    std::uint32_t tail = kNil;
  };
  struct HeapEntry {
    Tick time = 0;
    std::uint64_t order = 0;  // creation number of the bucket
    std::uint32_t bucket = 0;
  };

  // Multiplicative hash of the time into open_ (Fibonacci hashing).
  static std::size_t open_index(Tick time) {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(time) * 0x9E3779B97F4A7C15ull) >> (64 - kOpenBits));
  }

  std::uint32_t new_node(const Event& event) {
    const std::uint32_t id = free_nodes_ != kNil ? free_nodes_ : grow_nodes();
    free_nodes_ = nodes_[id].next;
    nodes_[id] = Node{event, kNil};
    return id;
  }
  // No free node: one more, put on the free list.
  [[gnu::noinline]] std::uint32_t grow_nodes() {
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    PIPESIM_ASSERT(id != kNil);
    nodes_.emplace_back();  // its next is kNil: the free list ends after it
    return id;
  }

  // Out of line (the common push appends to an open bucket): a new bucket for `time`
  // holding `node`, now the one open_ names for its time.
  [[gnu::noinline]] void open_bucket(std::uint32_t& open, Tick time, std::uint32_t node) {
    std::uint32_t id = free_buckets_;
    if (id != kNil) {
      free_buckets_ = buckets_[id].head;
    } else {
      id = static_cast<std::uint32_t>(buckets_.size());
      PIPESIM_ASSERT(id != kNil);
      buckets_.emplace_back();
    }
    buckets_[id] = Bucket{time, node, node};
    open = id;
    push_heap(HeapEntry{time, next_bucket_++, id});
  }

  // A branch-free binary heap of buckets: a pop moves the hole at the root down to a leaf
  // along the earlier children, then lets the last entry rise from there (it rarely moves).
  static bool earlier(const HeapEntry& x, const HeapEntry& y) {
    return (x.time < y.time) | ((x.time == y.time) & (x.order < y.order));
  }
  void push_heap(const HeapEntry& e) {
    heap_.push_back(e);
    sift_up(heap_.size() - 1, e);
  }
  void pop_heap() {
    const HeapEntry last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return;
    std::size_t hole = 0;
    for (std::size_t child = 1; child < n; child = 2 * hole + 1) {
      if (child + 1 < n) child += static_cast<std::size_t>(earlier(heap_[child + 1], heap_[child]));
      heap_[hole] = heap_[child];
      hole = child;
    }
    sift_up(hole, last);
  }
  void sift_up(std::size_t hole, const HeapEntry& e) {
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 2;
      if (!earlier(e, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }

  std::vector<HeapEntry> heap_;    // buckets, earliest (time, creation) first
  std::vector<Bucket> buckets_;    // live ones are in heap_; free ones chained through head
  std::vector<Node> nodes_;        // events; free ones chained through next
  std::uint32_t free_buckets_ = kNil, free_nodes_ = kNil;
  std::array<std::uint32_t, std::size_t{1} << kOpenBits> open_;  // time's hash -> its newest bucket, or kNil
  std::uint64_t next_bucket_ = 0;
  std::uint64_t pushed_ = 0;
  std::uint64_t size_ = 0;         // events queued
  Tick now_ = 0;                   // time of the last event popped
};

}  // namespace pipesim
