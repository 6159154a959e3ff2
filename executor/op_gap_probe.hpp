#pragma once
// The executor's own time on a device between two of its ops (ProfileExecutor, the profile's
// `executor`): what its device thread does after an op and before the next one starts, with
// every input already on the device: the op's records and versions, its output kept for the
// next op, the next op's lookups and its input taken. Measured by running the executor
// itself, GPipe on one device of a one-block GPT (kOpGapModel) for kOpGapIterations
// iterations of kOpGapMicrobatches micro-batches, and taking the gaps between consecutive ops
// after the first iteration (its first touches of fresh memory are no op's gap). What the
// executor's backend does inside an op is the op's time, not its gap, so the model's size
// does not matter. Where a message goes to another device's thread, the sender's part of it
// is the link's (LinkProfile::wake and the samples' copies), not this.
#include "cost_models/profile.hpp"

namespace pipesim {

inline constexpr const char* kOpGapModel = "gpt-tiny";  // the catalog's, cut to one block
inline constexpr int kOpGapMicrobatches = 32;
inline constexpr int kOpGapIterations = 4;

// The gaps' distribution; InputError if the run fails.
TimingStats measure_op_gaps();

// `p` with its executor's gaps measured (ProfileExecutor) where its devices are this
// machine's threads (backend "cpu"); any other profile as it is. The one place `profile` and
// `validate` add them.
Profile with_executor_gaps(Profile p);

}  // namespace pipesim
