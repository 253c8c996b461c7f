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
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_options.hpp"
#include "src/common/alloc_counter.hpp"
#include "transport/udp/udp_backend.hpp"

namespace rtotem::bench {
namespace {

using namespace rtotem::transport;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct RunResult {
  double seconds = 0;
  std::uint64_t delivered = 0;    // in the measured part (after warm-up)
  std::uint64_t lost = 0;         // sent but never delivered (the kernel dropped them)
  std::uint64_t allocations = 0;  // heap allocations in the measured part
};

// What both contenders do: send `messages` of `size` bytes, at most `window` in flight; the first
// tenth warms up and is not measured.
struct Workload {
  std::uint64_t messages;
  std::uint32_t size;
  std::uint32_t window;
  std::uint16_t port;
};

// The loop both contenders share. `send(budget)` sends up to `budget` messages and returns how
// many; `receive()` returns how many arrived. On loopback delivery is synchronous, so a turn in
// which nothing could be sent and nothing arrived means what is in flight was dropped.
template <class Send, class Receive>
RunResult drive(const Workload& w, Send&& send, Receive&& receive) {
  const std::uint64_t warmup = w.messages / 10;
  std::uint64_t sent = 0, done = 0, allocations_start = 0;  // done = delivered + lost
  RunResult r;
  Clock::time_point start = Clock::now();
  bool measuring = false;
  while (done < w.messages) {
    if (!measuring && done >= warmup) {
      measuring = true;
      start = Clock::now();
      allocations_start = heap_allocations();
      r.delivered = r.lost = 0;
    }
    const std::uint64_t budget = std::min<std::uint64_t>(w.messages - sent, w.window - (sent - done));
    const std::uint64_t out = budget ? send(sent, budget) : 0;
    sent += out;
    const std::uint64_t in = receive();
    done += in;
    r.delivered += in;
    if (out == 0 && in == 0) {
      r.lost += sent - done;
      done = sent;
    }
  }
  r.seconds = seconds_since(start);
  r.allocations = heap_allocations() - allocations_start;
  return r;
}

class CountingSink final : public PacketSink {
 public:
  std::uint64_t packets = 0;
  void on_packets(std::span<InboundPacket> batch) override { packets += batch.size(); }
};

// `key`: null for packets in the clear; with one, room for the seal on top of the payload.
UdpConfig bench_config(const Workload& w, NodeId id, const std::shared_ptr<const ClusterKey>& key) {
  const auto a = InetAddress::parse("127.0.0.1", w.port).value();
  const auto b = InetAddress::parse("127.0.0.1", static_cast<std::uint16_t>(w.port + 1)).value();
  UdpConfig c;
  c.params.local_node = id;
  c.params.cluster_id = cluster_id_from_name("bench");
  const auto seal = static_cast<std::uint32_t>(key ? kSealOverhead : 0);
  c.params.mtu = std::max<std::uint32_t>(w.size, kMtuMin) + seal;
  c.params.key = key;
  c.params.epoch = 1;
  c.params.send_buffers = 2048;
  c.params.recv_buffers = 1024;
  c.bind = id == 1 ? a : b;
  c.peers = {{1, a}, {2, b}};
  return c;
}

RunResult run_backend(const Workload& w, const std::shared_ptr<const ClusterKey>& key) {
  auto a = UdpBackend::open(bench_config(w, 1, key));
  auto b = UdpBackend::open(bench_config(w, 2, key));
  if (!a || !b) {
    fmt::print(stderr, "open failed: {}\n", !a ? a.error().message() : b.error().message());
    std::exit(1);
  }
  CountingSink at_b;
  auto send = [&](std::uint64_t first, std::uint64_t budget) {
    std::uint64_t n = 0;
    for (; n < budget; ++n) {
      SendBufferRef buffer;
      if ((*a)->acquire(buffer) != Status::kOk) break;
      const std::uint64_t seq = first + n;
      std::memcpy(buffer->writable_payload().data(), &seq, sizeof seq);
      buffer->set_payload_size(w.size);
      if ((*a)->unicast(2, buffer) != Status::kOk) break;
    }
    (void)(*a)->flush();
    return n;
  };
  auto receive = [&] {
    const std::uint64_t before = at_b.packets;
    while ((*b)->poll(at_b) == kRxBatchMax) {}
    return at_b.packets - before;
  };
  return drive(w, send, receive);
}

// The floor: the same loop on bare sockets, batched as the backend batches (64 out, 32 in),
// writing the same sequence number into each message, with no pool, header or validation.
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
  constexpr std::size_t kSendBatch = kUdpSendBatch, kRecvBatch = kRxBatchMax;
  const std::size_t wire = std::size_t(w.size) + kWireHeaderSize;
  std::vector<std::byte> tx(kSendBatch * wire), rx(kRecvBatch * wire);
  std::array<mmsghdr, kSendBatch> sm{};
  std::array<mmsghdr, kRecvBatch> rm{};
  std::array<iovec, kSendBatch> siov{};
  std::array<iovec, kRecvBatch> riov{};
  for (std::size_t i = 0; i < kSendBatch; ++i) {
    siov[i] = {tx.data() + i * wire, wire};
    sm[i].msg_hdr.msg_iov = &siov[i];
    sm[i].msg_hdr.msg_iovlen = 1;
    sm[i].msg_hdr.msg_name = &b_sa;
    sm[i].msg_hdr.msg_namelen = sizeof b_sa;
  }
  for (std::size_t i = 0; i < kRecvBatch; ++i) {
    riov[i] = {rx.data() + i * wire, wire};
    rm[i].msg_hdr.msg_iov = &riov[i];
    rm[i].msg_hdr.msg_iovlen = 1;
  }
  auto send = [&](std::uint64_t first, std::uint64_t budget) {
    std::uint64_t n = 0;
    while (n < budget) {
      const unsigned batch = static_cast<unsigned>(std::min<std::uint64_t>(kSendBatch, budget - n));
      for (unsigned i = 0; i < batch; ++i) {
        const std::uint64_t seq = first + n + i;
        std::memcpy(tx.data() + i * wire, &seq, sizeof seq);
      }
      const int k = ::sendmmsg(a, sm.data(), batch, MSG_DONTWAIT);
      if (k <= 0) break;
      n += static_cast<unsigned>(k);
    }
    return n;
  };
  auto receive = [&] {
    std::uint64_t n = 0;
    int k;
    while ((k = ::recvmmsg(b, rm.data(), kRecvBatch, MSG_DONTWAIT, nullptr)) > 0) n += static_cast<unsigned>(k);
    return n;
  };
  RunResult r = drive(w, send, receive);
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
  std::shared_ptr<const ClusterKey> key;
  if (options->crypto) {
    auto made = ClusterKey::random();
    if (!made) {
      fmt::print(stderr, "rtotem-bench-udp: {}\n", made.error().message());
      return 1;
    }
    key = std::make_shared<const ClusterKey>(std::move(made).value());
  }
  const std::string sealed_header = key ? " sealed msgs/s (median, range) | sealed/rtotem | sealed MB/s |" : "";
  const std::string sealed_rule = key ? "---:|---:|---:|" : "";
  fmt::print(
      "| payload B | raw msgs/s (median, range) | rtotem msgs/s (median, range) | rtotem/raw | rtotem MB/s |{} "
      "heap allocs/msg | lost (all runs) |\n",
      sealed_header);
  fmt::print("|---:|---:|---:|---:|---:|{}---:|---:|\n", sealed_rule);
  for (std::uint32_t size : options->sizes) {
    Workload w{options->messages, size, options->window, options->port};
    std::vector<double> raw_rates, our_rates, sealed_rates;
    std::uint64_t allocations = 0, measured = 0, lost = 0;
    auto count = [&](const RunResult& r, std::vector<double>& rates) {
      rates.push_back(double(r.delivered) / r.seconds);
      lost += r.lost;
    };
    for (unsigned round = 0; round < options->rounds; ++round) {  // A B (C) A B (C): same noise for all
      count(run_raw(w), raw_rates);
      for (const bool sealed : {false, true}) {
        if (sealed && !key) continue;
        RunResult ours = run_backend(w, sealed ? key : nullptr);
        count(ours, sealed ? sealed_rates : our_rates);
        allocations += ours.allocations;
        measured += ours.delivered;
      }
    }
    const double ours = median(our_rates), raw = median(raw_rates);
    auto [rmin, rmax] = std::minmax_element(raw_rates.begin(), raw_rates.end());
    auto [omin, omax] = std::minmax_element(our_rates.begin(), our_rates.end());
    std::string sealed_cells;
    if (key) {
      const double sealed = median(sealed_rates);
      auto [smin, smax] = std::minmax_element(sealed_rates.begin(), sealed_rates.end());
      sealed_cells = fmt::format(" {:.0f} ({:.0f}-{:.0f}) | {:.2f} | {:.1f} |", sealed, *smin, *smax, sealed / ours,
                                 sealed * size / 1e6);
    }
    fmt::print("| {} | {:.0f} ({:.0f}-{:.0f}) | {:.0f} ({:.0f}-{:.0f}) | {:.2f} | {:.1f} |{} {:.6f} | {} |\n", size,
               raw, *rmin, *rmax, ours, *omin, *omax, ours / raw, ours * size / 1e6, sealed_cells,
               double(allocations) / double(measured), lost);
  }
  return 0;
}
