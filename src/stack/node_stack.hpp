// One node's services over its ring, composed once: process groups, the multicast staging and
// credits, quorum, the key store, node control, and the local clients that use them. Sans-I/O:
// rtotemd runs it on libqb's loop over a real transport (src/daemon/), the simulator over a
// simulated one (src/sim/), so the simulator runs what ships.
//
// What the ring delivers comes in through deliver() and configuration(): each message goes to the
// service its first byte names (ring_service.hpp). Local clients' requests come in through the
// ClientTable, which hands each to request(); answers and events go out through it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/daemon/config/daemon_config.hpp"
#include "src/services/control/node_control.hpp"
#include "src/services/control/reload_plan.hpp"
#include "src/services/groups/group_clients.hpp"
#include "src/services/groups/group_service.hpp"
#include "src/services/keystore/key_clients.hpp"
#include "src/services/quorum/quorum_clients.hpp"
#include "src/services/quorum/quorum_service.hpp"
#include "src/services/staging/mcast_staging.hpp"
#include "src/stack/client_table.hpp"
#include "src/stack/stack_host.hpp"

namespace rtotem::stack {

struct StackSetup {
  config::DaemonConfig config;
  membership::TotemConfig totem;  // resolved and checked against the backend
  config::NodeEntry self;
  std::shared_ptr<const transport::ClusterKey> key;  // what packets are sealed with; null: crypto off
};

// What a simulator's checkers watch besides what clients are told: each service's decisions at
// this node, as they are made.
class StackObserver {
 public:
  virtual void group_message(const groups::GroupMessage& message) = 0;
  virtual void group_change(const groups::GroupChange& change) = 0;
  virtual void quorum_changed(const quorum::QuorumState& state) = 0;

 protected:
  ~StackObserver() = default;
};

class NodeStack final : private RequestHandler, private groups::GroupEvents, private quorum::QuorumEvents {
 public:
  // Errors: the configuration lacks what a service needs (a max_message_size below what process
  // groups take).
  static Result<std::unique_ptr<NodeStack>> create(StackSetup setup, StackHost& host,
                                                   StackObserver* observer = nullptr);
  ~NodeStack();
  NodeStack(const NodeStack&) = delete;
  NodeStack& operator=(const NodeStack&) = delete;

  // What the ring delivers, in order.
  void deliver(const membership::Delivered& message);
  void configuration(const membership::ConfigChange& change);
  // This turn's deliveries to local clients go out now (before the turn's packets to the ring).
  void deliveries_done() { clients_->end_turn(); }
  // After each turn of the ring: what back-pressure refused is tried again, and clients' batches go.
  void after_turn();
  // The host's timer (StackHost::arm_timer) is due; and its retry of clients' full channels.
  void on_time(membership::Time now);
  void retry_clients() { clients_->retry(); }

  ClientTable& clients() noexcept { return *clients_; }
  // Whether a new client may connect: 0, or -EAGAIN before the first ring.
  int accept_client() const noexcept { return ring_formed_ ? 0 : -EAGAIN; }
  const StackSetup& setup() const noexcept { return setup_; }
  // Re-reads the configuration file (host.load_config) and applies what may change at run time
  // on this node alone (reload_plan.hpp): SIGHUP. rtotemctl reload reloads every node
  // (cluster_reload.hpp).
  std::optional<control::ReloadOutcome> reload(std::function<void(const control::ReloadOutcome&)> done);
  // The logging section in force again (SIGHUP after logrotate reopens the file).
  void reopen_logging();
  // What status reports as the transport (after a link failure moved the node to UDP).
  void set_transport(config::TransportKind kind) { setup_.config.link0().transport = kind; }

 private:
  NodeStack(StackSetup setup, StackHost& host, StackObserver* observer);

  // RequestHandler
  void client_connected(LocalClient& client) override;
  int request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) override;
  void client_gone(LocalClient& client) override;
  // GroupEvents, QuorumEvents
  void group_message(const groups::GroupMessage& message) override;
  void group_change(const groups::GroupChange& change) override;
  void quorum_changed(const quorum::QuorumState& state) override;

  int ring_track(LocalClient& client, bool on);
  // Before the ring is in sync its members' quorum reports are not all in: client multicasts wait
  // (the client hears -EAGAIN, staged ones go later), as corosync's clients wait for its sync
  // barrier.
  bool ring_in_sync() const noexcept { return !quorum_ || quorum_->state().synced; }
  // The earliest of the services' deadlines, to the host.
  void arm_timer();
  // A reload's file read (ReadOwnFile) and what it would change; `cluster_wide`: in a reload of
  // every node, where the totem timing may change too.
  bool read_own_file(std::function<void(control::PreparedReload)> done);
  control::PreparedReload prepare_reload(const Result<config::DaemonConfig>& file, bool cluster_wide);
  control::ReloadOutcome apply_reload(const config::DaemonConfig& file, const control::ReloadPlan& plan,
                                      const membership::TotemConfig& timing);
  // stack_json.cpp
  std::string status_json() const;
  std::string stats_json() const;
  static void log_state(std::string_view what, std::string_view json);

  StackSetup setup_;
  StackHost& host_;
  StackObserver* observer_;
  std::map<membership::NodeId, std::string> addresses_;  // each node's ring0_addr, resolved at start
  std::uint32_t links_token_ms_;                         // the token the links' ping timing derives from
  std::unique_ptr<ClientTable> clients_;
  std::unique_ptr<groups::GroupService> groups_;
  std::unique_ptr<staging::McastStaging> staging_;
  std::unique_ptr<groups::GroupClients> group_clients_;
  std::unique_ptr<quorum::QuorumService> quorum_;  // quorum { provider: corosync_votequorum } only
  std::unique_ptr<quorum::QuorumClients> quorum_clients_;
  std::unique_ptr<keystore::KeyClients> keys_;
  std::unique_ptr<control::NodeControl> control_;
  std::optional<membership::Time> armed_;    // the deadline the host was last given
  std::uint64_t ring_messages_unknown_ = 0;  // delivered with a service byte this build lacks
  std::uint64_t configurations_ = 0;
  bool ring_formed_ = false;
  // The last regular configuration as a ring-change event: a client's first event, so it knows
  // the ring it joined without waiting for the next change.
  std::vector<std::byte> current_ring_event_;
};

}  // namespace rtotem::stack
