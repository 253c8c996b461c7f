// Wire header: round trip, and every way a datagram is refused before its payload is read.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "transport/wire_header.hpp"

namespace rtotem::transport {
namespace {

constexpr std::uint32_t kCluster = 0xc0ffee;

std::vector<std::byte> packet(WireHeader header, std::size_t payload) {
  header.payload_len = static_cast<std::uint32_t>(payload);
  std::vector<std::byte> bytes(kWireHeaderSize + payload, std::byte{0x5a});
  encode_header(header, std::span<std::byte, kWireHeaderSize>(bytes.data(), kWireHeaderSize));
  return bytes;
}

WireHeader valid() {
  WireHeader header;
  header.cluster_id = kCluster;
  header.sender = 3;
  return header;
}

TEST(WireHeader, RoundTrips) {
  auto bytes = packet(valid(), 10);
  WireHeader out;
  ASSERT_EQ(decode_header(bytes, kCluster, out), HeaderCheck::kOk);
  EXPECT_EQ(out.sender, 3u);
  EXPECT_EQ(out.cluster_id, kCluster);
  EXPECT_EQ(out.payload_len, 10u);
  EXPECT_EQ(out.version, kWireVersion);
}

TEST(WireHeader, IsBigEndianOnTheWire) {
  auto bytes = packet(valid(), 0);
  EXPECT_EQ(bytes[11], std::byte{3});  // sender's low byte last
  EXPECT_EQ(bytes[8], std::byte{0});
}

TEST(WireHeader, RefusesEachMalformedShape) {
  WireHeader out;
  std::array<std::byte, 5> tiny{};
  EXPECT_EQ(decode_header(tiny, kCluster, out), HeaderCheck::kShort);

  auto magic = packet(valid(), 4);
  magic[0] = std::byte{'x'};
  EXPECT_EQ(decode_header(magic, kCluster, out), HeaderCheck::kBadMagic);

  auto version = packet(valid(), 4);
  version[2] = std::byte{kWireVersion + 1};
  EXPECT_EQ(decode_header(version, kCluster, out), HeaderCheck::kBadVersion);

  EXPECT_EQ(decode_header(packet(valid(), 4), kCluster + 1, out), HeaderCheck::kForeignCluster);

  auto longer = packet(valid(), 4);
  longer.push_back(std::byte{0});
  EXPECT_EQ(decode_header(longer, kCluster, out), HeaderCheck::kBadLength);
  auto shorter = packet(valid(), 4);
  shorter.pop_back();
  EXPECT_EQ(decode_header(shorter, kCluster, out), HeaderCheck::kBadLength);

  WireHeader anonymous = valid();
  anonymous.sender = kNoNode;
  EXPECT_EQ(decode_header(packet(anonymous, 4), kCluster, out), HeaderCheck::kNoSender);
}

TEST(WireHeader, ClusterIdIsFnv1aOfTheName) {
  EXPECT_EQ(cluster_id_from_name(""), 2166136261u);
  EXPECT_EQ(cluster_id_from_name("a"), 0xe40c292cu);
  EXPECT_NE(cluster_id_from_name("prod"), cluster_id_from_name("test"));
}

}  // namespace
}  // namespace rtotem::transport
