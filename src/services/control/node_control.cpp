#include "src/services/control/node_control.hpp"

#include <qb/qblog.h>

#include <algorithm>
#include <cerrno>

#include "src/services/control/kill_wire.hpp"
#include "src/services/staging/mcast_staging.hpp"

namespace rtotem::control {

using membership::NodeId;

NodeControl::NodeControl(NodeId self, stack::StackHost& host, stack::ClientTable& clients,
                         const std::map<NodeId, std::string>& addresses, ReadOwnFile read)
    : self_(self),
      host_(host),
      clients_(clients),
      addresses_(addresses),
      reload_(self, host, clients, std::move(read)) {}

int NodeControl::node_addresses(std::uint32_t node, ipc::BodyWriter& reply) const {
  const auto found = addresses_.find(node == 0 ? self_ : node);
  if (found == addresses_.end()) return -ENOENT;
  reply.u32(1);
  reply.string(found->second);
  return 0;
}

int NodeControl::shutdown(LocalClient& client, const IpcRequest& request) {
  if (!stack::privileged(client)) return -EPERM;
  if (shutdown_) return -EBUSY;  // one at a time
  const bool regardless = request.flag == ipc::kShutdownRegardless;
  std::set<std::uint64_t> asked;
  if (request.flag != ipc::kShutdownImmediate)
    clients_.for_each_client([&](LocalClient& c) {  // not the asker: it waits for the answer, it cannot give one
      if (c.tracks_shutdown && c.generation != client.generation) asked.insert(c.generation);
    });
  qb_log(LOG_NOTICE, "shutdown asked by pid %d%s: %zu client(s) asked", static_cast<int>(client.pid),
         regardless                                ? " (regardless of vetoes)"
         : request.flag == ipc::kShutdownImmediate ? " (immediate)"
                                                   : "",
         asked.size());
  ShutdownVote vote(asked, regardless);
  if (auto now = vote.outcome()) {
    qb_log(LOG_NOTICE, "shutdown: %s", now->why.c_str());
    if (!now->stop) return -EBUSY;
    host_.exit(0);
    return 0;
  }
  shutdown_ = std::make_unique<PendingShutdown>(
      PendingShutdown{std::move(vote), client.generation, ++shutdowns_, host_.now() + kShutdownTimeoutMs * 1000});
  ipc::BodyWriter body;
  body.u8(request.flag);
  clients_.for_each_client([&](LocalClient& c) {
    if (asked.contains(c.generation)) clients_.send_event(c, ipc::EventId::kShutdownQuery, body.data());
  });
  clients_.end_turn();  // the questions go now, not at the ring's next turn
  return stack::kAnswerLater;
}

int NodeControl::shutdown_track(LocalClient& client, bool on) {
  client.tracks_shutdown = on;
  if (!on) client_gone(client);  // as corosync's trackstop: not waited for
  return 0;
}

int NodeControl::shutdown_reply(LocalClient& client, bool agree) {
  if (!shutdown_ || !shutdown_->vote.answer(client.generation, static_cast<std::uint32_t>(client.pid), agree))
    return -ENOENT;
  qb_log(LOG_INFO, "shutdown: pid %d %s", static_cast<int>(client.pid), agree ? "agrees" : "vetoes");
  decide_if_known();
  return 0;
}

void NodeControl::client_gone(const LocalClient& client) {
  if (!shutdown_) return;
  shutdown_->vote.gone(client.generation);
  decide_if_known();
}

std::optional<membership::Time> NodeControl::deadline() const noexcept {
  std::optional<membership::Time> soonest = reload_.deadline();
  if (shutdown_ && (!soonest || shutdown_->deadline < *soonest)) soonest = shutdown_->deadline;
  return soonest;
}

void NodeControl::on_time(membership::Time now) {
  reload_.on_time(now);
  if (shutdown_ && now >= shutdown_->deadline) decided(shutdown_->vote.timed_out());
}

// On a later turn, for this shutdown only: several answers may each find it decided.
void NodeControl::decide_if_known() {
  const std::optional<ShutdownOutcome> outcome = shutdown_->vote.outcome();
  if (!outcome) return;
  host_.post([this, o = *outcome, serial = shutdown_->serial] {
    if (shutdown_ && shutdown_->serial == serial) decided(o);
  });
}

void NodeControl::decided(const ShutdownOutcome& outcome) {
  const std::uint64_t asker = shutdown_->asker;
  shutdown_.reset();
  qb_log(LOG_NOTICE, "shutdown %s: %s", outcome.stop ? "agreed" : "refused", outcome.why.c_str());
  if (LocalClient* client = clients_.find_generation(asker))
    clients_.answer(*client, ipc::RequestId::kShutdown, outcome.stop ? 0 : -EBUSY, {});
  if (outcome.stop) host_.exit(0);
}

int NodeControl::kill_node(LocalClient& client, const IpcRequest& request) {
  if (!stack::privileged(client)) return -EPERM;
  const auto& members = host_.node().members();
  if (std::ranges::find(members, request.node) == members.end()) return -ENOENT;
  const std::vector<std::byte> packet =
      encode_kill({request.node, self_, static_cast<std::uint32_t>(client.pid), std::string(request.reason)});
  const int rc = staging::errno_of(host_.submit(membership::Gather{packet, {}}, membership::Delivery::kAgreed));
  if (rc == 0)
    qb_log(LOG_NOTICE, "pid %d asks node %u to leave the ring and exit: %.*s", static_cast<int>(client.pid),
           request.node, static_cast<int>(request.reason.size()), request.reason.data());
  return rc;
}

bool NodeControl::deliver(const membership::Delivered& message) {
  const std::optional<KillNode> kill = decode_kill(message.payload);
  if (!kill) return reload_.deliver(message);
  if (kill->target != self_) {
    qb_log(LOG_NOTICE, "node %u is killed by node %u (pid %u): %s", kill->target, kill->from, kill->pid,
           kill->reason.c_str());
    return true;
  }
  qb_log(LOG_CRIT, "this node is killed by node %u (pid %u): %s: leaving the ring and exiting", kill->from, kill->pid,
         kill->reason.empty() ? "no reason given" : kill->reason.c_str());
  host_.exit(stack::kExitKilled);
  return true;
}

// Answered once every member has reported on its file and the reload applied everywhere or nowhere.
int NodeControl::reload(const LocalClient& client) {
  if (!stack::privileged(client)) return -EPERM;
  qb_log(LOG_NOTICE, "reload of every node asked by pid %d", static_cast<int>(client.pid));
  return reload_.ask(client);
}

}  // namespace rtotem::control
