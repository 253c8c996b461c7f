// An IPv4 or IPv6 socket address (address and port), parsed once at start-up.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace rtotem::transport {

class InetAddress {
 public:
  InetAddress() noexcept;
  // `host` is a numeric address ("10.0.0.1", "fd00::1", "fe80::1%eth0") or a name resolved now.
  static Result<InetAddress> parse(std::string_view host, std::uint16_t port);
  static Result<InetAddress> from_sockaddr(const sockaddr* sa, socklen_t len);

  int family() const noexcept { return storage_.ss_family; }
  bool is_v6() const noexcept { return family() == AF_INET6; }
  std::uint16_t port() const noexcept;
  InetAddress with_port(std::uint16_t port) const noexcept;
  bool is_multicast() const noexcept;
  bool is_unspecified() const noexcept;
  const sockaddr* sockaddr_ptr() const noexcept { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const noexcept { return length_; }
  // Same family and address bytes, ports ignored.
  bool same_host(const InetAddress& other) const noexcept;
  // Whether `sa` (a datagram's source, as recvmsg gives it) is this very address and port.
  bool is(const sockaddr_storage& sa) const noexcept;
  std::string to_string() const;    // "10.0.0.1:5405", "[fd00::1]:5405"
  std::string host_string() const;  // "10.0.0.1", "fd00::1": the address alone

  friend bool operator==(const InetAddress& a, const InetAddress& b) noexcept;

 private:
  sockaddr_storage storage_;
  socklen_t length_ = 0;
};

}  // namespace rtotem::transport
