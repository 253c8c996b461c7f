#include "src/sim/sim_connection.hpp"

#include <qb/qbipc_common.h>

#include <cerrno>
#include <cstring>

#include "base/assert.hpp"

namespace rtotem::sim {

using stack::append_iov;

SimConnection::SimConnection(stack::ClientTable& table, pid_t pid, std::size_t buffer_bytes, std::size_t channel_bytes,
                             std::function<void()> after_request, std::function<bool()> host_alive)
    : ClientConnection(buffer_bytes),
      table_(table),
      channel_bytes_(channel_bytes),
      after_request_(std::move(after_request)),
      host_alive_(std::move(host_alive)) {
  client_ = &table_.add(*this, pid, 0, 0);  // root, as the simulated processes are
}

// The process closes its connection: the stack leaves its groups on its behalf (unless the node's
// process is gone too: then the table is closing).
SimConnection::~SimConnection() {
  table_.closed(*client_);
  table_.remove(*client_);
  if (host_alive_()) after_request_();
}

bool SimConnection::hand_over(std::span<const iovec> request) {
  if (cut_off_ || !host_alive_()) return false;
  request_.clear();
  append_iov(request_, request);
  ++counts_.requests;
  table_.on_request(*client_, request_);
  after_request_();
  return true;
}

ssize_t SimConnection::exchange(std::span<const iovec> request, std::span<std::byte> answer) {
  answered_ = false;
  exchanging_ = true;
  const bool handed = hand_over(request);
  exchanging_ = false;
  if (!handed) return -ENOTCONN;
  if (!answered_) return cut_off_ ? -ENOTCONN : -EPROTO;  // the simulated clients ask nothing answered later
  if (answer_.size() > answer.size()) return -EMSGSIZE;
  std::memcpy(answer.data(), answer_.data(), answer_.size());
  return static_cast<ssize_t>(answer_.size());
}

ssize_t SimConnection::post(std::span<const iovec> request) { return hand_over(request) ? 0 : -ENOTCONN; }

// Events still queued are read before the cut shows, as from libqb's ring.
ssize_t SimConnection::receive_event(std::span<std::byte> out, int /*timeout_ms*/) {
  if (events_.empty()) return cut_off_ ? -ENOTCONN : -EAGAIN;
  std::vector<std::byte>& event = events_.front();
  RTOTEM_ASSERT(event.size() <= out.size());  // the stack sends no event larger than the buffer
  std::memcpy(out.data(), event.data(), event.size());
  const auto size = static_cast<ssize_t>(event.size());
  event_bytes_ -= event.size();
  events_.pop_front();
  return size;
}

int SimConnection::send_event(std::span<const iovec> iov) {
  if (cut_off_) return -ENOTCONN;
  const std::size_t size = stack::iov_size(iov);
  if (event_bytes_ + size > channel_bytes_) {
    ++counts_.send_retries;
    return -EAGAIN;
  }
  events_.emplace_back().reserve(size);
  append_iov(events_.back(), iov);
  event_bytes_ += size;
  ++counts_.events;
  return 0;
}

std::optional<int> SimConnection::take_late_answer() {
  if (late_errors_.empty()) return std::nullopt;
  const int error = late_errors_.front();
  late_errors_.pop_front();
  return error;
}

int SimConnection::send_answer(std::span<const iovec> iov) {
  if (cut_off_) return -ENOTCONN;
  if (!exchanging_) {
    qb_ipc_response_header header{};
    std::vector<std::byte> bytes;
    append_iov(bytes, iov);
    if (bytes.size() >= sizeof header) std::memcpy(&header, bytes.data(), sizeof header);
    late_errors_.push_back(bytes.size() >= sizeof header ? header.error : -EPROTO);
    ++counts_.responses;
    return 0;
  }
  answer_.clear();
  append_iov(answer_, iov);
  answered_ = true;
  ++counts_.responses;
  return 0;
}

}  // namespace rtotem::sim
