// rtotemd's node control (corosync's cfg): a node's addresses, a shutdown its clients may veto,
// killing a node through the ring, and reloading the configuration file.
#include <qb/qblog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/services/control/kill_wire.hpp"
#include "src/services/control/reload_plan.hpp"
#include "src/daemon/daemon.hpp"
#include "src/services/keystore/config_keys.hpp"

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

// Resolved once, at start: a lookup here would block the ring's loop on the name service.
int Daemon::node_addresses(std::uint32_t node, ipc::BodyWriter& reply) const {
  const auto found = addresses_.find(node == 0 ? setup_.self.nodeid : node);
  if (found == addresses_.end()) return -ENOENT;
  reply.u32(1);
  reply.string(found->second);
  return 0;
}

// Stopping or killing a node, reloading its configuration, and changing votes or expected votes
// (daemon_quorum.cpp) are root's (or the daemon's own user's): any user the daemon lets connect
// could otherwise take the cluster down, or make a minority side quorate.
bool Daemon::privileged(const LocalClient& client) noexcept { return client.uid == 0 || client.uid == geteuid(); }

int Daemon::shutdown(LocalClient& client, const IpcRequest& request) {
  if (!privileged(client)) return -EPERM;
  if (shutdown_) return -EBUSY;  // one at a time
  const bool regardless = request.flag == ipc::kShutdownRegardless;
  std::set<std::uint64_t> asked;
  if (request.flag != ipc::kShutdownImmediate)
    clients_->for_each_client([&](LocalClient& c) {  // not the asker: it waits for the answer, it cannot give one
      if (c.tracks_shutdown && c.generation != client.generation) asked.insert(c.generation);
    });
  qb_log(LOG_NOTICE, "shutdown asked by pid %d%s: %zu client(s) asked", static_cast<int>(client.pid),
         regardless ? " (regardless of vetoes)" : request.flag == ipc::kShutdownImmediate ? " (immediate)" : "",
         asked.size());
  // Decided on a later turn: the timer is the shutdown's, and deciding destroys it.
  const std::uint64_t serial = ++shutdowns_;
  shutdown_ = std::make_unique<PendingShutdown>(loop_, control::ShutdownVote(asked, regardless), client.generation,
                                                serial, [this, serial] {
                                                  (void)loop_.post([this, serial] {
                                                    if (shutdown_ && shutdown_->serial == serial)
                                                      shutdown_decided(shutdown_->vote.timed_out());
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
  clients_->for_each_client([&](LocalClient& c) {
    if (asked.contains(c.generation)) clients_->send_event(c, ipc::EventId::kShutdownQuery, body.data());
  });
  clients_->end_turn();  // the questions go now, not at the ring's next turn
  shutdown_->timer.arm(control::kShutdownTimeoutMs * 1'000'000);
  return kAnswerLater;
}

int Daemon::shutdown_reply(LocalClient& client, bool agree) {
  if (!shutdown_ || !shutdown_->vote.answer(client.generation, static_cast<std::uint32_t>(client.pid), agree))
    return -ENOENT;
  qb_log(LOG_INFO, "shutdown: pid %d %s", static_cast<int>(client.pid), agree ? "agrees" : "vetoes");
  decide_shutdown_if_known();
  return 0;
}

void Daemon::shutdown_client_gone(const LocalClient& client) {
  if (!shutdown_) return;
  shutdown_->vote.gone(client.generation);
  decide_shutdown_if_known();
}

// On a later turn, for this shutdown only: several answers may each find it decided.
void Daemon::decide_shutdown_if_known() {
  const std::optional<control::ShutdownOutcome> outcome = shutdown_->vote.outcome();
  if (!outcome) return;
  (void)loop_.post([this, o = *outcome, serial = shutdown_->serial] {
    if (shutdown_ && shutdown_->serial == serial) shutdown_decided(o);
  });
}

void Daemon::shutdown_decided(const control::ShutdownOutcome& outcome) {
  if (!shutdown_) return;
  const std::uint64_t asker = shutdown_->asker;
  shutdown_.reset();
  qb_log(LOG_NOTICE, "shutdown %s: %s", outcome.stop ? "agreed" : "refused", outcome.why.c_str());
  if (LocalClient* client = clients_->find_generation(asker))
    clients_->answer(*client, ipc::RequestId::kShutdown, outcome.stop ? 0 : -EBUSY, {});
  if (outcome.stop) exit_later(0);
}

int Daemon::kill_node(LocalClient& client, const IpcRequest& request) {
  if (!privileged(client)) return -EPERM;
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

std::optional<ReloadOutcome> Daemon::reload(std::function<void(const ReloadOutcome&)> done) {
  if (loader_->busy()) return ReloadOutcome{-EBUSY, "nothing changed: another reload is under way"};
  auto started = loader_->load(setup_.config.path, [this, done = std::move(done)](Result<config::DaemonConfig> file) {
    done(file ? apply_reload(*file) : ReloadOutcome{-EBADMSG, fmt::format("nothing changed: {}", file.error().message())});
  });
  if (!started) return ReloadOutcome{-EAGAIN, fmt::format("nothing changed: {}", started.error().message())};
  return std::nullopt;
}

ReloadOutcome Daemon::apply_reload(const config::DaemonConfig& file) {
  const control::ReloadPlan plan =
      control::plan_reload(keystore::config_keys(setup_.config, setup_.totem), keystore::config_keys(file, setup_.totem),
                           setup_.self.nodeid);
  auto list = [](const std::vector<std::string>& keys) {
    std::string out;
    for (const std::string& k : keys) out += fmt::format("{}{}", out.empty() ? "" : ", ", k);
    return out;
  };
  if (!plan.refused.empty())
    return {-ENOTSUP, fmt::format("nothing changed: {} differ(s) from the running configuration and need(s) a restart",
                                  list(plan.refused))};
  if (plan.changed.empty()) return {0, "no change"};
  if (plan.logging && apply_logging_) {
    if (auto applied = apply_logging_(file.logging); !applied)
      return {-EBADMSG, fmt::format("nothing changed: logging: {}", applied.error().message())};
  }
  setup_.config.logging = file.logging;
  setup_.config.ipc.allow = file.ipc.allow;
  // Votes as votequorum's runtime changes; one it refuses stays as it was (the next reload tries
  // again), and the answer says so.
  std::string refused;
  auto why = [](int rc) { return rc == -EAGAIN ? "the ring is not in sync yet" : "refused by votequorum's rule"; };
  const int votes_rc = plan.own_votes && quorum_ ? quorum_->set_votes(setup_.self.nodeid, *plan.own_votes) : 0;
  const bool votes_ok = votes_rc == 0;
  if (!votes_ok) refused += fmt::format("; this node's votes {}: {}", *plan.own_votes, why(votes_rc));
  const int expected_rc = plan.expected_votes && quorum_ ? quorum_->set_expected(*plan.expected_votes) : 0;
  const bool expected_ok = expected_rc == 0;
  if (!expected_ok) refused += fmt::format("; expected votes {}: {}", *plan.expected_votes, why(expected_rc));
  for (config::NodeEntry& entry : setup_.config.nodes)
    for (const config::NodeEntry& now : file.nodes)
      if (entry.nodeid == now.nodeid && (entry.nodeid != setup_.self.nodeid || votes_ok)) entry.quorum_votes = now.quorum_votes;
  if (setup_.config.quorum && file.quorum && expected_ok) {
    setup_.config.quorum->expected_votes = file.quorum->expected_votes;
    setup_.config.quorum->expected_votes_configured = file.quorum->expected_votes_configured;
  }
  keys_->assign(keystore::kConfigPrefixes, keystore::config_keys(setup_.config, setup_.totem));
  if (plan.access) apply_access();
  const std::string done = fmt::format("reloaded {}: {}{}", setup_.config.path, list(plan.changed), refused);
  qb_log(refused.empty() ? LOG_NOTICE : LOG_WARNING, "%s", done.c_str());
  return {refused.empty() ? 0 : -ERANGE, done};
}

// Answered once the file is loaded and applied, if the asker is still there.
int Daemon::reload_request(const LocalClient& client, ipc::BodyWriter& reply) {
  if (!privileged(client)) return -EPERM;
  qb_log(LOG_NOTICE, "reload asked by pid %d", static_cast<int>(client.pid));
  const auto logged = [](const ReloadOutcome& outcome) {
    if (outcome.error != 0) qb_log(LOG_WARNING, "reload: %s", outcome.message.c_str());
  };
  const auto refused = reload([this, logged, asker = client.generation](const ReloadOutcome& outcome) {
    logged(outcome);
    LocalClient* waiting = clients_->find_generation(asker);
    if (waiting == nullptr) return;
    ipc::BodyWriter body;
    body.string(outcome.message);
    clients_->answer(*waiting, ipc::RequestId::kReload, outcome.error, body.data());
  });
  if (!refused) return kAnswerLater;
  logged(*refused);
  reply.string(refused->message);
  return refused->error;
}

void Daemon::reopen_logging() {
  if (!apply_logging_) return;
  if (auto applied = apply_logging_(setup_.config.logging); !applied)
    qb_log(LOG_ERR, "logging not reopened: %s", applied.error().message().c_str());
}

}  // namespace rtotem::daemon
