#pragma once
// Which cores this process may run on, and keeping a thread on one of them (Linux affinity).
// `validate` pins each device thread to a core and times each core's speed on a thread moved
// from core to core (executor/executor.hpp, kernels/core_speeds.hpp).
#include <thread>
#include <vector>

namespace pipesim {

// The CPU ids of this process's affinity set, in increasing order; empty where it cannot be
// read.
std::vector<int> usable_core_ids();

// How many cores this process may run on: its affinity set's, or where that cannot be read
// the hardware threads; at least 1.
int usable_cores();

// Restricts `thread` to `core` (the move happens at once where it runs elsewhere); false where
// the system refuses, e.g. a core outside the process's set.
bool pin_to_core(std::thread::native_handle_type thread, int core);

}  // namespace pipesim
