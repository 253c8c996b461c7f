// Where a local client's answers and events go: libqb's shared-memory channels in rtotemd
// (src/daemon/ipc_server.cpp), an in-memory queue in the simulator. Each send takes a whole
// message (a qb_ipc_response_header and its body) or nothing.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rtotem::stack {

// What a channel has carried, as libqb's qb_ipcs_connection_stats counts it.
struct ChannelCounts {
  std::uint64_t requests = 0;
  std::uint64_t responses = 0;
  std::uint64_t events = 0;
  std::uint64_t send_retries = 0;
  std::uint64_t recv_retries = 0;
  std::uint64_t flow_control_count = 0;  // times the client was told to hold its requests
  std::uint32_t flow_control = 0;        // 1 while it is told so
};

class ClientChannel {
 public:
  // 0: sent whole. -EAGAIN or -ENOBUFS: no room now (the client has not read). Any other
  // -errno: the channel failed (-ENOTCONN, -EPIPE, -ECONNRESET: the client has gone).
  virtual int send_event(std::span<const iovec> iov) = 0;
  virtual int send_answer(std::span<const iovec> iov) = 0;
  // Cut the client off, later (never from inside the ClientTable's call): its host then reports
  // it gone, as for a client that disconnected.
  virtual void disconnect() = 0;
  // Its counts since it opened or since clear_counts (stats.clear.ipc).
  virtual ChannelCounts counts() const = 0;
  virtual void clear_counts() = 0;

 protected:
  ~ClientChannel() = default;
};

// The bytes of `iov`, appended to `out`: what a channel that keeps a whole message copies.
inline void append_iov(std::vector<std::byte>& out, std::span<const iovec> iov) {
  for (const iovec& part : iov) {
    const auto* bytes = static_cast<const std::byte*>(part.iov_base);
    out.insert(out.end(), bytes, bytes + part.iov_len);
  }
}

inline std::size_t iov_size(std::span<const iovec> iov) noexcept {
  std::size_t n = 0;
  for (const iovec& part : iov) n += part.iov_len;
  return n;
}

}  // namespace rtotem::stack
