#include "src/services/quorum/quorum_clients.hpp"

#include <qb/qblog.h>

#include <cerrno>
#include <utility>

#include "src/ipc/json_quote.hpp"

namespace rtotem::quorum {

QuorumClients::QuorumClients(NodeId self, QuorumService& quorum, stack::ClientTable& clients,
                             const config::DaemonConfig& config)
    : self_(self), quorum_(quorum), clients_(clients), config_(config) {}

void QuorumClients::put_event(const QuorumState& state, std::uint32_t more_flags) {
  event_.clear();
  put_state(event_, state, more_flags);
}

void QuorumClients::put_state(ipc::BodyWriter& body, const QuorumState& state, std::uint32_t more_flags) const {
  const QuorumConfig& c = quorum_.config();
  const Decision& d = state.decision;
  body.u32(state.ring_id.rep);
  body.u64(state.ring_id.seq);
  body.u8(d.quorate ? 1 : 0);
  body.u32(c.expected_votes);
  body.u32(d.expected_votes);
  body.u32(d.total_votes);
  body.u32(d.quorum);
  body.u32((d.two_node ? ipc::kQuorumFlagTwoNode : 0) | (c.wait_for_all ? ipc::kQuorumFlagWaitForAll : 0) |
           (c.last_man_standing ? ipc::kQuorumFlagLastManStanding : 0) |
           (c.tie_breaker != TieBreaker::kNone ? ipc::kQuorumFlagAutoTieBreaker : 0) |
           (d.waiting_for_all ? ipc::kQuorumFlagWaiting : 0) | more_flags);
  body.u32(static_cast<std::uint32_t>(state.members.size()));
  for (std::size_t i = 0; i < state.members.size(); ++i) {
    body.u32(state.members[i]);
    body.u32(state.votes[i]);
  }
}

int QuorumClients::node(std::uint32_t node, ipc::BodyWriter& reply) const {
  if (node == 0) node = self_;
  const auto view = quorum_.node(node);
  if (!view) return -ENOENT;
  reply.u32(node);
  reply.u8(view->member ? 1 : 0);
  reply.u32(view->votes);
  reply.u32(view->expected_votes);
  put_state(reply, quorum_.state());
  return 0;
}

namespace {

std::uint32_t device_bits(const DeviceFlags& d) {
  return (d.registered ? ipc::kDeviceFlagRegistered : 0) | (d.alive ? ipc::kDeviceFlagAlive : 0) |
         (d.cast_vote ? ipc::kDeviceFlagCastVote : 0) | (d.master_wins ? ipc::kDeviceFlagMasterWins : 0);
}

}  // namespace

// corosync-qdevice polls every few seconds: logged are the registration and the vote's changes.
int QuorumClients::device(const LocalClient& client, const IpcRequest& request, Time now, ipc::BodyWriter& reply) {
  if (request.device_op == ipc::kDeviceInfo) {
    const auto view = quorum_.node(request.node == 0 ? self_ : request.node);
    if (!view) return -ENOENT;
    reply.u32(device_bits(view->device));
    reply.u32(quorum_.config().device ? quorum_.config().device->votes : 0);
    reply.string(quorum_.device_name());
    return 0;
  }
  if (!stack::privileged(client)) return -EPERM;
  const DeviceFlags before = quorum_.node(self_)->device;
  const std::string_view name = request.device_name;
  int rc = -EINVAL;
  switch (request.device_op) {
    case ipc::kDeviceRegister: rc = quorum_.device_register(name); break;
    case ipc::kDeviceUnregister: rc = quorum_.device_unregister(name); break;
    case ipc::kDeviceUpdate: rc = quorum_.device_update(name, request.device_new_name); break;
    case ipc::kDevicePoll: rc = quorum_.device_poll(name, request.flag == 1, request.device_ring, now); break;
    case ipc::kDeviceMasterWins: rc = quorum_.device_master_wins(name, request.flag == 1); break;
    default: break;
  }
  const DeviceFlags after = quorum_.node(self_)->device;
  if (rc == 0 && !(before == after)) {
    const RingId& ring = quorum_.state().ring_id;
    qb_log(LOG_NOTICE, "quorum device %.*s (pid %d): %s, %s, %s in ring %u/%llu%s", static_cast<int>(name.size()),
           name.data(), static_cast<int>(client.pid), after.registered ? "registered" : "unregistered",
           after.alive ? "alive" : "not alive", after.cast_vote ? "votes" : "does not vote", ring.rep,
           static_cast<unsigned long long>(ring.seq), after.master_wins ? ", master wins" : "");
  }
  return rc;
}

void QuorumClients::device_expired() const {
  qb_log(LOG_WARNING, "quorum device %s: no poll within its timeout: lost contact, its vote is gone",
         quorum_.device_name().c_str());
}

namespace {

stack::QuorumTold told(const QuorumState& state) {
  return {state.ring_id.rep, state.ring_id.seq, state.decision.quorate, state.decision.expected_votes};
}

// Whether a change goes to a client, by the mode it tracks with: a Corosync library's descriptor
// wakes only for a change it reports (corosync-quorumtool -m dispatches libquorum once, then waits
// for libvotequorum's notification of a new ring).
bool sends_change(LocalClient& client, const QuorumState& state) {
  const stack::QuorumTold now = told(state);
  const stack::QuorumTold before = std::exchange(client.quorum_told, now);
  const bool ring_news = now.rep != before.rep || now.seq != before.seq || now.quorate != before.quorate;
  switch (client.quorum_track) {
    case ipc::kQuorumTrackEvery: return true;
    case ipc::kQuorumTrackRings: return ring_news;
    case ipc::kQuorumTrackRingsAndExpected: return ring_news || now.highest_expected != before.highest_expected;
    default: return false;  // not tracking, or the state only
  }
}

}  // namespace

int QuorumClients::track(LocalClient& client, std::uint8_t mode) {
  client.quorum_track = mode;
  if (mode != ipc::kQuorumTrackStop) {
    client.quorum_told = told(quorum_.state());
    put_event(quorum_.state(), ipc::kQuorumFlagTrackStart);
    clients_.send_event(client, ipc::EventId::kQuorumChange, event_.data());
  }
  return 0;
}

void QuorumClients::changed(const QuorumState& state) {
  put_event(state);
  clients_.for_each_client([&](LocalClient& c) {
    if (sends_change(c, state)) clients_.send_event(c, ipc::EventId::kQuorumChange, event_.data());
  });
  const Decision& d = state.decision;
  std::string members;
  for (NodeId n : state.members) members += fmt::format("{}{}", members.empty() ? "" : " ", n);
  if (!state.silent.empty()) {
    std::string silent;
    for (NodeId n : state.silent) silent += fmt::format("{}{}", silent.empty() ? "" : " ", n);
    qb_log(LOG_ERR,
           "quorum: node(s) %s of ring %u/%llu sent no quorum report within %u ms: counted with no votes. "
           "Does their config lack quorum { provider: corosync_votequorum }? Every node must run the same quorum "
           "settings",
           silent.c_str(), state.ring_id.rep, static_cast<unsigned long long>(state.ring_id.seq),
           quorum_.config().sync_timeout_ms);
  }
  qb_log(d.quorate ? LOG_NOTICE : LOG_WARNING,
         "quorum: %s in ring %u/%llu, members [%s]: %u votes, expected %u, quorum %u%s%s",
         d.quorate ? "quorate" : "NOT quorate", state.ring_id.rep, static_cast<unsigned long long>(state.ring_id.seq),
         members.c_str(), d.total_votes, d.expected_votes, d.quorum,
         d.waiting_for_all ? ", waiting for all nodes (wait_for_all)" : "", d.tie_broken ? ", by the tie breaker" : "");
}

// A runtime change, logged with who asked: it acts where the ring delivers it, at every member.
// Root's (or rtotemd's user's), as shutdown and kill are: a user the daemon lets connect could
// otherwise make a minority side quorate. Reading the quorum stays open to every client.
int QuorumClients::set(const LocalClient& client, const IpcRequest& request) {
  if (!stack::privileged(client)) return -EPERM;
  const bool votes = request.quorum_what == ipc::kQuorumSetVotes;
  const int rc =
      votes ? quorum_.set_votes(request.quorum_node, request.quorum_value) : quorum_.set_expected(request.quorum_value);
  if (rc == 0) {
    if (votes)
      qb_log(LOG_NOTICE, "quorum: pid %d sets node %u's votes to %u", static_cast<int>(client.pid), request.quorum_node,
             request.quorum_value);
    else
      qb_log(LOG_NOTICE, "quorum: pid %d sets expected votes to %u", static_cast<int>(client.pid),
             request.quorum_value);
  }
  return rc;
}

std::string QuorumClients::json() const {
  using ipc::json_quoted;
  const QuorumState& s = quorum_.state();
  const QuorumConfig& c = quorum_.config();
  const Decision& d = s.decision;
  std::string nodes;
  for (std::size_t i = 0; i < s.members.size(); ++i) {
    const NodeId id = s.members[i];
    std::string name;
    for (const config::NodeEntry& entry : config_.nodes)
      if (entry.nodeid == id) name = entry.name;
    // corosync-quorumtool's notation of the node's device: alive, vote, master wins; NR: none.
    const DeviceFlags dev = quorum_.node(id)->device;
    const std::string device = !dev.registered
                                   ? "NR"
                                   : fmt::format("{},{},{}", dev.alive ? "A" : "NA", dev.cast_vote ? "V" : "NV",
                                                 dev.master_wins ? "MW" : "NMW");
    nodes += fmt::format("{}{{\"nodeid\": {}, \"votes\": {}, \"name\": {}, \"local\": {}, \"device\": {}}}",
                         nodes.empty() ? "" : ", ", id, s.votes[i], json_quoted(name), id == self_ ? "true" : "false",
                         json_quoted(device));
  }
  const std::string device =
      !c.device ? "null"
                : fmt::format("{{\"model\": {}, \"name\": {}, \"votes\": {}, \"counted\": {}, \"master_wins\": {}}}",
                              json_quoted(c.device->model), json_quoted(quorum_.device_name()), c.device->votes,
                              d.device_vote ? "true" : "false", d.master_wins ? "true" : "false");
  std::string flags;
  auto flag = [&](bool on, std::string_view name) {
    if (on) flags += fmt::format("{}{}", flags.empty() ? "" : ", ", json_quoted(name));
  };
  flag(d.two_node, "2Node");
  flag(d.quorate, "Quorate");
  flag(c.wait_for_all, "WaitForAll");
  flag(c.last_man_standing, "LastManStanding");
  flag(c.tie_breaker != TieBreaker::kNone, "AutoTieBreaker");
  flag(quorum_.node(self_)->device.registered, "Qdevice");
  std::string silent;
  for (NodeId n : s.silent) silent += fmt::format("{}{}", silent.empty() ? "" : ", ", n);
  return fmt::format(
      "{{\"configured\": true, \"nodeid\": {}, \"ring\": {{\"rep\": {}, \"seq\": {}}}, \"synced\": {}, \"quorate\": "
      "{}, "
      "\"expected_votes\": {}, \"highest_expected\": {}, \"total_votes\": {}, \"quorum\": {}, "
      "\"waiting_for_all\": {}, \"flags\": [{}], \"nodes\": [{}], \"silent\": [{}], \"packets_malformed\": {}, "
      "\"device\": {}}}",
      self_, s.ring_id.rep, s.ring_id.seq, s.synced ? "true" : "false", d.quorate ? "true" : "false", c.expected_votes,
      d.expected_votes, d.total_votes, d.quorum, d.waiting_for_all ? "true" : "false", flags, nodes, silent,
      quorum_.packets_malformed(), device);
}

}  // namespace rtotem::quorum
