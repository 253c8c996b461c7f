// UDP backend between real sockets: unicast mode and IP multicast, IPv4 and IPv6, and datagrams
// that must be counted and dropped without losing the good ones.
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstdlib>

#include "tests/integration/udp_test_support.hpp"
#include "base/fd.hpp"

namespace rtotem::test {
namespace {

// Three nodes on 127.0.0.1-3, same port, in unicast mode: every node lists every other.
struct UnicastTrio : ::testing::Test {
  std::vector<UdpPeer> peers;
  std::vector<std::unique_ptr<UdpBackend>> nodes;
  std::vector<CollectSink> sinks = std::vector<CollectSink>(3);

  void SetUp() override {
    for (NodeId id = 1; id <= 3; ++id) peers.push_back({id, addr(fmt::format("127.0.0.{}", id), test_port(0))});
    for (NodeId id = 1; id <= 3; ++id) {
      nodes.push_back(open_or_fail(node_config(id, peers[id - 1].address, peers)));
      ASSERT_TRUE(nodes.back());
    }
  }
  bool wait(const std::function<bool()>& done, std::chrono::milliseconds limit = kPatience) {
    return poll_until({nodes[0].get(), nodes[1].get(), nodes[2].get()}, {&sinks[0], &sinks[1], &sinks[2]}, done, limit);
  }
};

TEST_F(UnicastTrio, MulticastReachesEveryNodeOnceInOrder) {
  constexpr int kMessages = 300;  // more datagrams than one sendmmsg batch
  constexpr int kBurst = 100;     // the local path is bounded: poll between bursts, as a user does
  for (int burst = 0; burst < kMessages; burst += kBurst) {
    for (int i = burst; i < burst + kBurst; ++i)
      ASSERT_EQ(nodes[0]->multicast(make_message(*nodes[0], fmt::format("m{}", i))), Status::kOk);
    ASSERT_TRUE(wait([&] { return sinks[0].got.size() >= std::size_t(burst + kBurst); }));
  }
  ASSERT_TRUE(wait([&] { return sinks[1].got.size() >= kMessages && sinks[2].got.size() >= kMessages; }));
  EXPECT_FALSE(wait([&] { return sinks[1].got.size() > kMessages || sinks[2].got.size() > kMessages; }, kQuiet));
  for (int node = 0; node < 3; ++node) {
    ASSERT_EQ(sinks[node].got.size(), std::size_t(kMessages)) << "node " << node + 1;
    for (int i = 0; i < kMessages; ++i) {
      EXPECT_EQ(sinks[node].got[i].from, 1u);
      EXPECT_EQ(sinks[node].got[i].payload, fmt::format("m{}", i));
    }
  }
  EXPECT_EQ(nodes[0]->counters().rx_loopback, std::uint64_t(kMessages));
  EXPECT_EQ(nodes[0]->counters().tx_packets, std::uint64_t(2 * kMessages));  // one per other node
  EXPECT_GT(nodes[0]->counters().tx_calls, 1u);
  EXPECT_LT(nodes[0]->counters().tx_calls, std::uint64_t(kMessages));  // batched
  EXPECT_EQ(nodes[0]->send_pool().available(), nodes[0]->send_pool().capacity());
}

// Sets an interface's MTU, as `ip link set NAME mtu MTU` does.
bool set_mtu(const char* name, int mtu) {
  const Fd fd(::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq request{};
  std::strncpy(request.ifr_name, name, IFNAMSIZ - 1);
  request.ifr_mtu = mtu;
  return fd && ::ioctl(fd.get(), SIOCSIFMTU, &request) == 0;
}

// `size` bytes: the index, then filler, so a datagram out of place or cut shows.
std::string sized_message(int index, std::size_t size) {
  std::string text = fmt::format("{}:", index);
  text.resize(std::max(size, text.size()), static_cast<char>('a' + index % 26));
  return text;
}

// Sizes in runs with shorter ones among them (each ends a run) and longer ones (each starts one).
std::size_t run_size(int index) {
  if (index % 13 == 12) return 900;
  if (index % 7 == 6) return 300;
  return 600;
}

TEST_F(UnicastTrio, RunsOfEqualSizedMulticastsGoOutSegmentedAndArriveInOrder) {
  constexpr int kMessages = 400, kBurst = 100;
  for (int burst = 0; burst < kMessages; burst += kBurst) {
    for (int i = burst; i < burst + kBurst; ++i)
      ASSERT_EQ(nodes[0]->multicast(make_message(*nodes[0], sized_message(i, run_size(i)))), Status::kOk);
    ASSERT_TRUE(wait([&] { return sinks[0].got.size() >= std::size_t(burst + kBurst); }));
  }
  ASSERT_TRUE(wait([&] { return sinks[1].got.size() >= kMessages && sinks[2].got.size() >= kMessages; }));
  EXPECT_FALSE(wait([&] { return sinks[1].got.size() > kMessages || sinks[2].got.size() > kMessages; }, kQuiet));
  for (int node = 1; node < 3; ++node) {
    ASSERT_EQ(sinks[node].got.size(), std::size_t(kMessages)) << "node " << node + 1;
    for (int i = 0; i < kMessages; ++i) ASSERT_EQ(sinks[node].got[i].payload, sized_message(i, run_size(i)));
  }
  const BackendCounters& sent = nodes[0]->counters();
  EXPECT_EQ(sent.tx_packets, std::uint64_t(2 * kMessages));
  EXPECT_GT(sent.tx_gso_runs, 0u);
  EXPECT_EQ(sent.tx_gso_refused, 0u);
  EXPECT_EQ(sent.tx_errors, 0u);
  EXPECT_EQ(nodes[0]->send_pool().available(), nodes[0]->send_pool().capacity());
}

// Runs at the kernel's limits: 64 segments of small datagrams, and 65,000 bytes of large ones
// (48 of 1,350 bytes). A run past either would be refused, and the offload turned off.
TEST_F(UnicastTrio, RunsStopAtTheKernelsLimitsAndTheOffloadStaysOn) {
  constexpr int kMessages = 400, kBurst = 100;
  auto size_of = [](int i) { return i < kMessages / 2 ? std::size_t{100} : std::size_t{1350}; };
  for (int burst = 0; burst < kMessages; burst += kBurst) {
    for (int i = burst; i < burst + kBurst; ++i)
      ASSERT_EQ(nodes[0]->multicast(make_message(*nodes[0], sized_message(i, size_of(i)))), Status::kOk);
    ASSERT_TRUE(wait([&] { return sinks[0].got.size() >= std::size_t(burst + kBurst); }));
  }
  ASSERT_TRUE(wait([&] { return sinks[1].got.size() >= kMessages && sinks[2].got.size() >= kMessages; }));
  for (int node = 1; node < 3; ++node) {
    ASSERT_EQ(sinks[node].got.size(), std::size_t(kMessages)) << "node " << node + 1;
    for (int i = 0; i < kMessages; ++i) ASSERT_EQ(sinks[node].got[i].payload, sized_message(i, size_of(i)));
  }
  const BackendCounters& sent = nodes[0]->counters();
  EXPECT_EQ(sent.tx_gso_refused, 0u);
  EXPECT_EQ(sent.tx_errors, 0u);
  // Bursts of 100: at least 2 runs a burst and destination, 3 at 1,350 bytes.
  EXPECT_GE(sent.tx_gso_runs, 2u * (2 * 2 + 2 * 3));
}

// Loopback shaped to 200 Mbit/s, so datagrams wait in its queue and a small send buffer fills:
// sendmmsg stops inside a run, between its destinations, and the next flush goes on from there.
// Each node still gets every datagram exactly once. Not necessarily in order: CI once saw all 1001
// arrive with 154 where 144 was due, most likely because the shaper's timer hands datagrams to the
// receive backlog of whichever core it fires on (not reproduced here). A resumed run that went out
// whole again, or not at all, shows as a datagram twice or missing.
TEST(UdpUnicastRuns, ASmallSendBufferStopsRunsMidwayAndLosesNothing) {
  if (!in_private_netns()) GTEST_SKIP() << "needs root for a private namespace to shape its loopback";
  ASSERT_EQ(std::system("tc qdisc add dev lo root tbf rate 200mbit burst 64kb limit 4mb"), 0);
  struct Unshape {
    ~Unshape() { (void)std::system("tc qdisc del dev lo root"); }
  } unshape;
  std::vector<UdpPeer> peers;
  for (NodeId id = 1; id <= 3; ++id) peers.push_back({id, addr(fmt::format("127.0.0.{}", id), test_port(9))});
  std::vector<std::unique_ptr<UdpBackend>> nodes;
  for (NodeId id = 1; id <= 3; ++id) {
    UdpConfig config = node_config(id, peers[id - 1].address, peers);
    if (id == 1) config.send_buffer_bytes = 4096;  // the kernel's floor, a few datagrams
    nodes.push_back(open_or_fail(config));
    ASSERT_TRUE(nodes.back());
  }
  std::vector<CollectSink> sinks(3);
  auto wait = [&](const std::function<bool()>& done, std::chrono::milliseconds limit = kPatience) {
    return poll_until({nodes[0].get(), nodes[1].get(), nodes[2].get()}, {&sinks[0], &sinks[1], &sinks[2]}, done, limit);
  };
  // Queued a few at a time and flushed, twice, then drained: the first run (the queue's last
  // items then) is cut between its destinations by the full buffer, and must go on to the other
  // as it was cut, not as the longer run the queue now holds.
  constexpr int kMessages = 1001, kFew = 7;
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(nodes[0]->multicast(make_message(*nodes[0], sized_message(i, 1200))), Status::kOk) << "message " << i;
    if (i % kFew != kFew - 1) continue;
    const Status flushed = nodes[0]->flush();
    ASSERT_TRUE(flushed == Status::kOk || flushed == Status::kWouldBlock) << describe(flushed);
    if (i % (2 * kFew) == 2 * kFew - 1) {
      ASSERT_TRUE(wait([&] { return nodes[0]->tx_room() == kTxQueueMax; }));
    }
  }
  ASSERT_TRUE(wait([&] { return sinks[1].got.size() >= kMessages && sinks[2].got.size() >= kMessages; }));
  EXPECT_FALSE(wait([&] { return sinks[1].got.size() > kMessages || sinks[2].got.size() > kMessages; }, kQuiet));
  for (int node = 1; node < 3; ++node) {
    std::vector<int> times_got(kMessages);
    for (const auto& got : sinks[node].got) {
      const int index = std::stoi(got.payload);
      ASSERT_TRUE(index >= 0 && index < kMessages) << got.payload.substr(0, 16);
      ASSERT_EQ(got.payload, sized_message(index, 1200));
      ++times_got[index];
    }
    for (int i = 0; i < kMessages; ++i) ASSERT_EQ(times_got[i], 1) << "node " << node + 1 << ", message " << i;
  }
  const BackendCounters& sent = nodes[0]->counters();
  EXPECT_GT(sent.tx_would_block, 0u);
  EXPECT_GT(sent.tx_gso_runs, 0u);
  EXPECT_EQ(sent.tx_packets, std::uint64_t(2 * kMessages));
  EXPECT_EQ(sent.tx_errors, 0u);
}

TEST_F(UnicastTrio, UnicastReachesOnlyItsDestination) {
  ASSERT_EQ(nodes[0]->unicast(3, make_message(*nodes[0], "token")), Status::kOk);
  ASSERT_TRUE(wait([&] { return !sinks[2].got.empty(); }));
  EXPECT_FALSE(wait([&] { return !sinks[1].got.empty() || !sinks[0].got.empty(); }, kQuiet));
  EXPECT_EQ(sinks[2].got[0].payload, "token");
  EXPECT_EQ(nodes[0]->unicast(9, make_message(*nodes[0], "nobody")), Status::kUnknownNode);
}

// The nodelist changes while packets wait to go: what is queued goes to the new peers only, a
// unicast to a node taken out goes nowhere, and one put back is heard again.
TEST_F(UnicastTrio, PeersChangedWhileSendsWaitGoToTheNewPeersOnly) {
  const auto set_peers = [&](std::vector<UdpPeer> list) {
    const std::vector<std::vector<PeerAddress>> one_link = {std::move(list)};
    auto checked = nodes[0]->check_peers(one_link);
    if (checked) nodes[0]->set_peers(one_link);
    return checked;
  };
  ASSERT_EQ(nodes[0]->unicast(3, make_message(*nodes[0], "to 3")), Status::kOk);
  ASSERT_EQ(nodes[0]->multicast(make_message(*nodes[0], "all")), Status::kOk);
  ASSERT_TRUE(set_peers({peers[0], peers[1]}).ok());
  ASSERT_EQ(nodes[0]->flush(), Status::kOk);
  ASSERT_TRUE(wait([&] { return !sinks[1].got.empty(); }));
  EXPECT_EQ(sinks[1].got[0].payload, "all");
  EXPECT_FALSE(wait([&] { return !sinks[2].got.empty(); }, kQuiet));
  EXPECT_EQ(nodes[0]->unicast(3, make_message(*nodes[0], "gone")), Status::kUnknownNode);
  EXPECT_EQ(nodes[0]->send_pool().available(), nodes[0]->send_pool().capacity());

  ASSERT_TRUE(set_peers(peers).ok());
  ASSERT_EQ(nodes[0]->multicast(make_message(*nodes[0], "back")), Status::kOk);
  ASSERT_EQ(nodes[0]->flush(), Status::kOk);
  ASSERT_TRUE(wait([&] { return !sinks[2].got.empty(); }));
  EXPECT_EQ(sinks[2].got[0].payload, "back");
  EXPECT_FALSE(set_peers({peers[1], peers[1]}).ok());
  EXPECT_FALSE(nodes[0]->check_peers(std::vector<std::vector<PeerAddress>>{peers, peers}).ok());  // two links
}

TEST_F(UnicastTrio, HeldReceiveBuffersAreBackPressureAndNothingIsLost) {
  sinks[1].keep = true;  // node 2's protocol holds every buffer it gets
  const std::size_t ring = 256;
  const int total = static_cast<int>(ring + 40);
  for (int i = 0; i < total; ++i)
    ASSERT_EQ(nodes[0]->unicast(2, make_message(*nodes[0], fmt::format("{}", i))), Status::kOk);
  ASSERT_EQ(nodes[0]->flush(), Status::kOk);
  ASSERT_TRUE(wait([&] { return sinks[1].got.size() >= ring; }));
  EXPECT_FALSE(wait([&] { return sinks[1].got.size() > ring; }, kQuiet));
  EXPECT_EQ(sinks[1].got.size(), ring);
  EXPECT_GT(nodes[1]->counters().rx_ring_empty, 0u);

  sinks[1].kept.clear();  // released: every buffer is re-posted
  sinks[1].keep = false;
  ASSERT_TRUE(wait([&] { return sinks[1].got.size() == std::size_t(total); }));
  for (int i = 0; i < total; ++i) EXPECT_EQ(sinks[1].got[i].payload, fmt::format("{}", i));
}

// Datagrams crafted by a plain socket, each wrong in one way, then one good one.
TEST_F(UnicastTrio, MalformedDatagramsAreCountedAndDropped) {
  int raw = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(raw, 0);
  auto send_raw = [&](std::vector<std::byte> bytes) {
    ASSERT_EQ(::sendto(raw, bytes.data(), bytes.size(), 0, peers[1].address.sockaddr_ptr(), peers[1].address.length()),
              ssize_t(bytes.size()));
  };
  auto datagram = [](WireHeader h, std::size_t payload, std::size_t claimed) {
    h.payload_len = static_cast<std::uint32_t>(claimed);
    std::vector<std::byte> bytes(kWireHeaderSize + payload, std::byte{1});
    encode_header(h, std::span<std::byte, kWireHeaderSize>(bytes.data(), kWireHeaderSize));
    return bytes;
  };
  WireHeader good;
  good.cluster_id = kTestCluster;
  good.sender = 3;
  WireHeader foreign = good, old = good, anonymous = good;
  foreign.cluster_id = kTestCluster + 1;
  old.version = kWireVersion + 1;
  anonymous.sender = kNoNode;

  send_raw(std::vector<std::byte>(7, std::byte{'r'}));  // short
  auto junk = datagram(good, 10, 10);
  junk[0] = std::byte{'X'};
  send_raw(junk);                                // bad magic
  send_raw(datagram(old, 10, 10));               // bad version
  send_raw(datagram(foreign, 10, 10));           // foreign cluster
  send_raw(datagram(good, 10, 20));              // length lies
  send_raw(datagram(anonymous, 10, 10));         // no sender
  send_raw(datagram(good, 1400 + 1, 1400 + 1));  // one byte over the MTU: truncated
  send_raw(datagram(good, 5, 5));                // node 3's id, not from node 3's address
  ::close(raw);
  ASSERT_EQ(nodes[2]->unicast(2, make_message(*nodes[2], "fine")), Status::kOk);  // from node 3 itself
  ASSERT_EQ(nodes[2]->flush(), Status::kOk);

  ASSERT_TRUE(wait([&] { return !sinks[1].got.empty(); }));
  const auto& c = nodes[1]->counters();
  EXPECT_EQ(c.drop_short, 1u);
  EXPECT_EQ(c.drop_bad_magic, 1u);
  EXPECT_EQ(c.drop_bad_version, 1u);
  EXPECT_EQ(c.drop_foreign_cluster, 1u);
  EXPECT_EQ(c.drop_bad_length, 1u);
  EXPECT_EQ(c.drop_no_sender, 1u);
  EXPECT_EQ(c.drop_truncated, 1u);
  EXPECT_EQ(c.drop_wrong_source, 1u);
  EXPECT_EQ(c.rx_packets, 1u);
  ASSERT_EQ(sinks[1].got.size(), 1u);
  EXPECT_EQ(sinks[1].got[0].from, 3u);
  // Every dropped datagram's buffer went back to the ring: holding all it receives, node 2 still
  // gets a full ring's worth, and not one more.
  sinks[1].got.clear();
  sinks[1].keep = true;
  for (int i = 0; i < 256 + 10; ++i) ASSERT_EQ(nodes[0]->unicast(2, make_message(*nodes[0], "again")), Status::kOk);
  ASSERT_TRUE(wait([&] { return sinks[1].got.size() == 256; }));
  EXPECT_FALSE(wait([&] { return sinks[1].got.size() > 256; }, kQuiet));
}

TEST_F(UnicastTrio, DatagramsFromNodesNotInTheListAreDropped) {
  UdpConfig stranger_config = node_config(99, addr("127.0.0.9", test_port(0)), peers);
  stranger_config.peers.push_back({99, stranger_config.bind});
  auto stranger = open_or_fail(stranger_config);
  ASSERT_TRUE(stranger);
  ASSERT_EQ(stranger->multicast(make_message(*stranger, "let me in")), Status::kOk);
  ASSERT_EQ(stranger->flush(), Status::kOk);
  ASSERT_TRUE(wait([&] { return nodes[0]->counters().drop_unknown_sender == 1; }));
  EXPECT_TRUE(sinks[0].got.empty());
}

TEST_F(UnicastTrio, ARefusedPeerLosesItsDatagramsAndTheOthersStillGetTheirs) {
  // 255.255.255.255 without SO_BROADCAST: the kernel refuses every datagram to it (EACCES).
  std::vector<UdpPeer> with_refused = peers;
  with_refused[2].address = addr("255.255.255.255", test_port(0));
  nodes[0].reset();
  nodes[0] = open_or_fail(node_config(1, peers[0].address, with_refused));
  ASSERT_TRUE(nodes[0]);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(nodes[0]->multicast(make_message(*nodes[0], fmt::format("{}", i))), Status::kOk);
  ASSERT_TRUE(wait([&] { return sinks[1].got.size() == 100; }));
  EXPECT_EQ(nodes[0]->counters().tx_errors, 100u);
  EXPECT_EQ(nodes[0]->counters().tx_packets, 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sinks[1].got[i].payload, fmt::format("{}", i));
  EXPECT_EQ(nodes[0]->send_pool().available(), nodes[0]->send_pool().capacity());
}

TEST(UdpMulticast, GroupOnLoopbackReachesOthersAndOwnEchoIsDropped) {
  const auto group = addr("239.192.72.74", test_port(1));
  std::vector<UdpPeer> peers;
  for (NodeId id = 1; id <= 3; ++id) peers.push_back({id, addr(fmt::format("127.0.0.{}", id), test_port(2))});
  std::vector<std::unique_ptr<UdpBackend>> nodes;
  for (NodeId id = 1; id <= 3; ++id) {
    UdpConfig config = node_config(id, peers[id - 1].address, peers);
    config.mode = UdpMode::kMulticast;
    config.group = group;
    nodes.push_back(open_or_fail(config));
    ASSERT_TRUE(nodes.back());
  }
  std::vector<CollectSink> sinks(3);
  auto wait = [&](const std::function<bool()>& done, std::chrono::milliseconds limit = kPatience) {
    return poll_until({nodes[0].get(), nodes[1].get(), nodes[2].get()}, {&sinks[0], &sinks[1], &sinks[2]}, done, limit);
  };
  for (int i = 0; i < 50; ++i)
    ASSERT_EQ(nodes[1]->multicast(make_message(*nodes[1], fmt::format("g{}", i))), Status::kOk);
  ASSERT_TRUE(
      wait([&] { return sinks[0].got.size() == 50 && sinks[2].got.size() == 50 && sinks[1].got.size() == 50; }));
  EXPECT_EQ(nodes[1]->counters().tx_packets, 50u);                       // one datagram per multicast
  EXPECT_FALSE(wait([&] { return sinks[1].got.size() > 50; }, kQuiet));  // echoes never delivered twice
  EXPECT_EQ(nodes[1]->counters().drop_self_echo, 50u);
  EXPECT_EQ(nodes[1]->counters().rx_loopback, 50u);

  ASSERT_EQ(nodes[0]->unicast(3, make_message(*nodes[0], "token")), Status::kOk);  // token path
  ASSERT_TRUE(wait([&] { return sinks[2].got.size() == 51; }));
  EXPECT_EQ(sinks[2].got.back().payload, "token");
  EXPECT_EQ(sinks[1].got.size(), 50u);
}

struct MulticastPair : ::testing::Test {
  std::vector<std::unique_ptr<UdpBackend>> nodes;
  void SetUp() override {
    std::vector<UdpPeer> peers = {{1, addr("127.0.0.1", test_port(10))}, {2, addr("127.0.0.2", test_port(10))}};
    for (NodeId id = 1; id <= 2; ++id) {
      UdpConfig config = node_config(id, peers[id - 1].address, peers);
      config.mode = UdpMode::kMulticast;
      config.group = addr("239.192.72.75", test_port(11));
      nodes.push_back(open_or_fail(config));
      ASSERT_TRUE(nodes.back());
    }
  }
  // Whether `count` datagrams wait at node 1's sockets within kPatience: all that was sent to it
  // has arrived, so that one poll finds them together.
  bool arrived(std::size_t count) const {
    return eventually(
        [&] {
          std::size_t waiting = 0;
          for (int fd : nodes[0]->poll_fds()) waiting += datagrams_waiting(fd);
          return waiting == count;
        },
        kPatience, std::chrono::milliseconds(1));
  }
};

// tocssrp95: a node handles the multicasts it has received before the token that follows them.
TEST_F(MulticastPair, MulticastsQueuedBeforeATokenAreHandedOutBeforeIt) {
  for (int i = 0; i < 40; ++i)
    ASSERT_EQ(nodes[1]->multicast(make_message(*nodes[1], fmt::format("m{}", i))), Status::kOk);
  ASSERT_EQ(nodes[1]->unicast(1, make_message(*nodes[1], "token")), Status::kOk);
  ASSERT_EQ(nodes[1]->flush(), Status::kOk);
  ASSERT_TRUE(arrived(41));
  CollectSink sink;
  while (nodes[0]->poll(sink) == kRxBatchMax) {}
  ASSERT_EQ(sink.got.size(), 41u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(sink.got[i].payload, fmt::format("m{}", i));
  EXPECT_EQ(sink.got[40].payload, "token");
}

TEST_F(MulticastPair, AShortBatchMeansDrainedEvenWhenEchoesWereDropped) {
  for (int i = 0; i < 64; ++i) ASSERT_EQ(nodes[0]->multicast(make_message(*nodes[0], "own")), Status::kOk);
  ASSERT_EQ(nodes[0]->flush(), Status::kOk);
  ASSERT_EQ(nodes[1]->multicast(make_message(*nodes[1], "theirs")), Status::kOk);
  ASSERT_EQ(nodes[1]->flush(), Status::kOk);
  ASSERT_TRUE(arrived(64 + 1));  // the echoes of its own, and the peer's
  CollectSink sink;
  while (nodes[0]->poll(sink) == kRxBatchMax) {}
  ASSERT_EQ(sink.got.size(), 65u);  // 64 own through the local path, then the peer's
  EXPECT_EQ(sink.got.back().payload, "theirs");
  EXPECT_EQ(nodes[0]->counters().drop_self_echo, 64u);
}

TEST(UdpUnicastV6, TwoNodesOnLoopbackExchange) {
  std::vector<UdpPeer> peers = {{1, addr("::1", test_port(3))}, {2, addr("::1", test_port(4))}};
  auto a = open_or_fail(node_config(1, peers[0].address, peers));
  auto b = open_or_fail(node_config(2, peers[1].address, peers));
  ASSERT_TRUE(a && b);
  CollectSink sa, sb;
  ASSERT_EQ(a->multicast(make_message(*a, "ping6")), Status::kOk);
  ASSERT_EQ(b->unicast(1, make_message(*b, "pong6")), Status::kOk);
  ASSERT_TRUE(poll_until({a.get(), b.get()}, {&sa, &sb}, [&] { return sb.got.size() == 1 && sa.got.size() == 2; }));
  EXPECT_EQ(sb.got[0].payload, "ping6");
  EXPECT_EQ(a->local_address(), fmt::format("[::1]:{}", test_port(3)));
}

TEST(UdpMulticastV6, GroupOverVethReachesThePeer) {
  if (!in_private_netns()) GTEST_SKIP() << "needs root for a private namespace with a veth pair";
  const auto group = addr("ff15::7274:1", test_port(5));
  std::vector<UdpPeer> peers = {{1, addr(kVethAddrA, test_port(6))}, {2, addr(kVethAddrB, test_port(6))}};
  UdpConfig ca = node_config(1, peers[0].address, peers), cb = node_config(2, peers[1].address, peers);
  ca.mode = cb.mode = UdpMode::kMulticast;
  ca.group = cb.group = group;
  ca.interface = kVethA;
  cb.interface = kVethB;
  auto a = open_or_fail(ca);
  auto b = open_or_fail(cb);
  ASSERT_TRUE(a && b);
  CollectSink sa, sb;
  for (int i = 0; i < 20; ++i) ASSERT_EQ(a->multicast(make_message(*a, fmt::format("v6-{}", i))), Status::kOk);
  ASSERT_TRUE(poll_until({a.get(), b.get()}, {&sa, &sb}, [&] { return sb.got.size() == 20; }));
  EXPECT_FALSE(poll_until(
      {a.get(), b.get()}, {&sa, &sb}, [&] { return sb.got.size() > 20; }, kQuiet));
  EXPECT_EQ(sb.got[19].payload, "v6-19");
  EXPECT_EQ(sa.got.size(), 20u);
}

// A segment larger than the path's MTU (loopback's, lowered to 1280): the kernel refuses the run
// (EINVAL); the offload turns off and the run goes again datagram by datagram (IPv6 fragments
// them), so nothing is lost.
TEST(UdpUnicastRuns, ARunRefusedForTheOffloadGoesAgainDatagramByDatagram) {
  if (!in_private_netns()) GTEST_SKIP() << "needs root for a private namespace to lower its loopback's MTU";
  ASSERT_TRUE(set_mtu("lo", 1280));
  struct RestoreMtu {
    ~RestoreMtu() { EXPECT_TRUE(set_mtu("lo", 65536)); }
  } restore;
  std::vector<UdpPeer> peers = {{1, addr("::1", test_port(12))}, {2, addr("::1", test_port(13))}};
  auto a = open_or_fail(node_config(1, peers[0].address, peers));
  auto b = open_or_fail(node_config(2, peers[1].address, peers));
  ASSERT_TRUE(a && b);
  CollectSink sa, sb;
  for (int i = 0; i < 40; ++i) ASSERT_EQ(a->multicast(make_message(*a, sized_message(i, 1300))), Status::kOk);
  ASSERT_TRUE(poll_until({a.get(), b.get()}, {&sa, &sb}, [&] { return sb.got.size() == 40; })) << sb.got.size();
  for (int i = 0; i < 40; ++i) EXPECT_EQ(sb.got[i].payload, sized_message(i, 1300));
  EXPECT_EQ(a->counters().tx_gso_refused, 1u);
  EXPECT_EQ(a->counters().tx_gso_runs, 0u);
  EXPECT_EQ(a->counters().tx_errors, 0u);
}

// A peer behind a blackhole route: the kernel refuses every send to it with EINVAL, as it refuses
// a run the offload cannot take. The refusal is the route's, not the offload's: runs keep going
// to the reachable peer as runs, and only the blackholed peer's datagrams are lost.
TEST(UdpUnicastRuns, ARouteThatRefusesAPeerLeavesTheOffloadOn) {
  if (!in_private_netns()) GTEST_SKIP() << "needs root for a private namespace to add a blackhole route";
  static constexpr const char* kBlackholeAddr = "fd00:7274:dead::1";
  auto route = [](const char* verb) { return fmt::format("ip -6 route {} blackhole {}/128", verb, kBlackholeAddr); };
  ASSERT_EQ(std::system(route("replace").c_str()), 0);
  struct Unroute {
    std::string command;
    ~Unroute() { (void)std::system(command.c_str()); }
  } unroute{route("del")};
  std::vector<UdpPeer> peers = {
      {1, addr("::1", test_port(14))}, {2, addr("::1", test_port(15))}, {3, addr(kBlackholeAddr, test_port(16))}};
  auto a = open_or_fail(node_config(1, peers[0].address, peers));
  auto b = open_or_fail(node_config(2, peers[1].address, peers));
  ASSERT_TRUE(a && b);
  CollectSink sa, sb;
  constexpr int kMessages = 40;
  for (int i = 0; i < kMessages; ++i) ASSERT_EQ(a->multicast(make_message(*a, sized_message(i, 600))), Status::kOk);
  auto done = [&] { return sb.got.size() == kMessages && a->counters().tx_errors == kMessages; };
  ASSERT_TRUE(poll_until({a.get(), b.get()}, {&sa, &sb}, done))
      << sb.got.size() << " delivered, " << a->counters().tx_errors << " refused";
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(sb.got[i].payload, sized_message(i, 600));
  EXPECT_EQ(a->counters().tx_gso_refused, 0u);
  EXPECT_GT(a->counters().tx_gso_runs, 0u);
  EXPECT_EQ(a->counters().tx_errors, std::uint64_t(kMessages));  // node 3's copies, and only those
  EXPECT_EQ(a->counters().tx_packets, std::uint64_t(kMessages));
}

// Only the second destination's path is too narrow for a segment: the first has the run as one
// when the second refuses it. The probe passes, the offload turns off, and the second destination
// gets the run's rest datagram by datagram, so both have every message in order.
TEST(UdpUnicastRuns, ARunRefusedForOneDestinationAfterAnotherHasItGoesOnSingly) {
  if (!in_private_netns()) GTEST_SKIP() << "needs root for a private namespace to narrow one address's route";
  static constexpr const char* kNarrowAddr = "fd00:7274:beef::1";
  // The address's own local route (metric 0) gives way to one with a 1280-byte MTU.
  const std::string narrow = fmt::format(
      "ip -6 addr add {0}/128 dev lo && ip -6 route add local {0} dev lo table local mtu lock 1280 && "
      "ip -6 route del local {0} dev lo table local metric 0",
      kNarrowAddr);
  struct Widen {
    std::string command;
    ~Widen() { (void)std::system(command.c_str()); }
  } widen{fmt::format("ip -6 route del local {0} table local; ip -6 addr del {0}/128 dev lo", kNarrowAddr)};
  ASSERT_EQ(std::system(narrow.c_str()), 0) << narrow;
  std::vector<UdpPeer> peers = {
      {1, addr("::1", test_port(17))}, {2, addr("::1", test_port(18))}, {3, addr(kNarrowAddr, test_port(19))}};
  auto a = open_or_fail(node_config(1, peers[0].address, peers));
  auto b = open_or_fail(node_config(2, peers[1].address, peers));
  auto c = open_or_fail(node_config(3, peers[2].address, peers));
  ASSERT_TRUE(a && b && c);
  CollectSink sa, sb, sc;
  constexpr int kMessages = 40;
  for (int i = 0; i < kMessages; ++i) ASSERT_EQ(a->multicast(make_message(*a, sized_message(i, 1300))), Status::kOk);
  auto done = [&] { return sb.got.size() == kMessages && sc.got.size() == kMessages; };
  ASSERT_TRUE(poll_until({a.get(), b.get(), c.get()}, {&sa, &sb, &sc}, done))
      << sb.got.size() << " and " << sc.got.size() << " delivered";
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_EQ(sb.got[i].payload, sized_message(i, 1300));
    EXPECT_EQ(sc.got[i].payload, sized_message(i, 1300));
  }
  EXPECT_EQ(a->counters().tx_gso_refused, 1u);
  EXPECT_EQ(a->counters().tx_gso_runs, 1u);  // the first run, to node 2, before the refusal
  EXPECT_EQ(a->counters().tx_errors, 0u);
  EXPECT_EQ(a->counters().tx_packets, std::uint64_t(2 * kMessages));
}

TEST(UdpBackendOpen, RefusesBadConfigurationsWithTheReason) {
  auto expect_refused = [](UdpConfig config, const std::string& words) {
    auto backend = UdpBackend::open(config);
    ASSERT_FALSE(backend.ok());
    EXPECT_NE(backend.error().message().find(words), std::string::npos) << backend.error().message();
  };
  const auto self = addr("127.0.0.1", test_port(7));
  expect_refused(node_config(1, addr("0.0.0.0", test_port(7)), {}), "wildcard");
  expect_refused(node_config(1, self, {{2, addr("127.0.0.2", 1)}, {2, addr("127.0.0.3", 1)}}), "listed twice");
  expect_refused(node_config(1, self, {{1, addr("127.0.0.9", test_port(7))}}), "own node 1");
  expect_refused(node_config(1, self, {{2, addr("::1", 1)}}), "family");
  UdpConfig mc = node_config(1, self, {});
  mc.mode = UdpMode::kMulticast;
  mc.group = addr("10.1.1.1", 1);
  expect_refused(mc, "not a multicast address");
  mc.group = addr("239.1.1.1", 1);
  mc.interface = "no-such-if0";
  expect_refused(mc, "no-such-if0");

  auto first = open_or_fail(node_config(1, self, {}));
  ASSERT_TRUE(first);
  expect_refused(node_config(1, self, {}), "bind 127.0.0.1");  // address in use
}

TEST(UdpBackendOpen, GrantsSocketBuffers) {
  auto backend = open_or_fail(node_config(1, addr("127.0.0.1", test_port(8)), {}));
  ASSERT_TRUE(backend);
  EXPECT_GE(backend->granted_recv_buffer_bytes(), 64 * 1024);
  EXPECT_GE(backend->granted_send_buffer_bytes(), 64 * 1024);
  ASSERT_EQ(backend->poll_fds().size(), 1u);
}

}  // namespace
}  // namespace rtotem::test
