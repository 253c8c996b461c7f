#include "src/client/client_connection.hpp"

#include <qb/qbipc_common.h>

#include <cerrno>
#include <cstring>

namespace rtotem::client {
namespace {

// The header and the iovecs of a request whose body is `body` then `tail`; false if it cannot
// fit in `limit` bytes (checked term by term: a caller's length near SIZE_MAX must not wrap).
bool frame(ipc::RequestId id, std::span<const std::byte> body, std::span<const std::byte> tail, std::size_t limit,
           qb_ipc_request_header& header, iovec (&iov)[3]) {
  if (body.size() > limit - sizeof header || tail.size() > limit - sizeof header - body.size()) return false;
  header.id = static_cast<std::int32_t>(id);
  header.size = static_cast<std::int32_t>(sizeof header + body.size() + tail.size());
  iov[0] = {&header, sizeof header};
  iov[1] = {const_cast<std::byte*>(body.data()), body.size()};
  iov[2] = {const_cast<std::byte*>(tail.data()), tail.size()};
  return true;
}

}  // namespace

int ClientConnection::request(ipc::RequestId id, std::span<const std::byte> body, Reply& reply,
                              std::span<const std::byte> tail) {
  qb_ipc_request_header header{};
  iovec iov[3];
  if (!frame(id, body, tail, reply_buffer_.size(), header, iov)) return -EMSGSIZE;
  const ssize_t got = exchange(std::span<const iovec>(iov, tail.empty() ? 2 : 3), reply_buffer_);
  if (got < 0) return static_cast<int>(got);
  qb_ipc_response_header response{};
  if (static_cast<std::size_t>(got) < sizeof response || static_cast<std::size_t>(got) > reply_buffer_.size())
    return -EPROTO;
  std::memcpy(&response, reply_buffer_.data(), sizeof response);
  if (response.size != got || response.id != header.id) return -EPROTO;
  reply.error = response.error;
  reply.body = std::span<const std::byte>(reply_buffer_)
                   .subspan(sizeof response, static_cast<std::size_t>(got) - sizeof response);
  return 0;
}

int ClientConnection::send(ipc::RequestId id, std::span<const std::byte> body, std::span<const std::byte> tail) {
  qb_ipc_request_header header{};
  iovec iov[3];
  if (!frame(id, body, tail, reply_buffer_.size(), header, iov)) return -EMSGSIZE;
  const ssize_t sent = post(std::span<const iovec>(iov, tail.empty() ? 2 : 3));
  return sent < 0 ? static_cast<int>(sent) : 0;
}

int ClientConnection::next_event(Event& event, int timeout_ms) {
  if (batch_open()) return next_in_batch(event);
  const ssize_t got = receive_event(event_buffer_, timeout_ms);
  if (got == -EAGAIN || got == -ETIMEDOUT) return 0;
  if (got < 0) return static_cast<int>(got);
  qb_ipc_response_header header{};
  if (static_cast<std::size_t>(got) < sizeof header || static_cast<std::size_t>(got) > event_buffer_.size())
    return -EPROTO;
  std::memcpy(&header, event_buffer_.data(), sizeof header);
  if (header.size != got) return -EPROTO;
  if (header.id == static_cast<std::int32_t>(ipc::EventId::kBatch)) {
    batch_at_ = sizeof header;
    batch_end_ = static_cast<std::size_t>(got);
    return batch_open() ? next_in_batch(event) : -EPROTO;
  }
  event.id = static_cast<ipc::EventId>(header.id);
  event.body =
      std::span<const std::byte>(event_buffer_).subspan(sizeof header, static_cast<std::size_t>(got) - sizeof header);
  return 1;
}

// A malformed batch ends here: the rest of it is dropped with the error.
int ClientConnection::next_in_batch(Event& event) {
  qb_ipc_response_header header{};
  const std::size_t left = batch_end_ - batch_at_;
  if (left >= sizeof header) std::memcpy(&header, event_buffer_.data() + batch_at_, sizeof header);
  if (left < sizeof header || header.size < static_cast<std::int32_t>(sizeof header) ||
      static_cast<std::size_t>(header.size) > left || header.id == static_cast<std::int32_t>(ipc::EventId::kBatch)) {
    batch_at_ = batch_end_ = 0;
    return -EPROTO;
  }
  event.id = static_cast<ipc::EventId>(header.id);
  event.body =
      std::span<const std::byte>(event_buffer_).subspan(batch_at_ + sizeof header, header.size - sizeof header);
  batch_at_ += static_cast<std::size_t>(header.size);
  return 1;
}

}  // namespace rtotem::client
