// rtotem-bench-udp: pushes messages through the UDP backend between two endpoints on loopback and,
// alternately in the same run, through bare sendmmsg/recvmmsg sockets, so the ratio between the
// two means something on a noisy machine. Counts heap allocations per message in steady state.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_options.hpp"
#include "src/common/alloc_counter.hpp"
#include "transport/udp/udp_backend.hpp"

namespace rtotem::bench {
namespace {

using namespace rtotem::transport;
using Clock = std::chrono::steady_clock;

struct RunResult {
  double seconds = 0;
  std::uint64_t received = 0;
  std::uint64_t allocations = 0;  // in the measured part (after warm-up)
};

// What both contenders do: send `messages` of `size` bytes, at most `window` in flight.
struct Workload {
  std::uint64_t messages;
  std::uint32_t size;
  std::uint32_t window;
  std::uint16_t port;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class CountingSink final : public PacketSink {
 public:
  std::uint64_t packets = 0;
  void on_packets(std::span<InboundPacket> batch) override { packets += batch.size(); }
};

RunResult run_backend(const Workload& w) {
  auto a_addr = InetAddress::parse("127.0.0.1", w.port).value();
  auto b_addr = InetAddress::parse("127.0.0.1", static_cast<std::uint16_t>(w.port + 1)).value();
  auto config = [&](NodeId id, const InetAddress& bind) {
    UdpConfig c;
    c.params.local_node = id;
    c.params.cluster_id = cluster_id_from_name("bench");
    c.params.mtu = std::max<std::uint32_t>(w.size, kMtuMin);
    c.params.send_buffers = 2048;
    c.params.recv_buffers = 1024;
    c.bind = bind;
    c.peers = {{1, a_addr}, {2, b_addr}};
    return c;
  };
  auto a = UdpBackend::open(config(1, a_addr));
  auto b = UdpBackend::open(config(2, b_addr));
  if (!a || !b) {
    fmt::print(stderr, "open failed: {}\n", !a ? a.error().message() : b.error().message());
    std::exit(1);
  }
  CountingSink at_b;
  const std::uint64_t warmup = w.messages / 10;
  std::uint64_t sent = 0, allocations_at_warmup = 0;
  Clock::time_point start;
  std::uint64_t received_at_warmup = 0;
  while (at_b.packets < w.messages) {
    if (sent == warmup && allocations_at_warmup == 0) {
      allocations_at_warmup = heap_allocations() + 1;  // +1: 0 means "not yet"
      start = Clock::now();
      received_at_warmup = at_b.packets;
    }
    while (sent < w.messages && sent - at_b.packets < w.window) {
      SendBufferRef buffer;
      if ((*a)->acquire(buffer) != Status::kOk) break;
      std::memcpy(buffer->writable_payload().data(), &sent, sizeof sent);
      buffer->set_payload_size(w.size);
      if ((*a)->unicast(2, buffer) != Status::kOk) break;
      ++sent;
      if (sent == warmup) break;
    }
    (void)(*a)->flush();
    const std::uint64_t before = at_b.packets;
    while ((*b)->poll(at_b) > 0) {
    }
    // A lost datagram (receive buffer overflow) would stall the window: count it and go on.
    if (at_b.packets == before && sent == w.messages) break;
  }
  RunResult r;
  r.seconds = seconds_since(start);
  r.received = at_b.packets - received_at_warmup;
  r.allocations = heap_allocations() - (allocations_at_warmup - 1);
  return r;
}

// The floor: the same loop on bare sockets, batched the same way, with no buffers or headers.
RunResult run_raw(const Workload& w) {
  auto open = [&](std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    int bytes = 4 << 20;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
      fmt::print(stderr, "raw bind {}: {}\n", port, std::strerror(errno));
      std::exit(1);
    }
    return std::make_pair(fd, sa);
  };
  auto [a, a_sa] = open(static_cast<std::uint16_t>(w.port + 2));
  auto [b, b_sa] = open(static_cast<std::uint16_t>(w.port + 3));
  constexpr std::size_t kBatch = 32;
  std::vector<std::byte> tx(std::size_t(w.size) + kWireHeaderSize), rx(kBatch * (std::size_t(w.size) + kWireHeaderSize));
  std::array<mmsghdr, kBatch> sm{}, rm{};
  std::array<iovec, kBatch> siov{}, riov{};
  for (std::size_t i = 0; i < kBatch; ++i) {
    siov[i] = {tx.data(), tx.size()};
    sm[i].msg_hdr.msg_iov = &siov[i];
    sm[i].msg_hdr.msg_iovlen = 1;
    sm[i].msg_hdr.msg_name = &b_sa;
    sm[i].msg_hdr.msg_namelen = sizeof b_sa;
    riov[i] = {rx.data() + i * tx.size(), tx.size()};
    rm[i].msg_hdr.msg_iov = &riov[i];
    rm[i].msg_hdr.msg_iovlen = 1;
  }
  std::uint64_t sent = 0, received = 0;
  const auto start = Clock::now();
  while (received < w.messages) {
    while (sent < w.messages && sent - received < w.window) {
      const unsigned n = static_cast<unsigned>(std::min<std::uint64_t>({kBatch, w.messages - sent, w.window - (sent - received)}));
      const int k = ::sendmmsg(a, sm.data(), n, 0);
      if (k <= 0) break;
      sent += static_cast<unsigned>(k);
    }
    const std::uint64_t before = received;
    int k;
    while ((k = ::recvmmsg(b, rm.data(), kBatch, MSG_DONTWAIT, nullptr)) > 0) received += static_cast<unsigned>(k);
    if (received == before && sent == w.messages) break;
  }
  RunResult r;
  r.seconds = seconds_since(start);
  r.received = received;
  ::close(a);
  ::close(b);
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace
}  // namespace rtotem::bench

int main(int argc, char** argv) {
  using namespace rtotem::bench;
  auto options = parse_options(argc, argv);
  if (!options) {
    fmt::print(stderr, "rtotem-bench-udp: {}\n{}", options.error().message(), kUsage);
    return 2;
  }
  fmt::print("| payload B | raw msgs/s (median, range) | rtotem msgs/s (median, range) | rtotem/raw | rtotem MB/s | heap allocs/msg | delivered |\n");
  fmt::print("|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::uint32_t size : options->sizes) {
    Workload w{options->messages, size, options->window, options->port};
    std::vector<double> raw_rates, our_rates;
    std::uint64_t allocations = 0, delivered = 0, measured = 0;
    for (unsigned round = 0; round < options->rounds; ++round) {  // A B A B: same noise for both
      RunResult raw = run_raw(w);
      raw_rates.push_back(double(raw.received) / raw.seconds);
      RunResult ours = run_backend(w);
      our_rates.push_back(double(ours.received) / ours.seconds);
      allocations += ours.allocations;
      measured += ours.received;
      delivered = ours.received + w.messages / 10;
    }
    const double ours = median(our_rates), raw = median(raw_rates);
    auto [rmin, rmax] = std::minmax_element(raw_rates.begin(), raw_rates.end());
    auto [omin, omax] = std::minmax_element(our_rates.begin(), our_rates.end());
    fmt::print("| {} | {:.0f} ({:.0f}-{:.0f}) | {:.0f} ({:.0f}-{:.0f}) | {:.2f} | {:.1f} | {:.6f} | {}/{} |\n", size, raw,
               *rmin, *rmax, ours, *omin, *omax, ours / raw, ours * size / 1e6, double(allocations) / double(measured),
               delivered, w.messages);
  }
  return 0;
}
