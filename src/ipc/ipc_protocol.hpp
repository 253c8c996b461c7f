// The local IPC between rtotemd and its clients (librtotem, rtotemctl), over libqb shared memory.
// A request is a qb_ipc_request_header (id, size) and a body; the daemon answers each with a
// qb_ipc_response_header (id, size, error: 0 or -errno) and a body. Events (deliveries, group and
// ring changes) come unasked on the event channel, also behind a qb_ipc_response_header.
// Bodies are big-endian fields; strings and lists carry their length first. Both sides decode
// with bounds checks: a malformed body is refused with -EINVAL, never read past.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "membership/wire_io.hpp"

namespace rtotem::ipc {

inline constexpr const char* kDefaultName = "rtotem";
inline constexpr const char* kNameEnv = "RTOTEM_IPC";  // the IPC name when the caller gives none
// Room for the largest message and its headers in one IPC buffer.
inline constexpr std::size_t kBufferOverhead = 64 * 1024;
// The buffer size librtotem used to ask libqb for (whatever the daemon's max_message_size), before
// it asked for the least: a daemon still admits clients built against it.
inline constexpr std::size_t kLegacyClientBufferBytes = (1u << 20) + kBufferOverhead;

enum class RequestId : std::int32_t {
  kJoin = 1,         // group
  kLeave = 2,        // group
  kMcast = 3,        // u8 order (0 agreed, 1 safe), group, data (the rest)
  kLocalNodeId = 4,  // -> u32 node id
  kStatus = 5,       // -> JSON text
  kMembers = 6,      // group (empty: every group) -> JSON text
  kStats = 7,        // -> JSON text
  kDataMax = 8,      // -> u32 largest multicast data
};

enum class EventId : std::int32_t {
  kDeliver = 101,      // u32 node, u32 pid, u8 order, group, data (the rest)
  kGroupChange = 102,  // group, members, joined, left (each: u32 count, then u32 node, u32 pid; left adds u8 reason)
  kRingChange = 103,   // u32 representative, u64 ring seq, u8 transitional, u32 count, u32 node ids
  kBatch = 104,        // events in order, each a qb_ipc_response_header and its body (never a batch)
};

// Small deliveries of one turn travel together: one shared-memory write and one wake-up per
// batch, not per message. A larger event goes alone (copying it into a batch buys nothing).
inline constexpr std::size_t kBatchBytes = 64 * 1024;
inline constexpr std::size_t kBatchedEventMax = 8 * 1024;

// Appends big-endian fields to a growing buffer (the control path: one vector per message).
class BodyWriter {
 public:
  void u8(std::uint8_t v) { be(v, 1); }
  void u32(std::uint32_t v) { be(v, 4); }
  void u64(std::uint64_t v) { be(v, 8); }
  void string(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    bytes(std::as_bytes(std::span(s.data(), s.size())));
  }
  void bytes(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  std::vector<std::byte>& data() noexcept { return out_; }
  void clear() noexcept { out_.clear(); }  // keeps the capacity: a reused writer stops allocating

 private:
  void be(std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out_.push_back(std::byte(v >> (8 * i)));
  }
  std::vector<std::byte> out_;
};

// A string field (u32 length, bytes) read from `in`; nullopt if it runs past the end or is longer
// than `max`.
inline std::optional<std::string_view> read_string(membership::WireReader& in, std::size_t max) {
  const std::uint32_t size = in.get_u32();
  if (in.short_read() || size > max || size > in.remaining()) return std::nullopt;
  const auto bytes = in.get_bytes(size);
  return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace rtotem::ipc
