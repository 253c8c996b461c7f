// Validation of an RDMA configuration: every refusal names what is wrong.
#include "transport/rdma/rdma_config.hpp"

#include <algorithm>

namespace rtotem::transport {

Result<void> RdmaConfig::validate() const {
  if (auto ok = params.validate(); !ok) return ok;
  // RoCE v2 GIDs and the GRH this backend reads carry IPv4 (the lab found IPv6 groups unusable).
  if (bind.length() == 0 || bind.is_v6() || bind.is_unspecified() || bind.is_multicast())
    return Error::make("rdma: bind address {} must be this node's own IPv4 address", bind.host_string());
  if (group.length() == 0 || group.is_v6() || !group.is_multicast())
    return Error::make("rdma: group {} is not an IPv4 multicast address", group.host_string());
  if (peers.size() > kRdmaPeersMax) return Error::make("rdma: {} peers, at most {}", peers.size(), kRdmaPeersMax);
  std::vector<NodeId> ids;
  std::vector<InetAddress> addresses;
  for (const RdmaPeer& peer : peers) {
    if (peer.node == kNoNode) return Error::make("rdma: peer {} has node id 0", peer.address.host_string());
    if (peer.address.is_v6())
      return Error::make("rdma: node {} at {} is not an IPv4 address", peer.node, peer.address.host_string());
    if (peer.node == params.local_node && !peer.address.same_host(bind))
      return Error::make("rdma: own node {} listed at {}, but bound to {}", peer.node, peer.address.host_string(),
                         bind.host_string());
    ids.push_back(peer.node);
    addresses.push_back(peer.address.with_port(0));
  }
  std::sort(ids.begin(), ids.end());
  if (auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end())
    return Error::make("rdma: node id {} listed twice", *dup);
  // A packet's sender is told by its source address: two nodes on one address cannot be told apart.
  for (std::size_t i = 0; i < addresses.size(); ++i)
    for (std::size_t j = i + 1; j < addresses.size(); ++j)
      if (addresses[i].same_host(addresses[j]))
        return Error::make("rdma: nodes {} and {} share address {}; each node needs its own RDMA device address",
                           peers[i].node, peers[j].node, addresses[i].host_string());
  return {};
}

}  // namespace rtotem::transport
