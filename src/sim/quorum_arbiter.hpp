// The simulator's qnetd: the quorum device's one vote, given to one ring at a time. A node's
// device asks for the ring its node is in now (at each poll, and soon after each new ring); the
// vote goes to the first ring that asks once no node is in the ring that had it (every member of
// that ring has moved on, crashed or stopped), as qnetd moves its vote only once the partition
// that held it is gone. A ring that does not have the vote is refused, and its devices poll with
// no vote cast. Safety rests on it: the checker's "at most one side quorate" holds only if the
// arbiter never votes for two rings at once.
//
// Determinism: no clock, no randomness of its own; the cluster calls it in its event order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "membership/packets.hpp"

namespace rtotem::sim {

using membership::RingId;

class QuorumArbiter {
 public:
  // Whether `ring` has the vote; `held(r)`: whether any node is in ring r now.
  bool vote(const RingId& ring, const std::function<bool(const RingId&)>& held);

  std::uint64_t votes_given() const noexcept { return given_; }
  std::uint64_t votes_refused() const noexcept { return refused_; }
  std::uint64_t moves() const noexcept { return moves_; }  // the vote given to another ring

 private:
  std::optional<RingId> granted_;
  std::uint64_t given_ = 0;
  std::uint64_t refused_ = 0;
  std::uint64_t moves_ = 0;
};

}  // namespace rtotem::sim
