// rtotemd's core: the ring (RingHost), process groups (GroupService), quorum (QuorumService, when
// configured), the key store (KeyStore), node control and local clients (IpcServer) wired together. Requests from clients become group packets on the ring; what the
// ring delivers becomes group messages and changes, sent to the local clients in those groups.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/daemon/config/daemon_config.hpp"
#include "src/daemon/config_loader.hpp"
#include "src/services/control/shutdown_vote.hpp"
#include "src/daemon/event_loop.hpp"
#include "src/services/groups/group_service.hpp"
#include "src/daemon/ipc_server.hpp"
#include "src/services/keystore/key_store.hpp"
#include "src/services/quorum/quorum_service.hpp"
#include "src/daemon/ring_host.hpp"

namespace rtotem::daemon {

using stack::IpcRequest;
using stack::kAnswerLater;
using stack::LocalClient;

// A ring submission's outcome as a client hears it: 0, -EMSGSIZE, -ESHUTDOWN, or -EAGAIN for
// back-pressure.
int errno_of(Status status);

// rtotemd's exit status when another node killed this one (rtotemctl kill): the unit's
// RestartPreventExitStatus, so systemd does not bring back a node the cluster put out.
inline constexpr int kExitKilled = 3;

// What a reload did: 0 and what changed; or -EBADMSG (the file does not load), -ENOTSUP (a key
// that needs a restart changed: nothing applied), -ERANGE (votequorum refused new votes; the
// rest applied), -EBUSY (another reload is under way) or -EAGAIN (no thread to read the file
// on): nothing done; and why.
struct ReloadOutcome {
  int error = 0;
  std::string message;
};

struct DaemonSetup {
  config::DaemonConfig config;
  membership::TotemConfig totem;  // resolved and checked against the backend
  config::NodeEntry self;
  std::string ipc_name;
  std::string state_dir;
};

class Daemon final : private RingListener,
                     private stack::RequestHandler,
                     private groups::GroupEvents,
                     private quorum::QuorumEvents {
 public:
  static Result<std::unique_ptr<Daemon>> start(EventLoop& loop, DaemonSetup setup,
                                               std::unique_ptr<transport::Backend> backend);
  ~Daemon();
  // Leaves the ring (the others form theirs without this node at once) and closes the transport.
  void stop();
  // Called once, when the first ring is installed (for sd_notify READY).
  void on_first_ring(std::function<void()> ready) { ready_ = std::move(ready); }
  // Called once if the transport's link breaks for good (an RDMA device or port failed): this
  // node can no longer reach the ring over it.
  // A failure found before this is set (in the first turn) is handed on at the loop's next turn.
  void on_link_failure(std::function<void(std::string_view)> failed);
  // Called when the daemon must exit: an agreed shutdown (0) or this node killed (kExitKilled).
  void on_exit_request(std::function<void(int code)> exit);
  // How a reload applies the logging section (rtotemd's logging_apply knows stderr from syslog).
  void on_logging(std::function<Result<void>(const config::LoggingConfig&)> apply);
  // Re-reads the configuration file and applies what may change at run time (reload_plan.hpp),
  // for rtotemctl reload and SIGHUP. The file is read off the loop (ConfigLoader), the ring goes
  // on meanwhile: `done` gets what changed, or why nothing did, on a later turn. An outcome
  // instead when the reload cannot start (-EBUSY: another is under way); `done` is not called.
  std::optional<ReloadOutcome> reload(std::function<void(const ReloadOutcome&)> done);
  // Reopens the log file with the settings in force (SIGHUP after logrotate).
  void reopen_logging();
  // Goes on over `backend` instead (after a link failure): the ring re-forms over it, local
  // clients stay connected and see it as any membership change.
  Result<void> switch_transport(std::unique_ptr<transport::Backend> backend, config::TransportKind kind) {
    if (auto switched = ring_->switch_backend(std::move(backend)); !switched) return switched;
    setup_.config.link0().transport = kind;  // what status reports
    return {};
  }

 private:
  Daemon(EventLoop& loop, DaemonSetup setup);

  // RingListener
  // Each service's messages to it, by the byte that names the service (ring_service.hpp).
  void deliver(const membership::Delivered& message) override;
  void configuration(const membership::ConfigChange& change) override;
  void deliveries_done() override { clients_->end_turn(); }
  void after_turn() override;
  void link_failed(std::string_view reason) override;
  // Whether a new client may connect: not before the first ring.
  int accept_client() const noexcept;
  // RequestHandler
  void client_connected(LocalClient& client) override;
  int request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) override;
  void client_gone(LocalClient& client) override;
  // GroupEvents
  void group_message(const groups::GroupMessage& message) override;
  void group_change(const groups::GroupChange& change) override;
  // QuorumEvents; daemon_quorum.cpp
  void quorum_changed(const quorum::QuorumState& state) override;
  Result<void> start_quorum();
  void arm_quorum_timer();
  bool ring_in_sync() const noexcept;
  std::string quorum_json() const;
  int quorum_set(const LocalClient& client, const IpcRequest& request);
  int quorum_track(LocalClient& client, std::uint8_t mode);
  int ring_track(LocalClient& client, bool on);
  int quorum_node(std::uint32_t node, ipc::BodyWriter& reply) const;
  // The kQuorumChange event of `state`, into event_head_.
  void put_quorum_event(const quorum::QuorumState& state, std::uint32_t more_flags = 0);
  void put_quorum_state(ipc::BodyWriter& body, const quorum::QuorumState& state, std::uint32_t more_flags = 0) const;

  // daemon_keystore.cpp
  void start_keystore();
  int key_request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply);
  void key_changed(const keystore::KeyChange& change);
  void member_keys(const membership::ConfigChange& change);
  void quorum_keys(const quorum::QuorumState& state);
  void link_keys(std::string_view asked);  // runtime.links.*, with several links
  void counter_keys(std::string_view asked);  // when `asked` (a key or prefix) reaches runtime.totem.*
  void apply_access();
  // daemon_control.cpp
  int node_addresses(std::uint32_t node, ipc::BodyWriter& reply) const;
  int shutdown(LocalClient& client, const IpcRequest& request);
  int shutdown_reply(LocalClient& client, bool agree);
  void shutdown_client_gone(const LocalClient& client);  // disconnected, or stopped tracking
  void decide_shutdown_if_known();
  void shutdown_decided(const control::ShutdownOutcome& outcome);
  int kill_node(LocalClient& client, const IpcRequest& request);
  void node_control_deliver(const membership::Delivered& message);
  int reload_request(const LocalClient& client, ipc::BodyWriter& reply);
  ReloadOutcome apply_reload(const config::DaemonConfig& file);  // the file as loaded, on the loop
  static bool privileged(const LocalClient& client) noexcept;
  void exit_later(int code);

  int join(LocalClient& client, std::string_view group, ipc::BodyWriter& reply);
  int leave(LocalClient& client, std::string_view group);
  // daemon_mcast.cpp: multicasts, answered (kMcast) or not (kMcastAsync), and those the ring
  // refused for now: staged per client, or orphaned by a client that has gone.
  int multicast(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply);
  void multicast_async(LocalClient& client, const IpcRequest& request);
  int sync(LocalClient& client, ipc::BodyWriter& reply);
  int mcast_check(const LocalClient& client, const IpcRequest& request) const;
  // One multicast offered to the ring: false if refused for now (back-pressure); else taken, or
  // failed for good (told to `client` as kMcastFailed, if it is still there).
  bool offer(LocalClient* client, std::uint32_t pid, const IpcRequest& request);
  void async_failed(LocalClient& client, const IpcRequest& request, int error);
  // The client's staged multicasts to the ring, in order, as far as it takes them: true if none remain.
  bool submit_staged(LocalClient& client);
  void submit_orphaned();
  void orphan_staged(LocalClient& client);
  void put_credit(const LocalClient& client, ipc::BodyWriter& reply) const;
  void put_mcast_reply(LocalClient& client, ipc::BodyWriter& reply) const;
  std::string status_json() const;
  std::string members_json(std::string_view group) const;
  void group_members(std::string_view group, ipc::BodyWriter& reply) const;
  std::string stats_json() const;
  // The local client of process `pid` in `group`, if any: found by pid, not by walking every
  // client, since a delivery asks once per local member (a thousand clients in one group).
  LocalClient* client_in(std::string_view group, std::uint32_t pid);

  EventLoop& loop_;
  DaemonSetup setup_;
  std::unique_ptr<groups::GroupService> groups_;
  std::unique_ptr<quorum::QuorumService> quorum_;  // quorum { provider: corosync_votequorum } only
  std::unique_ptr<LoopTimer> quorum_timer_;        // its last_man_standing window
  std::uint64_t ring_messages_unknown_ = 0;        // delivered with a service byte this build lacks
  std::unique_ptr<keystore::KeyStore> keys_;
  std::uint64_t key_writes_refused_ = 0;  // by key_access: logged at the 1st, 2nd, 4th...
  std::unique_ptr<ConfigLoader> loader_;  // a reload's file
  struct PendingShutdown {
    PendingShutdown(EventLoop& loop, control::ShutdownVote v, std::uint64_t by, std::uint64_t n,
                    std::function<void()> expired)
        : vote(std::move(v)), asker(by), serial(n), timer(loop, std::move(expired)) {}
    control::ShutdownVote vote;
    std::uint64_t asker = 0;   // the asking client's generation: answered once decided
    std::uint64_t serial = 0;  // which shutdown: a decision posted for an earlier one is dropped
    LoopTimer timer;
  };
  std::unique_ptr<PendingShutdown> shutdown_;
  std::uint64_t shutdowns_ = 0;
  std::map<membership::NodeId, std::string> addresses_;  // each node's ring0_addr, resolved at start
  std::function<void(int)> exit_;
  std::function<Result<void>(const config::LoggingConfig&)> apply_logging_;
  std::unique_ptr<RingHost> ring_;
  std::unique_ptr<stack::ClientTable> clients_;
  std::unique_ptr<LoopTimer> clients_retry_;  // a client's full event channel is tried again
  std::unique_ptr<IpcServer> ipc_;
  // Leaves of dead clients the ring refused for now (back-pressure): sent on a later turn, once
  // the orphaned multicasts (sent before them) are all on the ring.
  std::deque<std::pair<std::string, std::uint32_t>> pending_leaves_;
  // Staged multicasts of clients that have gone, in order: records of [u32 pid][request], up to
  // kOrphanedMax bytes (a window each for 256 departed clients).
  static constexpr std::size_t kOrphanedMax = 256 * ipc::kMcastWindow;
  stack::EventBacklog orphaned_;
  std::uint64_t orphans_dropped_ = 0;
  bool ring_formed_ = false;
  // The last regular configuration as a ring-change event: a client's first event, so it knows
  // the ring it joined without waiting for the next change.
  std::vector<std::byte> current_ring_event_;
  ipc::BodyWriter event_head_;  // a delivery's header, reused: a delivery allocates nothing
  std::vector<LocalClient*> local_members_;  // a delivery's local members, reused likewise
  std::function<void()> ready_;
  std::function<void(std::string_view)> link_failed_;
  std::string early_link_failure_;  // reported before link_failed_ was set
  std::uint64_t configurations_ = 0;
};

}  // namespace rtotem::daemon
