// Votequorum as local clients use it: tracking (the changes each client's mode asks for), one
// node's view, the runtime changes (root's only), the log lines an operator reads, and what
// `rtotemctl quorum` shows (JSON; rtotemctl makes corosync-quorumtool's text from it).
#pragma once

#include <cstdint>
#include <string>

#include "src/daemon/config/daemon_config.hpp"
#include "src/services/quorum/quorum_service.hpp"
#include "src/stack/client_table.hpp"

namespace rtotem::quorum {

using stack::IpcRequest;
using stack::LocalClient;

class QuorumClients {
 public:
  // `config`: the node names `rtotemctl quorum` shows, as the running configuration has them.
  QuorumClients(NodeId self, QuorumService& quorum, stack::ClientTable& clients, const config::DaemonConfig& config);

  int track(LocalClient& client, std::uint8_t mode);                                                   // kQuorumTrack
  int set(const LocalClient& client, const IpcRequest& request);                                       // kQuorumSet
  int node(std::uint32_t node, ipc::BodyWriter& reply) const;                                          // kQuorumNode
  int device(const LocalClient& client, const IpcRequest& request, Time now, ipc::BodyWriter& reply);  // kQuorumDevice
  std::string json() const;                                                                            // kQuorum
  // This node's device did not poll in time: its vote is gone (the log says so).
  void device_expired() const;
  // The service decided: to each client whose mode asks for it, and to the log.
  void changed(const QuorumState& state);

 private:
  // The kQuorumChange event of `state`, into event_.
  void put_event(const QuorumState& state, std::uint32_t more_flags = 0);
  void put_state(ipc::BodyWriter& body, const QuorumState& state, std::uint32_t more_flags = 0) const;

  NodeId self_;
  QuorumService& quorum_;
  stack::ClientTable& clients_;
  const config::DaemonConfig& config_;
  ipc::BodyWriter event_;
};

}  // namespace rtotem::quorum
