// Quorum packets: every type goes round, and what a peer could send wrong is refused by name.
#include <gtest/gtest.h>

#include <vector>

#include "src/services/quorum/quorum_wire.hpp"

namespace rtotem::quorum {
namespace {

using Bytes = std::vector<std::byte>;

Bytes encoded(const QuorumPacket& packet) {
  Bytes bytes(encoded_size(packet));
  EXPECT_EQ(encode(packet, bytes), bytes.size());
  return bytes;
}

TEST(QuorumWire, EveryPacketTypeDecodesToWhatWasEncoded) {
  const NodeInfo info{.ring_id = RingId{2, 40},
                      .votes = 2,
                      .expected_votes = 7,
                      .quorate = true,
                      .waiting_for_all = false,
                      .last_quorate = QuorateRing{RingId{3, 0x1'0000'0002}, {3, 4, 9}},
                      .device = DeviceFlags{.registered = true, .alive = true, .cast_vote = true}};
  const QuorumDecoded a = decode_quorum_packet(encoded(info));
  ASSERT_EQ(a.error, QuorumDecodeError::kNone);
  const auto& got = std::get<NodeInfo>(a.packet);
  EXPECT_EQ(got.ring_id, (RingId{2, 40}));
  EXPECT_EQ(got.votes, 2U);
  EXPECT_EQ(got.expected_votes, 7U);
  EXPECT_TRUE(got.quorate);
  EXPECT_FALSE(got.waiting_for_all);
  EXPECT_EQ(got.last_quorate, info.last_quorate);
  EXPECT_EQ(got.device, info.device);

  const QuorumDecoded b =
      decode_quorum_packet(encoded(SetVotes{.ring_id = RingId{4, 9}, .node = 5, .votes = 3, .expected_votes = 8}));
  ASSERT_EQ(b.error, QuorumDecodeError::kNone);
  EXPECT_EQ(std::get<SetVotes>(b.packet).ring_id, (RingId{4, 9}));
  EXPECT_EQ(std::get<SetVotes>(b.packet).node, 5U);
  EXPECT_EQ(std::get<SetVotes>(b.packet).votes, 3U);
  EXPECT_EQ(std::get<SetVotes>(b.packet).expected_votes, 8U);
  const QuorumDecoded c = decode_quorum_packet(encoded(SetExpected{.ring_id = RingId{4, 9}, .expected_votes = 4}));
  EXPECT_EQ(std::get<SetExpected>(c.packet).ring_id, (RingId{4, 9}));
  EXPECT_EQ(std::get<SetExpected>(c.packet).expected_votes, 4U);
  const QuorumDecoded d = decode_quorum_packet(encoded(LmsExpired{RingId{2, 77}}));
  EXPECT_EQ(std::get<LmsExpired>(d.packet).ring_id, (RingId{2, 77}));
  const QuorumDecoded sync = decode_quorum_packet(encoded(SyncExpired{RingId{3, 78}}));
  EXPECT_EQ(std::get<SyncExpired>(sync.packet).ring_id, (RingId{3, 78}));
  EXPECT_EQ(encoded(info)[0], std::byte{static_cast<std::uint8_t>(RingService::kQuorum)});
}

TEST(QuorumWire, WhatAPeerCouldSendWrongIsRefusedByName) {
  const Bytes info = encoded(NodeInfo{.expected_votes = 3, .last_quorate = QuorateRing{RingId{1, 5}, {1, 2}}});
  EXPECT_EQ(decode_quorum_packet({}).error, QuorumDecodeError::kTooShort);
  for (std::size_t cut = 1; cut < info.size(); ++cut)
    EXPECT_EQ(decode_quorum_packet(std::span(info).first(cut)).error, QuorumDecodeError::kTooShort) << cut;
  Bytes longer = info;
  longer.push_back(std::byte{0});
  EXPECT_EQ(decode_quorum_packet(longer).error, QuorumDecodeError::kTrailingBytes);

  auto patched = [&](std::size_t at, std::uint8_t value) {
    Bytes bytes = info;
    bytes[at] = std::byte{value};
    return decode_quorum_packet(bytes).error;
  };
  EXPECT_EQ(patched(0, 1), QuorumDecodeError::kBadService);
  EXPECT_EQ(patched(1, 9), QuorumDecodeError::kBadType);
  EXPECT_EQ(patched(22, 64), QuorumDecodeError::kBadFlags) << "a flag no build knows";
  EXPECT_EQ(patched(22, 8), QuorumDecodeError::kBadFlags) << "a device alive, not registered";
  EXPECT_EQ(patched(22, 4 | 16), QuorumDecodeError::kBadFlags) << "a vote from a device not alive";
  EXPECT_EQ(patched(22, 4 | 8 | 16 | 32), QuorumDecodeError::kNone);
  EXPECT_EQ(patched(21, 0), QuorumDecodeError::kBadValue) << "expected votes 0";
  // Votes end at byte 17, expected votes at 21, flags are byte 22, the member count byte 35;
  // members 1 and 2 end at bytes 39 and 43.
  EXPECT_EQ(patched(31 + 12, 1), QuorumDecodeError::kBadMembers) << "members 1, 1: repeated";
  EXPECT_EQ(patched(27 + 12, 0), QuorumDecodeError::kBadMembers) << "node id 0";
  EXPECT_EQ(patched(27 + 12, 3), QuorumDecodeError::kBadMembers) << "members 3, 2: unsorted";
  EXPECT_EQ(patched(23 + 12, 65), QuorumDecodeError::kBadMembers) << "more than a ring holds";
  EXPECT_EQ(patched(23 + 12, 3), QuorumDecodeError::kTooShort);

  // A change's node id (bytes 14..17) and expected votes (22..25, or 14..17): never 0.
  const Bytes set_votes = encoded(SetVotes{.ring_id = RingId{1, 5}, .node = 2, .votes = 1, .expected_votes = 3});
  const Bytes set_expected = encoded(SetExpected{.ring_id = RingId{1, 5}, .expected_votes = 3});
  auto zeroed = [](Bytes bytes, std::size_t at) {
    bytes[at] = std::byte{0};
    return decode_quorum_packet(bytes).error;
  };
  EXPECT_EQ(zeroed(set_votes, 17), QuorumDecodeError::kBadValue) << "node 0";
  EXPECT_EQ(zeroed(set_votes, 25), QuorumDecodeError::kBadValue) << "expected votes 0";
  EXPECT_EQ(zeroed(set_expected, 17), QuorumDecodeError::kBadValue) << "expected votes 0";
  EXPECT_EQ(decode_quorum_packet(std::span(set_votes).first(set_votes.size() - 1)).error, QuorumDecodeError::kTooShort);
  EXPECT_STREQ(describe(QuorumDecodeError::kBadMembers), "bad member list in a quorum packet");
}

}  // namespace
}  // namespace rtotem::quorum
