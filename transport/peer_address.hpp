// A node of the cluster and where it receives on one network: what a backend's peer list holds.
#pragma once

#include "transport/udp/inet_address.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::transport {

struct PeerAddress {
  NodeId node = kNoNode;
  InetAddress address;  // UDP: where the node receives, port included; RDMA: its device's IPv4 address
};

}  // namespace rtotem::transport
