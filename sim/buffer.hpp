#pragma once
// Buffer: an array a Simulator keeps between runs (sim/event_loop.hpp, sim/ready_pass.cpp):
// grown when a run needs more, never shrunk, and never zero-filled (each run writes what it
// reads).
//
// Performance: an array of 2 MiB or more is aligned to 2 MiB and asked for transparent huge
// pages (madvise MADV_HUGEPAGE; this machine's kernel gives them only to regions that ask).
// A run touches every page of its arrays once, and with 4 KiB pages that was a page fault
// per 4 KiB, about 12 000 per run of 1F1B at p = 128, m = 2048 (docs/performance.md,
// 2026-12-02). Where the kernel gives none, the advice changes nothing.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

#include <sys/mman.h>

namespace pipesim {

template <class T>
class Buffer {
  static_assert(std::is_trivially_destructible_v<T>);

 public:
  T* get(std::size_t n) {
    if (capacity_ < n) {
      items_.reset();  // before the new one: the old one is too small to be worth keeping
      items_ = allocate(n);
      capacity_ = n;
    }
    return items_.get();
  }

 private:
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  // Through the aligned operator new (so that whoever counts the heap, as bench/sim_bench
  // does, sees it), with its alignment kept for the matching delete.
  struct Free {
    std::size_t align = alignof(T);
    void operator()(T* p) const { ::operator delete(static_cast<void*>(p), std::align_val_t{align}); }
  };
  static std::unique_ptr<T, Free> allocate(std::size_t n) {
    const std::size_t bytes = std::max<std::size_t>(1, n * sizeof(T));
    const bool huge = bytes >= kHuge;  // rounded up to whole huge pages: at most 2x, at 2-4 MiB
    const std::size_t rounded = huge ? (bytes + kHuge - 1) / kHuge * kHuge : bytes;
    const std::size_t align = huge ? kHuge : std::max<std::size_t>(alignof(T), __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    void* p = ::operator new(rounded, std::align_val_t{align});
    if (huge) ::madvise(p, rounded, MADV_HUGEPAGE);  // advice: nothing to check
    T* items = static_cast<T*>(p);
    if constexpr (!std::is_trivially_default_constructible_v<T>) std::uninitialized_default_construct_n(items, n);
    return std::unique_ptr<T, Free>(items, Free{align});
  }
  std::unique_ptr<T, Free> items_;
  std::size_t capacity_ = 0;
};

}  // namespace pipesim
