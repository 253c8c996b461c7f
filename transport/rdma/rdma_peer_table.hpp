// The address book of the other nodes: found by node id (to send a token) and by source IPv4
// address (to tell who sent a packet). A node is reachable once the backend holds an address
// handle for it and knows its QP number, learned from the first packet it sent.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "transport/rdma/rdma_config.hpp"
#include "transport/rdma/rdma_resources.hpp"

namespace rtotem::transport {

struct RdmaPeerEntry {
  NodeId node = kNoNode;
  std::uint32_t ipv4 = 0;         // network byte order
  std::uint32_t qpn = 0;          // 0: not heard from yet (QP numbers 0 and 1 are never UD data QPs)
  AddressHandle ah;               // to its GID; made when it is first heard from
  std::uint32_t ah_failures = 0;  // ibv_create_ah refusals (no route or neighbour to it)

  bool reachable() const noexcept { return qpn != 0 && ah != nullptr; }
};

class RdmaPeerTable {
 public:
  // Every peer but `self`. Peers are IPv4 (RdmaConfig::validate).
  RdmaPeerTable(std::span<const RdmaPeer> peers, NodeId self);

  // The nodelist changed: the table becomes `peers`'. A node at the same address keeps what was
  // learned of it (QP number, address handle). A reachable node that left, or moved, departs:
  // by_node() no longer finds it, but sends queued to it before still do (sendable()) until
  // forget_departed().
  void replace(std::span<const RdmaPeer> peers, NodeId self);
  // Where a unicast queued while by_node(node) was reachable goes: that entry, or the departed
  // one it was then. Null only for a node never reachable.
  const RdmaPeerEntry* sendable(NodeId node) const noexcept;
  // No queued or posted send names a departed entry any more: their handles go.
  void forget_departed() noexcept { departed_.clear(); }
  bool has_departed() const noexcept { return !departed_.empty(); }

  RdmaPeerEntry* by_node(NodeId node) noexcept;
  const RdmaPeerEntry* by_node(NodeId node) const noexcept;
  RdmaPeerEntry* by_ipv4(std::uint32_t ipv4) noexcept;
  std::size_t size() const noexcept { return by_node_.size(); }

 private:
  std::vector<RdmaPeerEntry> by_node_;     // sorted by node id
  std::vector<std::uint32_t> ipv4_order_;  // indexes into by_node_, sorted by address
  std::vector<RdmaPeerEntry> departed_;    // reachable entries replace() dropped, newest last
};

// The IPv4 address of `address`, network byte order.
std::uint32_t ipv4_of(const InetAddress& address) noexcept;

}  // namespace rtotem::transport
