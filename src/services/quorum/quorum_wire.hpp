// The quorum packets the service carries as ring messages: their encoding and their validation.
//
// Wire form, integers big-endian (base/wire_io.hpp), every packet opening with
//   u8 service (RingService::kQuorum) | u8 type
// then, by type:
//   NODEINFO      u32 rep | u64 seq (the ring it reports for)
//                 | u32 votes | u32 expected_votes | u8 flags (1 quorate, 2 waiting for all; its
//                 quorum device's: 4 registered, 8 alive, 16 vote cast for this ring, 32 master wins)
//                 | u32 rep | u64 seq | u8 count | count x u32 node, strictly increasing
//                 (the last quorate ring: count 0 and id 0 before the first)
//   SET_VOTES     u32 rep | u64 seq (the ring it was checked in) | u32 node | u32 votes
//                 | u32 expected_votes (what the ring's expected votes become, at least)
//   SET_EXPECTED  u32 rep | u64 seq (the ring it was checked in) | u32 expected_votes
//   LMS_EXPIRED   u32 rep | u64 seq (the ring whose last_man_standing window ran out)
//   SYNC_EXPIRED  u32 rep | u64 seq (the ring some member of which has not reported in time)
// The sender and the ring that ordered a packet come with the ring's Delivered. Every packet but
// SYNC_EXPIRED's stands for one ring, and names it: the Node keeps what it queued across a ring
// change, so a packet made for one ring may be ordered by the next, where it no longer holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "src/services/quorum/quorum_decision.hpp"
#include "src/stack/ring_service.hpp"

namespace rtotem::quorum {

enum class QuorumPacketType : std::uint8_t {
  kNodeInfo = 1,
  kSetVotes = 2,
  kSetExpected = 3,
  kLmsExpired = 4,
  kSyncExpired = 5,
};

struct NodeInfo {
  RingId ring_id;  // the ring whose regular configuration it reports for
  std::uint32_t votes = 1;
  std::uint32_t expected_votes = 0;
  bool quorate = false;
  bool waiting_for_all = false;
  QuorateRing last_quorate;
  DeviceFlags device;
};

// A runtime change, made against the state of `ring_id` (quorum_service.hpp says where it acts).
struct SetVotes {
  RingId ring_id;
  NodeId node = 0;
  std::uint32_t votes = 0;
  // The ring's expected votes plus the votes the change adds, as its sender saw them: a raise
  // takes effect only with expected votes at least this high.
  std::uint32_t expected_votes = 0;
};

struct SetExpected {
  RingId ring_id;
  std::uint32_t expected_votes = 0;
};

struct LmsExpired {
  RingId ring_id;
};

struct SyncExpired {
  RingId ring_id;
};

using QuorumPacket = std::variant<NodeInfo, SetVotes, SetExpected, LmsExpired, SyncExpired>;

inline constexpr std::size_t kNodeInfoFixedSize = 2 + 12 + 4 + 4 + 1 + 12 + 1;
// The largest quorum packet: a NODEINFO naming a full ring. The ring must carry it whole.
inline constexpr std::size_t kQuorumPacketMax = kNodeInfoFixedSize + 4 * membership::kMembersMax;

enum class QuorumDecodeError : std::uint8_t {
  kNone,
  kTooShort,       // ended before a field it announced
  kTrailingBytes,  // longer than its fields
  kBadService,     // not a quorum packet
  kBadType,        // unknown packet type
  kBadFlags,       // flag bits this build does not know, or device flags that contradict
  kBadMembers,     // a member list too long, unsorted, repeated, or with a node id 0
  kBadValue,       // a zero where votequorum never sends one (expected votes, a node id)
};

struct QuorumDecoded {
  QuorumPacket packet;
  QuorumDecodeError error = QuorumDecodeError::kNone;
};

// Encodes `packet` into `out`, which has room for encoded_size(packet); returns the bytes written.
std::size_t encode(const QuorumPacket& packet, std::span<std::byte> out) noexcept;
std::size_t encoded_size(const QuorumPacket& packet) noexcept;
QuorumDecoded decode_quorum_packet(std::span<const std::byte> bytes);
const char* describe(QuorumDecodeError error) noexcept;

}  // namespace rtotem::quorum
