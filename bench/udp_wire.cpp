// rtotem-udp-wire: the physical-limit row of bench/compare. Every node runs one; each sends
// --size messages to every peer as fast as the kernel takes them (sendmmsg, like udpu: one
// datagram per peer; a message above 65,000 bytes goes as 65,000-byte datagrams) and receives
// with recvmmsg, for --duration seconds. No ordering, no flow control, no retransmission: what a
// node receives is the most any protocol on these sockets could deliver. Prints, like
// rtotem-bench --json, the messages/s and MB/s "delivered" at this node: what it received from
// the others in the measured span (after the first second), times N/(N-1), since in a group every
// node delivers its own messages too and those need no wire.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/cli_args.hpp"
#include "base/fd.hpp"

namespace rtotem::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kBatch = 64;
constexpr std::uint32_t kDatagramMax = 65000;
constexpr double kWarmupS = 1.0;

struct WireOptions {
  std::string bind;
  std::vector<std::string> peers;
  std::uint16_t port = 17500;
  std::uint32_t size = 1024;
  unsigned duration_s = 5;
};

constexpr const char* kWireUsage =
    "usage: rtotem-udp-wire --bind IPV4 --peers IPV4[,IPV4...] [--port P] [--size BYTES] [--duration S] [--json]\n";

Result<sockaddr_in> ipv4(std::string_view option, const std::string& text, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, text.c_str(), &a.sin_addr) != 1)
    return Error::make("{}: '{}' is not an IPv4 address", option, text);
  return a;
}

Result<WireOptions> parse(int argc, char** argv) {
  constexpr CliValue kValue = CliValue::kAny;
  constexpr CliOption kOptions[] = {{"--json"},         {"--bind", kValue}, {"--peers", kValue},
                                    {"--port", kValue}, {"--size", kValue}, {"--duration", kValue}};
  WireOptions o;
  for (CliReader reader(cli_arguments(argc, argv), kOptions); !reader.done();) {
    auto arg = reader.next();
    if (!arg) return arg.error();
    const auto [option, value] = *arg;
    if (option == "--json") continue;  // the only output there is
    if (option == "--bind") {
      o.bind = value;
    } else if (option == "--peers") {
      for (std::size_t start = 0; start <= value.size();) {
        const std::size_t comma = std::min(value.find(',', start), value.size());
        o.peers.emplace_back(value.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (option == "--port") {
      auto n = parse_number<std::uint16_t>(option, value, 1024, 65000);
      if (!n) return n.error();
      o.port = *n;
    } else if (option == "--size") {
      auto n = parse_number<std::uint32_t>(option, value, 1, 64 << 20);
      if (!n) return n.error();
      o.size = *n;
    } else if (option == "--duration") {
      auto n = parse_number<unsigned>(option, value, 2, 3600);
      if (!n) return n.error();
      o.duration_s = *n;
    }
  }
  if (o.bind.empty() || o.peers.empty()) return Error::make("--bind and --peers are required");
  return o;
}

int run(const WireOptions& o) {
  auto self = ipv4("--bind", o.bind, o.port);
  if (!self) return fmt::print(stderr, "rtotem-udp-wire: {}\n", self.error().message()), 2;
  std::vector<sockaddr_in> peers;
  for (const auto& p : o.peers) {
    auto a = ipv4("--peers", p, o.port);
    if (!a) return fmt::print(stderr, "rtotem-udp-wire: {}\n", a.error().message()), 2;
    peers.push_back(*a);
  }
  Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  const int buf = 8 << 20;
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  if (!fd || bind(fd.get(), reinterpret_cast<const sockaddr*>(&*self), sizeof *self) != 0)
    return fmt::print(stderr, "rtotem-udp-wire: bind {}:{}: {}\n", o.bind, o.port, std::strerror(errno)), 1;

  const std::uint32_t datagram = std::min(o.size, kDatagramMax);
  std::vector<std::byte> payload(datagram, std::byte{0x5a});
  std::vector<std::byte> inbox(kBatch * kDatagramMax);
  std::array<mmsghdr, kBatch> out{}, in{};
  std::array<iovec, kBatch> out_iov{}, in_iov{};
  for (std::size_t i = 0; i < kBatch; ++i) {
    out_iov[i] = {payload.data(), datagram};
    out[i].msg_hdr.msg_iov = &out_iov[i];
    out[i].msg_hdr.msg_iovlen = 1;
    out[i].msg_hdr.msg_name = &peers[i % peers.size()];
    out[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    in_iov[i] = {inbox.data() + i * kDatagramMax, kDatagramMax};
    in[i].msg_hdr.msg_iov = &in_iov[i];
    in[i].msg_hdr.msg_iovlen = 1;
  }
  // A batch always starts at peer 0 and covers whole rounds of peers, so every peer gets as much.
  const std::size_t batch = kBatch / peers.size() * peers.size();

  const auto start = Clock::now();
  const auto measure_from = start + std::chrono::duration<double>(kWarmupS);
  const auto end = start + std::chrono::seconds(o.duration_s);
  std::uint64_t received_bytes = 0, sent_datagrams = 0;
  for (auto now = start; now < end; now = Clock::now()) {
    pollfd p{fd.get(), POLLIN | POLLOUT, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    if (p.revents & POLLIN) {
      const int got = recvmmsg(fd.get(), in.data(), kBatch, MSG_DONTWAIT, nullptr);
      if (now >= measure_from)
        for (int i = 0; i < got; ++i) received_bytes += in[i].msg_len;
    }
    if (p.revents & POLLOUT) {
      const int sent = sendmmsg(fd.get(), out.data(), batch, MSG_DONTWAIT);
      if (sent > 0) sent_datagrams += static_cast<std::uint64_t>(sent);
    }
  }
  const double span = std::chrono::duration<double>(end - measure_from).count();
  const double n = static_cast<double>(peers.size() + 1);
  const double bytes_per_s = static_cast<double>(received_bytes) / span * n / (n - 1);
  fmt::print(
      "{{\"mode\": \"wire\", \"size\": {}, \"datagram\": {}, \"peers\": {}, \"sent_datagrams\": {}, "
      "\"received_bytes\": {}, \"span_s\": {:.3f}, \"msgs_per_s\": {:.1f}, \"mb_per_s\": {:.2f}}}\n",
      o.size, datagram, peers.size(), sent_datagrams, received_bytes, span, bytes_per_s / o.size, bytes_per_s / 1e6);
  return 0;
}

}  // namespace
}  // namespace rtotem::bench

int main(int argc, char** argv) {
  auto options = rtotem::bench::parse(argc, argv);
  if (!options) {
    fmt::print(stderr, "rtotem-udp-wire: {}\n{}", options.error().message(), rtotem::bench::kWireUsage);
    return 2;
  }
  return rtotem::bench::run(*options);
}
