#pragma once
// What the ranks of an MPI sweep (tools/sweep_ranks.hpp) send each other, as bytes: a
// request of a rank for work with the outcomes of the groups it finished since the last one
// (or the failure that stopped it), and rank 0's answer, a range of groups. Rows travel
// without what rank 0 derives itself: the grid point (from the index), `same_as` and
// `passes_filters` (set once every row is in). Both ends are the same build, so numbers
// travel in the machine's own representation, doubles bit for bit.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tools/sweep_work.hpp"

namespace pipesim {

enum class RequestKind : std::uint8_t {
  More,     // outcomes, and the rank wants more groups
  Final,    // the last outcomes: rank 0 said there is no more work, and the rank's threads are done
  Failure,  // a combination failed on the rank (SweepFailure); the rank stops
};

struct RankRequest {
  RequestKind kind = RequestKind::More;
  std::vector<GroupOutcome> outcomes;  // More, Final
  int exit_code = 0;                   // Failure: tools/exit_codes.hpp
  std::size_t index = 0;               // Failure: the combination
  std::string message;                 // Failure: SweepFailure::what()
};

std::string encode_request(const RankRequest& request);
// The request `bytes` encode, with each row's grid point filled in from its index. A message
// that does not decode is a bug (both ends are one build): PIPESIM_ASSERT.
RankRequest decode_request(std::string_view bytes, const SweepGrid& grid);

// Rank 0's answer: groups [first, last); first == last: no more work.
struct GroupRange {
  std::uint64_t first = 0, last = 0;
};

}  // namespace pipesim
