// A client's request exactly as libqb hands it to rtotemd (header, then body), through the
// daemon's own decoder (decode_request, which IpcServer::on_message calls). Checked, beyond "no
// crash, no bad read":
// - a message with a header always yields its id, accepted or not (the answer repeats it);
// - an accepted request's group and key are within their limits and its strings lie inside the message;
// - a request with a body, written again as librtotem and rtotemctl write it, has the very same
//   body (the header is checked field by field: libqb's struct has padding no one reads); one
//   without (a query) decodes again to the same request from its header alone.
#include <qb/qbipc_common.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "src/services/groups/group_service.hpp"
#include "src/stack/ipc_request.hpp"
#include "src/ipc/key_value.hpp"
#include "base/assert.hpp"

namespace rtotem::stack {
namespace {

using ipc::RequestId;
using Bytes = std::span<const std::byte>;

bool inside(Bytes part, Bytes whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

// The body of the request as a client writes it (ipc_protocol.hpp).
std::vector<std::byte> encode_body(const IpcRequest& request) {
  ipc::BodyWriter body;
  switch (request.id) {
    case RequestId::kJoin:
    case RequestId::kLeave:
    case RequestId::kMembers:
    case RequestId::kGroupMembers: body.string(request.group); break;
    case RequestId::kMcast:
    case RequestId::kMcastAsync:
      body.u8(static_cast<std::uint8_t>((request.order == membership::Delivery::kSafe ? ipc::kModeSafe : 0) |
                                        (request.piece ? ipc::kModePiece : 0)));
      body.string(request.group);
      body.bytes(request.data);
      break;
    case RequestId::kQuorumSet:
      body.u8(request.quorum_what);
      body.u32(request.quorum_node);
      body.u32(request.quorum_value);
      break;
    case RequestId::kQuorumTrack: body.u8(request.quorum_track); break;
    case RequestId::kKeyGet:
    case RequestId::kKeyDelete:
    case RequestId::kKeyList: body.string(request.key); break;
    case RequestId::kKeySet:
      body.string(request.key);
      ipc::put_value(body, {request.value_type, request.value_bits, std::string(request.value_data)});
      break;
    case RequestId::kKeyTrack:
      body.string(request.key);
      body.u32(request.track_flags);
      break;
    case RequestId::kKeyUntrack: body.u64(request.track_id); break;
    case RequestId::kNodeAddresses:
    case RequestId::kQuorumNode: body.u32(request.node); break;
    case RequestId::kShutdown:
    case RequestId::kShutdownTrack:
    case RequestId::kRingTrack:
    case RequestId::kKeyMap:
    case RequestId::kClientService:
    case RequestId::kShutdownReply: body.u8(request.flag); break;
    case RequestId::kKillNode:
      body.u32(request.node);
      body.string(request.reason);
      break;
    case RequestId::kQuorumDevice:
      body.u8(request.device_op);
      if (request.device_op == ipc::kDeviceInfo) {
        body.u32(request.node);
        break;
      }
      body.string(request.device_name);
      if (request.device_op == ipc::kDeviceUpdate) body.string(request.device_new_name);
      if (request.device_op == ipc::kDevicePoll || request.device_op == ipc::kDeviceMasterWins) body.u8(request.flag);
      if (request.device_op == ipc::kDevicePoll) {
        body.u32(request.device_ring.rep);
        body.u64(request.device_ring.seq);
      }
      break;
    default: break;  // the queries carry no body
  }
  return std::move(body.data());
}

// A whole message: the header (its padding zero, as a client's), then `body`.
std::vector<std::byte> frame(RequestId id, std::span<const std::byte> body) {
  qb_ipc_request_header header{};
  header.id = static_cast<std::int32_t>(id);
  header.size = static_cast<std::int32_t>(sizeof header + body.size());
  std::vector<std::byte> out(sizeof header + body.size());
  std::memcpy(out.data(), &header, sizeof header);
  if (!body.empty()) std::memcpy(out.data() + sizeof header, body.data(), body.size());
  return out;
}

// The queries, whose bodies the daemon does not read.
bool has_body(RequestId id) {
  return id != RequestId::kLocalNodeId && id != RequestId::kStatus && id != RequestId::kStats &&
         id != RequestId::kDataMax && id != RequestId::kSync && id != RequestId::kQuorum && id != RequestId::kReload &&
         id != RequestId::kReopenLogs;
}

}  // namespace
}  // namespace rtotem::stack

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rtotem::stack;
  const std::span<const std::byte> message(reinterpret_cast<const std::byte*>(data), size);
  IpcRequest request;
  request.id = static_cast<rtotem::ipc::RequestId>(-1);
  const bool accepted = decode_request(message, request);
  qb_ipc_request_header header{};
  if (size >= sizeof header) {
    std::memcpy(&header, data, sizeof header);
    RTOTEM_ASSERT(static_cast<std::int32_t>(request.id) == header.id);
  }
  if (!accepted) return 0;
  RTOTEM_ASSERT(header.size >= 0 && static_cast<std::size_t>(header.size) == size);
  RTOTEM_ASSERT(request.group.size() <= rtotem::groups::kGroupNameMax);
  RTOTEM_ASSERT(inside(std::as_bytes(std::span(request.group)), message));
  RTOTEM_ASSERT(inside(request.data, message));
  RTOTEM_ASSERT(inside(std::as_bytes(std::span(request.key)), message));
  RTOTEM_ASSERT(request.key.size() <= rtotem::ipc::kKeyNameMax && rtotem::ipc::valid_key_prefix(request.key));
  for (std::string_view name : {request.device_name, request.device_new_name})
    RTOTEM_ASSERT(name.size() <= rtotem::ipc::kDeviceNameMax && inside(std::as_bytes(std::span(name)), message));
  const std::vector<std::byte> body = encode_body(request);
  if (has_body(request.id)) {
    RTOTEM_ASSERT(std::ranges::equal(body, message.subspan(sizeof header)));
    return 0;
  }
  IpcRequest decoded;
  RTOTEM_ASSERT(decode_request(frame(request.id, body), decoded));
  RTOTEM_ASSERT(decoded.id == request.id && decoded.group.empty() && decoded.data.empty());
  return 0;
}
