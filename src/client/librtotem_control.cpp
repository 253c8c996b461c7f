// librtotem's node control calls (rtotem.h: rtotem_node_addresses, rtotem_shutdown*,
// rtotem_kill_node, rtotem_reload, rtotem_reopen_logs), over the daemon's requests of the same names.
#include <cerrno>
#include <cstring>

#include "src/client/librtotem_handle.hpp"

using rtotem::WireReader;
using rtotem::client::Reply;
using rtotem::ipc::RequestId;

namespace {

int call_u8(rtotem_t* h, RequestId id, std::uint8_t value) {
  if (h == nullptr) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(value);
  Reply reply;
  return rtotem::client::call(h, id, body.data(), reply);
}

}  // namespace

int rtotem::client::shutdown_event(rtotem_t* h, WireReader& in) {
  const std::uint8_t flags = in.get_u8();
  if (in.short_read() || !in.at_end()) return -EPROTO;
  if (h->shutdown_asked) h->shutdown_asked(h, flags, h->ctx);
  return 0;
}

int rtotem_node_addresses(rtotem_t* h, uint32_t nodeid, rtotem_node_address* out, size_t max, size_t* count) {
  if (h == nullptr || count == nullptr || (out == nullptr && max > 0)) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u32(nodeid);
  Reply reply;
  if (const int rc = rtotem::client::call(h, RequestId::kNodeAddresses, body.data(), reply); rc != 0) return rc;
  WireReader in(reply.body);
  const std::uint32_t n = in.get_u32();
  *count = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto address = rtotem::ipc::read_string(in, RTOTEM_ADDRESS_MAX - 1);
    if (!address) return -EPROTO;
    if (*count == max) continue;
    std::memcpy(out[*count].address, address->data(), address->size());
    out[*count].address[address->size()] = '\0';
    ++*count;
  }
  return in.at_end() ? 0 : -EPROTO;
}

int rtotem_shutdown(rtotem_t* h, int flags) {
  if (flags < RTOTEM_SHUTDOWN_REQUEST || flags > RTOTEM_SHUTDOWN_IMMEDIATE) return -EINVAL;
  return call_u8(h, RequestId::kShutdown, static_cast<std::uint8_t>(flags));
}

int rtotem_shutdown_track(rtotem_t* h, rtotem_shutdown_fn asked) {
  const int rc = call_u8(h, RequestId::kShutdownTrack, asked != nullptr ? 1 : 0);
  if (rc == 0) h->shutdown_asked = asked;
  return rc;
}

int rtotem_shutdown_reply(rtotem_t* h, int agree) { return call_u8(h, RequestId::kShutdownReply, agree ? 1 : 0); }

int rtotem_kill_node(rtotem_t* h, uint32_t nodeid, const char* reason) {
  if (h == nullptr || (reason != nullptr && std::strlen(reason) > rtotem::ipc::kReasonMax)) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u32(nodeid);
  body.string(reason != nullptr ? reason : "");
  Reply reply;
  return rtotem::client::call(h, RequestId::kKillNode, body.data(), reply);
}

int rtotem_reopen_logs(rtotem_t* h) {
  if (h == nullptr) return -EINVAL;
  Reply reply;
  return rtotem::client::call(h, RequestId::kReopenLogs, {}, reply);
}

int rtotem_reload(rtotem_t* h, char* message, size_t len) {
  if (h == nullptr || (message == nullptr && len > 0)) return -EINVAL;
  Reply reply;
  const int rc = rtotem::client::call(h, RequestId::kReload, {}, reply);
  if (message != nullptr && len > 0) {
    WireReader in(reply.body);
    const auto text = rtotem::ipc::read_string(in, reply.body.size());
    const std::size_t n = text ? std::min(text->size(), len - 1) : 0;
    if (n > 0) std::memcpy(message, text->data(), n);
    message[n] = '\0';
  }
  return rc;
}
