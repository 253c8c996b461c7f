// The nodes outside our ring we have heard lately (their merge detections, joins, or other rings'
// multicasts), when we last proposed merging with each, and whom each says it does not hear: what
// a member votes with (merge_vote.cpp). Bounded by kMembersMax strangers; a new one replaces the
// longest silent.
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
  // What a stranger says it does not hear (its merge detection's `unheard`), replacing what it
  // said before, believed until `until` (it says it again while it holds); and a stranger's join,
  // whose live nodes (proc set less failed set) it hears.
  void says_unheard(NodeId node, const NodeList& unheard, Time until) noexcept;
  void says_live(NodeId node, const NodeList& live) noexcept;
  // Heard since `since`, not backing off, and hearing every one of `members`: a vote for it.
  bool votes_for(NodeId node, Time since, const NodeList& members, Time now) const noexcept;
  // A stranger heard since `heard_since`, not a member, not proposed after `proposed_before`, not
  // backing off, and not saying it fails to hear one of `members`: it is noted as proposed now.
  // kNoNode if there is none.
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
    NodeList unheard;            // the nodes it says it does not hear
    Time unheard_until = 0;      // believed until then
    bool holds_off(const NodeList& members, Time now) const noexcept {
      return now < unheard_until && intersects(unheard, members);
    }
  };
  Entry& entry_of(NodeId node) noexcept;  // a new one replaces the longest silent
  Entry* find(NodeId node) noexcept;
  std::array<Entry, kMembersMax> entries_{};
};

}  // namespace rtotem::membership
