// Encoding and validation of the transport wire header.
#include "transport/wire_header.hpp"

#include <cstring>

#include "base/byte_order.hpp"

namespace rtotem::transport {

void encode_header(const WireHeader& header, std::span<std::byte, kWireHeaderSize> out) noexcept {
  out[0] = std::byte(kWireMagic0);
  out[1] = std::byte(kWireMagic1);
  out[2] = std::byte(header.version);
  out[3] = std::byte(header.flags);
  put_be<std::uint32_t>(&out[4], header.cluster_id);
  put_be<std::uint32_t>(&out[8], header.sender);
  put_be<std::uint32_t>(&out[12], header.payload_len);
}

void store_payload_len(std::span<std::byte, kWireHeaderSize> header, std::uint32_t payload_len) noexcept {
  put_be<std::uint32_t>(&header[12], payload_len);
}

HeaderCheck decode_header(std::span<const std::byte> packet, std::uint32_t cluster_id, WireHeader& out) noexcept {
  if (packet.size() < kWireHeaderSize) return HeaderCheck::kShort;
  const std::byte* p = packet.data();
  if (p[0] != std::byte(kWireMagic0) || p[1] != std::byte(kWireMagic1)) return HeaderCheck::kBadMagic;
  out.version = std::uint8_t(p[2]);
  if (out.version != kWireVersion) return HeaderCheck::kBadVersion;
  out.flags = std::uint8_t(p[3]);
  out.cluster_id = get_be<std::uint32_t>(p + 4);
  if (out.cluster_id != cluster_id) return HeaderCheck::kForeignCluster;
  out.sender = get_be<std::uint32_t>(p + 8);
  if (out.sender == kNoNode) return HeaderCheck::kNoSender;
  out.payload_len = get_be<std::uint32_t>(p + 12);
  if (out.payload_len != packet.size() - kWireHeaderSize) return HeaderCheck::kBadLength;
  return HeaderCheck::kOk;
}

std::uint32_t cluster_id_from_name(std::string_view name) noexcept {
  std::uint32_t hash = 2166136261u;
  for (char c : name) {
    hash ^= std::uint8_t(c);
    hash *= 16777619u;
  }
  return hash;
}

}  // namespace rtotem::transport
