#include "tests/tools/spoofed_udp.hpp"

#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rtotem::testing {

static_assert(SpoofedUdp::kHeaders == sizeof(iphdr) + sizeof(udphdr));

Result<Fd> open_raw_ipv4_socket() {
  Fd fd(::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW));  // IP_HDRINCL implied
  if (!fd) return Error::sys(errno, "raw IPv4 socket (forging a source address needs root)");
  return fd;
}

Result<SpoofedUdp> SpoofedUdp::open() {
  auto fd = open_raw_ipv4_socket();
  if (!fd) return fd.error();
  return SpoofedUdp(std::move(*fd));
}

void SpoofedUdp::put_headers(const sockaddr_in& from, const sockaddr_in& to, std::size_t payload_len,
                             std::span<std::byte, kHeaders> frame) noexcept {
  iphdr ip{};
  ip.version = 4;
  ip.ihl = sizeof ip / 4;
  ip.ttl = 64;
  ip.protocol = IPPROTO_UDP;
  ip.tot_len = htons(static_cast<std::uint16_t>(kHeaders + payload_len));
  ip.saddr = from.sin_addr.s_addr;
  ip.daddr = to.sin_addr.s_addr;  // the kernel fills in the id and the header checksum
  udphdr udp{};
  udp.source = from.sin_port;
  udp.dest = to.sin_port;
  udp.len = htons(static_cast<std::uint16_t>(sizeof udp + payload_len));  // checksum 0: none, as IPv4 allows
  std::memcpy(frame.data(), &ip, sizeof ip);
  std::memcpy(frame.data() + sizeof ip, &udp, sizeof udp);
}

Result<void> SpoofedUdp::send(const sockaddr_in& from, const sockaddr_in& to,
                              std::span<const std::byte> payload) const {
  std::vector<std::byte> frame(kHeaders + payload.size());
  put_headers(from, to, payload.size(), std::span<std::byte, kHeaders>(frame.data(), kHeaders));
  std::memcpy(frame.data() + kHeaders, payload.data(), payload.size());
  const ssize_t sent =
      ::sendto(fd_.get(), frame.data(), frame.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  if (sent != static_cast<ssize_t>(frame.size())) return Error::sys(errno, "sending a forged datagram");
  return {};
}

}  // namespace rtotem::testing
