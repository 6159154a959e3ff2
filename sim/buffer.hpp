#pragma once
// Buffer: an array a Simulator keeps between runs (sim/engine.cpp, sim/ready_pass.cpp):
// grown when a run needs more, never shrunk, and never zero-filled (each run writes what it
// reads).
//
// Performance: an array of 4 MiB or more is aligned to 2 MiB and asked for transparent huge
// pages (madvise MADV_HUGEPAGE; this machine's kernel gives them only to regions that ask).
// A run touches every page of its arrays once, and with 4 KiB pages that was a page fault
// per 4 KiB, about 12 000 per run of 1F1B at p = 128, m = 2048 (docs/performance.md,
// 2026-12-02). Where the kernel gives none, the advice changes nothing.
#include <cstddef>
#include <cstdlib>
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
      items_.reset(allocate(n));
      capacity_ = n;
    }
    return items_.get();
  }

 private:
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  static T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    void* p = nullptr;
    if (bytes >= 2 * kHuge) {
      const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
      p = std::aligned_alloc(kHuge, rounded);
      if (p) ::madvise(p, rounded, MADV_HUGEPAGE);  // advice: nothing to check
    } else {
      p = std::malloc(bytes > 0 ? bytes : 1);
    }
    if (!p) throw std::bad_alloc();
    T* items = static_cast<T*>(p);
    if constexpr (!std::is_trivially_default_constructible_v<T>) std::uninitialized_default_construct_n(items, n);
    return items;
  }
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> items_;
  std::size_t capacity_ = 0;
};

}  // namespace pipesim
