// Who sent a UD packet, from what the device gives with it: the sender's QP number (wc.src_qp) and
// the GRH the device wrote in front of the packet. Pure functions, tested without a device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "transport/rdma/rdma_limits.hpp"

namespace rtotem::transport {

// RoCE v2 over IPv4: the GRH's 40 bytes are 20 unused bytes, then the packet's IPv4 header, whose
// source address is at GRH offset 32 (network byte order, as in_addr). Nothing when the bytes are
// not an IPv4 header (RoCE v1 or IPv6 put a real GRH there; this backend runs on IPv4 only).
inline std::optional<std::uint32_t> grh_source_ipv4(std::span<const std::byte, kGrhBytes> grh) noexcept {
  constexpr std::size_t kIpHeader = 20;
  constexpr std::size_t kSourceAddress = kIpHeader + 12;
  if ((std::to_integer<unsigned>(grh[kIpHeader]) >> 4) != 4) return std::nullopt;
  std::uint32_t address = 0;
  for (std::size_t i = 0; i < 4; ++i)
    reinterpret_cast<unsigned char*>(&address)[i] = std::to_integer<unsigned char>(grh[kSourceAddress + i]);
  return address;
}

struct UdSource {
  std::uint32_t qpn = 0;
  std::uint32_t ipv4 = 0;  // network byte order
};

// The NIC hands a sender its own multicasts back (rxe cannot block it:
// IBV_QP_CREATE_BLOCK_SELF_MCAST_LB is EOPNOTSUPP). QP numbers are small and repeat across
// nodes, so the QP number alone is not enough: the source address must be ours too.
constexpr bool is_own_echo(const UdSource& source, const UdSource& self) noexcept {
  return source.qpn == self.qpn && source.ipv4 == self.ipv4;
}

}  // namespace rtotem::transport
