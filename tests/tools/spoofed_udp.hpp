// UDP datagrams with a forged IPv4 source address, as anyone on the segment can send them: how
// the tests play an attacker who replays a member's packet from the member's own address, or
// floods in its name. A raw socket: needs root (CAP_NET_RAW).
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <span>

#include "base/result.hpp"
#include "base/fd.hpp"

namespace rtotem::testing {

// A raw IPv4 socket that sends datagrams framed by SpoofedUdp::put_headers (sendmmsg them).
Result<Fd> open_raw_ipv4_socket();

class SpoofedUdp {
 public:
  static constexpr std::size_t kHeaders = 28;  // IPv4 (no options) and UDP

  static Result<SpoofedUdp> open();
  // Writes the IPv4 and UDP headers of a datagram of `payload_len` bytes from `from` to `to` into
  // the first kHeaders bytes of `frame`; the payload goes right after them.
  static void put_headers(const sockaddr_in& from, const sockaddr_in& to, std::size_t payload_len,
                          std::span<std::byte, kHeaders> frame) noexcept;
  // One datagram, `payload` from `from` to `to`.
  Result<void> send(const sockaddr_in& from, const sockaddr_in& to, std::span<const std::byte> payload) const;
  int fd() const noexcept { return fd_.get(); }

 private:
  explicit SpoofedUdp(Fd fd) noexcept : fd_(std::move(fd)) {}
  Fd fd_;
};

}  // namespace rtotem::testing
