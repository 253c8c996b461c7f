#include "src/services/quorum/quorum_decision.hpp"

#include <algorithm>

namespace rtotem::quorum {

namespace {

bool has(std::span<const NodeId> sorted, NodeId node) { return std::ranges::binary_search(sorted, node); }

bool has_member(std::span<const MemberReport> reports, NodeId node) {
  return std::ranges::binary_search(reports, node, {}, &MemberReport::node);
}

// Whether this ring holds the tie-breaker of `previous`, the ring it split from.
bool holds_tie_breaker(const QuorumConfig& config, std::span<const MemberReport> reports, const QuorateRing& previous) {
  switch (config.tie_breaker) {
    case TieBreaker::kNone: return false;
    case TieBreaker::kLowest: return has_member(reports, previous.members.front());
    case TieBreaker::kHighest: return has_member(reports, previous.members.back());
    case TieBreaker::kList:
      // The first listed node here decides, unless a node listed before it was in the previous
      // ring: that one may be on the other side, holding the same tie.
      for (std::size_t i = 0; i < config.tie_breaker_nodes.size(); ++i) {
        if (!has_member(reports, config.tie_breaker_nodes[i])) continue;
        return std::none_of(config.tie_breaker_nodes.begin(),
                            config.tie_breaker_nodes.begin() + static_cast<std::ptrdiff_t>(i),
                            [&](NodeId earlier) { return has(previous.members, earlier); });
      }
      return false;
  }
  return false;
}

}  // namespace

const QuorateRing* latest_quorate_ring(std::span<const MemberReport> reports) noexcept {
  const QuorateRing* latest = nullptr;
  for (const MemberReport& report : reports) {
    const QuorateRing& ring = report.last_quorate;
    if (!ring.known()) continue;
    if (latest == nullptr || ring.ring_id.seq > latest->ring_id.seq ||
        (ring.ring_id.seq == latest->ring_id.seq && ring.ring_id.rep > latest->ring_id.rep))
      latest = &ring;
  }
  return latest;
}

Decision decide(const QuorumConfig& config, std::span<const MemberReport> reports) {
  RTOTEM_ASSERT(!reports.empty() && std::ranges::is_sorted(reports, {}, &MemberReport::node));
  Decision d;
  std::uint32_t highest_expected = 0;
  for (const MemberReport& report : reports) {
    d.total_votes += report.votes;
    highest_expected = std::max(highest_expected, report.expected_votes);
  }
  if (config.device && std::ranges::any_of(reports, [](const MemberReport& r) { return r.device.cast_vote; })) {
    d.device_vote = true;
    d.total_votes += config.device->votes;
  }
  d.expected_votes = std::max(highest_expected, d.total_votes);
  d.quorum = d.expected_votes / 2 + 1;
  // votequorum turns two_node off above two members; here also above two expected votes, so a
  // larger cluster left with two_node set never gives a pair of its nodes quorum 1.
  d.two_node = config.two_node && reports.size() <= 2 && d.expected_votes <= 2;
  if (d.two_node) d.quorum = 1;

  // A member quorate and not waiting has seen every vote since it was last inquorate: the ring
  // needs not wait again (a node restarted into a running cluster joins its quorum).
  d.waiting_for_all = config.wait_for_all && std::ranges::none_of(reports, [](const MemberReport& r) {
                        return r.quorate && !r.waiting_for_all;
                      });
  if (d.waiting_for_all && d.total_votes < d.expected_votes) return d;
  d.waiting_for_all = false;

  d.quorate = d.total_votes >= d.quorum;
  if (!d.quorate && config.device &&
      std::ranges::any_of(reports, [](const MemberReport& r) { return r.device.cast_vote && r.device.master_wins; })) {
    d.quorate = true;
    d.master_wins = true;
  }
  if (!d.quorate && config.tie_breaker != TieBreaker::kNone && d.total_votes * 2 == d.expected_votes) {
    const QuorateRing* previous = latest_quorate_ring(reports);
    if (previous != nullptr && holds_tie_breaker(config, reports, *previous)) {
      d.quorate = true;
      d.tie_broken = true;
    }
  }
  return d;
}

}  // namespace rtotem::quorum
