// Node control (corosync's cfg) as local clients use it: a node's addresses, a shutdown its
// clients may veto, killing a node through the ring, and reloading every node's configuration
// (cluster_reload.hpp; each file read by its host, its changes applied by its node stack).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "src/services/control/cluster_reload.hpp"
#include "src/services/control/shutdown_vote.hpp"
#include "src/stack/client_table.hpp"
#include "src/stack/stack_host.hpp"

namespace rtotem::control {

using stack::IpcRequest;
using stack::LocalClient;

class NodeControl {
 public:
  // `addresses`: each node's ring0 address, resolved once (a lookup here would block the ring).
  NodeControl(membership::NodeId self, stack::StackHost& host, stack::ClientTable& clients,
              const std::map<membership::NodeId, std::string>& addresses, ReadOwnFile read);

  int node_addresses(std::uint32_t node, ipc::BodyWriter& reply) const;  // kNodeAddresses
  int shutdown(LocalClient& client, const IpcRequest& request);          // kShutdown
  int shutdown_track(LocalClient& client, bool on);                      // kShutdownTrack
  int shutdown_reply(LocalClient& client, bool agree);                   // kShutdownReply
  int kill_node(LocalClient& client, const IpcRequest& request);         // kKillNode
  int reload(const LocalClient& client);                                 // kReload
  // A kill or reload message the ring delivered (ring_service.hpp's kNodeControl); false if malformed.
  bool deliver(const membership::Delivered& message);
  // Every configuration change, as delivered.
  void configuration(const membership::ConfigChange& change) { reload_.configuration(change.members); }
  // A reload of every node is open: this node does not reload alone meanwhile.
  bool reload_under_way() const noexcept { return reload_.under_way(); }
  // Disconnected: a shutdown does not wait for its answer.
  void client_gone(const LocalClient& client);

  // The pending shutdown's or reload's deadline, if any.
  std::optional<membership::Time> deadline() const noexcept;
  void on_time(membership::Time now);

 private:
  struct PendingShutdown {
    ShutdownVote vote;
    std::uint64_t asker = 0;   // the asking client's generation: answered once decided
    std::uint64_t serial = 0;  // which shutdown: a decision posted for an earlier one is dropped
    membership::Time deadline = 0;
  };
  void decide_if_known();
  void decided(const ShutdownOutcome& outcome);

  membership::NodeId self_;
  stack::StackHost& host_;
  stack::ClientTable& clients_;
  const std::map<membership::NodeId, std::string>& addresses_;
  ClusterReload reload_;
  std::unique_ptr<PendingShutdown> shutdown_;
  std::uint64_t shutdowns_ = 0;
};

}  // namespace rtotem::control
