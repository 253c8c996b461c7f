// The header every backend puts in front of a packet: who sent it, for which cluster, in which
// format. Validated before a single byte of the payload is looked at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace rtotem::transport {

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = 0;  // node ids start at 1, as in corosync.conf

inline constexpr std::uint8_t kWireMagic0 = 'r';
inline constexpr std::uint8_t kWireMagic1 = 't';
inline constexpr std::uint8_t kWireVersion = 1;
inline constexpr std::size_t kWireHeaderSize = 16;
// flags: the payload is sealed with the cluster key (transport/wire_crypto.hpp); the packet is a
// link's ping or pong (transport/links/link_set.hpp), for the link layer and never the protocol.
// The other bits are 0.
inline constexpr std::uint8_t kFlagSealed = 0x01;
inline constexpr std::uint8_t kFlagLinkControl = 0x02;
inline constexpr std::size_t kWireFlagsOffset = 3;

// Layout, network byte order: magic[2] version flags | cluster_id u32 | sender u32 | payload_len u32
struct WireHeader {
  std::uint8_t version = kWireVersion;
  std::uint8_t flags = 0;
  std::uint32_t cluster_id = 0;
  NodeId sender = kNoNode;
  std::uint32_t payload_len = 0;
};

enum class HeaderCheck : std::uint8_t {
  kOk,
  kShort,           // fewer bytes than a header
  kBadMagic,        // not one of ours at all
  kBadVersion,      // ours, another format version
  kForeignCluster,  // ours, another cluster on the same group/port
  kBadLength,       // payload_len disagrees with the datagram's length
  kNoSender,        // sender node id 0
};

void encode_header(const WireHeader& header, std::span<std::byte, kWireHeaderSize> out) noexcept;
void store_payload_len(std::span<std::byte, kWireHeaderSize> header, std::uint32_t payload_len) noexcept;

// Checks `packet` (exactly the bytes received) against the expected cluster. On kOk, `out` holds
// the decoded header and payload_len == packet.size() - kWireHeaderSize.
HeaderCheck decode_header(std::span<const std::byte> packet, std::uint32_t cluster_id, WireHeader& out) noexcept;

// The cluster id carried on the wire: FNV-1a of the cluster name, so two clusters sharing a
// multicast group or port ignore each other.
std::uint32_t cluster_id_from_name(std::string_view name) noexcept;

}  // namespace rtotem::transport
