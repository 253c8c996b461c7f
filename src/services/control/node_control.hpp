// Node control (corosync's cfg) as local clients use it: a node's addresses, a shutdown its
// clients may veto, killing a node through the ring, and reloading the configuration (its file
// read by the host, its changes applied by the node stack).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "src/services/control/shutdown_vote.hpp"
#include "src/stack/client_table.hpp"
#include "src/stack/stack_host.hpp"

namespace rtotem::control {

using stack::IpcRequest;
using stack::LocalClient;

// What a reload did: 0 and what changed; or -EBADMSG (the file does not load), -ENOTSUP (a key
// that needs a restart changed: nothing applied), -ERANGE (votequorum refused new votes; the
// rest applied), -EBUSY (another reload is under way) or -EAGAIN (it could not start): nothing
// done; and why.
struct ReloadOutcome {
  int error = 0;
  std::string message;
};

// Starts a reload; `done` gets its outcome on a later turn. An outcome instead when it cannot
// start (then `done` is not called).
using Reload = std::function<std::optional<ReloadOutcome>(std::function<void(const ReloadOutcome&)> done)>;

class NodeControl {
 public:
  // `addresses`: each node's ring0 address, resolved once (a lookup here would block the ring).
  NodeControl(membership::NodeId self, stack::StackHost& host, stack::ClientTable& clients,
              const std::map<membership::NodeId, std::string>& addresses, Reload reload);

  int node_addresses(std::uint32_t node, ipc::BodyWriter& reply) const;  // kNodeAddresses
  int shutdown(LocalClient& client, const IpcRequest& request);          // kShutdown
  int shutdown_track(LocalClient& client, bool on);                      // kShutdownTrack
  int shutdown_reply(LocalClient& client, bool agree);                   // kShutdownReply
  int kill_node(LocalClient& client, const IpcRequest& request);         // kKillNode
  int reload(const LocalClient& client, ipc::BodyWriter& reply);         // kReload
  // A kill message the ring delivered (ring_service.hpp's kNodeControl); false if malformed.
  bool deliver(const membership::Delivered& message);
  // Disconnected: a shutdown does not wait for its answer.
  void client_gone(const LocalClient& client);

  // The pending shutdown's deadline, if one is asked.
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
  Reload reload_;
  std::unique_ptr<PendingShutdown> shutdown_;
  std::uint64_t shutdowns_ = 0;
};

}  // namespace rtotem::control
