// The local IPC between rtotemd and its clients (librtotem, rtotemctl), over libqb shared memory.
// A request is a qb_ipc_request_header (id, size) and a body; the daemon answers each with a
// qb_ipc_response_header (id, size, error: 0 or -errno) and a body, except kMcastAsync, which it
// never answers. Events (deliveries, group and ring changes, credit) come unasked on the event
// channel, also behind a qb_ipc_response_header.
//
// Flow control of kMcastAsync is by credit, in bytes of requests (header included). The daemon
// grants a window (in kMcast's answer); the library counts what it sent against what the daemon
// says it has taken (kMcast's and kSync's answers, kCredit), and sends asynchronously only within the window: at most a
// window per connection waits in the daemon for room on the ring, and the library answers
// -EAGAIN without asking once the window is full and the daemon has not caught up.
// Bodies are big-endian fields; strings and lists carry their length first. Both sides decode
// with bounds checks: a malformed body is refused with -EINVAL, never read past.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/wire_io.hpp"

namespace rtotem::ipc {

inline constexpr const char* kDefaultName = "rtotem";
inline constexpr const char* kNameEnv = "RTOTEM_IPC";  // the IPC name when the caller gives none
// Room for the largest message and its headers in one IPC buffer.
inline constexpr std::size_t kBufferOverhead = 64 * 1024;
// The buffer size librtotem used to ask libqb for (whatever the daemon's max_message_size), before
// it asked for the least: a daemon still admits clients built against it.
inline constexpr std::size_t kLegacyClientBufferBytes = (1u << 20) + kBufferOverhead;

// A multicast's mode byte, in kMcast (and kMcastAsync) and in kDeliver: safe order (else agreed),
// and whether the data is one piece of a message larger than one multicast takes. librtotem
// splits such a message and joins its pieces (src/client/message_pieces.hpp); rtotemd only
// carries the mark.
inline constexpr std::uint8_t kModeSafe = 1;
inline constexpr std::uint8_t kModePiece = 2;

enum class RequestId : std::int32_t {
  kJoin = 1,         // group -> kMcast's answer body when joined, so the first multicast need not ask
  kLeave = 2,        // group
  kMcast = 3,        // u8 mode (kModeSafe, kModePiece bits), group, data (the rest)
  kLocalNodeId = 4,  // -> u32 node id
  kStatus = 5,       // -> JSON text
  kMembers = 6,      // group (empty: every group) -> JSON text
  kStats = 7,        // -> JSON text
  kDataMax = 8,      // -> u32 largest multicast data
  // As kMcast, unanswered: taken to the ring in order with this connection's other requests. A
  // failure found later comes back as a kMcastFailed event.
  kMcastAsync = 9,
  kSync = 10,    // -> kMcast's answer body; answered once every earlier request of this connection is taken
  kQuorum = 11,  // -> JSON text: the votequorum state ({"configured": false} without quorum)
  // u8 what (kQuorumSetVotes or kQuorumSetExpected), u32 node id (votes; else 0), u32 value:
  // votequorum_setvotes / votequorum_setexpected. 0, -ENOENT (no such node), -EINVAL (refused by
  // votequorum's rule), -ENOTSUP (no quorum configured).
  kQuorumSet = 12,
  // u8 kQuorumTrack*: kQuorumChange events to this connection, the first at once (the state, marked
  // kQuorumFlagTrackStart), then the changes the mode names; kQuorumTrackStop: none. 0, or -ENOTSUP
  // (no quorum configured).
  kQuorumTrack = 13,
  // The key store (cmap). A key is a string of ipc::valid_key_name; a prefix may be shorter or
  // empty. Values in key_value.hpp's wire form. -EACCES: a write keys/key_access.hpp refuses.
  kKeyGet = 14,      // key -> value; -ENOENT
  kKeySet = 15,      // key, value -> 0; -EACCES, -ENOSPC (the store's bounds)
  kKeyDelete = 16,   // key -> 0; -ENOENT, -EACCES
  kKeyList = 17,     // prefix -> u32 count, count x (key, value), in name order; -EMSGSIZE
  kKeyTrack = 18,    // key or prefix, u32 flags (keystore::kTrack*) -> u64 track id; kKeyChange events
  kKeyUntrack = 19,  // u64 track id -> 0; -ENOENT
  // Node control (cfg).
  kNodeAddresses = 20,  // u32 node id (0: this node) -> u32 count, count x address (text); -ENOENT
  // u8 kShutdownRequest, kShutdownRegardless or kShutdownImmediate. Answered once decided: 0, and
  // the daemon leaves the ring and exits; or -EBUSY, a client vetoed (or did not answer in time).
  kShutdown = 21,
  kShutdownTrack = 22,  // u8 1 (asked before a shutdown: kShutdownQuery events) or 0
  kShutdownReply = 23,  // u8 1 (agree) or 0 (veto): the answer to a kShutdownQuery; -ENOENT if none is open
  // u32 node id, reason (up to kReasonMax): that node's daemon leaves the ring and exits, logging
  // the reason and who asked. 0 once multicast; -ENOENT (not a member of the ring).
  kKillNode = 24,
  // Re-reads this node's config file -> text: what changed, or (-EINVAL, -ENOENT...) why nothing did.
  kReload = 25,
  // u32 node id (0: this node) -> u32 node id, u8 member of the ring, u32 its votes, u32 its
  // expected votes, then the quorum state as a kQuorumChange event carries it (votequorum_getinfo).
  // -ENOENT: neither in the ring nor in the nodelist; -ENOTSUP: no quorum configured.
  kQuorumNode = 26,
  // Reopens the log file (logrotate; corosync_cfg_reopen_log_files), as SIGHUP also does. 0.
  kReopenLogs = 27,
  // group (empty: every group) -> u32 groups, then per group: its name, u32 count, count x (u32 node
  // id, u32 pid), groups in name order, members in their group's order (cpg_membership_get, cpg_iteration).
  kGroupMembers = 28,
  // u8 1 or 0: kRingChange events to this connection, or none. A connection gets them from its
  // start (the current ring at once; so does one asking again after 0), so that a library older
  // than this request keeps them; one that reports none asks for 0, and its descriptor then wakes
  // only for what it reports. 0.
  kRingTrack = 29,
  // u8 kKeyMapDefault or kKeyMapStats: the map this connection's key requests (kKeyGet..kKeyUntrack)
  // use from now on, as cmap_initialize_map chooses one. 0; -EBUSY while it tracks keys of the
  // other (cmap's CS_ERR_BUSY).
  kKeyMap = 30,
  // This node's quorum device (votequorum's qdevice calls; root's or the daemon's user's, but
  // kDeviceInfo): u8 kDevice*, then
  //   kDeviceRegister, kDeviceUnregister: name; kDeviceUpdate: old name, new name;
  //   kDevicePoll: name, u8 cast vote, u32 rep, u64 seq (the ring it votes for);
  //   kDeviceMasterWins: name, u8 allow;
  //   kDeviceInfo: u32 node id (0: this node) -> u32 kDeviceFlag* as that node last reported its
  //   device in this ring, u32 the device's votes, this node's device name (empty: none).
  // Names are 1..kDeviceNameMax bytes. 0; -EACCES: no quorum.device configured; -EEXIST: another
  // device is registered; -ENOENT: none is (kDeviceInfo: no such node); -EINVAL: not the
  // registered name; -ESTALE: a poll for a ring that is not this node's; -ENOTSUP: no quorum.
  kQuorumDevice = 31,
  // u8 service: Corosync's number of the service this connection stands for (a drop-in library's:
  // 0 cmap, 1 cfg, 2 cpg, 3 quorum, 5 votequorum), up to kServiceNative, the one a connection has
  // until it says. The statistics map names it by it (stats.ipcs.serviceN.PID.HANDLE.*). 0.
  kClientService = 32,
};
inline constexpr std::uint8_t kServiceNative = 64;  // past Corosync's 64 service numbers: librtotem's own
inline constexpr std::uint8_t kDeviceRegister = 1;
inline constexpr std::uint8_t kDeviceUnregister = 2;
inline constexpr std::uint8_t kDeviceUpdate = 3;
inline constexpr std::uint8_t kDevicePoll = 4;
inline constexpr std::uint8_t kDeviceMasterWins = 5;
inline constexpr std::uint8_t kDeviceInfo = 6;
inline constexpr std::size_t kDeviceNameMax = 254;  // votequorum's 255 bytes, its NUL included
// kDeviceInfo's flags, as RTOTEM_QUORUM_DEVICE_* in rtotem.h.
inline constexpr std::uint32_t kDeviceFlagRegistered = 1;
inline constexpr std::uint32_t kDeviceFlagAlive = 2;
inline constexpr std::uint32_t kDeviceFlagCastVote = 4;
inline constexpr std::uint32_t kDeviceFlagMasterWins = 8;
inline constexpr std::uint8_t kKeyMapDefault = 0;       // the key store
inline constexpr std::uint8_t kKeyMapStats = 1;         // the statistics, under stats.* (cmap's CMAP_MAP_STATS)
inline constexpr std::uint8_t kShutdownRequest = 0;     // vetoable by clients that track shutdown
inline constexpr std::uint8_t kShutdownRegardless = 1;  // clients are asked, but cannot veto
inline constexpr std::uint8_t kShutdownImmediate = 2;   // no one is asked
inline constexpr std::size_t kReasonMax = 1024;
inline constexpr std::uint8_t kQuorumSetVotes = 1;
inline constexpr std::uint8_t kQuorumSetExpected = 2;
// kQuorumTrack's modes, as rtotem.h's enum rtotem_quorum_changes.
inline constexpr std::uint8_t kQuorumTrackStop = 0;
inline constexpr std::uint8_t kQuorumTrackEvery = 1;             // every change
inline constexpr std::uint8_t kQuorumTrackRings = 2;             // a new ring, or quorate flipping (libquorum's)
inline constexpr std::uint8_t kQuorumTrackRingsAndExpected = 3;  // those, or the highest expected changing
inline constexpr std::uint8_t kQuorumTrackStateOnly = 4;         // no change (CS_TRACK_CURRENT)
// kQuorumChange's flags, as RTOTEM_QUORUM_* in rtotem.h.
inline constexpr std::uint32_t kQuorumFlagTwoNode = 1;
inline constexpr std::uint32_t kQuorumFlagWaitForAll = 2;
inline constexpr std::uint32_t kQuorumFlagLastManStanding = 4;
inline constexpr std::uint32_t kQuorumFlagAutoTieBreaker = 8;
inline constexpr std::uint32_t kQuorumFlagWaiting = 16;     // wait_for_all holds quorum back now
inline constexpr std::uint32_t kQuorumFlagTrackStart = 32;  // the state when kQuorumTrack started, not a change

// kMcast's and kSync's answer body (any error; kJoin's on success): u32 the credit window (bytes of kMcastAsync
// requests the connection may have in flight), u64 the bytes of them taken since it connected,
// u32 the largest multicast data (as kDataMax). An older daemon answers kMcast with no body: the
// library then never sends kMcastAsync. One older still than kJoin's body answers a join with
// nothing: the library asks for the size, and the first multicast waits for its answer.
inline constexpr std::size_t kMcastReplySize = 16;
// The window the daemon grants: up to 128 requests in flight (kMcastCostMin), so a sender keeps
// the ring busy without waiting; and what each connection may make it hold under back-pressure.
inline constexpr std::uint32_t kMcastWindow = 64 * 1024;
// A request larger than this goes synchronously (kMcast): at least four fit in a window.
inline constexpr std::uint32_t kMcastAsyncMax = kMcastWindow / 4;
// What a kMcastAsync request costs of the window: its size, but at least kMcastCostMin, so that no
// more than 128 are in flight. libqb announces each request with a byte on a socket whose send
// buffer holds a few hundred, and the client spins in libqb when that buffer is full.
inline constexpr std::uint32_t kMcastCostMin = kMcastWindow / 128;
constexpr std::uint64_t credit_cost(std::size_t request_size) noexcept {
  return request_size > kMcastCostMin ? request_size : kMcastCostMin;
}

// Whether the daemon answers a request with this id (ids it does not know are answered, -EINVAL).
constexpr bool answered(RequestId id) noexcept { return id != RequestId::kMcastAsync; }

enum class EventId : std::int32_t {
  kDeliver = 101,  // u32 node, u32 pid, u8 mode (as kMcast's), group, data (the rest)
  // group, members, joined, left (each: u32 count, then u32 node, u32 pid; joined and left add u8
  // reason), u8 flags (kChangeOwn; absent from an older daemon, and unread by an older library).
  kGroupChange = 102,
  kRingChange =
      103,        // u32 representative, u64 ring seq, u8 transitional, u32 count, u32 node ids (unless kRingTrack 0)
  kBatch = 104,   // events in order, each a qb_ipc_response_header and its body (never a batch)
  kCredit = 105,  // u64 bytes of kMcastAsync requests taken since the connection began
  kMcastFailed = 106,  // i32 -errno, group: a kMcastAsync request the daemon could not multicast
  // To a connection that asked (kQuorumTrack): u32 representative, u64 ring seq (the ring the state
  // belongs to), u8 quorate, u32 expected votes (configured), u32 highest expected, u32 total
  // votes, u32 quorum, u32 flags (kQuorumFlag*), u32 count, count x (u32 node id, u32 votes).
  kQuorumChange = 107,
  // To a connection that tracks keys (kKeyTrack): u64 track id, u32 event (keystore::kTrack*
  // add, modify or delete), key, u8 has new value [value], u8 has old value [value].
  kKeyChange = 108,
  // To a connection that tracks shutdown (kShutdownTrack): u8 flags of the kShutdown asked. It
  // answers with kShutdownReply; kShutdownRegardless asks, but stops whatever the answers.
  kShutdownQuery = 109,
};

// kGroupChange's flags. kChangeOwn: the change is the receiving connection's own join or leave.
// The library learns where in its event stream its membership begins and ends from the daemon,
// which knows the connection, not from a pid it would compare (another in a PID namespace).
inline constexpr std::uint8_t kChangeOwn = 1;

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
inline std::optional<std::string_view> read_string(WireReader& in, std::size_t max) {
  const std::uint32_t size = in.get_u32();
  if (in.short_read() || size > max || size > in.remaining()) return std::nullopt;
  const auto bytes = in.get_bytes(size);
  return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace rtotem::ipc
