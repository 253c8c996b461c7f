// Encoding and validation of the group packets: encoders assert what they write, the decoder
// refuses what it reads, and both agree on one canonical form per packet.
#include "src/services/groups/group_wire.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "base/wire_io.hpp"
#include "base/assert.hpp"

namespace rtotem::groups {
namespace {

using enum GroupDecodeError;

constexpr std::size_t kNameSizeSize = 1;
constexpr std::size_t kPidSize = 4;
constexpr std::size_t kReasonSize = 1;
constexpr std::size_t kJoinListEntryMin = kNameSizeSize + 1 + kPidSize;

bool valid_leave_reason(Reason reason) noexcept { return reason == Reason::kLeave || reason == Reason::kProcDown; }

std::size_t name_size(std::string_view group) noexcept { return kNameSizeSize + group.size(); }

// ---- encoding: every field checked here is refused by the decoder below, so a packet we send
// is one we would accept.

void put_header(WireWriter& w, GroupPacketType type) noexcept {
  w.put_u8(kGroupWireVersion);
  w.put_u8(static_cast<std::uint8_t>(type));
}

void put_name(WireWriter& w, std::string_view group) noexcept {
  RTOTEM_ASSERT(GroupService::valid_group_name(group));
  w.put_u8(static_cast<std::uint8_t>(group.size()));
  // WireWriter writes no byte strings; a name is at most kGroupNameMax bytes.
  for (char c : group) w.put_u8(static_cast<std::uint8_t>(c));
}

// ---- decoding: bytes are hostile input; every refusal is a GroupDecodeError, never an assertion.

GroupDecodeError get_header(WireReader& r, GroupPacketType& type) noexcept {
  const std::uint8_t version = r.get_u8();
  const std::uint8_t raw_type = r.get_u8();
  if (r.short_read()) return kTooShort;
  if (version != kGroupWireVersion) return kBadVersion;
  if (raw_type < static_cast<std::uint8_t>(GroupPacketType::kJoin) ||
      raw_type > static_cast<std::uint8_t>(GroupPacketType::kPiece)) {
    return kBadType;
  }
  type = static_cast<GroupPacketType>(raw_type);
  return kNone;
}

GroupDecodeError get_name(WireReader& r, std::string_view& group) noexcept {
  const std::size_t size = r.get_u8();
  if (r.short_read()) return kTooShort;
  if (size == 0 || size > kGroupNameMax) return kBadName;
  const std::span<const std::byte> bytes = r.get_bytes(size);
  if (r.short_read()) return kTooShort;
  group = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return kNone;
}

GroupDecodeError get_name_and_pid(WireReader& r, std::string_view& group, std::uint32_t& pid) noexcept {
  if (auto e = get_name(r, group); e != kNone) return e;
  pid = r.get_u32();
  return r.short_read() ? kTooShort : kNone;
}

GroupDecodeError close_packet(const WireReader& r) noexcept { return r.at_end() ? kNone : kTrailingBytes; }

GroupDecodeError get_join(WireReader& r, GroupJoin& join) noexcept {
  if (auto e = get_name_and_pid(r, join.group, join.pid); e != kNone) return e;
  return close_packet(r);
}

GroupDecodeError get_leave(WireReader& r, GroupLeave& leave) noexcept {
  if (auto e = get_name_and_pid(r, leave.group, leave.pid); e != kNone) return e;
  const std::uint8_t raw_reason = r.get_u8();
  if (r.short_read()) return kTooShort;
  leave.reason = static_cast<Reason>(raw_reason);
  if (!valid_leave_reason(leave.reason)) return kBadReason;
  return close_packet(r);
}

GroupDecodeError get_mcast(WireReader& r, GroupMcast& mcast, bool piece) noexcept {
  if (auto e = get_name_and_pid(r, mcast.group, mcast.pid); e != kNone) return e;
  mcast.data = r.get_rest();
  mcast.piece = piece;
  return kNone;
}

GroupDecodeError get_join_list(WireReader& r, GroupJoinList& list) {
  const std::size_t count = r.get_u16();
  if (r.short_read()) return kTooShort;
  // Bounded by the bytes that follow before anything is reserved.
  if (count > r.remaining() / kJoinListEntryMin) return kCountTooLarge;
  list.entries.clear();
  list.entries.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    JoinListEntry entry;
    if (auto e = get_name_and_pid(r, entry.group, entry.pid); e != kNone) return e;
    if (!list.entries.empty() && !(list.entries.back() < entry)) return kNotSorted;
    list.entries.push_back(entry);
  }
  return close_packet(r);
}

}  // namespace

const char* describe(GroupDecodeError error) noexcept {
  switch (error) {
    case kNone: return "no error";
    case kTooShort: return "message ends before a field";
    case kTrailingBytes: return "bytes after the last field";
    case kBadVersion: return "unknown group wire version";
    case kBadType: return "unknown group packet type";
    case kBadName: return "group name empty or too long";
    case kBadReason: return "leave reason not leave or procdown";
    case kCountTooLarge: return "join list count above what its bytes hold";
    case kNotSorted: return "join list not strictly increasing";
  }
  return "unknown decode error";  // a value outside the enum: still a phrase, never a crash
}

std::size_t group_join_size(std::string_view group) noexcept { return kGroupHeaderSize + name_size(group) + kPidSize; }

std::size_t group_leave_size(std::string_view group) noexcept { return group_join_size(group) + kReasonSize; }

std::size_t group_mcast_size(std::string_view group, std::size_t data_size) noexcept {
  return kGroupHeaderSize + name_size(group) + kPidSize + data_size;
}

std::size_t join_list_entry_size(std::string_view group) noexcept { return name_size(group) + kPidSize; }

std::size_t join_list_size(std::span<const JoinListEntry> entries) noexcept {
  std::size_t size = kJoinListFixedSize;
  for (const JoinListEntry& entry : entries) size += join_list_entry_size(entry.group);
  return size;
}

std::size_t encode_group_join(const GroupJoin& join, std::span<std::byte> out) noexcept {
  WireWriter w(out);
  put_header(w, GroupPacketType::kJoin);
  put_name(w, join.group);
  w.put_u32(join.pid);
  return w.written();
}

std::size_t encode_group_leave(const GroupLeave& leave, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(valid_leave_reason(leave.reason));
  WireWriter w(out);
  put_header(w, GroupPacketType::kLeave);
  put_name(w, leave.group);
  w.put_u32(leave.pid);
  w.put_u8(static_cast<std::uint8_t>(leave.reason));
  return w.written();
}

std::size_t encode_group_mcast(const GroupMcast& mcast, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(out.size() >= group_mcast_size(mcast.group, mcast.data.size()));
  WireWriter w(out);
  put_header(w, mcast.piece ? GroupPacketType::kPiece : GroupPacketType::kMcast);
  put_name(w, mcast.group);
  w.put_u32(mcast.pid);
  if (!mcast.data.empty()) std::memcpy(out.data() + w.written(), mcast.data.data(), mcast.data.size());
  return w.written() + mcast.data.size();
}

std::size_t encode_join_list(std::span<const JoinListEntry> entries, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(entries.size() <= kJoinListCountMax);
  RTOTEM_ASSERT(std::ranges::adjacent_find(entries, std::greater_equal<>{}) == entries.end());
  WireWriter w(out);
  put_header(w, GroupPacketType::kJoinList);
  w.put_u16(static_cast<std::uint16_t>(entries.size()));
  for (const JoinListEntry& entry : entries) {
    put_name(w, entry.group);
    w.put_u32(entry.pid);
  }
  return w.written();
}

GroupDecodeError decode_group_packet(std::span<const std::byte> message, GroupPacket& out) {
  WireReader r(message);
  GroupPacketType type{};
  if (auto e = get_header(r, type); e != kNone) return e;
  switch (type) {
    case GroupPacketType::kJoin: return get_join(r, out.emplace<GroupJoin>());
    case GroupPacketType::kLeave: return get_leave(r, out.emplace<GroupLeave>());
    case GroupPacketType::kMcast: return get_mcast(r, out.emplace<GroupMcast>(), false);
    case GroupPacketType::kJoinList: return get_join_list(r, out.emplace<GroupJoinList>());
    case GroupPacketType::kPiece: return get_mcast(r, out.emplace<GroupMcast>(), true);
  }
  return kBadType;  // get_header admits only the five types
}

}  // namespace rtotem::groups
