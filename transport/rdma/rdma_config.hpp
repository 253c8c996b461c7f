// What an RDMA UD backend needs to open: this node's address (it picks the device and port), the
// ring's multicast group, and every node of the cluster with its address.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "transport/backend.hpp"
#include "transport/udp/inet_address.hpp"

namespace rtotem::transport {

using RdmaPeer = PeerAddress;  // the IPv4 address of the node's RDMA device (RoCE netdev or IPoIB)

inline constexpr std::size_t kRdmaPeersMax = 384;  // corosync's PROCESSOR_COUNT_MAX

struct RdmaConfig {
  // params.mtu is an upper bound: the backend lowers it to what the port carries.
  BackendParams params;
  InetAddress bind;             // this node's address: rdma_cm binds it, which picks device and port
  InetAddress group;            // the ring's IPv4 multicast group (port ignored)
  std::vector<RdmaPeer> peers;  // every node, this one included; one node per address
  // Sizes the pools once the port's MTU is known (params.mtu lowered to it), before the buffer
  // arena is mapped: the host's largest message needs more send buffers in packets of a smaller
  // MTU. Empty: the pools as params has them.
  std::function<void(BackendParams&)> size_pools;
  // Rare events worth a log line (device and connection-manager events, error completions); the
  // data path never formats a string otherwise. Empty: not logged (still counted).
  std::function<void(std::string_view)> log;

  Result<void> validate() const;
};

}  // namespace rtotem::transport
