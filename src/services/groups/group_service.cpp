// The process groups: local requests become group packets on the ring; delivered packets and
// configuration changes become group messages and membership changes, in the ring's order.
#include "src/services/groups/group_service.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "src/services/groups/group_wire.hpp"
#include "base/assert.hpp"

namespace rtotem::groups {
namespace {

using membership::Delivery;

template <class... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
// C++20 deduces this for an aggregate; clang 14 (the fuzz build's compiler) needs it said.
template <class... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

bool contains(std::span<const NodeId> sorted_nodes, NodeId node) noexcept {
  return std::ranges::binary_search(sorted_nodes, node);
}

}  // namespace

GroupService::GroupService(NodeId self, std::size_t max_message_size, Submit submit, GroupEvents& events)
    : self_(self), max_message_size_(max_message_size), submit_(std::move(submit)), events_(events) {
  RTOTEM_ASSERT(self_ != membership::kNoNode);
  RTOTEM_ASSERT(max_message_size_ >= kRingMessageSizeMin);
  RTOTEM_ASSERT(submit_);
}

bool GroupService::valid_group_name(std::string_view group) noexcept {
  return !group.empty() && group.size() <= kGroupNameMax;
}

std::size_t GroupService::data_max(std::size_t max_message_size) noexcept {
  return max_message_size > kMcastOverheadMax ? max_message_size - kMcastOverheadMax : 0;
}

// ---- a local client's requests: their effect comes when the ring delivers them

Status GroupService::join(std::string_view group, std::uint32_t pid) {
  const std::span<std::byte> packet = packet_buffer(group_join_size(group));
  encode_group_join({group, pid}, packet);
  return submit_({packet, {}}, Delivery::kAgreed);
}

Status GroupService::leave(std::string_view group, std::uint32_t pid, Reason why) {
  const std::span<std::byte> packet = packet_buffer(group_leave_size(group));
  encode_group_leave({group, pid, why}, packet);
  // Counted first: were it delivered inside the submit, its delivery must find it.
  const auto entry = leaves_in_flight_.try_emplace(LocalKey(group, pid), 0).first;
  ++entry->second;
  const Status status = submit_({packet, {}}, Delivery::kAgreed);
  if (status != Status::kOk && --entry->second == 0) leaves_in_flight_.erase(entry);
  return status;
}

Status GroupService::multicast(std::string_view group, std::uint32_t pid, std::span<const std::byte> data,
                               Delivery order, bool piece) {
  // Against the longest name, so what a client may send does not depend on its group's name.
  if (data.size() > data_max(max_message_size_)) return Status::kTooLarge;
  const std::span<std::byte> head = packet_buffer(group_mcast_size(group, 0));
  encode_group_mcast({group, pid, {}, piece}, head);  // the header alone: the data follows it on the wire
  return submit_({head, data}, order);
}

std::span<std::byte> GroupService::packet_buffer(std::size_t size) {
  if (packet_buffer_.size() < size) packet_buffer_.resize(size);
  return std::span(packet_buffer_).first(size);
}

// ---- what the ring delivers

void GroupService::on_deliver(const membership::Delivered& message) {
  GroupPacket packet;
  if (decode_group_packet(message.payload, packet) != GroupDecodeError::kNone) {
    ++packets_malformed_;
    return;
  }
  const NodeId sender = message.sender;
  std::visit(Overloaded{
                 [&](const GroupJoin& join) {
                   on_join({sender, join.pid}, join.group, Reason::kJoin);
                 },
                 [&](const GroupLeave& leave) {
                   if (sender == self_) own_leave_delivered(leave.group, leave.pid);
                   on_leave({sender, leave.pid}, leave.group, leave.reason);
                 },
                 [&](const GroupMcast& mcast) {
                   // Only a member multicasts to a group. After a merge its message can come before
                   // its daemon's join list does: it is reported joining first, so no client hears
                   // from a process it does not know (the join list then adds nothing for it).
                   on_join({sender, mcast.pid}, mcast.group, Reason::kNodeUp);
                   events_.group_message({mcast.group, {sender, mcast.pid}, message.delivery, mcast.data, mcast.piece});
                 },
                 [&](const GroupJoinList& list) { on_join_list(sender, list); },
             },
             packet);
}

void GroupService::on_join(ProcessId process, std::string_view group, Reason why) {
  const auto it = group_for_join(group);
  Members& members = it->second;
  const auto at = std::ranges::lower_bound(members, process);
  if (at != members.end() && *at == process) return;  // a duplicate join changes nothing
  members.insert(at, process);
  events_.group_change(
      {.group = it->first, .members = members, .joined = std::span(&process, 1), .joined_reason = std::span(&why, 1)});
}

void GroupService::on_leave(ProcessId process, std::string_view group, Reason why) {
  const auto it = groups_.find(group);
  if (it == groups_.end()) return;
  Members& members = it->second;
  const auto at = std::ranges::lower_bound(members, process);
  if (at == members.end() || *at != process) return;  // not in the group: nothing to report
  members.erase(at);
  events_.group_change(
      {.group = it->first, .members = members, .left = std::span(&process, 1), .left_reason = std::span(&why, 1)});
  forget_if_empty(it);
}

// A join list holds one node's processes sorted by (group, pid): each group's entries are a run,
// reported as one change, groups in name order.
void GroupService::on_join_list(NodeId sender, const GroupJoinList& list) {
  std::vector<ProcessId> joined;
  std::vector<Reason> reasons;
  for (auto run = list.entries.begin(); run != list.entries.end();) {
    const std::string_view group = run->group;
    const auto run_end =
        std::find_if(run, list.entries.end(), [group](const JoinListEntry& entry) { return entry.group != group; });
    const auto it = group_for_join(group);
    Members& members = it->second;
    joined.clear();
    for (; run != run_end; ++run) {
      const ProcessId process{sender, run->pid};
      if (!std::ranges::binary_search(members, process)) joined.push_back(process);
    }
    if (joined.empty()) continue;
    members.insert(members.end(), joined.begin(), joined.end());
    std::ranges::sort(members);
    reasons.assign(joined.size(), Reason::kNodeUp);
    events_.group_change({.group = it->first, .members = members, .joined = joined, .joined_reason = reasons});
  }
}

bool GroupService::leave_in_flight(std::string_view group, std::uint32_t pid) const {
  return leaves_in_flight_.find(LocalView(group, pid)) != leaves_in_flight_.end();
}

void GroupService::own_leave_delivered(std::string_view group, std::uint32_t pid) {
  const auto it = leaves_in_flight_.find(LocalView(group, pid));
  if (it == leaves_in_flight_.end()) return;  // not submitted by this service (a restart)
  if (--it->second == 0) leaves_in_flight_.erase(it);
}

GroupService::Groups::iterator GroupService::group_for_join(std::string_view group) {
  const auto it = groups_.find(group);
  return it != groups_.end() ? it : groups_.emplace(std::string(group), Members{}).first;
}

void GroupService::forget_if_empty(Groups::iterator group) {
  if (group->second.empty()) groups_.erase(group);
}

// ---- configuration changes (EVS). The transitional one names the departed nodes; the old
// ring's last messages follow it, theirs among them, with their effect (joins, leaves, messages);
// then the regular one takes the departed nodes' processes out (NODEDOWN), as corosync's CPG does
// after their last messages, and starts the exchange of join lists with the nodes that joined.

void GroupService::on_configuration(const membership::ConfigChange& change) {
  if (change.transitional) {
    departed_.assign(change.left.begin(), change.left.end());
    return;
  }
  remove_nodes(departed_);
  departed_.clear();
  if (change.joined.empty()) return;
  // What we hold of a node that just joined predates its absence (it may have restarted): its
  // join list, which every member delivers after this, is the only truth about it.
  remove_nodes(change.joined);
  join_list_pending_ = true;  // replaces one still pending: this list is built afresh
  join_list_sent_through_.reset();
  send_join_list();
}

// Every process of `nodes` (sorted) leaves every group, NODEDOWN: one change per group, in name
// order. This daemon's own processes are never among them: it knows them first-hand.
void GroupService::remove_nodes(std::span<const NodeId> nodes) {
  const auto departs = [&](const ProcessId& process) { return process.node != self_ && contains(nodes, process.node); };
  std::vector<ProcessId> left;
  std::vector<Reason> reasons;
  for (auto it = groups_.begin(); it != groups_.end();) {
    Members& members = it->second;
    left.clear();
    std::ranges::copy_if(members, std::back_inserter(left), departs);
    if (left.empty()) {
      ++it;
      continue;
    }
    std::erase_if(members, departs);
    reasons.assign(left.size(), Reason::kNodeDown);
    events_.group_change({.group = it->first, .members = members, .left = left, .left_reason = reasons});
    it = members.empty() ? groups_.erase(it) : std::next(it);
  }
}

// ---- join lists: after a regular configuration with joined nodes, this daemon's processes

void GroupService::retry_pending() {
  if (join_list_pending_) send_join_list();
}

// Built from the groups when sent, not when the configuration came: a process that left since is
// not brought back. Split into packets the ring takes whole; a refused one waits for retry.
void GroupService::send_join_list() {
  const std::vector<JoinListEntry> entries = join_list_unsent();
  for (std::size_t begin = 0; begin < entries.size();) {
    const std::size_t end = join_list_packet_end(entries, begin);
    const auto packet_entries = std::span(entries).subspan(begin, end - begin);
    const std::span<std::byte> packet = packet_buffer(join_list_size(packet_entries));
    encode_join_list(packet_entries, packet);
    if (submit_({packet, {}}, Delivery::kAgreed) != Status::kOk) {
      ++join_list_refusals_;  // back-pressure: still pending
      return;
    }
    join_list_sent_through_.emplace(entries[end - 1].group, entries[end - 1].pid);
    begin = end;
  }
  join_list_pending_ = false;
  join_list_sent_through_.reset();
}

// This daemon's processes, sorted by (group, pid), past what a split list already submitted and
// without those whose leave is on its way.
std::vector<JoinListEntry> GroupService::join_list_unsent() const {
  std::vector<JoinListEntry> entries;
  for (const auto& [group, members] : groups_) {
    // Two bounds, not ranges::equal_range: clang 14 cannot instantiate the subrange it returns
    // from libstdc++ 12 (the fuzz build's compiler and library).
    const auto own_begin = std::ranges::lower_bound(members, self_, {}, &ProcessId::node);
    const auto own_end = std::ranges::upper_bound(own_begin, members.end(), self_, {}, &ProcessId::node);
    for (const ProcessId& process : std::span(own_begin, own_end)) {
      const LocalView local(group, process.pid);
      if (join_list_sent_through_ && local <= LocalView(*join_list_sent_through_)) continue;
      if (leaves_in_flight_.contains(local)) continue;
      entries.push_back({group, process.pid});
    }
  }
  return entries;
}

// The end of the packet that starts at entries[begin]: as many as one ring message holds.
std::size_t GroupService::join_list_packet_end(std::span<const JoinListEntry> entries, std::size_t begin) const {
  std::size_t size = kJoinListFixedSize;
  std::size_t end = begin;
  while (end < entries.size() && end - begin < kJoinListCountMax &&
         size + join_list_entry_size(entries[end].group) <= max_message_size_) {
    size += join_list_entry_size(entries[end].group);
    ++end;
  }
  RTOTEM_ASSERT(end > begin);  // kRingMessageSizeMin holds any one entry
  return end;
}

// ---- queries

std::span<const ProcessId> GroupService::members(std::string_view group) const {
  const auto it = groups_.find(group);
  if (it == groups_.end()) return {};
  return it->second;
}

std::vector<std::string> GroupService::group_names() const {
  std::vector<std::string> names;
  names.reserve(groups_.size());
  for (const auto& [group, members] : groups_) names.push_back(group);
  return names;
}

}  // namespace rtotem::groups
