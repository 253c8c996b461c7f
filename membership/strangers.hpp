// The nodes outside our ring we have heard lately (their merge detections, joins, or other rings'
// multicasts), and when we last proposed merging with each: what a member votes with
// (merge_vote.cpp). Bounded by kMembersMax strangers; a new one replaces the longest silent.
#pragma once

#include <array>
#include <cstdint>

#include "membership/node_set.hpp"
#include "membership/packets.hpp"

namespace rtotem::membership {

class StrangerLog {
 public:
  using Time = std::uint64_t;

  void heard(NodeId node, Time now) noexcept;
  // Heard since `since`, and not backing off: a vote for it.
  bool votes_for(NodeId node, Time since, Time now) const noexcept;
  // A stranger heard since `heard_since`, not a member, not proposed after `proposed_before`, and
  // not backing off: it is noted as proposed now. kNoNode if there is none.
  NodeId propose(Time heard_since, Time proposed_before, const NodeList& members, Time now) noexcept;
  // A ring of `members` was installed at `now` after a Gather with `attempted` (its proc set): a
  // stranger attempted but not among the members did not come (it does not hear us: a link cut
  // its way), so no member proposes or votes for it for `backoff` x 2^(failures - 1), at most
  // 64 x `backoff`; one that came starts afresh. Every member runs the same Gather, so every
  // member backs off alike.
  void installed(const NodeList& attempted, const NodeList& members, Time now, Time backoff) noexcept;
  // It left (its join names itself failed): nothing to merge with.
  void forget(NodeId node) noexcept;

 private:
  struct Entry {
    NodeId node = kNoNode;
    Time heard = 0;
    Time proposed = 0;
    bool ever_proposed = false;
    std::uint32_t failures = 0;  // merges in a row it did not come to
    Time not_before = 0;         // not proposed before then
  };
  std::array<Entry, kMembersMax> entries_{};
};

}  // namespace rtotem::membership
