// Test support for the totem packets: valid samples of each type, field offsets to corrupt, and
// one decode-and-re-encode entry point, shared by the round-trip and refusal tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <vector>

#include "membership/packets.hpp"

namespace rtotem::membership {

// GoogleTest finds these by argument-dependent lookup: failures print names, not raw bytes.
inline void PrintTo(DecodeError error, std::ostream* os) { *os << describe(error); }
inline void PrintTo(const RingId& ring_id, std::ostream* os) { *os << "ring " << ring_id.rep << "/" << ring_id.seq; }

}  // namespace rtotem::membership

namespace rtotem::membership::packet_samples {

using Bytes = std::vector<std::byte>;
constexpr std::array kAllTypes{PacketType::kMcast,  PacketType::kToken,       PacketType::kJoin,
                               PacketType::kCommit, PacketType::kMergeDetect, PacketType::kHoldCancel};

// Where the fields the tests corrupt sit, from the layout in packets.hpp.
constexpr std::size_t kFlagsAt = 1;
constexpr std::size_t kRingRepAt = 4;  // mcast, token, commit, merge detect, hold cancel
constexpr std::size_t kMcastSeqAt = 16, kMcastSenderAt = 24;
constexpr std::size_t kTokenAruAt = 32, kTokenInstallAt = 40, kTokenMergeAt = 60, kTokenRtrCountAt = 70;
constexpr std::size_t kJoinSenderAt = 4, kJoinProcAt = 16;
constexpr std::size_t kCommitMembIndexAt = 24, kCommitCountAt = 26, kCommitMembersAt = 28;
constexpr std::size_t kMemberSize = 32, kMemberOldRepAt = 4;
constexpr std::size_t kMergeSenderAt = 16;

inline void put_be(Bytes& bytes, std::size_t at, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) bytes.at(at + i) = std::byte(v >> (8 * (n - 1 - i)));
}

// splitmix64: one fixed stream per seed, so a failure replays exactly.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
};

inline NodeList node_list(std::initializer_list<NodeId> ids) {
  NodeList list;
  for (NodeId id : ids) list.ids[list.count++] = id;
  return list;
}

inline NodeList full_node_list(NodeId first) {
  NodeList list;
  for (std::size_t i = 0; i < kMembersMax; ++i) list.ids[list.count++] = first + 2 * NodeId(i);
  return list;
}

inline McastHeader sample_mcast() {
  return {.ring_id = {3, 0x0102030405060708u},
          .seq = 0x1122334455667788u,
          .sender = 7,
          .delivery = Delivery::kSafe,
          .recovery = true};
}

inline Token sample_token(std::size_t rtr_count) {
  Token token{.ring_id = {2, 99},
              .token_seq = 1234567890123u,
              .seq = 5000,
              .aru = 4990,
              .aru_addr = 9,
              .backlog = 77,
              .fcc = 12,
              .install_known = true,
              .install_seq = 4000,
              .merge_proposer = 3,
              .merge_candidate = 11,
              .merge_votes = 2};
  token.rtr_count = std::uint16_t(rtr_count);
  for (std::size_t i = 0; i < rtr_count; ++i) token.rtr[i] = 4991 + i;
  return token;
}

inline Join small_join() {
  return {
      .sender = 5, .ring_seq = 0xfedcba9876543210u, .proc_set = node_list({1, 5, 9}), .failed_set = node_list({2, 7})};
}

inline Join full_join() {
  return {.sender = 5, .ring_seq = 8, .proc_set = full_node_list(1), .failed_set = full_node_list(2)};
}

inline Commit sample_commit(std::size_t count) {
  Commit commit{.ring_id = {1, 100}, .token_seq = 42};
  commit.count = std::uint16_t(count);
  commit.memb_index = std::uint16_t(count - 1);
  for (std::size_t i = 0; i < count; ++i) {
    const auto n = std::uint32_t(i);
    commit.members[i] = {
        .node = 1 + 3 * n, .old_ring = {1 + n % 4, 90 + n}, .aru = 1000 + n, .high_delivered = 900 + n};
  }
  return commit;
}

inline MergeDetect sample_merge_detect() { return {.ring_id = {4, 77}, .sender = 4, .unheard = node_list({2, 9})}; }
inline MergeDetect full_merge_detect() { return {.ring_id = {4, 77}, .sender = 4, .unheard = full_node_list(5)}; }

inline HoldCancel sample_hold_cancel() { return {.ring_id = {4, 77}}; }

// Each encoder, into a buffer of exactly its announced size.
template <class Packet, class Encode>
Bytes encoded_into(std::size_t size, Encode encode, const Packet& packet) {
  Bytes out(size);
  EXPECT_EQ(encode(packet, out), size);
  return out;
}
inline Bytes encoded(const McastHeader& h) { return encoded_into(mcast_header_size(), encode_mcast_header, h); }
inline Bytes encoded(const Token& t) { return encoded_into(token_size(t), encode_token, t); }
inline Bytes encoded(const Join& j) { return encoded_into(join_size(j), encode_join, j); }
inline Bytes encoded(const Commit& c) { return encoded_into(commit_size(c), encode_commit, c); }
inline Bytes encoded(const MergeDetect& m) { return encoded_into(merge_detect_size(m), encode_merge_detect, m); }
inline Bytes encoded(const HoldCancel& c) { return encoded_into(hold_cancel_size(), encode_hold_cancel, c); }

// A valid packet of each type; `full` fills every list to its bound.
inline Bytes sample_bytes(PacketType type, bool full) {
  switch (type) {
    case PacketType::kMcast: return encoded(sample_mcast());
    case PacketType::kToken: return encoded(sample_token(full ? kRtrMax : 3));
    case PacketType::kJoin: return encoded(full ? full_join() : small_join());
    case PacketType::kCommit: return encoded(sample_commit(full ? kMembersMax : 3));
    case PacketType::kMergeDetect: return encoded(full ? full_merge_detect() : sample_merge_detect());
    case PacketType::kHoldCancel: return encoded(sample_hold_cancel());
  }
  return {};
}

// Decodes `bytes` as `type`; when accepted, `canonical` is the re-encoding of what was decoded.
inline DecodeError decode_as(PacketType type, std::span<const std::byte> bytes, Bytes& canonical) {
  DecodeError error = DecodeError::kNone;
  switch (type) {
    case PacketType::kMcast: {
      McastHeader h;
      std::span<const std::byte> payload;
      if ((error = decode_mcast(bytes, h, payload)) != DecodeError::kNone) return error;
      EXPECT_EQ(payload.data(), bytes.data() + mcast_header_size());  // borrowed, not copied
      canonical = encoded(h);
      canonical.insert(canonical.end(), payload.begin(), payload.end());
      return error;
    }
    case PacketType::kToken: {
      Token t;
      if ((error = decode_token(bytes, t)) == DecodeError::kNone) canonical = encoded(t);
      return error;
    }
    case PacketType::kJoin: {
      Join j;
      if ((error = decode_join(bytes, j)) == DecodeError::kNone) canonical = encoded(j);
      return error;
    }
    case PacketType::kCommit: {
      Commit c;
      if ((error = decode_commit(bytes, c)) == DecodeError::kNone) canonical = encoded(c);
      return error;
    }
    case PacketType::kMergeDetect: {
      MergeDetect m;
      error = decode_merge_detect(bytes, m);
      if (error == DecodeError::kNone) canonical = encoded(m);
      return error;
    }
    case PacketType::kHoldCancel: {
      HoldCancel c;
      if ((error = decode_hold_cancel(bytes, c)) == DecodeError::kNone) canonical = encoded(c);
      return error;
    }
  }
  return DecodeError::kBadType;
}

inline DecodeError decode_as(PacketType type, std::span<const std::byte> bytes) {
  Bytes canonical;
  return decode_as(type, bytes, canonical);
}

inline bool same_ids(const NodeList& a, const NodeList& b) { return std::ranges::equal(a.view(), b.view()); }

}  // namespace rtotem::membership::packet_samples
