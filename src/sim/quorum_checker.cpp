#include "src/sim/quorum_checker.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace rtotem::sim {

namespace {

bool overlap(std::span<const NodeId> a, std::span<const NodeId> b) {
  return std::ranges::any_of(a, [&](NodeId node) { return std::ranges::binary_search(b, node); });
}

std::string ring_text(const RingId& id, std::span<const NodeId> members) {
  return fmt::format("ring {}/{} {{{}}}", id.rep, id.seq, fmt::join(members, ","));
}

std::string decision_text(const quorum::Decision& d) {
  return fmt::format("quorate={} votes={} expected={} quorum={} two_node={} waiting={} tie_broken={}", d.quorate,
                     d.total_votes, d.expected_votes, d.quorum, d.two_node, d.waiting_for_all, d.tie_broken);
}

}  // namespace

QuorumChecker::QuorumChecker(std::span<const NodeId> nodes, bool wait_for_all)
    : nodes_(nodes.begin(), nodes.end()), wait_for_all_(wait_for_all), views_(nodes.size()) {
  RTOTEM_ASSERT(std::ranges::is_sorted(nodes_));
}

std::size_t QuorumChecker::index_of(NodeId node) const {
  const auto it = std::ranges::lower_bound(nodes_, node);
  RTOTEM_ASSERT(it != nodes_.end() && *it == node);
  return static_cast<std::size_t>(it - nodes_.begin());
}

void QuorumChecker::report(Property property, Time now, std::vector<NodeId> nodes, std::string detail) {
  ++violation_count_;
  if (violations_.size() < kViolationsKept)
    violations_.push_back(Violation{property, now, std::move(nodes), std::nullopt, std::move(detail)});
}

void QuorumChecker::record_start(NodeId node) { views_[index_of(node)] = NodeView{.up = true}; }

void QuorumChecker::record_down(NodeId node) { views_[index_of(node)] = NodeView{}; }

void QuorumChecker::record_state(Time now, NodeId node, const quorum::QuorumState& state) {
  NodeView& view = views_[index_of(node)];
  if (!view.up) return;  // stopped: its last packets still land, but it holds nothing any more
  ++states_;
  if (!(view.ring_id == state.ring_id)) {
    view.decisions = 0;
    view.early.reset();
  }
  view.ring_id = state.ring_id;
  view.members = state.members;
  view.quorate = state.decision.quorate;
  view.two_node = state.decision.two_node;
  if (state.synced) {
    if (!state.silent.empty()) silent_rings_[{state.ring_id.seq, state.ring_id.rep}] = true;
    if (state.members == nodes_) view.seen_all = true;
    for (NodeId member : state.members) view.seen_all = view.seen_all || views_[index_of(member)].seen_all;
    check_agreement(now, node, view, state);
  } else if (state.early) {
    view.early = state.decision;
  }
  if (!view.quorate) return;
  quorate_rings_[{state.ring_id.seq, state.ring_id.rep}] = true;
  if (wait_for_all_ && !view.seen_all)
    report(Property::kQuorumWaitForAll, now, {node},
           fmt::format("quorate in {} before it, or any member with it, saw every node ({})",
                       ring_text(state.ring_id, state.members), decision_text(state.decision)));
  check_split(now, node, view);
}

void QuorumChecker::check_split(Time now, NodeId node, const NodeView& view) {
  for (std::size_t i = 0; i < views_.size(); ++i) {
    const NodeView& other = views_[i];
    if (nodes_[i] == node || !other.up || !other.quorate || other.ring_id == view.ring_id) continue;
    if (overlap(view.members, other.members) || (view.two_node && other.two_node)) continue;
    report(Property::kQuorumSplit, now, {node, nodes_[i]},
           fmt::format("both quorate: node {} in {}, node {} in {}", node, ring_text(view.ring_id, view.members),
                       nodes_[i], ring_text(other.ring_id, other.members)));
  }
}

// Each synced decision a node records for a ring is its next one there: the n-th must equal the
// n-th that any other member recorded.
void QuorumChecker::check_agreement(Time now, NodeId node, NodeView& view, const quorum::QuorumState& state) {
  std::vector<quorum::Decision>& decided = ring_decisions_[{state.ring_id.seq, state.ring_id.rep}];
  const std::uint32_t n = view.decisions++;
  if (n == 0 && view.early && state.silent.empty()) ++early_compared_;
  // A quorum device that voted for the ring before its reports were in adds votes the early
  // decision could not count (its vote was for the ring before): only quorate must then agree.
  const bool device_added = state.decision.device_vote && view.early && !view.early->device_vote;
  const bool early_agrees =
      view.early && (device_added ? view.early->quorate == state.decision.quorate : *view.early == state.decision);
  if (n == 0 && view.early && state.silent.empty() && !early_agrees)
    report(Property::kQuorumAgreement, now, {node},
           fmt::format("decided early in {}: {}, then in sync: {}", ring_text(state.ring_id, state.members),
                       decision_text(*view.early), decision_text(state.decision)));
  if (n == decided.size()) {
    decided.push_back(state.decision);
    return;
  }
  ++decisions_compared_;
  if (decided[n] == state.decision) return;
  report(
      Property::kQuorumAgreement, now, {node},
      fmt::format("decision {} in {}: {}, where another member decided {}", n + 1,
                  ring_text(state.ring_id, state.members), decision_text(state.decision), decision_text(decided[n])));
}

}  // namespace rtotem::sim
