// rtotem-flood: a hostile peer for the resource-exhaustion tests and bench/exhaustion.sh. Sends
// packets of one kind at a daemon's port as fast as the kernel takes them (or at --rate) for
// --seconds, and prints how many went. The kinds climb from noise to what only the cluster key
// stops:
//   junk             random bytes
//   foreign-cluster  a well-formed header of another cluster
//   unknown-sender   our cluster, a node id that is in no nodelist (--as, default 999)
//   foreign-ring     our cluster, a member's id (--as), and a well-formed totem packet of a ring
//                    that does not exist: joins, merge announcements, tokens and messages, the
//                    packets that make a ring re-form if anyone believes them
//   forged-sealed    our cluster, a member's id, sealed-looking bytes no key opened
// --from ADDR[:PORT] sends from that address; with --spoof the source is forged (a raw IPv4 socket,
// root), as an attacker on the segment could, so that it is the very address of a member.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/cli_args.hpp"
#include "base/fd.hpp"
#include "membership/packets.hpp"
#include "tests/tools/spoofed_udp.hpp"
#include "transport/wire_crypto.hpp"

namespace rtotem::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kBatch = 64;
constexpr std::size_t kPool = 64 * kBatch;  // distinct packets, sent in turn
constexpr std::size_t kPacketMax = 1400;
constexpr std::size_t kIpUdpHeaders = testing::SpoofedUdp::kHeaders;

enum class Kind { kJunk, kForeignCluster, kUnknownSender, kForeignRing, kForgedSealed };

struct FloodOptions {
  Kind kind = Kind::kJunk;
  sockaddr_in to{};
  sockaddr_in from{};  // sin_family 0: any
  bool spoof = false;
  std::string cluster;
  std::uint32_t as = 999;
  double seconds = 5;
  std::uint64_t rate = 0;  // packets a second; 0: as fast as the socket takes them
};

constexpr const char* kFloodUsage =
    "usage: rtotem-flood --to IPV4:PORT --cluster NAME [--kind junk|foreign-cluster|unknown-sender|foreign-ring|"
    "forged-sealed]\n"
    "                    [--as NODEID] [--from IPV4[:PORT]] [--spoof] [--seconds S] [--rate PPS]\n";

Result<sockaddr_in> endpoint(std::string_view option, const std::string& text, bool port_required) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  const std::size_t colon = text.rfind(':');
  const std::string host = colon == std::string::npos ? text : text.substr(0, colon);
  if (colon != std::string::npos) {
    auto port = parse_number<std::uint16_t>(option, text.substr(colon + 1), 1, 65535);
    if (!port) return port.error();
    a.sin_port = htons(*port);
  } else if (port_required) {
    return Error::make("{}: '{}' needs a port (IPV4:PORT)", option, text);
  }
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    return Error::make("{}: '{}' is not an IPv4 address", option, host);
  return a;
}

Result<Kind> kind_named(const std::string& name) {
  if (name == "junk") return Kind::kJunk;
  if (name == "foreign-cluster") return Kind::kForeignCluster;
  if (name == "unknown-sender") return Kind::kUnknownSender;
  if (name == "foreign-ring") return Kind::kForeignRing;
  if (name == "forged-sealed") return Kind::kForgedSealed;
  return Error::make("--kind: '{}' is not one of junk, foreign-cluster, unknown-sender, foreign-ring, forged-sealed",
                     name);
}

Result<FloodOptions> parse(int argc, char** argv) {
  constexpr CliValue kValue = CliValue::kAny;
  constexpr CliOption kOptions[] = {{"--spoof"},           {"--to", kValue}, {"--from", kValue},    {"--kind", kValue},
                                    {"--cluster", kValue}, {"--as", kValue}, {"--seconds", kValue}, {"--rate", kValue}};
  FloodOptions o;
  bool to_given = false;
  for (CliReader reader(cli_arguments(argc, argv), kOptions); !reader.done();) {
    auto arg = reader.next();
    if (!arg) return arg.error();
    const std::string_view option = arg->name;
    const std::string value(arg->value);
    if (option == "--spoof") {
      o.spoof = true;
    } else if (option == "--to") {
      auto a = endpoint(option, value, true);
      if (!a) return a.error();
      o.to = *a;
      to_given = true;
    } else if (option == "--from") {
      auto a = endpoint(option, value, false);
      if (!a) return a.error();
      o.from = *a;
    } else if (option == "--kind") {
      auto k = kind_named(value);
      if (!k) return k.error();
      o.kind = *k;
    } else if (option == "--cluster") {
      o.cluster = value;
    } else if (option == "--as") {
      auto n = parse_number<std::uint32_t>(option, value, 1, UINT32_MAX);
      if (!n) return n.error();
      o.as = *n;
    } else if (option == "--seconds") {
      auto n = parse_number<unsigned>(option, value, 1, 3600);
      if (!n) return n.error();
      o.seconds = *n;
    } else if (option == "--rate") {
      auto n = parse_number<std::uint64_t>(option, value, 1, 100'000'000);
      if (!n) return n.error();
      o.rate = *n;
    }
  }
  if (!to_given || o.cluster.empty()) return Error::make("--to and --cluster are required");
  if (o.spoof && (o.from.sin_family == 0 || o.from.sin_port == 0))
    return Error::make("--spoof needs --from IPV4:PORT, the source to forge");
  return o;
}

// Packet `n` of `kind` into `out`; returns its length. foreign-ring cycles through the packet
// types, so each part of the protocol sees some.
std::size_t make_packet(const FloodOptions& o, std::uint64_t n, std::mt19937_64& rng, std::span<std::byte> out) {
  auto random_fill = [&](std::span<std::byte> bytes) {
    for (auto& b : bytes) b = static_cast<std::byte>(rng());
  };
  if (o.kind == Kind::kJunk) {
    const std::size_t len = rng() % kPacketMax;
    random_fill(out.first(len));
    if (n % 2 == 0 && len >= 2) out[0] = std::byte{'r'}, out[1] = std::byte{'t'};  // past the magic's first byte
    return len;
  }
  const std::uint32_t cluster = transport::cluster_id_from_name(o.cluster);
  transport::WireHeader header;
  header.cluster_id = o.kind == Kind::kForeignCluster ? cluster ^ 0x5a5a5a5a : cluster;
  header.sender = o.as;
  std::span<std::byte> payload = out.subspan(transport::kWireHeaderSize);
  std::size_t len = 0;
  if (o.kind == Kind::kForeignRing) {
    using namespace membership;
    const RingId ring{o.as, 1'000'000 + n};
    switch (n % 4) {
      case 0: {
        Join join;
        join.sender = o.as;
        join.ring_seq = ring.seq;
        join.proc_set.ids[0] = o.as;
        join.proc_set.count = 1;
        len = encode_join(join, payload);
        break;
      }
      case 1: len = encode_merge_detect(MergeDetect{ring, o.as, {}}, payload); break;
      case 2: {
        Token token;
        token.ring_id = ring;
        token.token_seq = n;
        len = encode_token(token, payload);
        break;
      }
      default: {
        len = encode_mcast_header(McastHeader{ring, n, o.as, Delivery::kAgreed, false}, payload);
        random_fill(payload.subspan(len, 64));
        len += 64;
      }
    }
  } else {
    len = 64 + rng() % 512;
    random_fill(payload.first(len));
    if (o.kind == Kind::kForgedSealed) {
      header.flags = transport::kFlagSealed;
      len += transport::kSealOverhead;
      random_fill(payload.subspan(len - transport::kSealOverhead, transport::kSealOverhead));
    }
  }
  header.payload_len = static_cast<std::uint32_t>(len);
  transport::encode_header(header, out.first<transport::kWireHeaderSize>());
  return transport::kWireHeaderSize + len;
}

Result<Fd> open_socket(const FloodOptions& o) {
  if (o.spoof) return testing::open_raw_ipv4_socket();
  Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return Error::sys(errno, "UDP socket");
  if (o.from.sin_family != 0 && bind(fd.get(), reinterpret_cast<const sockaddr*>(&o.from), sizeof o.from) != 0)
    return Error::sys(errno, "bind to the --from address");
  return fd;
}

int run(const FloodOptions& o) {
  auto fd = open_socket(o);
  if (!fd) return fmt::print(stderr, "rtotem-flood: {}\n", fd.error().message()), 1;
  // Made before the clock starts, then sent round and round: the flood is limited by the
  // kernel, not by making packets.
  const std::size_t room = kIpUdpHeaders + kPacketMax + transport::kSealOverhead;
  const std::size_t skip = o.spoof ? kIpUdpHeaders : 0;
  std::vector<std::byte> frames(kPool * room);
  std::array<iovec, kPool> iovs{};
  std::mt19937_64 rng(0x5eed);
  for (std::size_t i = 0; i < kPool; ++i) {
    const std::span<std::byte> frame(frames.data() + i * room, room);
    const std::size_t len = make_packet(o, i, rng, frame.subspan(skip));
    if (o.spoof) testing::SpoofedUdp::put_headers(o.from, o.to, len, frame.first<testing::SpoofedUdp::kHeaders>());
    iovs[i] = {frame.data(), skip + len};
  }
  std::array<mmsghdr, kPool> msgs{};
  for (std::size_t i = 0; i < kPool; ++i) {
    msgs[i].msg_hdr.msg_name = const_cast<sockaddr_in*>(&o.to);
    msgs[i].msg_hdr.msg_namelen = sizeof o.to;
    msgs[i].msg_hdr.msg_iov = &iovs[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  std::uint64_t made = 0, sent = 0, refused = 0;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(o.seconds);
  for (auto now = start; now < end; now = Clock::now()) {
    std::size_t batch = kBatch;
    if (o.rate > 0) {  // paced: no more than the rate allows by now
      const auto due = static_cast<std::uint64_t>(std::chrono::duration<double>(now - start).count() * o.rate);
      if (due <= made) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      batch = std::min<std::uint64_t>(kBatch, due - made);
    }
    const std::size_t first = made % kPool;
    batch = std::min(batch, kPool - first);  // no batch runs past the pool's end
    made += batch;
    const int n = sendmmsg(fd->get(), &msgs[first], static_cast<unsigned>(batch), 0);
    if (n > 0) sent += static_cast<std::uint64_t>(n);
    if (n < static_cast<int>(batch)) ++refused;  // ENOBUFS and the like: the flood goes on
  }
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  fmt::print("{{\"sent\": {}, \"seconds\": {:.2f}, \"pps\": {:.0f}, \"short_batches\": {}}}\n", sent, took, sent / took,
             refused);
  return 0;
}

}  // namespace
}  // namespace rtotem::bench

int main(int argc, char** argv) {
  auto options = rtotem::bench::parse(argc, argv);
  if (!options) {
    fmt::print(stderr, "rtotem-flood: {}\n{}", options.error().message(), rtotem::bench::kFloodUsage);
    return 2;
  }
  return rtotem::bench::run(*options);
}
