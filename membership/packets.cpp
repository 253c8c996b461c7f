// Encoding and validation of the totem packets: encoders assert what they write, decoders refuse
// what they read, and both agree on one canonical form per packet.
#include "membership/packets.hpp"

#include <algorithm>

#include "membership/node_set.hpp"
#include "base/wire_io.hpp"
#include "base/assert.hpp"

namespace rtotem::membership {
namespace {

using enum DecodeError;

constexpr std::size_t kRingIdSize = 4 + 8;
constexpr std::size_t kMcastHeaderSize = kPacketPrefixSize + kRingIdSize + 8 + 4;
constexpr std::size_t kTokenFixedSize = kPacketPrefixSize + kRingIdSize + 4 * 8 + 5 * 4 + 2 + 2;
constexpr std::size_t kRtrEntrySize = 8;
constexpr std::size_t kJoinFixedSize = kPacketPrefixSize + 4 + 8 + 2 + 2;
constexpr std::size_t kNodeIdSize = 4;
constexpr std::size_t kCommitFixedSize = kPacketPrefixSize + kRingIdSize + 8 + 2 + 2;
constexpr std::size_t kCommitMemberSize = 4 + kRingIdSize + 8 + 8;
constexpr std::size_t kMergeDetectFixedSize = kPacketPrefixSize + kRingIdSize + 4;
constexpr std::size_t kHoldCancelSize = kPacketPrefixSize + kRingIdSize;
static_assert(kMcastHeaderSize == 28);
static_assert(kTokenFixedSize == 72);
static_assert(kJoinFixedSize == 20);
static_assert(kCommitFixedSize == 28 && kCommitMemberSize == 32);
static_assert(kMergeDetectFixedSize == 20);
static_assert(kHoldCancelSize == 16);
// Counts travel as u16; the bounds must fit.
static_assert(kRtrMax <= UINT16_MAX && kMembersMax <= UINT16_MAX);

constexpr std::uint8_t kMcastFlagSafe = 0x01;
constexpr std::uint8_t kMcastFlagRecovery = 0x02;
constexpr std::uint8_t kMcastFlags = kMcastFlagSafe | kMcastFlagRecovery;
constexpr std::uint8_t kTokenFlagInstall = 0x01;
constexpr std::uint8_t kTokenFlags = kTokenFlagInstall;
constexpr std::uint8_t kNoFlags = 0;

// No vote at all, or one proposed by a member about another node, with 1..kMembersMax votes.
bool merge_vote_valid(const Token& token) noexcept {
  if (token.merge_proposer == kNoNode) return token.merge_candidate == kNoNode && token.merge_votes == 0;
  return token.merge_candidate != kNoNode && token.merge_candidate != token.merge_proposer && token.merge_votes >= 1 &&
         token.merge_votes <= kMembersMax;
}

// ---- encoding: every field checked here is refused by the decoder below, so a packet we send
// is one we would accept.

void put_prefix(WireWriter& w, PacketType type, std::uint8_t flags) noexcept {
  w.put_u8(static_cast<std::uint8_t>(type));
  w.put_u8(flags);
  w.put_u16(0);
}

void put_ring_id(WireWriter& w, const RingId& ring_id) noexcept {
  RTOTEM_ASSERT(ring_id.rep != kNoNode);
  w.put_u32(ring_id.rep);
  w.put_u64(ring_id.seq);
}

void put_node_list(WireWriter& w, const NodeList& list) noexcept {
  RTOTEM_ASSERT(list.count <= kMembersMax);
  w.put_u16(list.count);
  NodeId prev = kNoNode;
  for (NodeId id : list.view()) {
    RTOTEM_ASSERT(id > prev);  // non-zero, sorted and unique in one comparison
    w.put_u32(id);
    prev = id;
  }
}

void put_commit_member(WireWriter& w, const CommitMember& member) noexcept {
  w.put_u32(member.node);
  put_ring_id(w, member.old_ring);
  w.put_u64(member.aru);
  w.put_u64(member.high_delivered);
}

// ---- decoding: bytes are hostile input; every refusal is a DecodeError, never an assertion.

// The checks a dispatcher can make before it knows which packet it holds.
DecodeError get_prefix(WireReader& r, PacketType& type, std::uint8_t& flags) noexcept {
  const std::uint8_t raw_type = r.get_u8();
  flags = r.get_u8();
  const std::uint16_t reserved = r.get_u16();
  if (r.short_read()) return kTooShort;
  if (raw_type < static_cast<std::uint8_t>(PacketType::kMcast) ||
      raw_type > static_cast<std::uint8_t>(PacketType::kHoldCancel)) {
    return kBadType;
  }
  if (reserved != 0) return kReservedNotZero;
  type = static_cast<PacketType>(raw_type);
  return kNone;
}

DecodeError open_packet(WireReader& r, PacketType expected, std::uint8_t flags_defined, std::uint8_t& flags) noexcept {
  PacketType type{};
  if (auto e = get_prefix(r, type, flags); e != kNone) return e;
  if (type != expected) return kWrongType;
  if ((flags & ~flags_defined) != 0) return kBadFlags;
  return kNone;
}

DecodeError get_node(WireReader& r, NodeId& node) noexcept {
  node = r.get_u32();
  if (r.short_read()) return kTooShort;
  if (node == kNoNode) return kBadNodeId;
  return kNone;
}

DecodeError get_ring_id(WireReader& r, RingId& ring_id) noexcept {
  ring_id.rep = r.get_u32();
  ring_id.seq = r.get_u64();
  if (r.short_read()) return kTooShort;
  if (ring_id.rep == kNoNode) return kBadNodeId;
  return kNone;
}

// Checks `id` continues a strictly increasing list of non-zero ids after `prev`.
DecodeError check_next_node(NodeId prev, NodeId id) noexcept {
  if (id == kNoNode) return kBadNodeId;
  if (id <= prev) return kNotSorted;
  return kNone;
}

DecodeError get_node_list(WireReader& r, NodeList& list) noexcept {
  list.count = r.get_u16();
  if (r.short_read()) return kTooShort;
  if (list.count > kMembersMax) return kCountTooLarge;
  NodeId prev = kNoNode;
  for (std::size_t i = 0; i < list.count; ++i) {
    list.ids[i] = r.get_u32();
    if (r.short_read()) return kTooShort;
    if (auto e = check_next_node(prev, list.ids[i]); e != kNone) return e;
    prev = list.ids[i];
  }
  return kNone;
}

DecodeError get_commit_member(WireReader& r, NodeId prev, CommitMember& member) noexcept {
  member.node = r.get_u32();
  if (r.short_read()) return kTooShort;
  if (auto e = check_next_node(prev, member.node); e != kNone) return e;
  if (auto e = get_ring_id(r, member.old_ring); e != kNone) return e;
  member.aru = r.get_u64();
  member.high_delivered = r.get_u64();
  return r.short_read() ? kTooShort : kNone;
}

DecodeError close_packet(const WireReader& r) noexcept { return r.at_end() ? kNone : kTrailingBytes; }

}  // namespace

const char* describe(DecodeError error) noexcept {
  switch (error) {
    case kNone: return "no error";
    case kTooShort: return "packet ends before a field";
    case kTrailingBytes: return "bytes after the last field";
    case kBadType: return "unknown packet type";
    case kWrongType: return "packet of another type";
    case kReservedNotZero: return "reserved bytes not zero";
    case kBadFlags: return "undefined flag bit set";
    case kCountTooLarge: return "list count above its bound";
    case kNotSorted: return "node list not strictly increasing";
    case kBadNodeId: return "node id zero";
    case kBadValue: return "field out of range";
  }
  return "unknown decode error";  // a value outside the enum: still a phrase, never a crash
}

bool peek_type(std::span<const std::byte> packet, PacketType& type, DecodeError& error) noexcept {
  WireReader r(packet);
  std::uint8_t flags = 0;
  error = get_prefix(r, type, flags);
  return error == kNone;
}

std::size_t mcast_header_size() noexcept { return kMcastHeaderSize; }

std::size_t token_size(const Token& token) noexcept { return kTokenFixedSize + token.rtr_count * kRtrEntrySize; }

std::size_t join_size(const Join& join) noexcept {
  return kJoinFixedSize + (join.proc_set.count + join.failed_set.count) * kNodeIdSize;
}

std::size_t commit_size(const Commit& commit) noexcept { return kCommitFixedSize + commit.count * kCommitMemberSize; }

// The unheard list only when there is one: a merge detection without it is the 20 bytes it
// always was, which nodes of the version before read (one with a list, they refuse).
std::size_t merge_detect_size(const MergeDetect& merge) noexcept {
  return kMergeDetectFixedSize + (merge.unheard.count == 0 ? 0 : 2 + merge.unheard.count * kNodeIdSize);
}

std::size_t hold_cancel_size() noexcept { return kHoldCancelSize; }

std::size_t members_max_for_mtu(std::size_t mtu) noexcept {
  if (mtu < kCommitFixedSize) return 0;
  return std::min((mtu - kCommitFixedSize) / kCommitMemberSize, kMembersMax);
}

std::size_t rtr_max_for_mtu(std::size_t mtu) noexcept {
  if (mtu < kTokenFixedSize) return 0;
  return std::min((mtu - kTokenFixedSize) / sizeof(Seq), kRtrMax);
}

std::size_t encode_mcast_header(const McastHeader& header, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(header.seq >= 1);
  RTOTEM_ASSERT(header.sender != kNoNode);
  RTOTEM_ASSERT(header.delivery == Delivery::kAgreed || header.delivery == Delivery::kSafe);
  RTOTEM_ASSERT(out.size() >= kMcastHeaderSize);
  WireWriter w(out);
  const std::uint8_t flags =
      (header.delivery == Delivery::kSafe ? kMcastFlagSafe : 0) | (header.recovery ? kMcastFlagRecovery : 0);
  put_prefix(w, PacketType::kMcast, flags);
  put_ring_id(w, header.ring_id);
  w.put_u64(header.seq);
  w.put_u32(header.sender);
  return w.written();
}

std::size_t encode_token(const Token& token, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(token.rtr_count <= kRtrMax);
  RTOTEM_ASSERT(token.aru <= token.seq);
  RTOTEM_ASSERT(token.install_known ? token.install_seq <= token.seq : token.install_seq == 0);
  RTOTEM_ASSERT(merge_vote_valid(token));
  RTOTEM_ASSERT(out.size() >= token_size(token));
  WireWriter w(out);
  put_prefix(w, PacketType::kToken, token.install_known ? kTokenFlagInstall : 0);
  put_ring_id(w, token.ring_id);
  w.put_u64(token.token_seq);
  w.put_u64(token.seq);
  w.put_u64(token.aru);
  w.put_u64(token.install_seq);
  w.put_u32(token.aru_addr);
  w.put_u32(token.backlog);
  w.put_u32(token.fcc);
  w.put_u32(token.merge_proposer);
  w.put_u32(token.merge_candidate);
  w.put_u16(token.merge_votes);
  w.put_u16(token.rtr_count);
  for (std::size_t i = 0; i < token.rtr_count; ++i) w.put_u64(token.rtr[i]);
  return w.written();
}

std::size_t encode_join(const Join& join, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(join.sender != kNoNode);
  RTOTEM_ASSERT(out.size() >= join_size(join));
  WireWriter w(out);
  put_prefix(w, PacketType::kJoin, kNoFlags);
  w.put_u32(join.sender);
  w.put_u64(join.ring_seq);
  put_node_list(w, join.proc_set);
  put_node_list(w, join.failed_set);
  return w.written();
}

std::size_t encode_commit(const Commit& commit, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(commit.count >= 1);
  RTOTEM_ASSERT(commit.count <= kMembersMax);
  RTOTEM_ASSERT(commit.memb_index < commit.count);
  RTOTEM_ASSERT(out.size() >= commit_size(commit));
  WireWriter w(out);
  put_prefix(w, PacketType::kCommit, kNoFlags);
  put_ring_id(w, commit.ring_id);
  w.put_u64(commit.token_seq);
  w.put_u16(commit.memb_index);
  w.put_u16(commit.count);
  NodeId prev = kNoNode;
  for (std::size_t i = 0; i < commit.count; ++i) {
    RTOTEM_ASSERT(commit.members[i].node > prev);  // non-zero, sorted and unique
    put_commit_member(w, commit.members[i]);
    prev = commit.members[i].node;
  }
  return w.written();
}

std::size_t encode_merge_detect(const MergeDetect& merge, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(merge.sender != kNoNode);
  RTOTEM_ASSERT(out.size() >= merge_detect_size(merge));
  RTOTEM_ASSERT(!contains(merge.unheard, merge.sender));
  WireWriter w(out);
  put_prefix(w, PacketType::kMergeDetect, kNoFlags);
  put_ring_id(w, merge.ring_id);
  w.put_u32(merge.sender);
  if (merge.unheard.count != 0) put_node_list(w, merge.unheard);
  return w.written();
}

std::size_t encode_hold_cancel(const HoldCancel& cancel, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(out.size() >= kHoldCancelSize);
  WireWriter w(out);
  put_prefix(w, PacketType::kHoldCancel, kNoFlags);
  put_ring_id(w, cancel.ring_id);
  return w.written();
}

DecodeError decode_mcast(std::span<const std::byte> packet, McastHeader& out,
                         std::span<const std::byte>& payload) noexcept {
  WireReader r(packet);
  std::uint8_t flags = 0;
  if (auto e = open_packet(r, PacketType::kMcast, kMcastFlags, flags); e != kNone) return e;
  if (auto e = get_ring_id(r, out.ring_id); e != kNone) return e;
  out.seq = r.get_u64();
  if (r.short_read()) return kTooShort;
  if (out.seq == 0) return kBadValue;  // sequence numbers start at 1
  if (auto e = get_node(r, out.sender); e != kNone) return e;
  out.delivery = (flags & kMcastFlagSafe) != 0 ? Delivery::kSafe : Delivery::kAgreed;
  out.recovery = (flags & kMcastFlagRecovery) != 0;
  payload = r.get_rest();
  return kNone;
}

DecodeError decode_token(std::span<const std::byte> packet, Token& out) noexcept {
  WireReader r(packet);
  std::uint8_t flags = 0;
  if (auto e = open_packet(r, PacketType::kToken, kTokenFlags, flags); e != kNone) return e;
  if (auto e = get_ring_id(r, out.ring_id); e != kNone) return e;
  out.token_seq = r.get_u64();
  out.seq = r.get_u64();
  out.aru = r.get_u64();
  out.install_seq = r.get_u64();
  out.aru_addr = r.get_u32();
  out.backlog = r.get_u32();
  out.fcc = r.get_u32();
  out.merge_proposer = r.get_u32();
  out.merge_candidate = r.get_u32();
  out.merge_votes = r.get_u16();
  out.rtr_count = r.get_u16();
  if (r.short_read()) return kTooShort;
  out.install_known = (flags & kTokenFlagInstall) != 0;
  if (out.aru > out.seq) return kBadValue;
  if (!merge_vote_valid(out)) return kBadValue;
  if (out.install_known ? out.install_seq > out.seq : out.install_seq != 0) return kBadValue;
  if (out.rtr_count > kRtrMax) return kCountTooLarge;
  for (std::size_t i = 0; i < out.rtr_count; ++i) out.rtr[i] = r.get_u64();
  if (r.short_read()) return kTooShort;
  return close_packet(r);
}

DecodeError decode_join(std::span<const std::byte> packet, Join& out) noexcept {
  WireReader r(packet);
  std::uint8_t flags = 0;
  if (auto e = open_packet(r, PacketType::kJoin, kNoFlags, flags); e != kNone) return e;
  if (auto e = get_node(r, out.sender); e != kNone) return e;
  out.ring_seq = r.get_u64();
  if (r.short_read()) return kTooShort;
  if (auto e = get_node_list(r, out.proc_set); e != kNone) return e;
  if (auto e = get_node_list(r, out.failed_set); e != kNone) return e;
  return close_packet(r);
}

DecodeError decode_commit(std::span<const std::byte> packet, Commit& out) noexcept {
  WireReader r(packet);
  std::uint8_t flags = 0;
  if (auto e = open_packet(r, PacketType::kCommit, kNoFlags, flags); e != kNone) return e;
  if (auto e = get_ring_id(r, out.ring_id); e != kNone) return e;
  out.token_seq = r.get_u64();
  out.memb_index = r.get_u16();
  out.count = r.get_u16();
  if (r.short_read()) return kTooShort;
  if (out.count > kMembersMax) return kCountTooLarge;
  if (out.count == 0 || out.memb_index >= out.count) return kBadValue;
  NodeId prev = kNoNode;
  for (std::size_t i = 0; i < out.count; ++i) {
    if (auto e = get_commit_member(r, prev, out.members[i]); e != kNone) return e;
    prev = out.members[i].node;
  }
  return close_packet(r);
}

DecodeError decode_merge_detect(std::span<const std::byte> packet, MergeDetect& out) noexcept {
  WireReader r(packet);
  std::uint8_t flags = 0;
  if (auto e = open_packet(r, PacketType::kMergeDetect, kNoFlags, flags); e != kNone) return e;
  if (auto e = get_ring_id(r, out.ring_id); e != kNone) return e;
  if (auto e = get_node(r, out.sender); e != kNone) return e;
  out.unheard = NodeList{};
  if (r.remaining() == 0) return kNone;
  if (auto e = get_node_list(r, out.unheard); e != kNone) return e;
  // One form per packet: an empty list is no list. And a node hears itself.
  if (out.unheard.count == 0 || contains(out.unheard, out.sender)) return kBadValue;
  return close_packet(r);
}

DecodeError decode_hold_cancel(std::span<const std::byte> packet, HoldCancel& out) noexcept {
  WireReader r(packet);
  std::uint8_t flags = 0;
  if (auto e = open_packet(r, PacketType::kHoldCancel, kNoFlags, flags); e != kNone) return e;
  if (auto e = get_ring_id(r, out.ring_id); e != kNone) return e;
  return close_packet(r);
}

}  // namespace rtotem::membership
