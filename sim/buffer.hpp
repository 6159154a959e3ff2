#pragma once
// Buffer: an array a Simulator keeps between runs (sim/engine.cpp, sim/ready_pass.cpp):
// grown when a run needs more, never shrunk, and never zero-filled (each run writes what it
// reads).
#include <cstddef>
#include <memory>

namespace pipesim {

template <class T>
class Buffer {
 public:
  T* get(std::size_t n) {
    if (capacity_ < n) {
      items_.reset();  // before the new one: the old one is too small to be worth keeping
      items_ = std::make_unique_for_overwrite<T[]>(n);
      capacity_ = n;
    }
    return items_.get();
  }

 private:
  std::unique_ptr<T[]> items_;
  std::size_t capacity_ = 0;
};

}  // namespace pipesim
