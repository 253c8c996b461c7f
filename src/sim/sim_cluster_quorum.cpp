// The simulated operator's runtime quorum changes (spec.vote_changes_per_s): at a drawn node, a
// drawn node's votes or the expected votes, set through the node's QuorumService as
// `rtotemctl quorum votes|expected` sets them in rtotemd. The QuorumChecker then judges that no
// two sides of a split are quorate however the ring delivers the change (issue 48: EVS may
// deliver it on one side only).
#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_cluster_member.hpp"

namespace rtotem::sim {
namespace {

// Votes drawn for a node: 0 (it stops counting) up to 3, above every configured count but the
// votes profile's highest, so that raises happen.
constexpr std::uint64_t kVotesDrawnMax = 3;
// Expected votes drawn up to this many above the ring's.
constexpr std::uint64_t kExpectedDrawnAbove = 2;
// One change in this many is followed by a split within kSplitAfterMaxUs (with partitions on):
// a change then reaches one side only, or is ordered by the side that holds it as the ring breaks
// up, as a drawn split alone makes it almost never (a change is on the ring for a rotation or two).
constexpr std::uint64_t kSplitAfterOneIn = 4;
constexpr Time kSplitAfterMaxUs = 10'000;

}  // namespace

// Only at a node whose ring is in sync and quorate: on an inquorate side votequorum's rule admits
// only a change that makes it quorate, an override an operator makes when the other side is known
// down, which no check of splits could pass. For the same reason expected votes are lowered only
// in a ring of every node, counted: with a node away, lowering them is what last_man_standing
// does, on the operator's word that the absent are gone.
void SimCluster::vote_change(Time now) {
  Rng& rng = network_.rng();
  if (live_.empty()) return;
  Member& m = *member(live_[rng.uniform(live_.size())]);
  const bool votes = rng.uniform(2) == 0;
  const quorum::QuorumState& state = m.quorum->state();
  if (!m.awake(now) || !m.node->operational() || !state.synced || !state.decision.quorate) return;
  int rc = 0;
  if (votes) {
    const auto node = static_cast<NodeId>(rng.uniform_range(1, spec_.nodes));
    rc = m.quorum->set_votes(node, static_cast<std::uint32_t>(rng.uniform_range(0, kVotesDrawnMax)));
  } else {
    // From the votes present (the least votequorum's rule admits) to a little above the ring's.
    const auto expected = static_cast<std::uint32_t>(
        rng.uniform_range(state.decision.total_votes, state.decision.expected_votes + kExpectedDrawnAbove));
    const bool everyone = state.members.size() == spec_.nodes && state.silent.empty();
    if (expected < state.decision.expected_votes && !everyone) return;
    rc = m.quorum->set_expected(expected);
  }
  after_node_call(m);  // sends what it submitted
  ++(rc == 0 ? quorum_changes_asked_ : quorum_changes_refused_);
  if (rc != 0 || spec_.partitions_per_s == 0 || rng.uniform(kSplitAfterOneIn) != 0) return;
  const Time split_us = now + rng.uniform_range(0, kSplitAfterMaxUs);
  split_at_us_ = std::min(split_at_us_.value_or(split_us), split_us);
}

}  // namespace rtotem::sim
