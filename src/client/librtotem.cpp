// The C API of include/rtotem/rtotem.h over a ClientConnection: libqb's IpcConnection, or the
// simulator's memory. Multicasts go without waiting, within the credit window the daemon granted
// (ipc_protocol.hpp); every other request, and a multicast past the window or too large for it,
// waits for its answer. A message larger than one multicast goes, and comes, in pieces
// (message_pieces.hpp). Events are decoded into scratch storage owned by the handle, valid for the
// callback's duration.
#include <qb/qbipc_common.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "src/client/ipc_connection.hpp"
#include "src/client/librtotem_handle.hpp"

using rtotem::WireReader;
using rtotem::client::call;
using rtotem::client::Event;
using rtotem::client::IpcConnection;
using rtotem::client::PieceAssembler;
using rtotem::client::Reply;
using rtotem::ipc::EventId;
using rtotem::ipc::RequestId;

namespace {

bool valid_group(const char* group) {
  if (group == nullptr) return false;
  const std::size_t n = strnlen(group, RTOTEM_GROUP_NAME_MAX + 1);
  return n >= 1 && n <= RTOTEM_GROUP_NAME_MAX;
}

// libqb's ways of saying the daemon is gone, as the C API says it.
int gone_as_notconn(int rc) { return rc == -ENOTCONN || rc == -ESHUTDOWN || rc == -EPIPE ? -ENOTCONN : rc; }

int group_request(rtotem_t* h, RequestId id, const char* group, Reply& reply) {
  if (h == nullptr || !valid_group(group)) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.string(group);
  return call(h, id, body.data(), reply);
}

bool read_members(WireReader& in, std::vector<rtotem_member>& out, std::vector<rtotem_reason>* reasons) {
  const std::uint32_t count = in.get_u32();
  const std::size_t each = reasons != nullptr ? 9 : 8;
  if (in.short_read() || count > in.remaining() / each) return false;
  out.resize(count);
  if (reasons != nullptr) reasons->resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    out[i].nodeid = in.get_u32();
    out[i].pid = in.get_u32();
    if (reasons != nullptr) (*reasons)[i] = static_cast<rtotem_reason>(in.get_u8());
  }
  return !in.short_read();
}

// Decodes one event and runs its callback. -EPROTO: the daemon sent something this library
// does not understand (a version mismatch).
int handle(rtotem_t* h, const Event& event) {
  WireReader in(event.body);
  switch (event.id) {
    case EventId::kDeliver: {
      rtotem_message m{};
      m.nodeid = in.get_u32();
      m.pid = in.get_u32();
      const std::uint8_t mode = in.get_u8();
      m.order = (mode & rtotem::ipc::kModeSafe) != 0 ? RTOTEM_SAFE : RTOTEM_AGREED;
      const auto group = rtotem::ipc::read_string(in, RTOTEM_GROUP_NAME_MAX);
      if (!group || (mode & ~(rtotem::ipc::kModeSafe | rtotem::ipc::kModePiece)) != 0) return -EPROTO;
      h->group.assign(*group);
      auto data = in.get_rest();
      std::vector<std::byte> whole;  // a message of pieces, freed once its callback returns
      if ((mode & rtotem::ipc::kModePiece) != 0) {
        if (h->pieces.add({m.nodeid, m.pid}, h->group, data) != PieceAssembler::Outcome::kComplete) return 0;
        whole = h->pieces.take_message();
        data = whole;
      }
      m.group = h->group.c_str();
      m.data = data.data();
      m.len = data.size();
      if (h->callbacks.deliver) h->callbacks.deliver(h, &m, h->ctx);
      return 0;
    }
    case EventId::kGroupChange: {
      const auto group = rtotem::ipc::read_string(in, RTOTEM_GROUP_NAME_MAX);
      if (!group || !read_members(in, h->members, nullptr) || !read_members(in, h->joined, &h->joined_reasons) ||
          !read_members(in, h->left, &h->reasons))
        return -EPROTO;
      // Whether it is this connection's own join or leave: absent from an older daemon.
      const std::uint8_t flags = in.at_end() ? 0 : in.get_u8();
      h->group.assign(*group);
      h->pieces.changed(h->group, h->left, (flags & rtotem::ipc::kChangeOwn) != 0);
      const rtotem_group_change c{h->group.c_str(), h->members.data(), h->members.size(),
                                  h->joined.data(), h->joined.size(),  h->left.data(),
                                  h->left.size(),   h->reasons.data(), h->joined_reasons.data()};
      if (h->callbacks.group_change) h->callbacks.group_change(h, &c, h->ctx);
      return 0;
    }
    case EventId::kRingChange: {
      rtotem_ring_change c{};
      c.rep_nodeid = in.get_u32();
      c.ring_seq = in.get_u64();
      c.transitional = in.get_u8();
      const std::uint32_t count = in.get_u32();
      if (in.short_read() || count > in.remaining() / 4) return -EPROTO;
      h->nodeids.resize(count);
      for (auto& id : h->nodeids) id = in.get_u32();
      c.nodeids = h->nodeids.data();
      c.n_nodes = count;
      if (h->callbacks.ring_change) h->callbacks.ring_change(h, &c, h->ctx);
      return 0;
    }
    case EventId::kCredit: {
      const std::uint64_t taken = in.get_u64();
      if (in.short_read()) return -EPROTO;
      h->taken = std::max(h->taken, taken);
      return 0;
    }
    case EventId::kMcastFailed: {
      const auto error = static_cast<std::int32_t>(in.get_u32());
      const auto group = rtotem::ipc::read_string(in, RTOTEM_GROUP_NAME_MAX);
      if (!group || error >= 0) return -EPROTO;
      h->group.assign(*group);
      if (h->mcast_failed) h->mcast_failed(h, h->group.c_str(), error, h->ctx);
      return 0;
    }
    case EventId::kQuorumChange: return rtotem::client::quorum_event(h, in);
    case EventId::kKeyChange: return rtotem::client::key_event(h, in);
    case EventId::kShutdownQuery: return rtotem::client::shutdown_event(h, in);
    case EventId::kBatch: break;  // opened by the connection, never nested
  }
  return -EPROTO;
}

// What a kMcast, kSync or kJoin answer says of the credit (an older daemon's says nothing).
void learn_credit(rtotem_t* h, const Reply& reply) {
  if (reply.body.size() < rtotem::ipc::kMcastReplySize) return;
  WireReader in(reply.body);
  h->window = in.get_u32();
  h->taken = std::max(h->taken, in.get_u64());
  h->data_max = in.get_u32();
}

// A kMcast or kSync request: its outcome, and the credit its answer brings.
int call_for_credit(rtotem_t* h, RequestId id, std::span<const std::byte> body = {},
                    std::span<const std::byte> data = {}) {
  Reply reply;
  const int rc = call(h, id, body, reply, data);
  learn_credit(h, reply);
  return rc;
}

}  // namespace

int rtotem::client::call(rtotem_t* h, RequestId id, std::span<const std::byte> body, Reply& reply,
                         std::span<const std::byte> tail) {
  if (h == nullptr) return -EINVAL;
  const int rc = h->connection->request(id, body, reply, tail);
  if (rc < 0) return gone_as_notconn(rc);
  return reply.error;
}

int rtotem::client::open_handle(std::unique_ptr<ClientConnection> connection, const rtotem_callbacks* cb, void* ctx,
                                rtotem_t** out) {
  std::unique_ptr<rtotem_t> h(new (std::nothrow) rtotem_t);
  if (!h) return -ENOMEM;
  h->connection = std::move(connection);
  if (cb != nullptr) h->callbacks = *cb;
  h->ctx = ctx;
  if (h->callbacks.ring_change == nullptr) {  // no ring changes, past the current ring sent at once
    rtotem::ipc::BodyWriter& body = h->request;
    body.clear();
    body.u8(0);
    Reply reply;
    // A daemon older than kRingTrack answers -EINVAL: it goes on sending them, to no callback.
    if (const int rc = call(h.get(), RequestId::kRingTrack, body.data(), reply); rc < 0 && rc != -EINVAL) return rc;
  }
  *out = h.release();  // owned by the caller until rtotem_disconnect
  return 0;
}

extern "C" {

int rtotem_connect(rtotem_t** out, const char* ipc_name, const rtotem_callbacks* cb, void* ctx) {
  if (out == nullptr) return -EINVAL;
  *out = nullptr;
  auto connection = IpcConnection::open(ipc_name != nullptr ? ipc_name : "");
  if (!connection) return -connection.error().errnum();
  return rtotem::client::open_handle(std::move(connection).value(), cb, ctx, out);
}

int rtotem_client_service(rtotem_t* h, unsigned service) {
  static_assert(RTOTEM_SERVICE_NATIVE == rtotem::ipc::kServiceNative);
  if (h == nullptr || service > RTOTEM_SERVICE_NATIVE) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(static_cast<std::uint8_t>(service));
  Reply reply;
  return rtotem::client::call(h, RequestId::kClientService, body.data(), reply);
}

// Multicasts sent without an answer are taken by the daemon first (rtotem_flush), and it puts
// them on the ring after the connection is gone. Lost all the same: those it has not read after
// 5 s of a full request queue, and those the ring cannot take yet past the daemon's bound on
// what departed clients leave waiting (16 MiB together: rtotem.h).
void rtotem_disconnect(rtotem_t* h) {
  // The request ring may be full of them: the flush waits its turn (the daemon is reading).
  for (int tries = 0; h != nullptr && h->sent != h->taken && tries < 5000; ++tries) {
    if (rtotem_flush(h) != -EAGAIN || h->connection->wait_for_ring(std::chrono::milliseconds(1)) < 0) break;
  }
  std::unique_ptr<rtotem_t>{h};
}

int rtotem_join(rtotem_t* h, const char* group) {
  Reply reply;
  const int rc = group_request(h, RequestId::kJoin, group, reply);
  if (rc == 0) {
    learn_credit(h, reply);
    h->joined_groups.emplace(group);  // -EEXIST may be another handle of this process
    // What was begun before is never finished here. The own join's change says so where it comes
    // in the stream; this is for an older daemon, which marks no change as this connection's.
    h->pieces.changed(group, {}, true);
  }
  return rc;
}

int rtotem_leave(rtotem_t* h, const char* group) {
  Reply reply;
  const int rc = group_request(h, RequestId::kLeave, group, reply);
  if (rc == 0 || rc == -ENOENT) {
    const auto it = h->joined_groups.find(std::string_view(group));
    if (it != h->joined_groups.end()) h->joined_groups.erase(it);
  }
  return rc;
}

namespace {

// The request's body before the data: the mode, the group, and a piece's header.
void mcast_head(rtotem_t* h, const char* group, rtotem_order order, const std::byte* piece_header = nullptr) {
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  const std::uint8_t safe = order == RTOTEM_SAFE ? rtotem::ipc::kModeSafe : 0;
  body.u8(piece_header != nullptr ? safe | rtotem::ipc::kModePiece : safe);
  body.string(group);
  if (piece_header != nullptr) body.bytes(std::span(piece_header, rtotem::client::kPieceHeaderSize));
}

// mcast_prepare's answer for a message too large for one multicast: send it in pieces.
constexpr int kSendInPieces = 1;

// The checks the library makes itself, then the request's body (the data follows it uncopied):
// 0, kSendInPieces, or a negative errno.
int mcast_prepare(rtotem_t* h, const char* group, const void* data, size_t len, rtotem_order order) {
  if (h == nullptr || !valid_group(group) || (data == nullptr && len > 0) ||
      (order != RTOTEM_AGREED && order != RTOTEM_SAFE))
    return -EINVAL;
  if (!h->joined_groups.contains(std::string_view(group))) return -ENOTCONN;
  if (len > RTOTEM_MESSAGE_MAX) return -EMSGSIZE;
  if (h->data_max == 0 && len > 0) {
    if (const int rc = rtotem_max_message_size(h, &h->data_max); rc < 0) return rc;
  }
  if (len > h->data_max) return h->data_max > rtotem::client::kPieceHeaderSize ? kSendInPieces : -EMSGSIZE;
  mcast_head(h, group, order);
  return 0;
}

// A message too large for one multicast: its pieces, each answered. Only the first may be refused
// for back-pressure (nothing went); a later one is retried, since its members hold the rest.
int mcast_pieces(rtotem_t* h, const char* group, const void* data, size_t len, rtotem_order order) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kPieceWaitMax = std::chrono::seconds(30);
  const auto* bytes = static_cast<const std::byte*>(data);
  const std::size_t each = h->data_max - rtotem::client::kPieceHeaderSize;
  std::array<std::byte, rtotem::client::kPieceHeaderSize> header{};
  const Clock::time_point deadline = Clock::now() + kPieceWaitMax;
  auto pause = std::chrono::milliseconds(1);
  for (std::size_t at = 0; at < len;) {
    const std::size_t size = std::min(each, len - at);
    rtotem::client::put_piece_header(header, at == 0, len);
    mcast_head(h, group, order, header.data());
    const int rc = call_for_credit(h, RequestId::kMcast, h->request.data(), std::span(bytes + at, size));
    if (rc == -EAGAIN && at > 0) {
      if (Clock::now() >= deadline || h->connection->wait_for_ring(pause) < 0) return -ETIMEDOUT;
      pause = std::min(pause * 2, std::chrono::milliseconds(100));
      continue;
    }
    if (rc != 0) return rc;
    at += size;
  }
  return 0;
}

}  // namespace

int rtotem_mcast(rtotem_t* h, const char* group, const void* data, size_t len, rtotem_order order) {
  if (const int rc = mcast_prepare(h, group, data, len, order); rc != 0)
    return rc == kSendInPieces ? mcast_pieces(h, group, data, len, order) : rc;
  const std::span<const std::byte> body = h->request.data();
  const std::span payload(static_cast<const std::byte*>(data), len);
  const std::size_t size = sizeof(qb_ipc_request_header) + body.size() + len;
  // Not heard yet, or too large for the window: answered, and the answer brings the credit.
  if (h->window == 0 || size > rtotem::ipc::kMcastAsyncMax) return call_for_credit(h, RequestId::kMcast, body, payload);
  const std::uint64_t cost = rtotem::ipc::credit_cost(size);
  // The window is used up: the credit comes back as an event (rtotem_dispatch), not by asking.
  if (h->sent - h->taken + cost > h->window) return -EAGAIN;
  const int rc = h->connection->send(RequestId::kMcastAsync, body, payload);
  if (rc == 0) h->sent += cost;
  return gone_as_notconn(rc);
}

int rtotem_mcast_sync(rtotem_t* h, const char* group, const void* data, size_t len, rtotem_order order) {
  if (const int rc = mcast_prepare(h, group, data, len, order); rc != 0)
    return rc == kSendInPieces ? mcast_pieces(h, group, data, len, order) : rc;
  return call_for_credit(h, RequestId::kMcast, h->request.data(), std::span(static_cast<const std::byte*>(data), len));
}

int rtotem_flush(rtotem_t* h) { return call_for_credit(h, RequestId::kSync); }

int rtotem_set_mcast_failed(rtotem_t* h, rtotem_mcast_failed_fn failed) {
  if (h == nullptr) return -EINVAL;
  h->mcast_failed = failed;
  return 0;
}

int rtotem_fd(rtotem_t* h) { return h == nullptr ? -EINVAL : h->connection->fd(); }

int rtotem_dispatch(rtotem_t* h, int flags) {
  if (h == nullptr || flags < RTOTEM_DISPATCH_ONE || flags > RTOTEM_DISPATCH_BLOCKING) return -EINVAL;
  const int timeout_ms = flags == RTOTEM_DISPATCH_BLOCKING ? -1 : 0;
  for (;;) {
    Event event;
    const int got = h->connection->next_event(event, timeout_ms);
    if (got < 0) return gone_as_notconn(got);
    if (got == 0) return 0;
    if (const int rc = handle(h, event); rc < 0) return rc;
    if (flags == RTOTEM_DISPATCH_ONE && !h->connection->batch_open()) return 0;
  }
}

int rtotem_group_members(rtotem_t* h, const char* group, rtotem_group_members_fn each, void* ctx) {
  if (h == nullptr || each == nullptr) return -EINVAL;
  const std::string_view name = group != nullptr ? group : "";
  if (name.size() > RTOTEM_GROUP_NAME_MAX) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.string(name);
  Reply reply;
  if (const int rc = call(h, RequestId::kGroupMembers, body.data(), reply); rc < 0) return rc;
  WireReader in(reply.body);
  std::uint32_t groups = in.get_u32();
  std::string this_group;
  std::vector<rtotem_member> members;
  for (; groups > 0 && !in.short_read(); --groups) {
    const auto got = rtotem::ipc::read_string(in, RTOTEM_GROUP_NAME_MAX);
    const std::uint32_t count = in.get_u32();
    if (!got || in.short_read() || count > in.remaining() / 8) return -EPROTO;
    this_group.assign(*got);
    members.resize(count);
    for (rtotem_member& m : members) {
      m.nodeid = in.get_u32();
      m.pid = in.get_u32();
    }
    if (each(this_group.c_str(), members.data(), members.size(), ctx) != 0) return 0;
  }
  return in.short_read() || !in.at_end() ? -EPROTO : 0;
}

int rtotem_local_nodeid(rtotem_t* h, uint32_t* out) {
  if (out == nullptr) return -EINVAL;
  Reply reply;
  if (const int rc = call(h, RequestId::kLocalNodeId, {}, reply); rc < 0) return rc;
  WireReader in(reply.body);
  *out = in.get_u32();
  return in.short_read() ? -EPROTO : 0;
}

int rtotem_max_message_size(rtotem_t* h, size_t* out) {
  if (out == nullptr) return -EINVAL;
  Reply reply;
  if (const int rc = call(h, RequestId::kDataMax, {}, reply); rc < 0) return rc;
  WireReader in(reply.body);
  *out = in.get_u32();
  return in.short_read() ? -EPROTO : 0;
}

int rtotem_messages_dropped(rtotem_t* h, uint64_t* out) {
  if (h == nullptr || out == nullptr) return -EINVAL;
  *out = h->pieces.evicted();
  return 0;
}

const char* rtotem_strerror(int err) {
  switch (err) {
    case 0: return "success";
    case -EAGAIN:
      return "try again: the ring is busy (back-pressure: for rtotem_mcast, its credit window is full), or still "
             "forming";
    case -ENOTCONN: return "not connected: the daemon is gone, or the group was not joined";
    case -ECONNREFUSED: return "no rtotemd answers at this IPC name";
    case -EMSGSIZE: return "message larger than RTOTEM_MESSAGE_MAX (64 MiB)";
    case -ETIMEDOUT: return "a message sent in pieces was cut short: the ring refused its rest for 30 s";
    case -EEXIST: return "already joined to that group";
    case -ENOENT: return "not joined to that group";
    case -EINVAL: return "invalid argument (a group name is 1..128 bytes)";
    case -EACCES: return "permission denied: not root, the daemon's user, or allowed by its ipc section";
    case -EPROTO: return "protocol error: librtotem and rtotemd versions differ";
    case -ESHUTDOWN: return "the daemon is shutting down";
    default: return err < 0 ? std::strerror(-err) : "unknown error";
  }
}

}  // extern "C"
