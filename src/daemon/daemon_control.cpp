// rtotemd's node control (corosync's cfg): a node's addresses, a shutdown its clients may veto,
// killing a node through the ring, and reloading the configuration file.
#include <qb/qblog.h>

#include <cerrno>
#include <cstring>

#include "src/daemon/config/config_sections.hpp"
#include "src/daemon/control/kill_wire.hpp"
#include "src/daemon/control/reload_plan.hpp"
#include "src/daemon/daemon.hpp"
#include "src/daemon/keystore/config_keys.hpp"

namespace rtotem::daemon {

using membership::NodeId;

void Daemon::on_exit_request(std::function<void(int code)> exit) { exit_ = std::move(exit); }

void Daemon::on_logging(std::function<Result<void>(const config::LoggingConfig&)> apply) {
  apply_logging_ = std::move(apply);
}

// After this turn: the answer that led here goes out first.
void Daemon::exit_later(int code) {
  (void)loop_.post([this, code] {
    if (exit_) exit_(code);
  });
}

int Daemon::node_addresses(std::uint32_t node, ipc::BodyWriter& reply) const {
  if (node == 0) node = setup_.self.nodeid;
  for (const config::NodeEntry& entry : setup_.config.nodes) {
    if (entry.nodeid != node) continue;
    auto address = config::resolve_ring0(setup_.config.path, entry, 0);
    reply.u32(1);
    reply.string(address ? address->host_string() : entry.ring0_addr);
    return 0;
  }
  return -ENOENT;
}

int Daemon::shutdown(IpcClient& client, const IpcRequest& request) {
  if (shutdown_) return -EBUSY;  // one at a time
  const bool regardless = request.flag == ipc::kShutdownRegardless;
  std::set<std::uint64_t> asked;
  if (request.flag != ipc::kShutdownImmediate)
    ipc_->for_each_client([&](IpcClient& c) {
      if (c.tracks_shutdown) asked.insert(c.generation);
    });
  qb_log(LOG_NOTICE, "shutdown asked by pid %d%s: %zu client(s) asked", static_cast<int>(client.pid),
         regardless ? " (regardless of vetoes)" : request.flag == ipc::kShutdownImmediate ? " (immediate)" : "",
         asked.size());
  // Decided on a later turn: the timer is the shutdown's, and deciding destroys it.
  shutdown_ = std::make_unique<PendingShutdown>(loop_, control::ShutdownVote(asked, regardless), client.generation, [this] {
    (void)loop_.post([this] {
      if (shutdown_) shutdown_decided(shutdown_->vote.timed_out());
    });
  });
  if (auto now = shutdown_->vote.outcome()) {
    const bool stop = now->stop;
    qb_log(LOG_NOTICE, "shutdown: %s", now->why.c_str());
    shutdown_.reset();
    if (!stop) return -EBUSY;
    exit_later(0);
    return 0;
  }
  ipc::BodyWriter body;
  body.u8(request.flag);
  ipc_->for_each_client([&](IpcClient& c) {
    if (asked.contains(c.generation)) ipc_->send_event(c, ipc::EventId::kShutdownQuery, body.data());
  });
  ipc_->end_turn();  // the questions go now, not at the ring's next turn
  shutdown_->timer.arm(control::kShutdownTimeoutMs * 1'000'000);
  return kAnswerLater;
}

int Daemon::shutdown_reply(IpcClient& client, bool agree) {
  if (!shutdown_ || !shutdown_->vote.answer(client.generation, static_cast<std::uint32_t>(client.pid), agree))
    return -ENOENT;
  qb_log(LOG_INFO, "shutdown: pid %d %s", static_cast<int>(client.pid), agree ? "agrees" : "vetoes");
  if (auto outcome = shutdown_->vote.outcome()) (void)loop_.post([this, o = *outcome] { shutdown_decided(o); });
  return 0;
}

void Daemon::shutdown_decided(const control::ShutdownOutcome& outcome) {
  if (!shutdown_) return;
  const std::uint64_t asker = shutdown_->asker;
  shutdown_.reset();
  qb_log(LOG_NOTICE, "shutdown %s: %s", outcome.stop ? "agreed" : "refused", outcome.why.c_str());
  if (IpcClient* client = ipc_->find_generation(asker))
    ipc_->answer(*client, ipc::RequestId::kShutdown, outcome.stop ? 0 : -EBUSY, {});
  if (outcome.stop) exit_later(0);
}

int Daemon::kill_node(IpcClient& client, const IpcRequest& request) {
  const auto& members = ring_->node().members();
  if (std::ranges::find(members, request.node) == members.end()) return -ENOENT;
  const std::vector<std::byte> packet = control::encode_kill(
      {request.node, setup_.self.nodeid, static_cast<std::uint32_t>(client.pid), std::string(request.reason)});
  const int rc = errno_of(ring_->submit(membership::Gather{packet, {}}, membership::Delivery::kAgreed));
  if (rc == 0)
    qb_log(LOG_NOTICE, "pid %d asks node %u to leave the ring and exit: %.*s", static_cast<int>(client.pid),
           request.node, static_cast<int>(request.reason.size()), request.reason.data());
  return rc;
}

void Daemon::node_control_deliver(const membership::Delivered& message) {
  const std::optional<control::KillNode> kill = control::decode_kill(message.payload);
  if (!kill) {
    ++ring_messages_unknown_;
    return;
  }
  if (kill->target != setup_.self.nodeid) {
    qb_log(LOG_NOTICE, "node %u is killed by node %u (pid %u): %s", kill->target, kill->from, kill->pid,
           kill->reason.c_str());
    return;
  }
  qb_log(LOG_CRIT, "this node is killed by node %u (pid %u): %s: leaving the ring and exiting", kill->from, kill->pid,
         kill->reason.empty() ? "no reason given" : kill->reason.c_str());
  exit_later(kExitKilled);
}

Result<std::string> Daemon::reload() {
  auto file = config::load_config(setup_.config.path);
  if (!file) return Error::make("nothing changed: {}", file.error().message());
  const control::ReloadPlan plan =
      control::plan_reload(keystore::config_keys(setup_.config, setup_.totem), keystore::config_keys(*file, setup_.totem),
                           setup_.self.nodeid);
  auto list = [](const std::vector<std::string>& keys) {
    std::string out;
    for (const std::string& k : keys) out += fmt::format("{}{}", out.empty() ? "" : ", ", k);
    return out;
  };
  if (!plan.refused.empty())
    return Error::make("nothing changed: {} differ(s) from the running configuration and need(s) a restart",
                       list(plan.refused));
  if (plan.changed.empty()) return std::string("no change");
  if (plan.logging && apply_logging_) {
    if (auto applied = apply_logging_(file->logging); !applied)
      return Error::make("nothing changed: logging: {}", applied.error().message());
  }
  std::string problems;
  if (plan.own_votes && quorum_)  // without quorum the votes are only recorded
    if (const int rc = quorum_->set_votes(setup_.self.nodeid, *plan.own_votes); rc != 0)
      problems += fmt::format("; this node's votes {} refused: {}", *plan.own_votes, std::strerror(-rc));
  if (plan.expected_votes && quorum_)
    if (const int rc = quorum_->set_expected(*plan.expected_votes); rc != 0)
      problems += fmt::format("; expected votes {} refused: {}", *plan.expected_votes, std::strerror(-rc));
  setup_.config.logging = file->logging;
  setup_.config.ipc.allow = file->ipc.allow;
  for (config::NodeEntry& entry : setup_.config.nodes)
    for (const config::NodeEntry& now : file->nodes)
      if (entry.nodeid == now.nodeid) entry.quorum_votes = now.quorum_votes;
  if (setup_.config.quorum && file->quorum) {
    setup_.config.quorum->expected_votes = file->quorum->expected_votes;
    setup_.config.quorum->expected_votes_configured = file->quorum->expected_votes_configured;
  }
  keys_->assign(keystore::kConfigPrefixes, keystore::config_keys(setup_.config, setup_.totem));
  if (plan.access) apply_access();
  const std::string done = fmt::format("reloaded {}: {}{}", setup_.config.path, list(plan.changed), problems);
  qb_log(problems.empty() ? LOG_NOTICE : LOG_WARNING, "%s", done.c_str());
  if (!problems.empty()) return Error::make("{}", done);
  return done;
}

int Daemon::reload_request(ipc::BodyWriter& reply) {
  auto done = reload();
  if (!done) {
    qb_log(LOG_WARNING, "reload: %s", done.error().message().c_str());
    reply.string(done.error().message());
    return -EINVAL;
  }
  reply.string(*done);
  return 0;
}

}  // namespace rtotem::daemon
