// Totem packets: round trips of every type at full size, exact sizes, the byte order, the MTU
// bound of a commit token, and the encoder's assertions.
#include "membership/packets.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "membership/node_set.hpp"
#include "base/wire_io.hpp"
#include "tests/unit/membership/packets_samples.hpp"

namespace rtotem::membership {
namespace {

using namespace packet_samples;
using enum DecodeError;

TEST(Packets, McastHeaderRoundTripsWithEachFlagAndItsPayload) {
  const Bytes payload_sent{std::byte{0xde}, std::byte{0xad}, std::byte{0xbe}};
  for (Delivery delivery : {Delivery::kAgreed, Delivery::kSafe}) {
    for (bool recovery : {false, true}) {
      McastHeader sent = sample_mcast();
      sent.delivery = delivery;
      sent.recovery = recovery;
      Bytes bytes = encoded(sent);
      bytes.insert(bytes.end(), payload_sent.begin(), payload_sent.end());
      McastHeader got;
      std::span<const std::byte> payload;
      ASSERT_EQ(decode_mcast(bytes, got, payload), kNone);
      EXPECT_EQ(got.ring_id, sent.ring_id);
      EXPECT_EQ(got.seq, sent.seq);
      EXPECT_EQ(got.sender, sent.sender);
      EXPECT_EQ(got.delivery, delivery);
      EXPECT_EQ(got.recovery, recovery);
      EXPECT_TRUE(std::ranges::equal(payload, payload_sent));
    }
  }
}

TEST(Packets, TokenRoundTripsWithAFullOrEmptyRetransmitList) {
  for (std::size_t rtr_count : {kRtrMax, std::size_t{0}}) {
    Token sent = sample_token(rtr_count);
    sent.install_known = rtr_count != 0;
    sent.install_seq = sent.install_known ? 4000 : 0;
    Token got;
    got.rtr_count = 5;  // stale state from an earlier token must not survive
    ASSERT_EQ(decode_token(encoded(sent), got), kNone);
    EXPECT_EQ(got.ring_id, sent.ring_id);
    EXPECT_EQ(got.token_seq, sent.token_seq);
    EXPECT_EQ(got.seq, sent.seq);
    EXPECT_EQ(got.aru, sent.aru);
    EXPECT_EQ(got.aru_addr, sent.aru_addr);
    EXPECT_EQ(got.backlog, sent.backlog);
    EXPECT_EQ(got.fcc, sent.fcc);
    EXPECT_EQ(got.install_known, sent.install_known);
    EXPECT_EQ(got.install_seq, sent.install_seq);
    EXPECT_EQ(got.merge_proposer, sent.merge_proposer);
    EXPECT_EQ(got.merge_candidate, sent.merge_candidate);
    EXPECT_EQ(got.merge_votes, sent.merge_votes);
    ASSERT_EQ(got.rtr_count, sent.rtr_count);
    EXPECT_TRUE(std::equal(got.rtr.begin(), got.rtr.begin() + got.rtr_count, sent.rtr.begin()));
  }
}

TEST(Packets, JoinRoundTripsWithFullAndEmptyNodeLists) {
  Join empty_failed = small_join();
  empty_failed.failed_set = {};
  for (const Join& sent : {full_join(), small_join(), empty_failed}) {
    Join got;
    ASSERT_EQ(decode_join(encoded(sent), got), kNone);
    EXPECT_EQ(got.sender, sent.sender);
    EXPECT_EQ(got.ring_seq, sent.ring_seq);
    EXPECT_TRUE(same_ids(got.proc_set, sent.proc_set));
    EXPECT_TRUE(same_ids(got.failed_set, sent.failed_set));
  }
}

TEST(Packets, CommitRoundTripsWithOneOrTheMostMembers) {
  for (std::size_t count : {kMembersMax, std::size_t{1}}) {
    const Commit sent = sample_commit(count);
    Commit got;
    ASSERT_EQ(decode_commit(encoded(sent), got), kNone);
    EXPECT_EQ(got.ring_id, sent.ring_id);
    EXPECT_EQ(got.token_seq, sent.token_seq);
    EXPECT_EQ(got.memb_index, sent.memb_index);
    ASSERT_EQ(got.count, sent.count);
    for (std::size_t i = 0; i < count; ++i) {
      EXPECT_EQ(got.members[i].node, sent.members[i].node);
      EXPECT_EQ(got.members[i].old_ring, sent.members[i].old_ring);
      EXPECT_EQ(got.members[i].aru, sent.members[i].aru);
      EXPECT_EQ(got.members[i].high_delivered, sent.members[i].high_delivered);
    }
  }
}

TEST(Packets, HoldCancelRoundTripsInSixteenBytes) {
  const Bytes bytes = encoded(sample_hold_cancel());
  EXPECT_EQ(bytes.size(), 16u);
  HoldCancel got;
  ASSERT_EQ(decode_hold_cancel(bytes, got), kNone);
  EXPECT_EQ(got.ring_id, sample_hold_cancel().ring_id);
}

TEST(Packets, MergeDetectRoundTrips) {
  MergeDetect got;
  ASSERT_EQ(decode_merge_detect(encoded(sample_merge_detect()), got), kNone);
  EXPECT_EQ(got.ring_id, sample_merge_detect().ring_id);
  EXPECT_EQ(got.sender, sample_merge_detect().sender);
  EXPECT_TRUE(equal(got.unheard, sample_merge_detect().unheard));
}

TEST(Packets, AMergeDetectionNamingItsOwnSenderUnheardOrAnEmptyListIsRefused) {
  Bytes bytes = encoded(sample_merge_detect());
  put_be(bytes, bytes.size() - 4, 4, 4);  // unheard {2, 9} becomes {2, 4}: 4 is the sender
  MergeDetect got;
  EXPECT_EQ(decode_merge_detect(bytes, got), kBadValue);
  Bytes empty = encoded(MergeDetect{.ring_id = {4, 77}, .sender = 4});
  ASSERT_EQ(decode_merge_detect(empty, got), kNone);  // no list: nobody unheard
  EXPECT_EQ(got.unheard.count, 0u);
  empty.push_back(std::byte{0});
  empty.push_back(std::byte{0});  // a list of none: not the packet's one form
  EXPECT_EQ(decode_merge_detect(empty, got), kBadValue);
}

TEST(Packets, SizesAreExactAndEncodersWriteNothingPastThem) {
  EXPECT_EQ(mcast_header_size(), 28u);
  EXPECT_EQ(merge_detect_size(MergeDetect{}), 20u);  // as before the unheard list
  EXPECT_EQ(merge_detect_size(full_merge_detect()), 22u + 4 * kMembersMax);
  EXPECT_EQ(token_size(sample_token(0)), 72u);
  EXPECT_EQ(token_size(sample_token(kRtrMax)), 72u + 8 * kRtrMax);
  EXPECT_EQ(join_size(full_join()), 20u + 4 * 2 * kMembersMax);
  EXPECT_EQ(commit_size(sample_commit(1)), 28u + 32);
  EXPECT_EQ(commit_size(sample_commit(kMembersMax)), 28u + 32 * kMembersMax);

  Bytes roomy(4096, std::byte{0xee});
  const std::size_t written = encode_commit(sample_commit(3), roomy);
  EXPECT_EQ(written, commit_size(sample_commit(3)));
  EXPECT_TRUE(
      std::all_of(roomy.begin() + long(written), roomy.end(), [](std::byte b) { return b == std::byte{0xee}; }));
}

TEST(Packets, PrefixAndFieldsAreBigEndianOnTheWire) {
  Token token = sample_token(0);
  token.ring_id.rep = 0x01020304;
  const Bytes bytes = encoded(token);
  EXPECT_EQ(bytes[0], std::byte{2});         // PacketType::kToken
  EXPECT_EQ(bytes[kFlagsAt], std::byte{1});  // install_known
  EXPECT_EQ(bytes[2], std::byte{0});
  EXPECT_EQ(bytes[3], std::byte{0});
  const Bytes rep{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  EXPECT_TRUE(std::equal(rep.begin(), rep.end(), bytes.begin() + kRingRepAt));

  const Bytes mcast = encoded(sample_mcast());  // seq 0x1122334455667788
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(mcast[kMcastSeqAt + i], std::byte(0x11 * (i + 1)));
}

TEST(Packets, McastPayloadIsWhateverFollowsTheHeaderEvenNothing) {
  Bytes bytes = encoded(sample_mcast());
  bytes.resize(bytes.size() + 5, std::byte{0x42});
  for (std::size_t n = mcast_header_size(); n <= bytes.size(); ++n) {
    McastHeader got;
    std::span<const std::byte> payload;
    ASSERT_EQ(decode_mcast(std::span(bytes).first(n), got, payload), kNone);
    EXPECT_EQ(payload.size(), n - mcast_header_size());
  }
}

TEST(Packets, PeekTypeNamesEachTypeOrSaysWhyNot) {
  for (PacketType type : kAllTypes) {
    PacketType peeked{};
    DecodeError error = kBadValue;
    EXPECT_TRUE(peek_type(sample_bytes(type, false), peeked, error));
    EXPECT_EQ(peeked, type);
    EXPECT_EQ(error, kNone);
  }
  const Bytes three(3);
  PacketType peeked{};
  DecodeError error = kNone;
  EXPECT_FALSE(peek_type(three, peeked, error));
  EXPECT_EQ(error, kTooShort);
}

TEST(Packets, DescribeGivesEachErrorItsOwnPhrase) {
  std::set<std::string> phrases;
  for (int e = int(kNone); e <= int(kBadValue); ++e) {
    const std::string phrase = describe(DecodeError(e));
    EXPECT_FALSE(phrase.empty());
    EXPECT_TRUE(phrases.insert(phrase).second) << phrase;
  }
}

TEST(Packets, MembersMaxForMtuIsTheLargestCommitThatFits) {
  Commit commit = sample_commit(1);
  const std::size_t at_1400 = members_max_for_mtu(1400);
  commit.count = std::uint16_t(at_1400);
  EXPECT_LE(commit_size(commit), 1400u);
  commit.count = std::uint16_t(at_1400 + 1);
  EXPECT_GT(commit_size(commit), 1400u);
  EXPECT_EQ(at_1400, 42u);

  for (std::size_t mtu = 0; mtu <= 3000; ++mtu) {
    const std::size_t n = members_max_for_mtu(mtu);
    ASSERT_LE(n, kMembersMax);
    commit.count = std::uint16_t(n);
    if (n > 0) {
      EXPECT_LE(commit_size(commit), mtu) << mtu;
    }
    commit.count = std::uint16_t(n + 1);
    if (n < kMembersMax) {
      EXPECT_GT(commit_size(commit), mtu) << mtu;
    }
  }
}

TEST(WireReader, AShortReadIsStickyAndReadsNothing) {
  const std::array<std::byte, 3> bytes{std::byte{1}, std::byte{2}, std::byte{3}};
  WireReader r(bytes);
  EXPECT_EQ(r.get_u16(), 0x0102u);
  EXPECT_EQ(r.get_u16(), 0u);
  EXPECT_TRUE(r.short_read());
  EXPECT_EQ(r.get_u8(), 0u);  // the byte left is not handed out after a failure
  EXPECT_EQ(r.remaining(), 1u);
  EXPECT_FALSE(r.at_end());
}

TEST(PacketsDeathTest, EncodingAnUnsortedNodeListStops) {
  Join join = small_join();
  std::swap(join.proc_set.ids[0], join.proc_set.ids[1]);
  Bytes out(join_size(join));
  EXPECT_DEATH((void)encode_join(join, out), "assertion failed");
}

TEST(PacketsDeathTest, EncodingACommitWithMembIndexPastCountStops) {
  Commit commit = sample_commit(3);
  commit.memb_index = 3;
  Bytes out(commit_size(commit));
  EXPECT_DEATH((void)encode_commit(commit, out), "assertion failed");
}

TEST(PacketsDeathTest, EncodingIntoTooSmallAnOutputStops) {
  const Token token = sample_token(3);
  Bytes out(token_size(token) - 1);
  EXPECT_DEATH((void)encode_token(token, out), "assertion failed");
  Bytes tiny(3);
  WireWriter w(tiny);
  EXPECT_DEATH(w.put_u32(1), "assertion failed");
}

}  // namespace
}  // namespace rtotem::membership
