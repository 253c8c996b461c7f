// The totem packets (tocssrp95 §3-§5, as corosync's totemsrp runs them): what travels inside a
// transport payload. Fixed-capacity arrays only: decoding a packet never allocates.
//
// Wire form, all integers big-endian, every packet opening with
//   u8 type | u8 flags | u16 reserved (zero)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "transport/wire_header.hpp"

namespace rtotem::membership {

using transport::kNoNode;
using transport::NodeId;
using Seq = std::uint64_t;  // 64 bits: a ring can carry messages for centuries without wrapping

inline constexpr std::size_t kPacketPrefixSize = 4;
inline constexpr std::size_t kRtrMax = 64;      // retransmit requests one token carries
inline constexpr std::size_t kMembersMax = 64;  // nodes in one ring (also bounded by the MTU)

enum class PacketType : std::uint8_t {
  kMcast = 1,   // an ordered message (or a recovery re-broadcast of an old-ring one)
  kToken = 2,   // the regular token, unicast to the ring successor
  kJoin = 3,    // Gather phase: my process set and failed set
  kCommit = 4,  // the commit token, unicast around the new ring twice
  // A representative's "my ring exists" (or a member's "I exist" to a node that does not hear
  // it): lets separate rings find each other.
  kMergeDetect = 5,
  // A member with a new message, to the member that may be holding an idle ring's token: pass it
  // on now. Nodes of an older version refuse the type (counted), and the hold runs out.
  kHoldCancel = 6,
};

struct RingId {
  NodeId rep = kNoNode;  // the representative: smallest node id of the ring
  Seq seq = 0;           // ring sequence number, never reused (persisted across restarts)
  friend bool operator==(const RingId&, const RingId&) = default;
};

// A bounded set of node ids, kept sorted and unique by its owner (decode checks both).
struct NodeList {
  std::array<NodeId, kMembersMax> ids{};
  std::uint16_t count = 0;
  std::span<const NodeId> view() const noexcept { return {ids.data(), count}; }
};

enum class Delivery : std::uint8_t { kAgreed = 0, kSafe = 1 };

struct McastHeader {
  RingId ring_id;  // the ring that assigned `seq`
  Seq seq = 0;
  NodeId sender = kNoNode;  // the originator: a retransmission by another node keeps it
  Delivery delivery = Delivery::kAgreed;
  bool recovery = false;  // flag: payload is an old-ring message re-broadcast in Recovery
  // The payload follows the header to the end of the packet; its bytes stay in the buffer.
};

struct Token {
  RingId ring_id;
  std::uint64_t token_seq = 0;  // incremented per hop: a retransmitted duplicate is ignored
  Seq seq = 0;                  // highest sequence number assigned on this ring
  Seq aru = 0;                  // all received up to
  NodeId aru_addr = kNoNode;    // who last lowered aru
  std::uint32_t backlog = 0;    // messages waiting at all nodes (flow control, fair share)
  std::uint32_t fcc = 0;        // messages sent during the last rotation (flow control)
  // Recovery: every member has re-sent its old messages, which end at install_seq (flag bit).
  bool install_known = false;
  Seq install_seq = 0;  // 0 unless install_known
  // A vote on merging with a node outside the ring (merge_vote.cpp): the member that proposed it,
  // the stranger, and how many members have heard it lately. All kNoNode / 0 when none is on.
  NodeId merge_proposer = kNoNode;
  NodeId merge_candidate = kNoNode;
  std::uint16_t merge_votes = 0;
  std::uint16_t rtr_count = 0;
  std::array<Seq, kRtrMax> rtr{};  // sequence numbers someone is missing
};

struct Join {
  NodeId sender = kNoNode;
  Seq ring_seq = 0;  // highest ring seq the sender has seen
  NodeList proc_set;
  NodeList failed_set;
};

struct CommitMember {
  NodeId node = kNoNode;
  RingId old_ring;         // the ring this member comes from
  Seq aru = 0;             // on its old ring
  Seq high_delivered = 0;  // highest seq it delivered on its old ring
};

struct Commit {
  RingId ring_id;  // the new ring
  std::uint64_t token_seq = 0;
  std::uint16_t memb_index = 0;  // position of the member that holds the token now
  std::uint16_t count = 0;
  std::array<CommitMember, kMembersMax> members{};
};

struct MergeDetect {
  RingId ring_id;
  NodeId sender = kNoNode;
  // Nodes the sender gave up on without hearing them at all (a link cut their way), until it
  // hears them again: a ring holding one of them does not merge with it (merge_vote.cpp). On
  // the wire only when not empty.
  NodeList unheard;
};

struct HoldCancel {
  RingId ring_id;  // the ring whose token to let go; its sender is the packet's source
};

// Why a packet was refused. Every refusal is counted by the caller; none is a crash.
enum class DecodeError : std::uint8_t {
  kNone,
  kTooShort,         // ended before a field it announced
  kTrailingBytes,    // longer than its fields
  kBadType,          // unknown packet type
  kWrongType,        // decoded as one type but is another
  kReservedNotZero,  // the reserved prefix bytes are not zero
  kBadFlags,         // a flag bit this version does not define
  kCountTooLarge,    // a list count above its bound
  kNotSorted,        // a node list not strictly increasing (unsorted or duplicated)
  kBadNodeId,        // node id 0 where a node is required
  kBadValue,         // a field outside its range (e.g. memb_index >= count, aru > seq)
};

const char* describe(DecodeError error) noexcept;

// Peeks the type of a packet; kBadType/kTooShort/kReservedNotZero in `error` otherwise.
bool peek_type(std::span<const std::byte> packet, PacketType& type, DecodeError& error) noexcept;

// Encoders write into `out` and return the bytes written; they assert what they write is valid
// and that it fits (size it with the *_size functions).
std::size_t mcast_header_size() noexcept;
std::size_t token_size(const Token& token) noexcept;
std::size_t join_size(const Join& join) noexcept;
std::size_t commit_size(const Commit& commit) noexcept;
std::size_t merge_detect_size(const MergeDetect& merge) noexcept;
std::size_t hold_cancel_size() noexcept;

std::size_t encode_mcast_header(const McastHeader& header, std::span<std::byte> out) noexcept;
std::size_t encode_token(const Token& token, std::span<std::byte> out) noexcept;
std::size_t encode_join(const Join& join, std::span<std::byte> out) noexcept;
std::size_t encode_commit(const Commit& commit, std::span<std::byte> out) noexcept;
std::size_t encode_merge_detect(const MergeDetect& merge, std::span<std::byte> out) noexcept;
std::size_t encode_hold_cancel(const HoldCancel& cancel, std::span<std::byte> out) noexcept;

// Decoders read exactly `packet` (never past it) and return kNone or the first reason to refuse;
// after a refusal `out` may be partly written and means nothing.
// decode_mcast also returns where the payload is.
DecodeError decode_mcast(std::span<const std::byte> packet, McastHeader& out,
                         std::span<const std::byte>& payload) noexcept;
DecodeError decode_token(std::span<const std::byte> packet, Token& out) noexcept;
DecodeError decode_join(std::span<const std::byte> packet, Join& out) noexcept;
DecodeError decode_commit(std::span<const std::byte> packet, Commit& out) noexcept;
DecodeError decode_merge_detect(std::span<const std::byte> packet, MergeDetect& out) noexcept;
DecodeError decode_hold_cancel(std::span<const std::byte> packet, HoldCancel& out) noexcept;

// The largest ring a commit token can describe in one packet of `mtu` payload bytes.
std::size_t members_max_for_mtu(std::size_t mtu) noexcept;
// The most retransmit requests a token can carry in one packet of `mtu` payload bytes.
std::size_t rtr_max_for_mtu(std::size_t mtu) noexcept;

}  // namespace rtotem::membership
