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
// again only after a backoff that doubles, from a merge period up to 64 of them.
//
// Better, the stranger says so. A node that gave up on another at a consensus timeout without a
// single packet from it in the round (joins are sent every join period), and then saw a node it
// heard go on to a ring without it, does not hear the first where others do: a link cut its way.
// (In a partition, all it heard are on its ring.) Until some packet from that node comes, its
// merge detections name it `unheard` (sent at once when it installs a ring as representative, not
// while deaf_). No member of a ring holding an unheard node proposes or votes for that stranger
// while the word is fresh; a stranger's join that lists the node live (proc set less failed set)
// lifts that. The node named announces itself with merge detections of its own for as long as the
// stranger keeps naming it, so the stranger hears it as soon as the link is back. A one-way link
// then costs one re-formation when the stranger is alone on its ring (as a node behind a one-way
// cut is); only a representative names, so a larger stranger ring still relies on the backoff.
// It is the stranger's own word about what it receives: two rings cannot hold each other off,
// since each lifts its word on hearing the other. Nodes of the version before the list refuse a
// merge detection that carries one; the word then lapses, and the backoff rules, as it did.
// Only when a merge starts changes (and a Commit that a member's join shows will not complete
// returns to Gather early, as its token timeout would): Gather, consensus and the commit are as
// they were, so safety does not rest on this.
#include <algorithm>

#include "membership/node.hpp"
#include "membership/node_set.hpp"

namespace rtotem::membership {
namespace {

// A stranger's rep announces its ring every merge period; a node in Gather sends joins more
// often. Two periods let one announcement be lost without a vote failing.
constexpr Time kHeardWindows = 2;
// Names of nodes we do not hear are dropped this many merge periods (200 s by default) after the
// last was added. A one-way cut that outlasts it costs one re-formation more, which names again.
constexpr Time kUnheardKeptPeriods = 1000;

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

void Node::note_sender(NodeId sender) noexcept {
  if (sender == kNoNode || sender == self_) return;
  if (state_ == MemberState::kGather) insert(heard_in_round_, sender);
  if (state_ != MemberState::kOperational) insert(heard_in_formation_, sender);
  if (unheard_.count != 0) erase(unheard_, sender);
  RTOTEM_ASSERT(!contains(unheard_, sender));
}

void Node::note_given_up(const NodeList& given_up) noexcept {
  merge(given_up_unheard_, difference(given_up, heard_in_round_));
}

// A ring is installed. Those given up on unheard are ours to name only if a node we heard went on
// without us: then they are heard elsewhere and not here (a link cut their way). In a partition,
// everyone we heard is on our ring, and no one is named: the merge after it heals waits for no
// word to be taken back.
void Node::note_installed(Time now) noexcept {
  if (now >= unheard_until_) unheard_ = NodeList{};  // lapsed: new names start a new period
  const NodeList heard_elsewhere = difference(heard_in_formation_, ring_.members);
  const NodeList named = difference(given_up_unheard_, heard_in_formation_);
  if (difference(heard_elsewhere, given_up_unheard_).count != 0 && named.count != 0) {
    merge(unheard_, named);
    unheard_until_ = now + kUnheardKeptPeriods * ms_to_time(config_.merge_ms);
  }
  unheard_ = difference(unheard_, ring_.members);  // on one ring with us: heard
  heard_in_formation_ = given_up_unheard_ = NodeList{};
  RTOTEM_ASSERT(!contains(unheard_, self_));
}

// How long a stranger's word that it does not hear a node holds, and how long that node announces
// itself after the last such word. A stranger alone says it again each time it is operational:
// every merge period, or after each Gather another ring's merge detection pulls it into. Two of
// those let one word be lost; a stranger that hears the node again stops saying it.
Time Node::unheard_word_window() const noexcept {
  return 2 * (ms_to_time(config_.consensus_ms) + ms_to_time(config_.merge_ms) + ms_to_time(config_.join_ms));
}

void Node::note_merge_detect(const MergeDetect& merge_detect, Time now) {
  strangers_.says_unheard(merge_detect.sender, merge_detect.unheard, now + unheard_word_window());
  if (!contains(merge_detect.unheard, self_)) return;
  const bool started = !announcing(now);
  announce_until_ = now + unheard_word_window();
  // The representative's merge detections run already; a member's start now.
  if (started && state_ == MemberState::kOperational && ring_.id.rep != self_)
    events_.arm_timer(TimerId::kMergeDetect, now + ms_to_time(config_.merge_ms));
}

bool Node::announcing(Time now) const noexcept { return now < announce_until_; }

// What our merge detection names: nothing once the names have outlived kUnheardKeptPeriods (a
// node gone for good sends nothing that would lift its name), and no more than the MTU's commit
// token holds members.
NodeList Node::published_unheard(Time now) const noexcept {
  if (now >= unheard_until_) return NodeList{};
  NodeList out = unheard_;
  out.count = static_cast<std::uint16_t>(std::min<std::size_t>(out.count, members_max_));
  RTOTEM_ASSERT(out.count <= members_max_ && !contains(out, self_));
  return out;
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
      RTOTEM_ASSERT(state_ == MemberState::kGather);
      return true;
    }
    ++counters_.merge_votes_lost;
  } else if (token.merge_proposer != kNoNode) {
    if (!contains(ring_.members, token.merge_proposer)) {  // nobody here will close it: a stray
      token.merge_proposer = token.merge_candidate = kNoNode;
      token.merge_votes = 0;
    } else {
      if (strangers_.votes_for(token.merge_candidate, heard_since, ring_.members, now))
        token.merge_votes = static_cast<std::uint16_t>(std::min<std::size_t>(token.merge_votes + 1u, kMembersMax));
      return false;
    }
  }
  const Time proposed_before = now > ms_to_time(config_.merge_ms) ? now - ms_to_time(config_.merge_ms) : 0;
  const NodeId stranger = strangers_.propose(heard_since, proposed_before, ring_.members, now);
  if (stranger != kNoNode) {
    RTOTEM_ASSERT(stranger != self_ && !contains(ring_.members, stranger));  // ours to merge with
    token.merge_proposer = self_;
    token.merge_candidate = stranger;
    token.merge_votes = 1;
  }
  // A vote open on the token is ours or none: a stray one was dropped above.
  RTOTEM_ASSERT(token.merge_proposer == kNoNode || token.merge_proposer == self_);
  return false;
}

}  // namespace rtotem::membership
