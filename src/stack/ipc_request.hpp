// A client's request as libqb hands it to the daemon (a qb_ipc_request_header, then the body of
// ipc_protocol.hpp), decoded and checked before the daemon acts on it. Apart from the daemon's
// state, so that it is tested and fuzzed on its own (tests/fuzz/fuzz_ipc_request.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "membership/packets.hpp"
#include "src/ipc/ipc_protocol.hpp"
#include "src/ipc/key_value.hpp"

namespace rtotem::stack {

// Borrows the message's bytes: valid while libqb's buffer is, i.e. during the request's handling.
struct IpcRequest {
  ipc::RequestId id{};
  std::string_view group;  // kJoin, kLeave, kMcast (up to kGroupNameMax bytes); kMembers (empty: all)
  membership::Delivery order = membership::Delivery::kAgreed;  // kMcast
  bool piece = false;                                          // kMcast: ipc::kModePiece
  std::span<const std::byte> data;                             // kMcast, kMcastAsync: the rest of the body
  std::span<const std::byte> message;                          // the whole request, header included
  std::uint8_t quorum_what = 0;                                // kQuorumSet: ipc::kQuorumSetVotes or kQuorumSetExpected
  std::uint32_t quorum_node = 0;
  std::uint32_t quorum_value = 0;
  std::uint8_t quorum_track = 0;  // kQuorumTrack: ipc::kQuorumTrack*
  std::string_view key;           // kKeyGet, kKeySet, kKeyDelete, kKeyTrack; kKeyList's prefix
  ipc::KeyType value_type{};      // kKeySet: the value, as ipc::KeyValue holds it
  std::uint64_t value_bits = 0;
  std::string_view value_data;
  std::uint32_t track_flags = 0;  // kKeyTrack
  std::uint64_t track_id = 0;     // kKeyUntrack
  std::uint32_t node = 0;         // kNodeAddresses, kKillNode
  std::string_view reason;        // kKillNode
  // kShutdown's flags; kShutdownTrack's and kRingTrack's on; kShutdownReply's agree; kKeyMap's map;
  // kClientService's service.
  std::uint8_t flag = 0;
  // kQuorumDevice: its op, the names, the ring a poll votes for; its cast vote or allow in `flag`,
  // kDeviceInfo's node in `node`.
  std::uint8_t device_op = 0;
  std::string_view device_name;
  std::string_view device_new_name;
  membership::RingId device_ring;
};

// Decodes one whole message: false if it is not a request this daemon knows, in its wire form
// (a short or mis-sized header, an unknown id, a body that ends early or runs on). Whenever the
// message holds a header, out.id is its id, known or not: a refusal is answered under it.
// The bodies of kLocalNodeId, kStatus, kStats, kDataMax and kSync are not read.
bool decode_request(std::span<const std::byte> message, IpcRequest& out) noexcept;

}  // namespace rtotem::stack
