// The group packets the service carries as ring messages: their encoding and their validation.
//
// Wire form, integers big-endian (base/wire_io.hpp), every packet opening with
//   u8 service (RingService::kGroups: this wire form) | u8 type
// then, by type (a name is u8 size, 1..kGroupNameMax, then its bytes):
//   JOIN      name | u32 pid
//   LEAVE     name | u32 pid | u8 reason (kLeave or kProcDown)
//   MCAST     name | u32 pid | data to the end of the message
//   PIECE     as MCAST: data that is one piece of a message larger than one (librtotem splits and
//             joins them; the daemons pass them on as they do MCAST, marked)
//   JOINLIST  u16 count | count x (name | u32 pid), strictly increasing by (name, pid)
// The sender's node id and agreed/safe come with the ring's Delivered, so no packet repeats them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "src/services/groups/group_service.hpp"
#include "src/stack/ring_service.hpp"

namespace rtotem::groups {

inline constexpr auto kGroupWireVersion = static_cast<std::uint8_t>(RingService::kGroups);

enum class GroupPacketType : std::uint8_t { kJoin = 1, kLeave = 2, kMcast = 3, kJoinList = 4, kPiece = 5 };

inline constexpr std::size_t kGroupHeaderSize = 2;
inline constexpr std::size_t kJoinListFixedSize = kGroupHeaderSize + 2;
inline constexpr std::size_t kJoinListCountMax = UINT16_MAX;  // the count travels as u16
// An MCAST's bytes besides its data, at the longest name: what data_max() leaves room for.
inline constexpr std::size_t kMcastOverheadMax = kGroupHeaderSize + 1 + kGroupNameMax + 4;
// The longest packet that carries one name (a JOINLIST of one): the ring must take it whole.
inline constexpr std::size_t kOneNamePacketMax = kJoinListFixedSize + 1 + kGroupNameMax + 4;
static_assert(kGroupNameMax <= UINT8_MAX, "a name's size travels as u8");
static_assert(kOneNamePacketMax <= kRingMessageSizeMin);
static_assert(kMcastOverheadMax < kRingMessageSizeMin, "an MCAST carries some data");

// Decoded packets borrow the message's bytes: valid while the Delivered they came from is.
struct GroupJoin {
  std::string_view group;
  std::uint32_t pid = 0;
};

struct GroupLeave {
  std::string_view group;
  std::uint32_t pid = 0;
  Reason reason = Reason::kLeave;
};

struct GroupMcast {
  std::string_view group;
  std::uint32_t pid = 0;
  std::span<const std::byte> data;
  bool piece = false;  // a PIECE packet
};

struct JoinListEntry {
  std::string_view group;
  std::uint32_t pid = 0;
  friend auto operator<=>(const JoinListEntry&, const JoinListEntry&) = default;
};

struct GroupJoinList {
  std::vector<JoinListEntry> entries;  // strictly increasing by (group, pid)
};

using GroupPacket = std::variant<GroupJoin, GroupLeave, GroupMcast, GroupJoinList>;

// Why a message was refused. Every refusal is counted by the caller; none is a crash.
enum class GroupDecodeError : std::uint8_t {
  kNone,
  kTooShort,       // ended before a field it announced
  kTrailingBytes,  // longer than its fields
  kBadVersion,     // a wire version this build does not speak
  kBadType,        // unknown packet type
  kBadName,        // a group name of 0 or more than kGroupNameMax bytes
  kBadReason,      // a LEAVE whose reason is not kLeave or kProcDown
  kCountTooLarge,  // a JOINLIST count its bytes cannot hold
  kNotSorted,      // JOINLIST entries not strictly increasing (unsorted or duplicated)
};

const char* describe(GroupDecodeError error) noexcept;

// Sizes of the encoded packets, for the buffer the encoders write into.
std::size_t group_join_size(std::string_view group) noexcept;
std::size_t group_leave_size(std::string_view group) noexcept;
std::size_t group_mcast_size(std::string_view group, std::size_t data_size) noexcept;
std::size_t join_list_entry_size(std::string_view group) noexcept;
std::size_t join_list_size(std::span<const JoinListEntry> entries) noexcept;

// Encoders write into `out` and return the bytes written; they assert that what they write is
// valid (names, reason, order and count of entries) and that it fits.
std::size_t encode_group_join(const GroupJoin& join, std::span<std::byte> out) noexcept;
std::size_t encode_group_leave(const GroupLeave& leave, std::span<std::byte> out) noexcept;
// Copies the data after the header: the ring's submit takes one contiguous message.
std::size_t encode_group_mcast(const GroupMcast& mcast, std::span<std::byte> out) noexcept;
std::size_t encode_join_list(std::span<const JoinListEntry> entries, std::span<std::byte> out) noexcept;

// Reads exactly `message` (never past it) and returns kNone or the first reason to refuse it;
// after a refusal `out` means nothing. Allocates only a JOINLIST's entries (its count is bounded
// by the message's size before anything is reserved).
GroupDecodeError decode_group_packet(std::span<const std::byte> message, GroupPacket& out);

}  // namespace rtotem::groups
