// The peer address book: two sorted views, looked up by binary search on every packet.
#include "transport/rdma/rdma_peer_table.hpp"

#include <netinet/in.h>

#include <algorithm>

namespace rtotem::transport {

std::uint32_t ipv4_of(const InetAddress& address) noexcept {
  RTOTEM_ASSERT(!address.is_v6());
  return reinterpret_cast<const sockaddr_in*>(address.sockaddr_ptr())->sin_addr.s_addr;
}

RdmaPeerTable::RdmaPeerTable(std::span<const RdmaPeer> peers, NodeId self) {
  for (const RdmaPeer& peer : peers) {
    if (peer.node == self) continue;
    RdmaPeerEntry entry;
    entry.node = peer.node;
    entry.ipv4 = ipv4_of(peer.address);
    by_node_.push_back(std::move(entry));
  }
  std::sort(by_node_.begin(), by_node_.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  for (std::uint32_t i = 0; i < by_node_.size(); ++i) ipv4_order_.push_back(i);
  std::sort(ipv4_order_.begin(), ipv4_order_.end(),
            [&](std::uint32_t a, std::uint32_t b) { return by_node_[a].ipv4 < by_node_[b].ipv4; });
}

void RdmaPeerTable::replace(std::span<const RdmaPeer> peers, NodeId self) {
  RdmaPeerTable next(peers, self);
  for (RdmaPeerEntry& entry : next.by_node_) {
    RdmaPeerEntry* old = by_node(entry.node);
    if (old == nullptr || old->ipv4 != entry.ipv4) continue;
    entry.qpn = old->qpn;
    entry.ah = std::move(old->ah);
    entry.ah_failures = old->ah_failures;
  }
  next.departed_ = std::move(departed_);
  for (RdmaPeerEntry& entry : by_node_)
    if (entry.reachable()) next.departed_.push_back(std::move(entry));  // the kept ones moved their AH out
  *this = std::move(next);
}

const RdmaPeerEntry* RdmaPeerTable::sendable(NodeId node) const noexcept {
  const RdmaPeerEntry* entry = by_node(node);
  if (entry != nullptr && entry->reachable()) return entry;
  for (auto it = departed_.rbegin(); it != departed_.rend(); ++it)
    if (it->node == node) return &*it;
  return entry;
}

RdmaPeerEntry* RdmaPeerTable::by_node(NodeId node) noexcept {
  auto it = std::lower_bound(by_node_.begin(), by_node_.end(), node,
                             [](const RdmaPeerEntry& entry, NodeId id) { return entry.node < id; });
  return it != by_node_.end() && it->node == node ? &*it : nullptr;
}

const RdmaPeerEntry* RdmaPeerTable::by_node(NodeId node) const noexcept {
  return const_cast<RdmaPeerTable*>(this)->by_node(node);
}

RdmaPeerEntry* RdmaPeerTable::by_ipv4(std::uint32_t ipv4) noexcept {
  auto it =
      std::lower_bound(ipv4_order_.begin(), ipv4_order_.end(), ipv4,
                       [&](std::uint32_t index, std::uint32_t address) { return by_node_[index].ipv4 < address; });
  return it != ipv4_order_.end() && by_node_[*it].ipv4 == ipv4 ? &by_node_[*it] : nullptr;
}

}  // namespace rtotem::transport
