// rtotem-ping's command line: what a run needs, parsed and checked before any socket opens.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "transport/rdma/rdma_config.hpp"
#include "transport/udp/udp_config.hpp"

namespace rtotem::tools {

inline constexpr std::uint32_t kPingCountMax = 10'000'000;
inline constexpr std::uint64_t kRttSamplesMax = std::uint64_t{1} << 25;  // 128 MiB of samples
inline constexpr std::uint32_t kTimeoutSecondsMax = 24 * 3600;
static_assert(kPingCountMax <= kRttSamplesMax);

struct PingOptions {
  transport::NodeId node = transport::kNoNode;
  std::vector<transport::UdpPeer> peers;  // every node, this one included, as given
  transport::UdpMode mode = transport::UdpMode::kUnicast;
  bool rdma = false;             // --mode rdma: the RDMA UD backend, multicast to `group`
  transport::InetAddress group;  // multicast and rdma only
  std::string interface;         // kMulticast only; empty: the one holding our address
  std::uint32_t count = 10'000;
  std::uint32_t size = 256;  // filler bytes after the ping header
  std::string cluster = "rtotem-ping";
  std::uint32_t timeout_s = 20;
  std::uint32_t mtu = 1400;
  bool help = false;  // --help: print the usage and exit 0

  // The UDP backend configuration for this node (the options are valid).
  transport::UdpConfig udp_config() const;
  // The RDMA backend configuration for this node (--mode rdma; the options are valid).
  transport::RdmaConfig rdma_config() const;
  std::string_view mode_name() const noexcept;  // unicast, multicast or rdma
  // This node's own entry of `peers`.
  const transport::UdpPeer& self() const;
};

// Parses argv[1..]; the error names the argument at fault. Resolves host names (start-up only).
Result<PingOptions> parse_ping_options(std::span<char* const> args);

std::string_view ping_usage() noexcept;

}  // namespace rtotem::tools
