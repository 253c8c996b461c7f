// Decoding of a client's request: the header's framing, then the body its id calls for. A body is
// read with the same bounds as every wire form here: never past its end, and a string longer
// than its field's limit is refused before it is looked at.
#include "src/daemon/ipc_request.hpp"

#include <qb/qbipc_common.h>

#include <cstring>

#include "src/daemon/groups/group_service.hpp"

namespace rtotem::daemon {
namespace {

using ipc::RequestId;

// A group name alone, and nothing after it (kJoin, kLeave, kMembers).
bool read_group_only(membership::WireReader& body, IpcRequest& out) {
  const auto group = ipc::read_string(body, groups::kGroupNameMax);
  if (!group || !body.at_end()) return false;
  out.group = *group;
  return true;
}

// u8 order, the group, then the data to the end of the message.
bool read_mcast(membership::WireReader& body, IpcRequest& out) {
  const std::uint8_t order = body.get_u8();
  const auto group = ipc::read_string(body, groups::kGroupNameMax);
  if (!group || order > 1) return false;
  out.order = order == 1 ? membership::Delivery::kSafe : membership::Delivery::kAgreed;
  out.group = *group;
  out.data = body.get_rest();
  return true;
}

// u8 what, u32 node, u32 value, nothing after (kQuorumSet).
bool read_quorum_set(membership::WireReader& body, IpcRequest& out) {
  out.quorum_what = body.get_u8();
  out.quorum_node = body.get_u32();
  out.quorum_value = body.get_u32();
  if (body.short_read() || !body.at_end()) return false;
  return out.quorum_what == ipc::kQuorumSetVotes || out.quorum_what == ipc::kQuorumSetExpected;
}

}  // namespace

bool decode_request(std::span<const std::byte> message, IpcRequest& out) noexcept {
  qb_ipc_request_header header{};
  if (message.size() < sizeof header) return false;
  std::memcpy(&header, message.data(), sizeof header);
  out.id = static_cast<RequestId>(header.id);
  out.message = message;
  if (header.size < 0 || static_cast<std::size_t>(header.size) != message.size()) return false;
  membership::WireReader body(message.subspan(sizeof header));
  switch (out.id) {
    case RequestId::kJoin:
    case RequestId::kLeave:
    case RequestId::kMembers: return read_group_only(body, out);
    case RequestId::kMcast:
    case RequestId::kMcastAsync: return read_mcast(body, out);
    case RequestId::kLocalNodeId:
    case RequestId::kStatus:
    case RequestId::kStats:
    case RequestId::kDataMax:
    case RequestId::kSync:
    case RequestId::kQuorum: return true;
    case RequestId::kQuorumSet: return read_quorum_set(body, out);
    case RequestId::kQuorumTrack: {
      const std::uint8_t on = body.get_u8();
      out.quorum_track = on == 1;
      return !body.short_read() && body.at_end() && on <= 1;
    }
  }
  return false;  // an id this daemon does not know
}

}  // namespace rtotem::daemon
