// decode_request: the requests librtotem and rtotemctl send decode to what they asked; messages
// that break the framing or a body's form are refused, and a refusal keeps the header's id.
#include "src/stack/ipc_request.hpp"

#include <gtest/gtest.h>
#include <qb/qbipc_common.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "src/services/groups/group_service.hpp"

namespace rtotem::stack {
namespace {

using ipc::RequestId;
using Bytes = std::vector<std::byte>;

// A message as libqb hands it over: the header (its size the whole message's), then `body`.
Bytes message(RequestId id, ipc::BodyWriter body) {
  qb_ipc_request_header header{};
  header.id = static_cast<std::int32_t>(id);
  const auto& bytes = body.data();
  header.size = static_cast<std::int32_t>(sizeof header + bytes.size());
  Bytes out(sizeof header + bytes.size());
  std::memcpy(out.data(), &header, sizeof header);
  if (!bytes.empty()) std::memcpy(out.data() + sizeof header, bytes.data(), bytes.size());
  return out;
}

ipc::BodyWriter group_body(std::string_view group) {
  ipc::BodyWriter body;
  body.string(group);
  return body;
}

TEST(IpcRequest, GroupRequestsDecodeToTheirGroup) {
  for (RequestId id : {RequestId::kJoin, RequestId::kLeave, RequestId::kMembers, RequestId::kGroupMembers}) {
    const Bytes bytes = message(id, group_body("orders"));  // the request views into it
    IpcRequest request;
    ASSERT_TRUE(decode_request(bytes, request));
    EXPECT_EQ(request.id, id);
    EXPECT_EQ(request.group, "orders");
  }
}

TEST(IpcRequest, McastCarriesOrderGroupAndTheRestAsData) {
  for (RequestId id : {RequestId::kMcast, RequestId::kMcastAsync}) {
    ipc::BodyWriter body;
    body.u8(1);
    body.string("orders");
    body.u32(0xdeadbeef);
    const Bytes bytes = message(id, body);
    IpcRequest request;
    ASSERT_TRUE(decode_request(bytes, request));
    EXPECT_EQ(request.id, id);
    EXPECT_EQ(request.order, membership::Delivery::kSafe);
    EXPECT_EQ(request.group, "orders");
    EXPECT_EQ(request.data.size(), 4u);
    EXPECT_EQ(request.message.data(), bytes.data());  // the whole request, kept to stage it
    EXPECT_EQ(request.message.size(), bytes.size());
    EXPECT_FALSE(request.piece);
  }
  // A piece of a larger message, in agreed order.
  ipc::BodyWriter piece;
  piece.u8(ipc::kModePiece);
  piece.string("orders");
  IpcRequest request;
  ASSERT_TRUE(decode_request(message(RequestId::kMcast, piece), request));
  EXPECT_TRUE(request.piece);
  EXPECT_EQ(request.order, membership::Delivery::kAgreed);
  EXPECT_FALSE(ipc::answered(RequestId::kMcastAsync));
  EXPECT_TRUE(ipc::answered(RequestId::kMcast));
}

TEST(IpcRequest, QueriesNeedNoBody) {
  for (RequestId id : {RequestId::kLocalNodeId, RequestId::kStatus, RequestId::kStats, RequestId::kDataMax,
                       RequestId::kSync, RequestId::kQuorum, RequestId::kReopenLogs}) {
    IpcRequest request;
    EXPECT_TRUE(decode_request(message(id, ipc::BodyWriter{}), request));
    EXPECT_EQ(request.id, id);
  }
}

ipc::BodyWriter quorum_set_body(std::uint8_t what, std::uint32_t node, std::uint32_t value) {
  ipc::BodyWriter body;
  body.u8(what);
  body.u32(node);
  body.u32(value);
  return body;
}

TEST(IpcRequest, AQuorumChangeCarriesWhatNodeAndValueAndNothingElse) {
  IpcRequest request;
  ASSERT_TRUE(decode_request(message(RequestId::kQuorumSet, quorum_set_body(ipc::kQuorumSetVotes, 2, 3)), request));
  EXPECT_EQ(request.quorum_what, ipc::kQuorumSetVotes);
  EXPECT_EQ(request.quorum_node, 2u);
  EXPECT_EQ(request.quorum_value, 3u);
  ASSERT_TRUE(decode_request(message(RequestId::kQuorumSet, quorum_set_body(ipc::kQuorumSetExpected, 0, 5)), request));
  EXPECT_EQ(request.quorum_what, ipc::kQuorumSetExpected);
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumSet, quorum_set_body(3, 0, 5)), request)) << "unknown what";
  ipc::BodyWriter longer = quorum_set_body(ipc::kQuorumSetVotes, 2, 3);
  longer.u8(0);
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumSet, longer), request));
  ipc::BodyWriter shorter;
  shorter.u8(ipc::kQuorumSetExpected);
  shorter.u32(0);
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumSet, shorter), request));
}

TEST(IpcRequest, ANodeQueryCarriesANodeIdAndNothingElse) {
  for (RequestId id : {RequestId::kQuorumNode, RequestId::kNodeAddresses}) {
    IpcRequest request;
    ipc::BodyWriter body;
    body.u32(7);
    ASSERT_TRUE(decode_request(message(id, body), request));
    EXPECT_EQ(request.node, 7u);
    body.u8(0);
    EXPECT_FALSE(decode_request(message(id, body), request)) << "longer";
    EXPECT_FALSE(decode_request(message(id, ipc::BodyWriter{}), request)) << "empty";
  }
}

ipc::BodyWriter u8_body(std::uint8_t value) {
  ipc::BodyWriter body;
  body.u8(value);
  return body;
}

TEST(IpcRequest, TrackingAsksForAModeOfQuorumChangesAndRingsOnOrOff) {
  IpcRequest request;
  for (std::uint8_t mode = ipc::kQuorumTrackStop; mode <= ipc::kQuorumTrackStateOnly; ++mode) {
    ASSERT_TRUE(decode_request(message(RequestId::kQuorumTrack, u8_body(mode)), request));
    EXPECT_EQ(request.quorum_track, mode);
  }
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumTrack, u8_body(ipc::kQuorumTrackStateOnly + 1)), request));
  ipc::BodyWriter longer = u8_body(ipc::kQuorumTrackRings);
  longer.u8(0);
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumTrack, longer), request)) << "longer";
  for (std::uint8_t on : {0, 1}) {
    ASSERT_TRUE(decode_request(message(RequestId::kRingTrack, u8_body(on)), request));
    EXPECT_EQ(request.flag, on);
  }
  EXPECT_FALSE(decode_request(message(RequestId::kRingTrack, u8_body(2)), request));
  EXPECT_FALSE(decode_request(message(RequestId::kRingTrack, ipc::BodyWriter{}), request)) << "empty";
}

TEST(IpcRequest, AKeyMapIsTheStoreOrTheStatistics) {
  IpcRequest request;
  for (std::uint8_t map : {ipc::kKeyMapDefault, ipc::kKeyMapStats}) {
    ASSERT_TRUE(decode_request(message(RequestId::kKeyMap, u8_body(map)), request));
    EXPECT_EQ(request.flag, map);
  }
  EXPECT_FALSE(decode_request(message(RequestId::kKeyMap, u8_body(ipc::kKeyMapStats + 1)), request));
  EXPECT_FALSE(decode_request(message(RequestId::kKeyMap, ipc::BodyWriter{}), request)) << "empty";
}

TEST(IpcRequest, AClientServiceIsCorosyncsNumberOrNative) {
  IpcRequest request;
  for (std::uint8_t service : {std::uint8_t{0}, std::uint8_t{5}, ipc::kServiceNative}) {
    ASSERT_TRUE(decode_request(message(RequestId::kClientService, u8_body(service)), request));
    EXPECT_EQ(request.flag, service);
  }
  EXPECT_FALSE(decode_request(message(RequestId::kClientService, u8_body(ipc::kServiceNative + 1)), request));
  EXPECT_FALSE(decode_request(message(RequestId::kClientService, ipc::BodyWriter{}), request)) << "empty";
}

TEST(IpcRequest, AQuorumDeviceCallCarriesItsNamesAndWhatItSets) {
  auto body = [](std::uint8_t op, std::string_view name) {
    ipc::BodyWriter b;
    b.u8(op);
    b.string(name);
    return b;
  };
  IpcRequest request;
  ipc::BodyWriter poll = body(ipc::kDevicePoll, "Qdevice");
  poll.u8(1);
  poll.u32(3);
  poll.u64(0x1'0000'0007);
  Bytes bytes = message(RequestId::kQuorumDevice, poll);
  ASSERT_TRUE(decode_request(bytes, request));
  EXPECT_EQ(request.device_op, ipc::kDevicePoll);
  EXPECT_EQ(request.device_name, "Qdevice");
  EXPECT_EQ(request.flag, 1);
  EXPECT_EQ(request.device_ring, (membership::RingId{3, 0x1'0000'0007}));

  ipc::BodyWriter update = body(ipc::kDeviceUpdate, "Old");
  update.string("New");
  bytes = message(RequestId::kQuorumDevice, update);
  ASSERT_TRUE(decode_request(bytes, request));
  EXPECT_EQ(request.device_name, "Old");
  EXPECT_EQ(request.device_new_name, "New");

  ipc::BodyWriter info;
  info.u8(ipc::kDeviceInfo);
  info.u32(2);
  bytes = message(RequestId::kQuorumDevice, info);
  ASSERT_TRUE(decode_request(bytes, request));
  EXPECT_EQ(request.node, 2U);

  EXPECT_TRUE(decode_request(message(RequestId::kQuorumDevice, body(ipc::kDeviceRegister, "Qdevice")), request));
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumDevice, body(ipc::kDeviceRegister, "")), request)) << "no name";
  EXPECT_FALSE(
      decode_request(message(RequestId::kQuorumDevice, body(ipc::kDeviceRegister, std::string(255, 'q'))), request))
      << "longer than votequorum's";
  EXPECT_FALSE(
      decode_request(message(RequestId::kQuorumDevice, body(ipc::kDeviceRegister, std::string("Q\0d", 3))), request))
      << "a NUL inside";
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumDevice, body(9, "Qdevice")), request)) << "no such op";
  ipc::BodyWriter allow = body(ipc::kDeviceMasterWins, "Qdevice");
  allow.u8(2);
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumDevice, allow), request)) << "allow is 0 or 1";
  ipc::BodyWriter longer = body(ipc::kDeviceUnregister, "Qdevice");
  longer.u8(0);
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumDevice, longer), request)) << "trailing bytes";
  ipc::BodyWriter cut = body(ipc::kDevicePoll, "Qdevice");
  cut.u8(1);
  EXPECT_FALSE(decode_request(message(RequestId::kQuorumDevice, cut), request)) << "no ring";
}

TEST(IpcRequest, RefusesBrokenFraming) {
  IpcRequest request;
  const Bytes good = message(RequestId::kJoin, group_body("g"));
  EXPECT_FALSE(decode_request(std::span(good).first(sizeof(qb_ipc_request_header) - 1), request));
  Bytes longer = good;
  longer.push_back(std::byte{0});  // the header's size no longer covers the message
  EXPECT_FALSE(decode_request(longer, request));
  EXPECT_EQ(request.id, RequestId::kJoin);  // still known: the refusal is answered under it
  Bytes negative = good;
  const std::int32_t size = -1;
  std::memcpy(negative.data() + offsetof(qb_ipc_request_header, size), &size, sizeof size);
  EXPECT_FALSE(decode_request(negative, request));
}

TEST(IpcRequest, RefusesUnknownIdsAndBrokenBodies) {
  IpcRequest request;
  EXPECT_FALSE(decode_request(message(static_cast<RequestId>(99), ipc::BodyWriter{}), request));
  EXPECT_EQ(static_cast<int>(request.id), 99);
  EXPECT_FALSE(decode_request(message(RequestId::kJoin, ipc::BodyWriter{}), request));
  ipc::BodyWriter trailing = group_body("g");
  trailing.u8(0);
  EXPECT_FALSE(decode_request(message(RequestId::kLeave, trailing), request));
  const std::string too_long(groups::kGroupNameMax + 1, 'x');
  EXPECT_FALSE(decode_request(message(RequestId::kMembers, group_body(too_long)), request));
  ipc::BodyWriter bad_order;
  bad_order.u8(4);  // a mode bit beyond safe and piece
  bad_order.string("g");
  EXPECT_FALSE(decode_request(message(RequestId::kMcast, bad_order), request));
  ipc::BodyWriter short_string;
  short_string.u32(5);  // announces five bytes, holds none
  EXPECT_FALSE(decode_request(message(RequestId::kJoin, short_string), request));
}

}  // namespace
}  // namespace rtotem::stack
