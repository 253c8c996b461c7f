// The checker at the end of the run, and whether the run may end early: the live nodes converged
// on one ring, what their applications still wait for, self-delivery, agreement in the final
// configuration, and the pairwise order of whole histories.
#include <fmt/format.h>

#include <algorithm>

#include "src/sim/history_checker.hpp"

namespace rtotem::sim {

bool HistoryChecker::quiescent(std::span<const NodeId> live) const {
  if (live.empty()) return true;
  if (!shared_regular(live)) return false;
  const auto delivered_in_last = [this](NodeId node) {
    const NodeState& state = node_states_[index_of(node)];
    return state.history.size() - state.installed.back().first;
  };
  const std::size_t delivered = delivered_in_last(live.front());
  return std::all_of(live.begin(), live.end(), [&](NodeId node) {
    return outstanding_[index_of(node)] == 0 && delivered_in_last(node) == delivered;
  });
}

// The regular configuration every live node is in now, if they share one whose members are
// exactly the live nodes.
std::optional<std::uint32_t> HistoryChecker::shared_regular(std::span<const NodeId> live) const {
  std::optional<std::uint32_t> shared;
  for (NodeId node : live) {
    const NodeState& state = node_states_[index_of(node)];
    if (!state.in_config || state.in_transitional) return std::nullopt;
    if (shared && *shared != *state.regular) return std::nullopt;
    shared = state.regular;
  }
  if (!shared) return std::nullopt;
  const std::vector<NodeId>& members = configs_[*shared].members;
  if (!std::equal(live.begin(), live.end(), members.begin(), members.end())) return std::nullopt;
  return shared;
}

void HistoryChecker::finish(Time now, std::span<const NodeId> live) {
  RTOTEM_ASSERT(std::adjacent_find(live.begin(), live.end(), std::greater_equal<>()) == live.end());
  finish_convergence(now, live);  // first: the summary of what is missing, then the details
  finish_outstanding(now, live);
  finish_messages(now);
  finish_agreement(now, live);
  finish_pairwise_order();
  finish_safe_delivery();
  finish_transitional_members();
  end_connectivity(now);
}

// Once the faults stop, the live nodes form one ring of exactly themselves.
void HistoryChecker::finish_convergence(Time now, std::span<const NodeId> live) {
  if (live.empty() || shared_regular(live)) return;
  std::vector<std::string> where;
  for (NodeId node : live) where.push_back(whereabouts(index_of(node)));
  report(Property::kLiveness, now, {live.begin(), live.end()}, std::nullopt,
         fmt::format("live nodes {} are not in one regular configuration of exactly them: {}", fmt::join(live, ","),
                     fmt::join(where, "; ")));
}

// What the applications of live nodes still wait for: submissions never accepted, accepted ones
// not delivered at their origin. One report per origin, naming the first such message.
void HistoryChecker::finish_outstanding(Time now, std::span<const NodeId> live) {
  for (NodeId node : live) {
    const std::size_t origin = index_of(node);
    std::uint64_t refused = 0;
    std::uint64_t undelivered = 0;
    std::optional<MessageId> first;
    for (std::uint64_t counter = 0; counter < messages_[origin].size(); ++counter) {
      const MessageState& state = messages_[origin][counter];
      if (settled(state, origin)) continue;
      ++(state.accepted ? undelivered : refused);
      if (!first) first = MessageId{node, counter};
    }
    if (first)
      report(Property::kLiveness, now, {node}, first,
             fmt::format("node {}: {} accepted messages not delivered at it and {} submissions still refused "
                         "when the liveness bound ran out",
                         node, undelivered, refused));
  }
}

// Per message: accepted if delivered anywhere; delivered at its origin unless the origin crashed
// first (one report per origin, naming the first and counting the rest). Delivered at some nodes
// and not others is no fault by itself: its origin may have crashed, or a partition cut its ring;
// virtual synchrony and agreement say who must have it.
void HistoryChecker::finish_messages(Time now) {
  for (std::size_t origin = 0; origin < messages_.size(); ++origin) {
    const std::uint64_t origin_bit = std::uint64_t{1} << origin;
    std::uint64_t undelivered = 0;
    std::optional<MessageId> first_undelivered;
    for (std::uint64_t counter = 0; counter < messages_[origin].size(); ++counter) {
      const MessageState& state = messages_[origin][counter];
      const MessageId id{nodes_[origin], counter};
      if (state.delivered_mask != 0 && !state.accepted)
        report(Property::kNoCreation, now, nodes_lacking(~state.delivered_mask), id,
               "delivered, though submit() never accepted it");
      if (state.accepted && !state.self_exempt && !(state.delivered_mask & origin_bit)) {
        ++undelivered;
        if (!first_undelivered) first_undelivered = id;
      }
    }
    if (first_undelivered)
      report(Property::kSelfDelivery, now, {nodes_[origin]}, first_undelivered,
             fmt::format("{} messages accepted by node {} never delivered there, the first {}", undelivered,
                         nodes_[origin], describe(*first_undelivered)));
  }
}

// Live nodes that end in the same regular configuration delivered the same messages in it. That
// configuration has not ended, so a difference means a node has not caught up: liveness.
void HistoryChecker::finish_agreement(Time now, std::span<const NodeId> live) {
  std::map<std::uint32_t, std::size_t> reference;  // final configuration -> the first live node in it
  for (NodeId node : live) {
    const std::size_t at = index_of(node);
    const NodeState& state = node_states_[at];
    if (!state.in_config || state.in_transitional) continue;
    const auto [slot, fresh] = reference.try_emplace(*state.regular, at);
    if (fresh) continue;
    const std::size_t other = slot->second;
    const std::optional<Difference> difference =
        compare_deliveries(other, node_states_[other].installed.size() - 1, at, state.installed.size() - 1);
    if (difference)
      report(Property::kAgreement, now, {node, nodes_[other]}, difference->message,
             fmt::format("both end in {}; {}", config_text(*state.regular), difference->text));
  }
}

// For every pair of nodes, the messages both delivered come in the same order. Within a ring the
// per-delivery checks already imply it; across rings it is the check that remains.
void HistoryChecker::finish_pairwise_order() {
  constexpr std::uint64_t kAbsent = ~std::uint64_t{0};
  std::vector<std::vector<std::uint64_t>> position(messages_.size());
  for (std::size_t b = 1; b < nodes_.size(); ++b) {
    for (std::size_t origin = 0; origin < messages_.size(); ++origin)
      position[origin].assign(messages_[origin].size(), kAbsent);
    const auto& theirs = node_states_[b].history;
    for (std::uint64_t i = 0; i < theirs.size(); ++i) position[index_of(theirs[i].id.origin)][theirs[i].id.counter] = i;
    for (std::size_t a = 0; a < b; ++a) {
      const Record* previous = nullptr;  // the last record of a's history that b also has
      std::uint64_t previous_at = 0;
      for (const Record& record : node_states_[a].history) {
        const std::uint64_t at = position[index_of(record.id.origin)][record.id.counter];
        if (at == kAbsent) continue;
        if (previous != nullptr && at < previous_at) {
          report(Property::kTotalOrder, std::max(record.time_us, theirs[previous_at].time_us), {nodes_[a], nodes_[b]},
                 record.id,
                 fmt::format("node {} delivered {} before {}, node {} the other way round", nodes_[a],
                             describe(previous->id), describe(record.id), nodes_[b]));
          break;  // one report per pair
        }
        previous = &record;
        previous_at = at;
      }
    }
  }
}

std::vector<NodeId> HistoryChecker::nodes_lacking(std::uint64_t mask) const {
  std::vector<NodeId> lacking;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (!(mask & (std::uint64_t{1} << i))) lacking.push_back(nodes_[i]);
  return lacking;
}

}  // namespace rtotem::sim
