#include "src/daemon/daemon.hpp"

#include <qb/qblog.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace rtotem::daemon {

using groups::GroupService;
using membership::Delivery;
using membership::NodeId;

namespace {

// Each group a client is in costs every daemon of the cluster some memory: a bound per client.
constexpr std::size_t kGroupsPerClientMax = 1024;
constexpr std::uint64_t kClientRetryNs = 5'000'000;  // a client's full event channel is tried again this often

}  // namespace

int errno_of(Status status) {
  switch (status) {
    case Status::kOk: return 0;
    case Status::kTooLarge: return -EMSGSIZE;
    case Status::kClosed: return -ESHUTDOWN;
    default: return -EAGAIN;  // the ring's back-pressure: the client retries
  }
}

namespace {

void put_process(ipc::BodyWriter& out, const groups::ProcessId& p) {
  out.u32(p.node);
  out.u32(p.pid);
}

void put_processes(ipc::BodyWriter& out, std::span<const groups::ProcessId> list) {
  out.u32(static_cast<std::uint32_t>(list.size()));
  for (const auto& p : list) put_process(out, p);
}

std::string node_list_text(std::span<const NodeId> nodes) {
  std::string text;
  for (NodeId n : nodes) text += fmt::format("{}{}", text.empty() ? "" : " ", n);
  return text;
}

}  // namespace

Daemon::Daemon(EventLoop& loop, DaemonSetup setup) : loop_(loop), setup_(std::move(setup)) {}

Daemon::~Daemon() = default;

Result<std::unique_ptr<Daemon>> Daemon::start(EventLoop& loop, DaemonSetup setup, std::unique_ptr<transport::Backend> backend) {
  if (setup.totem.max_message_size < groups::kRingMessageSizeMin)
    return Error::make("totem.max_message_size {} is below the {} bytes process groups need",
                       setup.totem.max_message_size, groups::kRingMessageSizeMin);
  std::unique_ptr<Daemon> d(new Daemon(loop, std::move(setup)));
  Daemon* self = d.get();
  d->groups_ = std::make_unique<GroupService>(
      d->setup_.self.nodeid, d->setup_.totem.max_message_size,
      [self](const membership::Gather& packet, Delivery order) {
        return self->ring_ ? self->ring_->submit(packet, order) : Status::kClosed;
      },
      static_cast<groups::GroupEvents&>(*self));
  if (auto quorum = d->start_quorum(); !quorum) return quorum.error();
  d->start_keystore();
  auto loader = ConfigLoader::create(loop);
  if (!loader) return loader.error();
  d->loader_ = std::move(loader).value();
  auto seq_file = RingSeqFile::in(d->setup_.state_dir);
  if (!seq_file) return seq_file.error();
  const std::size_t buffer_bytes = d->setup_.totem.max_message_size + ipc::kBufferOverhead;
  const config::IpcConfig& ipc_config = d->setup_.config.ipc;
  const stack::ClientLimits limits{buffer_bytes, ipc_config.client_queue_bytes, ipc_config.queue_budget(),
                                   ipc_config.max_clients};
  d->clients_retry_ = std::make_unique<LoopTimer>(loop, [self] { self->clients_->retry(); });
  d->clients_ = std::make_unique<stack::ClientTable>(limits, static_cast<stack::RequestHandler&>(*self),
                                                     [self] { self->clients_retry_->arm(kClientRetryNs); });
  const IpcAccess access{buffer_bytes, ipc_config.max_clients, ipc_config.allow.uids, ipc_config.allow.gids};
  auto ipc = IpcServer::start(loop, d->setup_.ipc_name, access, *d->clients_, [self] { return self->accept_client(); });
  if (!ipc) return ipc.error();
  d->ipc_ = std::move(ipc).value();
  d->apply_access();  // uidgid.* keys: none yet, but one place decides who may connect
  auto ring = RingHost::start(loop, std::move(backend), d->setup_.totem, std::move(seq_file).value(), *self);
  if (!ring) return ring.error();
  d->ring_ = std::move(ring).value();
  return d;
}

void Daemon::stop() {
  if (ring_) ring_->close();
}

void Daemon::on_link_failure(std::function<void(std::string_view)> failed) {
  link_failed_ = std::move(failed);
  if (!early_link_failure_.empty())
    (void)loop_.post([this] { link_failed_(std::exchange(early_link_failure_, {})); });
}

void Daemon::link_failed(std::string_view reason) {
  if (link_failed_) link_failed_(reason);
  else early_link_failure_ = reason;
}

void Daemon::deliver(const membership::Delivered& message) {
  switch (ring_service_of(message.payload).value_or(RingService{0})) {
    case RingService::kGroups: groups_->on_deliver(message); return;
    case RingService::kQuorum:
      if (quorum_) {
        const std::uint64_t dropped = quorum_->changes_dropped();
        quorum_->on_deliver(message);
        if (quorum_->changes_dropped() != dropped)
          qb_log(LOG_WARNING, "quorum: a change of votes or expected votes from node %u did not take effect here: "
                 "the ring changed before it was delivered in full; check `rtotemctl quorum` and make it again",
                 message.sender);
        arm_quorum_timer();
        return;
      }
      break;  // a node with quorum on beside one with it off: the cluster's configs differ
    case RingService::kNodeControl: node_control_deliver(message); return;
  }
  if (ring_messages_unknown_++ == 0)
    qb_log(LOG_WARNING, "a ring message from node %u for a service this node does not run (first byte %u): ignored; "
           "do the nodes' configs differ (quorum on some only)?", message.sender,
           message.payload.empty() ? 0U : std::to_integer<unsigned>(message.payload[0]));
}

void Daemon::configuration(const membership::ConfigChange& change) {
  ++configurations_;
  if (change.transitional) {
    qb_log(LOG_NOTICE, "transitional configuration: members [%s], left [%s]", node_list_text(change.members).c_str(),
           node_list_text(change.left).c_str());
  } else {
    qb_log(LOG_NOTICE, "ring %u/%llu: members [%s], joined [%s]", change.ring_id.rep,
           static_cast<unsigned long long>(change.ring_id.seq), node_list_text(change.members).c_str(),
           node_list_text(change.joined).c_str());
  }
  groups_->on_configuration(change);
  if (!change.transitional) member_keys(change);
  if (quorum_ && !change.transitional) {
    quorum_->on_configuration(change, monotonic_now());
    arm_quorum_timer();
  }
  if (!change.transitional && groups_->join_list_pending()) {
    qb_log(LOG_NOTICE, "this node's group members wait for room in the send queue: retried after every token turn");
  }
  ipc::BodyWriter body;
  body.u32(change.ring_id.rep);
  body.u64(change.ring_id.seq);
  body.u8(change.transitional ? 1 : 0);
  body.u32(static_cast<std::uint32_t>(change.members.size()));
  for (NodeId n : change.members) body.u32(n);
  clients_->for_each_client([&](LocalClient& c) {
    if (c.tracks_rings) clients_->send_event(c, ipc::EventId::kRingChange, body.data());
  });
  if (change.transitional) return;
  current_ring_event_.assign(body.data().begin(), body.data().end());
  if (!ring_formed_) {
    ring_formed_ = true;
    if (ready_) ready_();
  }
}

void Daemon::after_turn() {
  groups_->retry_pending();
  if (quorum_) quorum_->retry_pending();
  submit_orphaned();
  while (orphaned_.empty() && !pending_leaves_.empty()) {
    const auto& [group, pid] = pending_leaves_.front();
    if (groups_->leave(group, pid, groups::Reason::kProcDown) != Status::kOk) break;
    pending_leaves_.pop_front();
  }
  clients_->for_each_staged([this](LocalClient& client) { return submit_staged(client); });
  clients_->end_turn();  // queued events, then this turn's deliveries, one batch per client
}

int Daemon::accept_client() const noexcept { return ring_formed_ ? 0 : -EAGAIN; }

void Daemon::client_connected(LocalClient& client) {
  clients_->send_event(client, ipc::EventId::kRingChange, current_ring_event_);
}

int Daemon::ring_track(LocalClient& client, bool on) {
  if (on && !client.tracks_rings) clients_->send_event(client, ipc::EventId::kRingChange, current_ring_event_);
  client.tracks_rings = on;
  return 0;
}

int Daemon::request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) {
  switch (request.id) {
    case ipc::RequestId::kJoin: return join(client, request.group, reply);
    case ipc::RequestId::kLeave: return leave(client, request.group);
    case ipc::RequestId::kMcast: return multicast(client, request, reply);
    case ipc::RequestId::kMcastAsync: multicast_async(client, request); return 0;
    case ipc::RequestId::kSync: return sync(client, reply);
    case ipc::RequestId::kLocalNodeId: reply.u32(setup_.self.nodeid); return 0;
    case ipc::RequestId::kStatus: reply.string(status_json()); return 0;
    case ipc::RequestId::kStats: reply.string(stats_json()); return 0;
    case ipc::RequestId::kDataMax:
      reply.u32(static_cast<std::uint32_t>(GroupService::data_max(setup_.totem.max_message_size)));
      return 0;
    case ipc::RequestId::kMembers: reply.string(members_json(request.group)); return 0;
    case ipc::RequestId::kGroupMembers: group_members(request.group, reply); return 0;
    case ipc::RequestId::kQuorum: reply.string(quorum_json()); return 0;
    case ipc::RequestId::kQuorumSet: return quorum_set(client, request);
    case ipc::RequestId::kQuorumTrack: return quorum_track(client, request.quorum_track);
    case ipc::RequestId::kRingTrack: return ring_track(client, request.flag == 1);
    case ipc::RequestId::kQuorumNode: return quorum_node(request.node, reply);
    case ipc::RequestId::kKeyGet:
    case ipc::RequestId::kKeySet:
    case ipc::RequestId::kKeyDelete:
    case ipc::RequestId::kKeyList:
    case ipc::RequestId::kKeyTrack:
    case ipc::RequestId::kKeyUntrack: return key_request(client, request, reply);
    case ipc::RequestId::kNodeAddresses: return node_addresses(request.node, reply);
    case ipc::RequestId::kShutdown: return shutdown(client, request);
    case ipc::RequestId::kShutdownTrack:
      client.tracks_shutdown = request.flag == 1;
      if (!client.tracks_shutdown) shutdown_client_gone(client);  // as corosync's trackstop: not waited for
      return 0;
    case ipc::RequestId::kShutdownReply: return shutdown_reply(client, request.flag == 1);
    case ipc::RequestId::kKillNode: return kill_node(client, request);
    case ipc::RequestId::kReload: return reload_request(client, reply);
    case ipc::RequestId::kReopenLogs:
      if (!privileged(client)) return -EPERM;
      qb_log(LOG_NOTICE, "log file reopened, asked by pid %d", static_cast<int>(client.pid));
      reopen_logging();
      return 0;
  }
  return -EINVAL;  // decode_request admits only the ids above
}

// A join or leave goes on the ring after this client's staged multicasts, as it asked them after.
int Daemon::join(LocalClient& client, std::string_view group, ipc::BodyWriter& reply) {
  if (!GroupService::valid_group_name(group)) return -EINVAL;
  if (!submit_staged(client)) return -EAGAIN;
  const auto pid = static_cast<std::uint32_t>(client.pid);
  // (node, pid) names a member: while a leave of this process is on its way (its own, or its
  // previous connection's), a join would race it and be undone by it. Retry once it is delivered.
  if (groups_->leave_in_flight(group, pid) ||
      std::ranges::any_of(pending_leaves_, [&](const auto& l) { return l.first == group && l.second == pid; }))
    return -EAGAIN;
  if (client.groups.contains(group)) return -EEXIST;
  // One connection per process and group. Another that is closing has not left yet: once its
  // leave is on its way (leave_in_flight above), this join waits for it.
  if (const LocalClient* other = clients_->find_client(client.pid, [&](const LocalClient& c) { return c.groups.contains(group); }))
    return other->closing ? -EAGAIN : -EEXIST;
  if (client.groups.size() >= kGroupsPerClientMax) return -ENOSPC;
  const int rc = errno_of(groups_->join(group, pid));
  if (rc != 0) return rc;
  client.groups.emplace(group);
  // The credit, so the client's first multicast need not wait. Not counted as told: a library
  // older than this answer ignores it, and waits for the kCredit event.
  put_credit(client, reply);
  return 0;
}

int Daemon::leave(LocalClient& client, std::string_view group) {
  if (!client.groups.contains(group)) return -ENOENT;
  if (!submit_staged(client)) return -EAGAIN;
  return errno_of(groups_->leave(group, static_cast<std::uint32_t>(client.pid), groups::Reason::kLeave));
}

void Daemon::client_gone(LocalClient& client) {
  keys_->untrack_all(client.generation);
  shutdown_client_gone(client);
  orphan_staged(client);  // its multicasts go before its leaves, as it sent them before
  // Taken out first: a leave may be delivered inside the submit, and that edits client.groups.
  const auto groups = std::exchange(client.groups, {});
  for (const std::string& group : groups) {
    if (pending_leaves_.empty() && orphaned_.empty() &&
        groups_->leave(group, static_cast<std::uint32_t>(client.pid), groups::Reason::kProcDown) == Status::kOk)
      continue;
    pending_leaves_.emplace_back(group, static_cast<std::uint32_t>(client.pid));
  }
}

LocalClient* Daemon::client_in(std::string_view group, std::uint32_t pid) {
  return clients_->find_client(static_cast<pid_t>(pid), [&](const LocalClient& c) { return !c.closing && c.groups.contains(group); });
}

// The payload goes from the ring's receive buffer (or reassembled message) into each client's
// shared-memory ring: one copy per local member, none on the way.
void Daemon::group_message(const groups::GroupMessage& message) {
  ipc::BodyWriter& head = event_head_;
  head.clear();
  head.u32(message.sender.node);
  head.u32(message.sender.pid);
  head.u8(static_cast<std::uint8_t>((message.order == Delivery::kSafe ? ipc::kModeSafe : 0) |
                                     (message.piece ? ipc::kModePiece : 0)));
  head.string(message.group);
  local_members_.clear();
  for (const auto& member : groups_->members(message.group)) {
    if (member.node != setup_.self.nodeid) continue;
    if (LocalClient* c = client_in(message.group, member.pid)) local_members_.push_back(c);
  }
  clients_->send_event_to_all(local_members_, ipc::EventId::kDeliver, head.data(), message.data);
}

// Members after the change and those who left (they learn they are out) hear of it; a local
// process that left is no longer in the group for its connection. The connection whose join or
// leave it is hears it marked as its own (ipc::kChangeOwn).
void Daemon::group_change(const groups::GroupChange& change) {
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
  auto tell = [&](const groups::ProcessId& p, bool own) {
    if (p.node != setup_.self.nodeid) return;
    LocalClient* c = client_in(change.group, p.pid);
    if (c == nullptr) return;
    body.data()[flags_at] = std::byte{own ? ipc::kChangeOwn : std::uint8_t{0}};
    clients_->send_event(*c, ipc::EventId::kGroupChange, body.data());
  };
  // A local process is among those joined only by its own join (join lists bring other nodes'
  // processes): the search is for that change alone.
  const bool local_joined = std::ranges::any_of(change.joined, [&](const auto& p) { return p.node == setup_.self.nodeid; });
  for (const auto& p : change.members) tell(p, local_joined && std::ranges::find(change.joined, p) != change.joined.end());
  for (const auto& p : change.left) {
    tell(p, true);
    if (p.node != setup_.self.nodeid) continue;
    if (LocalClient* c = client_in(change.group, p.pid)) c->groups.erase(c->groups.find(change.group));
  }
}

}  // namespace rtotem::daemon
