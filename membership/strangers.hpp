// The nodes outside our ring we have heard lately (their merge detections, joins, or other rings'
// multicasts), and when we last proposed merging with each: what a member votes with
// (merge_vote.cpp). Bounded by kMembersMax strangers; a new one replaces the longest silent.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "membership/node_set.hpp"
#include "membership/packets.hpp"

namespace rtotem::membership {

class StrangerLog {
 public:
  using Time = std::uint64_t;
  static constexpr std::uint32_t kBackoffDoublingsMax = 6;  // the longest backoff: 64 x the first

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
  // In a Gather the node's join failed us, though we heard it: it may not hear us (a link cut
  // its way). Kept if it does not come to the ring formed: while its joins leave us out (or fail
  // us) we neither propose nor vote for it; a join naming us, failing us not, opens the way
  // again, and so does its silence (a ring at rest sends no joins: the backoff rules it). Each
  // member judges only what it saw of itself, so the one that waits is the one that announces.
  void failed_us(NodeId node, Time now) noexcept;
  // A stranger's join, heard outside Gather: whether it says it hears us.
  void join_heard(NodeId node, bool names_us, Time now) noexcept;
  // A stranger heard since `heard_since` failed us and has not merged with us since: we announce
  // ourselves (merge detection) so that it hears us once the link is back.
  bool awaits_us(Time heard_since) const noexcept;

 private:
  struct Entry {
    NodeId node = kNoNode;
    Time heard = 0;
    Time proposed = 0;
    bool ever_proposed = false;
    std::uint32_t failures = 0;  // merges in a row it did not come to
    Time not_before = 0;         // not proposed before then
    bool failed_us = false;         // in a round it did not come out of with us
    std::optional<Time> omitted;    // its last join that left us out or failed us
    std::optional<Time> named_us;   // its last join that named us, failing us not
    // Not known, since `since`, to leave us out, unless known to name us.
    bool may_hear_us(Time since) const noexcept {
      return !failed_us || !omitted || *omitted < since || (named_us && *named_us >= since);
    }
  };
  // The node's entry; a new one replaces the longest silent.
  Entry& entry_of(NodeId node, Time now) noexcept;
  std::array<Entry, kMembersMax> entries_{};
};

}  // namespace rtotem::membership
