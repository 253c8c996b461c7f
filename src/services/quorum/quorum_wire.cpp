#include "src/services/quorum/quorum_wire.hpp"

#include "base/wire_io.hpp"

namespace rtotem::quorum {

namespace {

constexpr std::uint8_t kFlagQuorate = 1;
constexpr std::uint8_t kFlagWaitingForAll = 2;
constexpr std::uint8_t kFlagDeviceRegistered = 4;
constexpr std::uint8_t kFlagDeviceAlive = 8;
constexpr std::uint8_t kFlagDeviceCastVote = 16;
constexpr std::uint8_t kFlagDeviceMasterWins = 32;
constexpr std::uint8_t kFlagsKnown = kFlagQuorate | kFlagWaitingForAll | kFlagDeviceRegistered | kFlagDeviceAlive |
                                     kFlagDeviceCastVote | kFlagDeviceMasterWins;

std::uint8_t device_bits(const DeviceFlags& d) {
  return static_cast<std::uint8_t>((d.registered ? kFlagDeviceRegistered : 0) | (d.alive ? kFlagDeviceAlive : 0) |
                                   (d.cast_vote ? kFlagDeviceCastVote : 0) |
                                   (d.master_wins ? kFlagDeviceMasterWins : 0));
}

void put_ring_id(WireWriter& w, const RingId& id) {
  w.put_u32(id.rep);
  w.put_u64(id.seq);
}

RingId get_ring_id(WireReader& r) {
  RingId id;
  id.rep = r.get_u32();
  id.seq = r.get_u64();
  return id;
}

QuorumDecodeError decode_node_info(WireReader& r, NodeInfo& info) {
  info.ring_id = get_ring_id(r);
  info.votes = r.get_u32();
  info.expected_votes = r.get_u32();
  const std::uint8_t flags = r.get_u8();
  info.last_quorate.ring_id = get_ring_id(r);
  const std::uint8_t count = r.get_u8();
  if (r.short_read()) return QuorumDecodeError::kTooShort;
  if ((flags & ~kFlagsKnown) != 0) return QuorumDecodeError::kBadFlags;
  if (info.expected_votes == 0) return QuorumDecodeError::kBadValue;
  info.quorate = (flags & kFlagQuorate) != 0;
  info.waiting_for_all = (flags & kFlagWaitingForAll) != 0;
  info.device = DeviceFlags{.registered = (flags & kFlagDeviceRegistered) != 0,
                            .alive = (flags & kFlagDeviceAlive) != 0,
                            .cast_vote = (flags & kFlagDeviceCastVote) != 0,
                            .master_wins = (flags & kFlagDeviceMasterWins) != 0};
  // A vote comes from a device alive, and a device is alive or wins as master only registered.
  if ((info.device.cast_vote && !info.device.alive) ||
      (!info.device.registered && (info.device.alive || info.device.master_wins)))
    return QuorumDecodeError::kBadFlags;
  if (count > membership::kMembersMax) return QuorumDecodeError::kBadMembers;
  if (r.remaining() < 4U * count) return QuorumDecodeError::kTooShort;
  info.last_quorate.members.resize(count);
  for (NodeId& node : info.last_quorate.members) {
    node = r.get_u32();
    if (node == 0 || (&node != info.last_quorate.members.data() && *(&node - 1) >= node))
      return QuorumDecodeError::kBadMembers;
  }
  return QuorumDecodeError::kNone;
}

}  // namespace

std::size_t encoded_size(const QuorumPacket& packet) noexcept {
  struct Size {
    std::size_t operator()(const NodeInfo& p) const { return kNodeInfoFixedSize + 4 * p.last_quorate.members.size(); }
    std::size_t operator()(const SetVotes&) const { return 2 + 12 + 12; }
    std::size_t operator()(const SetExpected&) const { return 2 + 12 + 4; }
    std::size_t operator()(const LmsExpired&) const { return 2 + 12; }
    std::size_t operator()(const SyncExpired&) const { return 2 + 12; }
  };
  return std::visit(Size{}, packet);
}

std::size_t encode(const QuorumPacket& packet, std::span<std::byte> out) noexcept {
  WireWriter w(out);
  w.put_u8(static_cast<std::uint8_t>(RingService::kQuorum));
  struct Body {
    WireWriter& w;
    void operator()(const NodeInfo& p) const {
      RTOTEM_ASSERT(p.last_quorate.members.size() <= membership::kMembersMax);
      w.put_u8(static_cast<std::uint8_t>(QuorumPacketType::kNodeInfo));
      put_ring_id(w, p.ring_id);
      w.put_u32(p.votes);
      w.put_u32(p.expected_votes);
      w.put_u8(static_cast<std::uint8_t>((p.quorate ? kFlagQuorate : 0) | (p.waiting_for_all ? kFlagWaitingForAll : 0) |
                                         device_bits(p.device)));
      put_ring_id(w, p.last_quorate.ring_id);
      w.put_u8(static_cast<std::uint8_t>(p.last_quorate.members.size()));
      for (NodeId node : p.last_quorate.members) w.put_u32(node);
    }
    void operator()(const SetVotes& p) const {
      RTOTEM_ASSERT(p.node != 0 && p.expected_votes != 0);
      w.put_u8(static_cast<std::uint8_t>(QuorumPacketType::kSetVotes));
      put_ring_id(w, p.ring_id);
      w.put_u32(p.node);
      w.put_u32(p.votes);
      w.put_u32(p.expected_votes);
    }
    void operator()(const SetExpected& p) const {
      RTOTEM_ASSERT(p.expected_votes != 0);
      w.put_u8(static_cast<std::uint8_t>(QuorumPacketType::kSetExpected));
      put_ring_id(w, p.ring_id);
      w.put_u32(p.expected_votes);
    }
    void operator()(const LmsExpired& p) const {
      w.put_u8(static_cast<std::uint8_t>(QuorumPacketType::kLmsExpired));
      put_ring_id(w, p.ring_id);
    }
    void operator()(const SyncExpired& p) const {
      w.put_u8(static_cast<std::uint8_t>(QuorumPacketType::kSyncExpired));
      put_ring_id(w, p.ring_id);
    }
  };
  std::visit(Body{w}, packet);
  return w.written();
}

QuorumDecoded decode_quorum_packet(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  const std::uint8_t service = r.get_u8();
  const std::uint8_t type = r.get_u8();
  QuorumDecoded out;
  if (r.short_read()) return {out.packet, QuorumDecodeError::kTooShort};
  if (service != static_cast<std::uint8_t>(RingService::kQuorum)) return {out.packet, QuorumDecodeError::kBadService};
  switch (static_cast<QuorumPacketType>(type)) {
    case QuorumPacketType::kNodeInfo: {
      NodeInfo info;
      out.error = decode_node_info(r, info);
      out.packet = std::move(info);
      break;
    }
    case QuorumPacketType::kSetVotes: {
      SetVotes p;
      p.ring_id = get_ring_id(r);
      p.node = r.get_u32();
      p.votes = r.get_u32();
      p.expected_votes = r.get_u32();
      if (!r.short_read() && (p.node == 0 || p.expected_votes == 0)) out.error = QuorumDecodeError::kBadValue;
      out.packet = p;
      break;
    }
    case QuorumPacketType::kSetExpected: {
      SetExpected p;
      p.ring_id = get_ring_id(r);
      p.expected_votes = r.get_u32();
      if (!r.short_read() && p.expected_votes == 0) out.error = QuorumDecodeError::kBadValue;
      out.packet = p;
      break;
    }
    case QuorumPacketType::kLmsExpired: out.packet = LmsExpired{get_ring_id(r)}; break;
    case QuorumPacketType::kSyncExpired: out.packet = SyncExpired{get_ring_id(r)}; break;
    default: return {out.packet, QuorumDecodeError::kBadType};
  }
  if (out.error == QuorumDecodeError::kNone) {
    if (r.short_read())
      out.error = QuorumDecodeError::kTooShort;
    else if (!r.at_end())
      out.error = QuorumDecodeError::kTrailingBytes;
  }
  return out;
}

const char* describe(QuorumDecodeError error) noexcept {
  switch (error) {
    case QuorumDecodeError::kNone: return "no error";
    case QuorumDecodeError::kTooShort: return "quorum packet cut short";
    case QuorumDecodeError::kTrailingBytes: return "quorum packet longer than its fields";
    case QuorumDecodeError::kBadService: return "not a quorum packet";
    case QuorumDecodeError::kBadType: return "unknown quorum packet type";
    case QuorumDecodeError::kBadFlags: return "unknown quorum flags";
    case QuorumDecodeError::kBadMembers: return "bad member list in a quorum packet";
    case QuorumDecodeError::kBadValue: return "zero node id or expected votes in a quorum packet";
  }
  return "unknown quorum decode error";
}

}  // namespace rtotem::quorum
