#include "src/services/groups/group_clients.hpp"

#include <algorithm>
#include <cerrno>

#include "src/ipc/json_quote.hpp"

namespace rtotem::groups {
namespace {

// Each group a client is in costs every node of the cluster some memory: a bound per client.
constexpr std::size_t kGroupsPerClientMax = 1024;

void put_process(ipc::BodyWriter& out, const ProcessId& p) {
  out.u32(p.node);
  out.u32(p.pid);
}

void put_processes(ipc::BodyWriter& out, std::span<const ProcessId> list) {
  out.u32(static_cast<std::uint32_t>(list.size()));
  for (const auto& p : list) put_process(out, p);
}

std::string processes_array(std::span<const ProcessId> list) {
  std::string out = "[";
  for (const auto& p : list)
    out += fmt::format("{}{{\"nodeid\": {}, \"pid\": {}}}", out.size() > 1 ? ", " : "", p.node, p.pid);
  return out + "]";
}

}  // namespace

GroupClients::GroupClients(NodeId self, GroupService& groups, stack::ClientTable& clients,
                           staging::McastStaging& staging)
    : self_(self), groups_(groups), clients_(clients), staging_(staging) {}

// A join or leave goes on the ring after this client's staged multicasts, as it asked them after.
int GroupClients::join(LocalClient& client, std::string_view group, ipc::BodyWriter& reply) {
  if (!GroupService::valid_group_name(group)) return -EINVAL;
  if (!staging_.submit_staged(client)) return -EAGAIN;
  const auto pid = static_cast<std::uint32_t>(client.pid);
  // (node, pid) names a member: while a leave of this process is on its way (its own, or its
  // previous connection's), a join would race it and be undone by it. Retry once it is delivered.
  if (groups_.leave_in_flight(group, pid) || staging_.leave_waiting(group, pid)) return -EAGAIN;
  if (client.groups.contains(group)) return -EEXIST;
  // One connection per process and group. Another that is closing has not left yet: once its
  // leave is on its way (leave_in_flight above), this join waits for it.
  if (const LocalClient* other =
          clients_.find_client(client.pid, [&](const LocalClient& c) { return c.groups.contains(group); }))
    return other->closing ? -EAGAIN : -EEXIST;
  if (client.groups.size() >= kGroupsPerClientMax) return -ENOSPC;
  const int rc = staging::errno_of(groups_.join(group, pid));
  if (rc != 0) return rc;
  client.groups.emplace(group);
  // The credit, so the client's first multicast need not wait. Not counted as told: a library
  // older than this answer ignores it, and waits for the kCredit event.
  staging_.put_credit(client, reply);
  return 0;
}

int GroupClients::leave(LocalClient& client, std::string_view group) {
  if (!client.groups.contains(group)) return -ENOENT;
  if (!staging_.submit_staged(client)) return -EAGAIN;
  return staging::errno_of(groups_.leave(group, static_cast<std::uint32_t>(client.pid), Reason::kLeave));
}

void GroupClients::members(std::string_view group, ipc::BodyWriter& reply) const {
  const std::vector<std::string> names = groups_.group_names();
  reply.u32(static_cast<std::uint32_t>(group.empty() ? names.size()
                                                     : static_cast<std::size_t>(std::ranges::count(names, group))));
  for (const std::string& name : names) {
    if (!group.empty() && name != group) continue;
    reply.string(name);
    put_processes(reply, groups_.members(name));
  }
}

std::string GroupClients::members_json(std::string_view group) const {
  std::string out = "{";
  for (const std::string& name : groups_.group_names()) {
    if (!group.empty() && name != group) continue;
    out += fmt::format("{}{}: {}", out.size() > 1 ? ", " : "", ipc::json_quoted(name),
                       processes_array(groups_.members(name)));
  }
  return out + "}";
}

LocalClient* GroupClients::client_in(std::string_view group, std::uint32_t pid) {
  return clients_.find_client(static_cast<pid_t>(pid),
                              [&](const LocalClient& c) { return !c.closing && c.groups.contains(group); });
}

// The payload goes from the ring's receive buffer (or reassembled message) into each client's
// channel: one copy per local member, none on the way.
void GroupClients::message(const GroupMessage& message) {
  head_.clear();
  head_.u32(message.sender.node);
  head_.u32(message.sender.pid);
  head_.u8(static_cast<std::uint8_t>((message.order == membership::Delivery::kSafe ? ipc::kModeSafe : 0) |
                                     (message.piece ? ipc::kModePiece : 0)));
  head_.string(message.group);
  local_members_.clear();
  for (const auto& member : groups_.members(message.group)) {
    if (member.node != self_) continue;
    if (LocalClient* c = client_in(message.group, member.pid)) local_members_.push_back(c);
  }
  clients_.send_event_to_all(local_members_, ipc::EventId::kDeliver, head_.data(), message.data);
}

// Members after the change and those who left (they learn they are out) hear of it; a local
// process that left is no longer in the group for its connection. The connection whose join or
// leave it is hears it marked as its own (ipc::kChangeOwn).
void GroupClients::change(const GroupChange& change) {
  ipc::BodyWriter body;
  body.string(change.group);
  put_processes(body, change.members);
  body.u32(static_cast<std::uint32_t>(change.joined.size()));
  for (std::size_t i = 0; i < change.joined.size(); ++i) {
    put_process(body, change.joined[i]);
    body.u8(static_cast<std::uint8_t>(change.joined_reason[i]));
  }
  body.u32(static_cast<std::uint32_t>(change.left.size()));
  for (std::size_t i = 0; i < change.left.size(); ++i) {
    put_process(body, change.left[i]);
    body.u8(static_cast<std::uint8_t>(change.left_reason[i]));
  }
  body.u8(0);  // the flags: set for each connection told
  const std::size_t flags_at = body.data().size() - 1;
  auto tell = [&](const ProcessId& p, bool own) {
    if (p.node != self_) return;
    LocalClient* c = client_in(change.group, p.pid);
    if (c == nullptr) return;
    body.data()[flags_at] = std::byte{own ? ipc::kChangeOwn : std::uint8_t{0}};
    clients_.send_event(*c, ipc::EventId::kGroupChange, body.data());
  };
  // A local process is among those joined only by its own join (join lists bring other nodes'
  // processes): the search is for that change alone.
  const bool local_joined = std::ranges::any_of(change.joined, [&](const auto& p) { return p.node == self_; });
  for (const auto& p : change.members)
    tell(p, local_joined && std::ranges::find(change.joined, p) != change.joined.end());
  for (const auto& p : change.left) {
    tell(p, true);
    if (p.node != self_) continue;
    if (LocalClient* c = client_in(change.group, p.pid)) c->groups.erase(c->groups.find(change.group));
  }
}

}  // namespace rtotem::groups
