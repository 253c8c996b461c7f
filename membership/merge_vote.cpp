// Merging with a node outside the ring only once every member hears it.
//
// Hearing another ring's node used to start a Gather at once, which pulls the whole ring along.
// Where a link works one way only (2 -> 1 up, 2 -> 3 down), 3 never hears 2 and gives up on it
// at the consensus timeout; 1 and 3 form a ring without 2, and 2's next merge detection, which
// reaches 1, starts it all again: a new ring every merge period for as long as the link is down,
// operational well under 1% of the time (corosync#760 is the same loop).
//
// So a ring of two or more members merges only with a stranger all of them have heard within
// kHeardWindows merge periods. A member that has heard one proposes it on the token; each member
// that has heard it too adds a vote on the rotation; back at the proposer, a vote of every member
// starts the Gather (the stranger in its proc set: the joins bring everyone), anything less is
// dropped and that stranger is not proposed again for a merge period. A node only some members
// hear stays out until they all hear it, e.g. until its link heals; a node alone on its ring
// merges at once, as before. A stranger every member hears but that does not hear us (the link
// cut its way) does not come to the merge: the ring forms again without it, and it is proposed
// again only after a backoff that doubles, from a merge period up to 64 of them. Only when a merge starts changes: Gather, consensus and the commit
// are as they were, so safety does not rest on this.
#include <algorithm>

#include "membership/node.hpp"
#include "membership/node_set.hpp"

namespace rtotem::membership {
namespace {

// A stranger's rep announces its ring every merge period; a node in Gather sends joins more
// often. Two periods let one announcement be lost without a vote failing.
constexpr Time kHeardWindows = 2;

}  // namespace

Time Node::stranger_window() const noexcept {
  return kHeardWindows * ms_to_time(config_.merge_ms) + ms_to_time(config_.join_ms);
}

// A stranger reaches us outside Gather. Returns whether it is ours to merge with now (alone on a
// ring, or a ring still forming that it belongs to); on a ring of two or more it is noted for
// the vote instead.
bool Node::note_stranger(NodeId node, Time now) noexcept {
  if (state_ == MemberState::kOperational && ring_.members.count > 1) {
    strangers_.heard(node, now);
    return false;
  }
  return true;
}

bool Node::vote_on_merge(Time now) {
  RTOTEM_ASSERT(state_ == MemberState::kOperational);
  Token& token = token_;
  const Time heard_since = now > stranger_window() ? now - stranger_window() : 0;
  if (token.merge_proposer == self_) {
    const NodeId stranger = token.merge_candidate;
    const bool everyone = token.merge_votes >= ring_.members.count && !contains(ring_.members, stranger);
    token.merge_proposer = token.merge_candidate = kNoNode;
    token.merge_votes = 0;
    if (everyone) {
      ++counters_.merge_votes_won;
      insert(proc_set_, stranger);
      gather_enter(now);
      return true;
    }
    ++counters_.merge_votes_lost;
  } else if (token.merge_proposer != kNoNode) {
    if (!contains(ring_.members, token.merge_proposer)) {  // nobody here will close it: a stray
      token.merge_proposer = token.merge_candidate = kNoNode;
      token.merge_votes = 0;
    } else {
      if (strangers_.votes_for(token.merge_candidate, heard_since, now))
        token.merge_votes = static_cast<std::uint16_t>(std::min<std::size_t>(token.merge_votes + 1u, kMembersMax));
      return false;
    }
  }
  const Time proposed_before = now > ms_to_time(config_.merge_ms) ? now - ms_to_time(config_.merge_ms) : 0;
  const NodeId stranger = strangers_.propose(heard_since, proposed_before, ring_.members, now);
  if (stranger != kNoNode) {
    token.merge_proposer = self_;
    token.merge_candidate = stranger;
    token.merge_votes = 1;
  }
  return false;
}

}  // namespace rtotem::membership
