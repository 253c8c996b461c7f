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

  RdmaPeerEntry* by_node(NodeId node) noexcept;
  const RdmaPeerEntry* by_node(NodeId node) const noexcept;
  RdmaPeerEntry* by_ipv4(std::uint32_t ipv4) noexcept;
  std::size_t size() const noexcept { return by_node_.size(); }

 private:
  std::vector<RdmaPeerEntry> by_node_;     // sorted by node id
  std::vector<std::uint32_t> ipv4_order_;  // indexes into by_node_, sorted by address
};

// The IPv4 address of `address`, network byte order.
std::uint32_t ipv4_of(const InetAddress& address) noexcept;

}  // namespace rtotem::transport
