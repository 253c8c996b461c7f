// What a UDP backend needs to open: mode, addresses, the peer list and socket sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/backend.hpp"
#include "transport/udp/inet_address.hpp"

namespace rtotem::transport {

enum class UdpMode : std::uint8_t {
  kMulticast,  // one datagram to an IP multicast group reaches every node
  kUnicast,    // a multicast is one datagram per peer: networks without multicast, or one host
};

using UdpPeer = PeerAddress;  // where the node receives, port included

inline constexpr std::size_t kUdpPeersMax = 384;  // corosync's PROCESSOR_COUNT_MAX
static_assert(kUdpPeersMax <= kSealSendersMax);   // a replay window for every peer

struct UdpConfig {
  BackendParams params;
  UdpMode mode = UdpMode::kUnicast;
  InetAddress bind;            // this node's own address and port; the source of all it sends
  InetAddress group;           // kMulticast: group address and port
  std::string interface;       // kMulticast: interface name; empty: the one holding `bind`
  int ttl = 1;                 // kMulticast: hops a multicast may cross
  std::vector<UdpPeer> peers;  // every node of the cluster; this node's own entry is optional
  int send_buffer_bytes = 4 << 20;
  int recv_buffer_bytes = 4 << 20;

  Result<void> validate() const;
};

}  // namespace rtotem::transport
