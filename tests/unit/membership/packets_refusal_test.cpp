// Totem packets as hostile input: every way bytes are refused, for each type. Run under
// AddressSanitizer, the truncation and random tests also show no decoder reads past its span.
#include "membership/packets.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "tests/unit/membership/packets_samples.hpp"

namespace rtotem::membership {
namespace {

using namespace packet_samples;
using enum DecodeError;

TEST(Packets, EveryTruncationIsTooShortAndReadsNothingPastTheCut) {
  for (PacketType type : kAllTypes) {
    const Bytes whole = sample_bytes(type, true);
    for (std::size_t n = 0; n < whole.size(); ++n) {
      // A copy of its own, sized to the cut, so AddressSanitizer sees any read past it.
      const Bytes cut(whole.begin(), whole.begin() + long(n));
      // A merge detection cut before its unheard list is one without it (its 20 bytes of old).
      const bool without_list = type == PacketType::kMergeDetect && n == merge_detect_size(MergeDetect{});
      EXPECT_EQ(decode_as(type, cut), without_list ? kNone : kTooShort) << "type " << int(type) << " cut at " << n;
    }
  }
}

TEST(Packets, ATrailingByteIsRefused) {
  for (PacketType type : kAllTypes) {
    if (type == PacketType::kMcast) continue;  // its payload is the rest of the packet
    Bytes bytes = sample_bytes(type, false);
    bytes.push_back(std::byte{0});
    EXPECT_EQ(decode_as(type, bytes), kTrailingBytes) << int(type);
  }
}

TEST(Packets, UnknownTypesAreRefusedByEveryDecoderAndByPeek) {
  for (std::uint8_t raw : {0, 7, 0x80, 0xff}) {
    Bytes bytes = sample_bytes(PacketType::kMergeDetect, false);
    bytes[0] = std::byte{raw};
    for (PacketType type : kAllTypes) EXPECT_EQ(decode_as(type, bytes), kBadType);
    PacketType peeked{};
    DecodeError error = kNone;
    EXPECT_FALSE(peek_type(bytes, peeked, error));
    EXPECT_EQ(error, kBadType);
  }
}

TEST(Packets, EachDecoderAcceptsOnlyItsOwnType) {
  for (PacketType sent : kAllTypes) {
    const Bytes bytes = sample_bytes(sent, false);
    for (PacketType as : kAllTypes) {
      EXPECT_EQ(decode_as(as, bytes), as == sent ? kNone : kWrongType);
    }
  }
}

TEST(Packets, NonZeroReservedBytesAreRefused) {
  for (PacketType type : kAllTypes) {
    for (std::size_t at : {2, 3}) {
      Bytes bytes = sample_bytes(type, false);
      bytes[at] = std::byte{0x10};
      EXPECT_EQ(decode_as(type, bytes), kReservedNotZero);
      PacketType peeked{};
      DecodeError error = kNone;
      EXPECT_FALSE(peek_type(bytes, peeked, error));
      EXPECT_EQ(error, kReservedNotZero);
    }
  }
}

TEST(Packets, UndefinedFlagBitsAreRefused) {
  for (PacketType type : kAllTypes) {
    // mcast: safe delivery, recovery; token: install_known; the others define none.
    const unsigned defined = type == PacketType::kMcast ? 0x03u : type == PacketType::kToken ? 0x01u : 0u;
    for (int bit = 0; bit < 8; ++bit) {
      Bytes bytes = sample_bytes(type, false);
      bytes[kFlagsAt] = std::byte(1u << bit);
      const DecodeError expected = (defined >> bit & 1) != 0 ? kNone : kBadFlags;
      EXPECT_EQ(decode_as(type, bytes), expected) << "type " << int(type) << " bit " << bit;
    }
  }
}

TEST(Packets, CountsAboveTheirBoundsAreRefused) {
  for (std::uint64_t count : {kRtrMax + 1, std::size_t{0xffff}}) {
    Bytes token = encoded(sample_token(0));
    put_be(token, kTokenRtrCountAt, count, 2);
    EXPECT_EQ(decode_as(PacketType::kToken, token), kCountTooLarge);
  }
  const std::size_t failed_at = kJoinProcAt + 2 + 4 * small_join().proc_set.count;
  for (std::size_t at : {kJoinProcAt, failed_at}) {
    Bytes join = encoded(small_join());
    put_be(join, at, kMembersMax + 1, 2);
    EXPECT_EQ(decode_as(PacketType::kJoin, join), kCountTooLarge);
  }
  Bytes commit = encoded(sample_commit(3));
  put_be(commit, kCommitCountAt, kMembersMax + 1, 2);
  EXPECT_EQ(decode_as(PacketType::kCommit, commit), kCountTooLarge);
}

TEST(Packets, UnsortedOrDuplicatedNodeListsAreRefused) {
  // proc_set {1, 5, 9}, failed_set {2, 7}: rewrite each list's second id.
  const std::size_t proc_second = kJoinProcAt + 2 + 4;
  const std::size_t failed_second = kJoinProcAt + 2 + 4 * 3 + 2 + 4;
  const std::pair<std::size_t, std::uint32_t> broken[] = {
      {proc_second, 1}, {proc_second, 9}, {proc_second, 10}, {failed_second, 2}, {failed_second, 1},
  };
  for (auto [at, id] : broken) {
    Bytes join = encoded(small_join());
    put_be(join, at, id, 4);
    EXPECT_EQ(decode_as(PacketType::kJoin, join), kNotSorted) << "at " << at << " id " << id;
  }
  // Members are nodes 1, 4, 7: the second becomes a duplicate of either neighbour, then too big.
  for (std::uint32_t id : {1u, 7u, 8u}) {
    Bytes commit = encoded(sample_commit(3));
    put_be(commit, kCommitMembersAt + kMemberSize, id, 4);
    EXPECT_EQ(decode_as(PacketType::kCommit, commit), kNotSorted) << id;
  }
}

TEST(Packets, ZeroNodeIdsAreRefused) {
  const std::size_t second_member = kCommitMembersAt + kMemberSize;
  const std::pair<PacketType, std::size_t> zeroed[] = {
      {PacketType::kMcast, kRingRepAt},
      {PacketType::kMcast, kMcastSenderAt},
      {PacketType::kToken, kRingRepAt},
      {PacketType::kJoin, kJoinSenderAt},
      {PacketType::kJoin, kJoinProcAt + 2},  // the first id of proc_set
      {PacketType::kCommit, kRingRepAt},
      {PacketType::kCommit, kCommitMembersAt},  // the first member's node
      {PacketType::kCommit, second_member + kMemberOldRepAt},
      {PacketType::kMergeDetect, kRingRepAt},
      {PacketType::kMergeDetect, kMergeSenderAt},
      {PacketType::kHoldCancel, kRingRepAt},
  };
  for (auto [type, at] : zeroed) {
    Bytes bytes = sample_bytes(type, false);
    put_be(bytes, at, 0, 4);
    EXPECT_EQ(decode_as(type, bytes), kBadNodeId) << "type " << int(type) << " at " << at;
  }
}

TEST(Packets, OutOfRangeValuesAreRefused) {
  Bytes token = encoded(sample_token(2));
  put_be(token, kTokenAruAt, sample_token(2).seq, 8);
  EXPECT_EQ(decode_as(PacketType::kToken, token), kNone);  // aru == seq: all received
  put_be(token, kTokenAruAt, sample_token(2).seq + 1, 8);
  EXPECT_EQ(decode_as(PacketType::kToken, token), kBadValue);
  // The install point: within the ring's seq when flagged, zero when not (one form per value).
  Bytes install = encoded(sample_token(0));
  put_be(install, kTokenInstallAt, sample_token(0).seq + 1, 8);
  EXPECT_EQ(decode_as(PacketType::kToken, install), kBadValue);
  Token unflagged = sample_token(0);
  unflagged.install_known = false;
  unflagged.install_seq = 0;
  Bytes stray = encoded(unflagged);
  put_be(stray, kTokenInstallAt, 1, 8);
  EXPECT_EQ(decode_as(PacketType::kToken, stray), kBadValue);

  // A merge vote: none at all (all zero), or a proposer, another node, and 1..kMembersMax votes.
  Token no_vote = sample_token(0);
  no_vote.merge_proposer = no_vote.merge_candidate = kNoNode;
  no_vote.merge_votes = 0;
  EXPECT_EQ(decode_as(PacketType::kToken, encoded(no_vote)), kNone);
  struct Vote {
    std::uint32_t proposer, candidate;
    std::uint16_t votes;
  };
  for (const Vote vote : {Vote{0, 11, 0}, Vote{0, 0, 1}, Vote{3, 0, 1}, Vote{3, 11, 0}, Vote{3, 3, 1},
                          Vote{3, 11, std::uint16_t(kMembersMax + 1)}}) {
    Bytes bytes = encoded(sample_token(0));
    put_be(bytes, kTokenMergeAt, vote.proposer, 4);
    put_be(bytes, kTokenMergeAt + 4, vote.candidate, 4);
    put_be(bytes, kTokenMergeAt + 8, vote.votes, 2);
    EXPECT_EQ(decode_as(PacketType::kToken, bytes), kBadValue)
        << vote.proposer << " " << vote.candidate << " " << vote.votes;
  }

  Bytes mcast = encoded(sample_mcast());
  put_be(mcast, kMcastSeqAt, 0, 8);
  EXPECT_EQ(decode_as(PacketType::kMcast, mcast), kBadValue);

  for (std::uint64_t memb_index : {3, 4, 0xffff}) {
    Bytes commit = encoded(sample_commit(3));
    put_be(commit, kCommitMembIndexAt, memb_index, 2);
    EXPECT_EQ(decode_as(PacketType::kCommit, commit), kBadValue) << memb_index;
  }
  Bytes empty_commit = encoded(sample_commit(1));
  empty_commit.resize(kCommitMembersAt);
  put_be(empty_commit, kCommitMembIndexAt, 0, 2);
  put_be(empty_commit, kCommitCountAt, 0, 2);
  EXPECT_EQ(decode_as(PacketType::kCommit, empty_commit), kBadValue);
}

TEST(Packets, RandomBytesNeverCrashAndWhatIsAcceptedIsCanonical) {
  SplitMix64 rng{0x5eed};
  Bytes canonical;
  for (int i = 0; i < 4000; ++i) {
    Bytes bytes(rng.next() % 2 == 0 ? rng.next() % 64 : rng.next() % 2300);
    for (std::byte& b : bytes) b = std::byte(rng.next());
    if (bytes.size() >= kPacketPrefixSize && rng.next() % 4 != 0) {  // mostly get past the prefix
      bytes[0] = std::byte(1 + rng.next() % kAllTypes.size());
      bytes[1] = std::byte(rng.next() % 4);
      bytes[2] = bytes[3] = std::byte{0};
    }
    for (PacketType type : kAllTypes) {
      if (decode_as(type, bytes, canonical) != kNone) continue;
      EXPECT_EQ(canonical, bytes) << "string " << i;
    }
  }
}

TEST(Packets, MutatedPacketsNeverCrashAndWhatIsAcceptedIsCanonical) {
  SplitMix64 rng{0xfeed};
  Bytes canonical;
  for (PacketType type : kAllTypes) {
    const Bytes valid = sample_bytes(type, false);
    int accepted = 0;
    for (int i = 0; i < 1000; ++i) {
      Bytes bytes = valid;
      for (auto k = 1 + rng.next() % 3; k > 0; --k) {
        bytes[rng.next() % bytes.size()] = std::byte(rng.next());
      }
      if (rng.next() % 8 == 0) bytes.resize(rng.next() % (bytes.size() + 8));
      for (PacketType as : kAllTypes) {
        if (decode_as(as, bytes, canonical) != kNone) continue;
        ++accepted;
        EXPECT_EQ(canonical, bytes) << "type " << int(type) << " mutation " << i;
      }
    }
    EXPECT_GT(accepted, 0) << "type " << int(type);  // the check above did run
  }
}

}  // namespace
}  // namespace rtotem::membership
