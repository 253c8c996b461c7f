// The judge of process groups: views at equal places in the order, senders, and NODEDOWN.
#include "src/sim/group_checker.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>

#include "src/services/groups/group_wire.hpp"
#include "base/assert.hpp"

namespace rtotem::sim {
namespace {

using groups::ProcessId;

// The stamp's first byte is the top byte of a node id, 0 for any id up to 2^24.
static_assert(membership::kMembersMax < (1U << 24) && groups::kGroupWireVersion != 0);

std::string process_text(const ProcessId& process) { return fmt::format("{}:{}", process.node, process.pid); }

std::string members_text(std::span<const ProcessId> members) {
  std::vector<std::string> names;
  std::ranges::transform(members, std::back_inserter(names), process_text);
  return fmt::format("{{{}}}", fmt::join(names, ","));
}

bool contains(std::span<const NodeId> sorted_nodes, NodeId node) {
  return std::ranges::binary_search(sorted_nodes, node);
}

}  // namespace

bool is_group_packet(std::span<const std::byte> payload) noexcept {
  return !payload.empty() && payload[0] == std::byte{groups::kGroupWireVersion};
}

GroupChecker::GroupChecker(std::span<const NodeId> nodes) : nodes_(nodes.begin(), nodes.end()), states_(nodes.size()) {
  RTOTEM_ASSERT(nodes_.size() <= membership::kMembersMax && std::ranges::is_sorted(nodes_));
}

void GroupChecker::report(Property property, Time now, std::vector<NodeId> nodes, std::string detail) {
  ++violation_count_;
  if (violations_.size() < kViolationsKept)
    violations_.push_back(Violation{property, now, std::move(nodes), std::nullopt, std::move(detail)});
}

std::size_t GroupChecker::index_of(NodeId node) const {
  const auto it = std::ranges::lower_bound(nodes_, node);
  RTOTEM_ASSERT(it != nodes_.end() && *it == node);
  return static_cast<std::size_t>(it - nodes_.begin());
}

bool GroupChecker::settled(std::uint64_t mask, NodeId node) const {
  const auto it = std::ranges::lower_bound(nodes_, node);
  return it != nodes_.end() && *it == node && (mask >> (it - nodes_.begin()) & 1) != 0;
}

void GroupChecker::record_start(NodeId node) { states_[index_of(node)] = NodeState{}; }

namespace {

bool is_join_list(std::span<const std::byte> packet_head) {
  return packet_head.size() >= groups::kGroupHeaderSize &&
         packet_head[1] == std::byte{static_cast<std::uint8_t>(groups::GroupPacketType::kJoinList)};
}

}  // namespace

// Counted before the Node answers: it may deliver the packet inside submit().
void GroupChecker::record_submit(NodeId node, std::span<const std::byte> packet_head) {
  if (is_join_list(packet_head)) ++states_[index_of(node)].lists_submitted;
}

void GroupChecker::record_refused(NodeId node, std::span<const std::byte> packet_head) {
  if (is_join_list(packet_head)) --states_[index_of(node)].lists_submitted;
}

// Before the service sees it: the sender is of this configuration (a departed node's messages all
// come before the regular configuration that takes its processes out); the views are those of
// every other node about to deliver this packet; a JOINLIST settles its sender from here on.
void GroupChecker::record_delivery(Time now, NodeId node, const Delivered& message) {
  NodeState& state = states_[index_of(node)];
  if (!contains(state.members, message.sender))
    report(Property::kGroupSender, now, {node, message.sender},
           fmt::format("group packet seq {} of ring {}/{} from node {}, not of this node's configuration {{{}}}",
                       message.seq, message.ring_id.rep, message.ring_id.seq, message.sender,
                       fmt::join(state.members, ",")));
  groups::GroupPacket packet;
  state.delivering.reset();
  if (const auto error = groups::decode_group_packet(message.payload, packet); error != groups::GroupDecodeError::kNone)
    report(Property::kNoCreation, now, {node, message.sender},
           fmt::format("group packet seq {} from node {} does not decode: {}", message.seq, message.sender,
                       groups::describe(error)));
  else if (const auto* join = std::get_if<groups::GroupJoin>(&packet))
    state.delivering = Delivering{.sender = message.sender, .join = true, .pid = join->pid};
  else if (const auto* mcast = std::get_if<groups::GroupMcast>(&packet))
    state.delivering = Delivering{.sender = message.sender, .pid = mcast->pid};
  else if (std::holds_alternative<groups::GroupJoinList>(packet))
    state.delivering = Delivering{.sender = message.sender, .join_list = true};
  if (state.regular && *state.regular == message.ring_id) {
    const RingId closing = state.closing.value_or(RingId{});
    if (!state.closing) ++state.delivered;
    const PacketKey key{message.ring_id.rep, message.ring_id.seq, message.seq, message.index, closing.rep, closing.seq};
    const auto [it, first] = seen_.try_emplace(key, Seen{node, state.views, state.settled});
    if (!first) {
      ++views_compared_;
      const std::string differ =
          difference(it->second.node, it->second.views, node, state.views, it->second.settled & state.settled);
      if (!differ.empty())
        report(Property::kGroupViews, now, {node, it->second.node},
               fmt::format("before group packet seq {} of ring {}/{}: {}", message.seq, message.ring_id.rep,
                           message.ring_id.seq, differ));
    }
  }
  if (!std::holds_alternative<groups::GroupJoinList>(packet) || !contains(nodes_, message.sender)) return;
  if (message.sender == node) ++state.lists_self_delivered;
  if (!state.regular || !(*state.regular == message.ring_id)) return;
  const std::uint64_t nth = ++state.lists_delivered[message.sender];
  const auto stale = stale_lists_.find({message.ring_id.rep, message.ring_id.seq, message.sender});
  if (stale != stale_lists_.end() && nth > stale->second) state.settled |= std::uint64_t{1} << index_of(message.sender);
}

// A regular configuration: settled on itself and, of the nodes that came along, on those it was
// settled on in its previous ring.
void GroupChecker::begin_configuration(Time, NodeId node, const ConfigChange& change) {
  const std::size_t at = index_of(node);
  NodeState& state = states_[at];
  state.delivering.reset();  // what a configuration change reports, no packet made
  if (change.transitional) {
    state.closing = change.ring_id;
    return;
  }
  state.in_regular_change = true;
  state.regular = change.ring_id;
  state.closing.reset();
  state.members.assign(change.members.begin(), change.members.end());
  state.came_along.clear();
  std::ranges::set_difference(change.members, change.joined, std::back_inserter(state.came_along));
  std::uint64_t along = 0;
  for (NodeId m : state.came_along)
    if (contains(nodes_, m)) along |= std::uint64_t{1} << index_of(m);
  state.settled = (state.settled & along) | std::uint64_t{1} << at;
  state.delivered = 0;
  state.lists_delivered.clear();
  stale_lists_[{change.ring_id.rep, change.ring_id.seq, node}] = state.lists_submitted - state.lists_self_delivered;
}

void GroupChecker::end_configuration(Time now, NodeId node) {
  NodeState& state = states_[index_of(node)];
  if (!state.in_regular_change) return;
  state.in_regular_change = false;
  for (const auto& [group, members] : state.views)
    for (const ProcessId& process : members)
      if (!contains(state.came_along, process.node))
        report(Property::kGroupNodeDown, now, {node, process.node},
               fmt::format("process {} is still in group '{}' after the regular configuration of ring {}/{}, "
                           "whose transitional members {{{}}} do not have its node",
                           process_text(process), group, state.regular->rep, state.regular->seq,
                           fmt::join(state.came_along, ",")));
}

void GroupChecker::record_change(Time now, NodeId node, const groups::GroupChange& change) {
  ++changes_;
  NodeState& state = states_[index_of(node)];
  const auto it = state.views.find(change.group);
  const std::span<const ProcessId> before =
      it != state.views.end() ? std::span<const ProcessId>(it->second) : std::span<const ProcessId>();
  Members expected;
  std::ranges::set_union(before, change.joined, std::back_inserter(expected));
  std::erase_if(expected, [&](const ProcessId& p) { return std::ranges::find(change.left, p) != change.left.end(); });
  if (!std::ranges::equal(expected, change.members))
    report(Property::kGroupViews, now, {node},
           fmt::format("group '{}': members {} joined {} left {} make {}, not the reported {}", change.group,
                       members_text(before), members_text(change.joined), members_text(change.left),
                       members_text(expected), members_text(change.members)));
  for (std::size_t i = 0; state.delivering && i < change.joined.size(); ++i) {
    const groups::Reason why = i < change.joined_reason.size() ? change.joined_reason[i] : groups::Reason::kLeave;
    const std::string error = join_reason_error(*state.delivering, change.joined[i], why);
    if (!error.empty())
      report(Property::kGroupJoinReason, now, {node, change.joined[i].node},
             fmt::format("process {} joined group '{}' with reason {}: {}", process_text(change.joined[i]),
                         change.group, static_cast<int>(why), error));
  }
  for (std::size_t i = 0; i < change.left.size() && i < change.left_reason.size(); ++i) {
    if (change.left_reason[i] != groups::Reason::kNodeDown) continue;
    const ProcessId& process = change.left[i];
    if (!state.in_regular_change || contains(state.came_along, process.node))
      report(Property::kGroupNodeDown, now, {node, process.node},
             fmt::format("process {} left group '{}' NODEDOWN {}", process_text(process), change.group,
                         state.in_regular_change ? "though its node came along into the new ring"
                                                 : "outside a regular configuration"));
  }
  if (change.members.empty())
    state.views.erase(std::string(change.group));
  else
    state.views.insert_or_assign(std::string(change.group), Members(change.members.begin(), change.members.end()));
}

std::string GroupChecker::join_reason_error(const Delivering& delivering, const ProcessId& joined, groups::Reason why) {
  if (joined.node != delivering.sender)
    return fmt::format("the packet being delivered is node {}'s", delivering.sender);
  if (delivering.join_list) return why == groups::Reason::kNodeUp ? "" : "at its node's join list, which is a NODEUP";
  if (delivering.pid != joined.pid)
    return fmt::format("at the {} of process {}", delivering.join ? "join" : "message", delivering.pid);
  if (delivering.join) return why == groups::Reason::kJoin ? "" : "at its own join, which is a JOIN";
  return why == groups::Reason::kNodeUp ? "" : "at its first message, which only a merge makes a join: NODEUP";
}

void GroupChecker::record_message(Time now, NodeId node, const groups::GroupMessage& message) {
  ++messages_;
  const Views& views = states_[index_of(node)].views;
  const auto it = views.find(message.group);
  if (it == views.end() || !std::ranges::binary_search(it->second, message.sender))
    report(Property::kGroupSender, now, {node, message.sender.node},
           fmt::format("message in group '{}' from process {}, not in this node's view of it {}", message.group,
                       process_text(message.sender),
                       members_text(it == views.end() ? std::span<const ProcessId>()
                                                      : std::span<const ProcessId>(it->second))));
}

void GroupChecker::finish(Time now, std::span<const NodeId> live) {
  for (std::size_t i = 0; i < live.size(); ++i)
    for (std::size_t j = i + 1; j < live.size(); ++j) {
      const NodeState& a = states_[index_of(live[i])];
      const NodeState& b = states_[index_of(live[j])];
      if (!a.regular || !(a.regular == b.regular) || a.closing || b.closing || a.delivered != b.delivered) continue;
      ++views_compared_;
      const std::string differ = difference(live[i], a.views, live[j], b.views, a.settled & b.settled);
      if (!differ.empty())
        report(Property::kGroupViews, now, {live[i], live[j]}, fmt::format("at the end of the run: {}", differ));
    }
}

std::string GroupChecker::difference(NodeId a_node, const Views& a, NodeId b_node, const Views& b,
                                     std::uint64_t settled_both) const {
  const auto known = [&](std::span<const ProcessId> members) {
    Members out;
    std::ranges::copy_if(members, std::back_inserter(out),
                         [&](const ProcessId& p) { return settled(settled_both, p.node); });
    return out;
  };
  const auto of = [](const Views& views, const std::string& group) {
    const auto it = views.find(group);
    return it != views.end() ? std::span<const ProcessId>(it->second) : std::span<const ProcessId>();
  };
  std::vector<std::string> names;
  for (const Views* views : {&a, &b})
    for (const auto& [group, members] : *views) names.push_back(group);
  std::ranges::sort(names);
  for (const std::string& group : names) {
    const Members in_a = known(of(a, group));
    const Members in_b = known(of(b, group));
    if (in_a != in_b)
      return fmt::format("group '{}' is {} at node {} but {} at node {}", group, members_text(in_a), a_node,
                         members_text(in_b), b_node);
  }
  return {};
}

}  // namespace rtotem::sim
