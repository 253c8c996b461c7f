// Decoding of a client's request: the header's framing, then the body its id calls for. A body is
// read with the same bounds as every wire form here: never past its end, and a string longer
// than its field's limit is refused before it is looked at.
#include "src/stack/ipc_request.hpp"

#include <qb/qbipc_common.h>

#include <cstring>

#include "src/services/groups/group_service.hpp"

namespace rtotem::stack {
namespace {

using ipc::RequestId;

// A group name alone, and nothing after it (kJoin, kLeave, kMembers).
bool read_group_only(WireReader& body, IpcRequest& out) {
  const auto group = ipc::read_string(body, groups::kGroupNameMax);
  if (!group || !body.at_end()) return false;
  out.group = *group;
  return true;
}

// u8 mode, the group, then the data to the end of the message.
bool read_mcast(WireReader& body, IpcRequest& out) {
  const std::uint8_t mode = body.get_u8();
  const auto group = ipc::read_string(body, groups::kGroupNameMax);
  if (!group || (mode & ~(ipc::kModeSafe | ipc::kModePiece)) != 0) return false;
  out.order = (mode & ipc::kModeSafe) != 0 ? membership::Delivery::kSafe : membership::Delivery::kAgreed;
  out.piece = (mode & ipc::kModePiece) != 0;
  out.group = *group;
  out.data = body.get_rest();
  return true;
}

// u8 what, u32 node, u32 value, nothing after (kQuorumSet).
bool read_quorum_set(WireReader& body, IpcRequest& out) {
  out.quorum_what = body.get_u8();
  out.quorum_node = body.get_u32();
  out.quorum_value = body.get_u32();
  if (body.short_read() || !body.at_end()) return false;
  return out.quorum_what == ipc::kQuorumSetVotes || out.quorum_what == ipc::kQuorumSetExpected;
}

// A key name, or with `prefix` any leading part of one (empty too).
bool read_key(WireReader& body, IpcRequest& out, bool prefix) {
  const auto key = ipc::read_string(body, ipc::kKeyNameMax);
  if (!key) return false;
  out.key = *key;
  if (!prefix) return ipc::valid_key_name(*key);
  return ipc::valid_key_prefix(*key);
}

// u8 type, then the value in its wire form (key_value.hpp), read without copying it.
bool read_value(WireReader& body, IpcRequest& out) {
  const std::uint8_t type = body.get_u8();
  const std::optional<std::size_t> width = ipc::width_of(type);
  if (body.short_read() || !width) return false;
  out.value_type = static_cast<ipc::KeyType>(type);
  if (*width == 0) {
    const auto data = ipc::read_string(body, ipc::kKeyValueMax);
    if (!data) return false;
    out.value_data = *data;
    return true;
  }
  for (std::size_t i = 0; i < *width; ++i) out.value_bits = (out.value_bits << 8) | body.get_u8();
  return !body.short_read();
}

// A u8 that must be at most `max`, and nothing after it.
bool read_flag(WireReader& body, IpcRequest& out, std::uint8_t max) {
  out.flag = body.get_u8();
  return !body.short_read() && body.at_end() && out.flag <= max;
}

bool at_end(const WireReader& body) { return !body.short_read() && body.at_end(); }

std::optional<std::string_view> read_device_name(WireReader& body) {
  const auto name = ipc::read_string(body, ipc::kDeviceNameMax);
  if (!name || name->empty() || name->find('\0') != std::string_view::npos) return std::nullopt;
  return name;
}

// u8 op, then what it needs (ipc_protocol.hpp: kQuorumDevice), nothing after.
bool read_quorum_device(WireReader& body, IpcRequest& out) {
  out.device_op = body.get_u8();
  if (body.short_read()) return false;
  if (out.device_op == ipc::kDeviceInfo) {
    out.node = body.get_u32();
    return at_end(body);
  }
  if (out.device_op < ipc::kDeviceRegister || out.device_op > ipc::kDeviceMasterWins) return false;
  const auto name = read_device_name(body);
  if (!name) return false;
  out.device_name = *name;
  switch (out.device_op) {
    case ipc::kDeviceUpdate: {
      const auto new_name = read_device_name(body);
      if (!new_name) return false;
      out.device_new_name = *new_name;
      break;
    }
    case ipc::kDevicePoll:
      out.flag = body.get_u8();
      out.device_ring.rep = body.get_u32();
      out.device_ring.seq = body.get_u64();
      if (out.flag > 1) return false;
      break;
    case ipc::kDeviceMasterWins:
      out.flag = body.get_u8();
      if (out.flag > 1) return false;
      break;
    default: break;
  }
  return at_end(body);
}

}  // namespace

bool decode_request(std::span<const std::byte> message, IpcRequest& out) noexcept {
  qb_ipc_request_header header{};
  if (message.size() < sizeof header) return false;
  std::memcpy(&header, message.data(), sizeof header);
  out.id = static_cast<RequestId>(header.id);
  out.message = message;
  if (header.size < 0 || static_cast<std::size_t>(header.size) != message.size()) return false;
  WireReader body(message.subspan(sizeof header));
  switch (out.id) {
    case RequestId::kJoin:
    case RequestId::kLeave:
    case RequestId::kMembers:
    case RequestId::kGroupMembers: return read_group_only(body, out);
    case RequestId::kMcast:
    case RequestId::kMcastAsync: return read_mcast(body, out);
    case RequestId::kLocalNodeId:
    case RequestId::kStatus:
    case RequestId::kStats:
    case RequestId::kDataMax:
    case RequestId::kSync:
    case RequestId::kQuorum: return true;
    case RequestId::kQuorumSet: return read_quorum_set(body, out);
    case RequestId::kQuorumTrack:
      out.quorum_track = body.get_u8();
      return !body.short_read() && body.at_end() && out.quorum_track <= ipc::kQuorumTrackStateOnly;
    case RequestId::kKeyGet:
    case RequestId::kKeyDelete: return read_key(body, out, false) && at_end(body);
    case RequestId::kKeyList: return read_key(body, out, true) && at_end(body);
    case RequestId::kKeySet: return read_key(body, out, false) && read_value(body, out) && at_end(body);
    case RequestId::kKeyTrack: {
      if (!read_key(body, out, true)) return false;
      out.track_flags = body.get_u32();
      return at_end(body);
    }
    case RequestId::kKeyUntrack: out.track_id = body.get_u64(); return at_end(body);
    case RequestId::kNodeAddresses:
    case RequestId::kQuorumNode: out.node = body.get_u32(); return at_end(body);
    case RequestId::kShutdown: return read_flag(body, out, ipc::kShutdownImmediate);
    case RequestId::kKeyMap: return read_flag(body, out, ipc::kKeyMapStats);
    case RequestId::kClientService: return read_flag(body, out, ipc::kServiceNative);
    case RequestId::kShutdownTrack:
    case RequestId::kRingTrack:
    case RequestId::kShutdownReply: return read_flag(body, out, 1);
    case RequestId::kKillNode: {
      out.node = body.get_u32();
      const auto reason = ipc::read_string(body, ipc::kReasonMax);
      if (!reason) return false;
      out.reason = *reason;
      return at_end(body);
    }
    case RequestId::kReload:
    case RequestId::kReopenLogs: return true;
    case RequestId::kQuorumDevice: return read_quorum_device(body, out);
  }
  return false;  // an id this daemon does not know
}

}  // namespace rtotem::stack
