// Validation of a UDP configuration: every refusal names what is wrong.
#include "transport/udp/udp_config.hpp"

#include <algorithm>

namespace rtotem::transport {

Result<void> UdpConfig::validate() const {
  if (auto ok = params.validate(); !ok) return ok;
  if (bind.length() == 0 || bind.is_unspecified())
    return Error::make("udp: bind address must be this node's own address, not a wildcard");
  if (bind.port() == 0) return Error::make("udp: bind port must be set");
  if (bind.is_multicast()) return Error::make("udp: bind address {} is a multicast address", bind.to_string());
  if (mode == UdpMode::kMulticast) {
    if (!group.is_multicast()) return Error::make("udp: group {} is not a multicast address", group.to_string());
    if (group.family() != bind.family())
      return Error::make("udp: group {} and bind {} differ in family", group.to_string(), bind.to_string());
    if (ttl < 1 || ttl > 255) return Error::make("udp: ttl {} out of range [1, 255]", ttl);
  }
  if (peers.size() > kUdpPeersMax) return Error::make("udp: {} peers, at most {}", peers.size(), kUdpPeersMax);
  std::vector<NodeId> ids;
  for (const UdpPeer& peer : peers) {
    if (peer.node == kNoNode) return Error::make("udp: peer {} has node id 0", peer.address.to_string());
    if (peer.address.family() != bind.family())
      return Error::make("udp: peer {} (node {}) is not in the family of bind address {}", peer.address.to_string(),
                         peer.node, bind.to_string());
    if (peer.address.port() == 0) return Error::make("udp: peer node {} has no port", peer.node);
    if (peer.node == params.local_node && !(peer.address == bind))
      return Error::make("udp: own node {} listed at {}, but bound to {}", peer.node, peer.address.to_string(),
                         bind.to_string());
    ids.push_back(peer.node);
  }
  std::sort(ids.begin(), ids.end());
  if (auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end())
    return Error::make("udp: node id {} listed twice", *dup);
  if (send_buffer_bytes <= 0 || recv_buffer_bytes <= 0) return Error::make("udp: socket buffer sizes must be positive");
  return {};
}

}  // namespace rtotem::transport
