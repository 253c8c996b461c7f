// The checker's view of configurations (EVS 1994 §2-§3): each node's history as a sequence of
// configurations with the messages delivered in each, checked as the node installs them: well
// formed, the same members at every node, and virtual synchrony between nodes that move together.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "src/sim/history_checker.hpp"

namespace rtotem::sim {
namespace {

// a - b, both sorted.
std::vector<NodeId> minus(std::span<const NodeId> a, std::span<const NodeId> b) {
  std::vector<NodeId> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<NodeId> sorted(std::span<const NodeId> ids) {
  std::vector<NodeId> out(ids.begin(), ids.end());
  std::sort(out.begin(), out.end());
  return out;
}

bool subset(std::span<const NodeId> part, std::span<const NodeId> whole) {
  return std::includes(whole.begin(), whole.end(), part.begin(), part.end());
}

std::string set_text(std::span<const NodeId> ids) { return fmt::format("{{{}}}", fmt::join(ids, ",")); }

}  // namespace

void HistoryChecker::record_configuration(Time now, NodeId node, const ConfigChange& change) {
  ++configurations_;
  const std::size_t at = index_of(node);
  check_well_formed(now, node, change);
  // Checked from here on as a set, so that one malformed list does not cascade into more reports.
  std::vector<NodeId> members = sorted(change.members);
  members.erase(std::unique(members.begin(), members.end()), members.end());
  ConfigChange normal = change;
  normal.members = members;
  const std::uint32_t config =
      change.transitional ? install_transitional(now, at, normal) : install_regular(now, at, normal);
  check_virtual_synchrony(now, at, config);
  NodeState& self = node_states_[at];
  self.installed.push_back(Installed{config, self.history.size(), now});
  self.in_config = true;
  self.in_transitional = change.transitional;
}

void HistoryChecker::record_crash(Time, NodeId node) {
  const std::size_t at = index_of(node);
  NodeState& self = node_states_[at];
  if (self.in_config) self.installed.back().crashed = true;
  if (self.regular) self.left_rings.insert(configs_[*self.regular].ring);
  self.in_config = false;
  self.in_transitional = false;
  self.regular.reset();
  self.last = {};
  // What the application of the dead incarnation waited for is owed to nobody now.
  for (MessageState& state : messages_[at]) {
    if (settled(state, at)) continue;
    if (state.accepted)
      state.self_exempt = true;
    else
      state.dropped = true;
  }
  outstanding_[at] = 0;
}

// Members sorted and unique, as ConfigChange promises, and the node among them.
void HistoryChecker::check_well_formed(Time now, NodeId node, const ConfigChange& change) {
  const std::string_view kind = change.transitional ? "transitional" : "regular";
  const bool ordered =
      std::adjacent_find(change.members.begin(), change.members.end(), std::greater_equal<>()) == change.members.end();
  const bool has_self = std::find(change.members.begin(), change.members.end(), node) != change.members.end();
  if (ordered && has_self) return;
  report(Property::kConfiguration, now, {node}, std::nullopt,
         fmt::format("{} configuration of ring {}/{}: members {} {}", kind, change.ring_id.rep, change.ring_id.seq,
                     set_text(change.members), ordered ? "lack the node itself" : "are not sorted and unique"));
}

// EVS: the transitional configuration holds the members of the new ring that come from the one
// it closes; `left` names the rest of the closed ring. A fresh node closes no ring: it is alone.
std::uint32_t HistoryChecker::install_transitional(Time now, std::size_t at, const ConfigChange& change) {
  NodeState& self = node_states_[at];
  const NodeId node = nodes_[at];
  if (self.in_config && self.in_transitional)
    report(Property::kConfiguration, now, {node}, std::nullopt,
           fmt::format("a second transitional configuration (to ring {}/{}) while in {}", change.ring_id.rep,
                       change.ring_id.seq, config_text(self.installed.back().config)));
  const std::vector<NodeId> alone{node};
  const std::span<const NodeId> closed_members = self.regular ? configs_[*self.regular].members : alone;
  const std::string closed_text = self.regular ? config_text(*self.regular) : "its fresh start";
  if (!subset(change.members, closed_members))
    report(Property::kConfiguration, now, {node}, std::nullopt,
           fmt::format("transitional members {} are not all members of {}, which it closes", set_text(change.members),
                       closed_text));
  const std::vector<NodeId> left = minus(closed_members, change.members);
  if (sorted(change.left) != left)
    report(Property::kConfiguration, now, {node}, std::nullopt,
           fmt::format("transitional configuration closing {} says {} left, not {}", closed_text,
                       set_text(sorted(change.left)), set_text(left)));
  const std::uint32_t closed = self.regular ? configs_[*self.regular].ring : kNoRing;
  const NodeId fresh = self.regular ? transport::kNoNode : node;
  return config_index(now, node, ConfigKey{true, closed, fresh, ring_index(change.ring_id)}, change.members);
}

// EVS: the regular configuration follows the transitional one of the same ring, and contains it;
// `joined` names the rest. The ring it closes is left for good.
std::uint32_t HistoryChecker::install_regular(Time now, std::size_t at, const ConfigChange& change) {
  NodeState& self = node_states_[at];
  const NodeId node = nodes_[at];
  const std::uint32_t ring = ring_index(change.ring_id);
  if (!self.in_config || !self.in_transitional) {
    report(Property::kConfiguration, now, {node}, std::nullopt,
           fmt::format("regular configuration of ring {} without a transitional one before it (in {})", ring_text(ring),
                       self.in_config ? config_text(self.installed.back().config) : "none"));
  } else {
    const Config& transitional = configs_[self.installed.back().config];
    const std::vector<NodeId> joined = minus(change.members, transitional.members);
    if (transitional.ring != ring)
      report(Property::kConfiguration, now, {node}, std::nullopt,
             fmt::format("regular configuration of ring {} after {}", ring_text(ring),
                         config_text(self.installed.back().config)));
    else if (!subset(transitional.members, change.members))
      report(Property::kConfiguration, now, {node}, std::nullopt,
             fmt::format("regular members {} do not contain those of {}", set_text(change.members),
                         config_text(self.installed.back().config)));
    else if (sorted(change.joined) != joined)
      report(Property::kConfiguration, now, {node}, std::nullopt,
             fmt::format("regular configuration of ring {} says {} joined, not {}", ring_text(ring),
                         set_text(sorted(change.joined)), set_text(joined)));
  }
  if (self.regular) self.left_rings.insert(configs_[*self.regular].ring);
  if (self.left_rings.contains(ring))
    report(Property::kConfiguration, now, {node}, std::nullopt,
           fmt::format("installs ring {} again, after leaving it", ring_text(ring)));
  const std::uint32_t config =
      config_index(now, node, ConfigKey{false, kNoRing, transport::kNoNode, ring}, change.members);
  self.regular = config;
  self.last = {};
  return config;
}

// One configuration, one membership: every node that installs it reports the same members.
std::uint32_t HistoryChecker::config_index(Time now, NodeId node, const ConfigKey& key,
                                           std::span<const NodeId> members) {
  const auto [slot, fresh] = config_indexes_.try_emplace(key, static_cast<std::uint32_t>(configs_.size()));
  if (fresh) {
    const auto& [transitional, closed_ring, fresh_node, ring] = key;
    configs_.push_back(Config{transitional, ring, closed_ring, fresh_node, {members.begin(), members.end()}, node, {}});
    return slot->second;
  }
  const Config& config = configs_[slot->second];
  if (!std::equal(members.begin(), members.end(), config.members.begin(), config.members.end()))
    report(Property::kConfiguration, now, {node, config.first_node}, std::nullopt,
           fmt::format("installs {} with members {}; node {} installed it with {}", config_text(slot->second),
                       set_text(members), config.first_node, set_text(config.members)));
  return slot->second;
}

// EVS: two nodes that move from configuration C to the same next configuration delivered the same
// messages in C. The first node to make a move is the reference for every later one; a crash ends
// a configuration with no next one, so it is never compared.
void HistoryChecker::check_virtual_synchrony(Time now, std::size_t at, std::uint32_t next) {
  const NodeState& self = node_states_[at];
  if (!self.in_config) return;
  const std::size_t position = self.installed.size() - 1;
  const std::uint32_t current = self.installed[position].config;
  const auto [slot, fresh] = moves_.try_emplace({current, next}, at, position);
  if (fresh) return;
  const auto [other, other_position] = slot->second;
  const std::optional<Difference> difference = compare_deliveries(other, other_position, at, position);
  if (difference)
    report(Property::kVirtualSynchrony, now, {nodes_[at], nodes_[other]}, difference->message,
           fmt::format("both moved from {} to {}; in the former, {}", config_text(current), config_text(next),
                       difference->text));
}

// Where two nodes' deliveries in a configuration (each at a position in its `installed`) first part.
std::optional<HistoryChecker::Difference> HistoryChecker::compare_deliveries(std::size_t a, std::size_t a_position,
                                                                             std::size_t b,
                                                                             std::size_t b_position) const {
  const std::span<const Record> in_a = deliveries_in(a, a_position);
  const std::span<const Record> in_b = deliveries_in(b, b_position);
  const std::size_t common = std::min(in_a.size(), in_b.size());
  for (std::size_t i = 0; i < common; ++i)
    if (in_a[i].id != in_b[i].id)
      return Difference{in_a[i].id, fmt::format("delivery {} is {} at node {}, {} at node {}", i + 1,
                                                describe(in_a[i].id), nodes_[a], describe(in_b[i].id), nodes_[b])};
  if (in_a.size() == in_b.size()) return std::nullopt;
  const bool a_longer = in_a.size() > in_b.size();
  const MessageId extra = a_longer ? in_a[common].id : in_b[common].id;
  return Difference{
      extra, fmt::format("node {} delivered {} messages, node {} {}; the first only node {} delivered: {}", nodes_[a],
                         in_a.size(), nodes_[b], in_b.size(), nodes_[a_longer ? a : b], describe(extra))};
}

std::span<const HistoryChecker::Record> HistoryChecker::deliveries_in(std::size_t at, std::size_t position) const {
  const NodeState& state = node_states_[at];
  const std::uint64_t first = state.installed[position].first;
  const std::uint64_t end =
      position + 1 < state.installed.size() ? state.installed[position + 1].first : state.history.size();
  return std::span(state.history).subspan(first, end - first);
}

// "regular 1/5 {1,2,3}", "transitional 1/3->1/5 {1,2}", "transitional fresh->1/5 {2}".
std::string HistoryChecker::config_text(std::uint32_t config) const {
  const Config& c = configs_[config];
  if (!c.transitional) return fmt::format("regular {} {}", ring_text(c.ring), set_text(c.members));
  const std::string closed = c.closed_ring == kNoRing ? "fresh" : ring_text(c.closed_ring);
  return fmt::format("transitional {}->{} {}", closed, ring_text(c.ring), set_text(c.members));
}

// "node 2 in regular 1/5 {1,2}", "node 3 in no configuration".
std::string HistoryChecker::whereabouts(std::size_t at) const {
  const NodeState& state = node_states_[at];
  return fmt::format("node {} in {}", nodes_[at],
                     state.in_config ? config_text(state.installed.back().config) : "no configuration");
}

}  // namespace rtotem::sim
