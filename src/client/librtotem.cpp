// The C API of include/rtotem/rtotem.h over IpcConnection: requests are synchronous; events are
// decoded into scratch storage owned by the handle, valid for the callback's duration.
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "rtotem/rtotem.h"
#include "src/client/ipc_connection.hpp"

using rtotem::client::Event;
using rtotem::client::IpcConnection;
using rtotem::client::Reply;
using rtotem::ipc::EventId;
using rtotem::ipc::RequestId;
using rtotem::membership::WireReader;

struct rtotem_handle {
  std::unique_ptr<IpcConnection> connection;
  rtotem_callbacks callbacks{};
  void* ctx = nullptr;
  // A request being written, reused: a multicast allocates nothing once it has grown.
  rtotem::ipc::BodyWriter request;
  // Scratch for decoded events, reused.
  std::string group;
  std::vector<rtotem_member> members, joined, left;
  std::vector<rtotem_reason> reasons;
  std::vector<std::uint32_t> nodeids;
};

namespace {

bool valid_group(const char* group) {
  if (group == nullptr) return false;
  const std::size_t n = strnlen(group, RTOTEM_GROUP_NAME_MAX + 1);
  return n >= 1 && n <= RTOTEM_GROUP_NAME_MAX;
}

int call(rtotem_t* h, RequestId id, std::span<const std::byte> body, Reply& reply,
         std::span<const std::byte> tail = {}) {
  if (h == nullptr) return -EINVAL;
  const int rc = h->connection->request(id, body, reply, tail);
  if (rc < 0) return rc == -ENOTCONN || rc == -ESHUTDOWN || rc == -EPIPE ? -ENOTCONN : rc;
  return reply.error;
}

int group_request(rtotem_t* h, RequestId id, const char* group) {
  if (h == nullptr || !valid_group(group)) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.string(group);
  Reply reply;
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
      m.order = in.get_u8() == 1 ? RTOTEM_SAFE : RTOTEM_AGREED;
      const auto group = rtotem::ipc::read_string(in, RTOTEM_GROUP_NAME_MAX);
      if (!group) return -EPROTO;
      h->group.assign(*group);
      const auto data = in.get_rest();
      m.group = h->group.c_str();
      m.data = data.data();
      m.len = data.size();
      if (h->callbacks.deliver) h->callbacks.deliver(h, &m, h->ctx);
      return 0;
    }
    case EventId::kGroupChange: {
      const auto group = rtotem::ipc::read_string(in, RTOTEM_GROUP_NAME_MAX);
      if (!group || !read_members(in, h->members, nullptr) || !read_members(in, h->joined, nullptr) ||
          !read_members(in, h->left, &h->reasons))
        return -EPROTO;
      h->group.assign(*group);
      const rtotem_group_change c{h->group.c_str(), h->members.data(), h->members.size(), h->joined.data(),
                                  h->joined.size(), h->left.data(), h->left.size(), h->reasons.data()};
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
    case EventId::kBatch: break;  // opened by the connection, never nested
  }
  return -EPROTO;
}

}  // namespace

extern "C" {

int rtotem_connect(rtotem_t** out, const char* ipc_name, const rtotem_callbacks* cb, void* ctx) {
  if (out == nullptr) return -EINVAL;
  *out = nullptr;
  auto connection = IpcConnection::open(ipc_name != nullptr ? ipc_name : "");
  if (!connection) return -connection.error().errnum();
  std::unique_ptr<rtotem_t> h(new (std::nothrow) rtotem_t);
  if (!h) return -ENOMEM;
  h->connection = std::move(connection).value();
  if (cb != nullptr) h->callbacks = *cb;
  h->ctx = ctx;
  *out = h.release();  // owned by the caller until rtotem_disconnect
  return 0;
}

void rtotem_disconnect(rtotem_t* h) { std::unique_ptr<rtotem_t>{h}; }

int rtotem_join(rtotem_t* h, const char* group) { return group_request(h, RequestId::kJoin, group); }

int rtotem_leave(rtotem_t* h, const char* group) { return group_request(h, RequestId::kLeave, group); }

int rtotem_mcast(rtotem_t* h, const char* group, const void* data, size_t len, rtotem_order order) {
  if (h == nullptr || !valid_group(group) || (data == nullptr && len > 0) ||
      (order != RTOTEM_AGREED && order != RTOTEM_SAFE))
    return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(order == RTOTEM_SAFE ? 1 : 0);
  body.string(group);
  Reply reply;  // the payload goes straight from the caller's memory into the shared-memory ring
  return call(h, RequestId::kMcast, body.data(), reply, std::span(static_cast<const std::byte*>(data), len));
}

int rtotem_fd(rtotem_t* h) { return h == nullptr ? -EINVAL : h->connection->fd(); }

int rtotem_dispatch(rtotem_t* h, int flags) {
  if (h == nullptr || flags < RTOTEM_DISPATCH_ONE || flags > RTOTEM_DISPATCH_BLOCKING) return -EINVAL;
  const int timeout_ms = flags == RTOTEM_DISPATCH_BLOCKING ? -1 : 0;
  for (;;) {
    Event event;
    const int got = h->connection->next_event(event, timeout_ms);
    if (got < 0) return got == -ESHUTDOWN || got == -ENOTCONN || got == -EPIPE ? -ENOTCONN : got;
    if (got == 0) return 0;
    if (const int rc = handle(h, event); rc < 0) return rc;
    if (flags == RTOTEM_DISPATCH_ONE && !h->connection->batch_open()) return 0;
  }
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

const char* rtotem_strerror(int err) {
  switch (err) {
    case 0: return "success";
    case -EAGAIN: return "try again: the ring is busy (back-pressure) or still forming";
    case -ENOTCONN: return "not connected: the daemon is gone, or the group was not joined";
    case -ECONNREFUSED: return "no rtotemd answers at this IPC name";
    case -EMSGSIZE: return "message larger than the cluster's totem.max_message_size";
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
