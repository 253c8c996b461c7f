// Encoding and validation of the transport wire header.
#include "transport/wire_header.hpp"

#include <cstring>

namespace rtotem::transport {
namespace {

void put_u32(std::byte* p, std::uint32_t v) noexcept {
  p[0] = std::byte(v >> 24);
  p[1] = std::byte(v >> 16);
  p[2] = std::byte(v >> 8);
  p[3] = std::byte(v);
}

std::uint32_t get_u32(const std::byte* p) noexcept {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 |
         std::uint32_t(p[3]);
}

}  // namespace

void encode_header(const WireHeader& header, std::span<std::byte, kWireHeaderSize> out) noexcept {
  out[0] = std::byte(kWireMagic0);
  out[1] = std::byte(kWireMagic1);
  out[2] = std::byte(header.version);
  out[3] = std::byte(header.flags);
  put_u32(&out[4], header.cluster_id);
  put_u32(&out[8], header.sender);
  put_u32(&out[12], header.payload_len);
}

void store_payload_len(std::span<std::byte, kWireHeaderSize> header,
                       std::uint32_t payload_len) noexcept {
  put_u32(&header[12], payload_len);
}

HeaderCheck decode_header(std::span<const std::byte> packet, std::uint32_t cluster_id,
                          WireHeader& out) noexcept {
  if (packet.size() < kWireHeaderSize) return HeaderCheck::kShort;
  const std::byte* p = packet.data();
  if (p[0] != std::byte(kWireMagic0) || p[1] != std::byte(kWireMagic1)) return HeaderCheck::kBadMagic;
  out.version = std::uint8_t(p[2]);
  if (out.version != kWireVersion) return HeaderCheck::kBadVersion;
  out.flags = std::uint8_t(p[3]);
  out.cluster_id = get_u32(p + 4);
  if (out.cluster_id != cluster_id) return HeaderCheck::kForeignCluster;
  out.sender = get_u32(p + 8);
  if (out.sender == kNoNode) return HeaderCheck::kNoSender;
  out.payload_len = get_u32(p + 12);
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
