// The UDP datapath allocates nothing in steady state: acquire, multicast, flush, recvmmsg, the
// sink and the releases, counted by the process-wide malloc hook; with a cluster key, sealing and
// opening every packet too.
#include <array>

#include "src/common/alloc_counter.hpp"
#include "transport/links/link_set.hpp"
#include "tests/integration/udp_test_support.hpp"

namespace rtotem::test {
namespace {

struct CountingSink final : PacketSink {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  void on_packets(std::span<InboundPacket> batch) override {
    for (const auto& p : batch) ++packets, bytes += p.payload.size();
  }
};

// Node `id` of two: a UDP backend on ports `port` + id - 1, or with `links` 2 a LinkSet in active
// mode over two (link 1 on ports `port` + 2 + id - 1), pinging on the clock `now`.
std::unique_ptr<Backend> open_node(NodeId id, std::shared_ptr<const ClusterKey> key, int port, int links,
                                   const Micros& now) {
  std::vector<std::unique_ptr<Backend>> opened;
  for (int link = 0; link < links; ++link) {
    const int first = port + 2 * link;
    std::vector<UdpPeer> peers = {{1, addr("127.0.0.1", test_port(first))},
                                  {2, addr("127.0.0.1", test_port(first + 1))}};
    UdpConfig config = node_config(id, peers[id - 1].address, peers);
    config.params.key = key;
    config.params.epoch = 1;
    config.params.local_path = links == 1;
    auto backend = open_or_fail(config);
    if (!backend) return nullptr;
    opened.push_back(std::move(backend));
  }
  if (links == 1) return std::move(opened.front());
  LinkSetConfig set;
  set.params = opened.front()->params();
  set.params.local_path = true;
  set.peers = {id == 1 ? NodeId{2} : NodeId{1}};
  set.links.assign(static_cast<std::size_t>(links), LinkSpec{});
  set.mode = LinkMode::kActive;
  set.clock = [&now] { return now; };
  auto opened_set = LinkSet::open(set, std::move(opened));
  EXPECT_TRUE(opened_set.ok()) << opened_set.error().message();
  return opened_set ? std::move(*opened_set) : nullptr;
}

// Null `key`: in the clear. `port`: the first of two per link.
void expect_steady_state_allocates_nothing(std::shared_ptr<const ClusterKey> key, int port, int links = 1) {
  Micros now = 1;
  auto a = open_node(1, key, port, links, now);
  auto b = open_node(2, key, port, links, now);
  ASSERT_TRUE(a && b);
  CountingSink at_a, at_b;
  std::uint64_t refused = 0;
  std::uint64_t sent = 0;  // copies on their way to b: one per link (active mode)

  // Polls both until b has every copy sent so far, within kPatience. A batch at a time, so that
  // the kernel's queues never hold more than one and lose none, however busy the machine.
  auto drain = [&] {
    std::array<pollfd, kLinksMax> fds{};
    std::size_t count = 0;
    for (int fd : b->poll_fds())
      if (count < fds.size()) fds[count++] = pollfd{fd, POLLIN, 0};
    for (const auto deadline = std::chrono::steady_clock::now() + kPatience;;) {
      (void)a->flush();
      while (b->poll(at_b) > 0 || a->poll(at_a) > 0) {}
      if (at_b.packets >= sent || std::chrono::steady_clock::now() >= deadline) return;
      (void)::poll(fds.data(), count, 10);
    }
  };
  auto run = [&](int messages) {
    for (int i = 0; i < messages; ++i) {
      SendBufferRef buffer;
      if (a->acquire(buffer) != Status::kOk) {
        ++refused;
        continue;
      }
      buffer->writable_payload()[0] = std::byte(i);
      buffer->set_payload_size(1000);
      if (a->multicast(buffer) != Status::kOk)
        ++refused;
      else
        sent += static_cast<std::uint64_t>(links);
      if (i % 32 == 31) {
        now += 10'000;  // a LinkSet's pings and pongs go with the traffic: 10 ms a batch
        (void)a->on_timer(now);
        (void)b->on_timer(now);
        (void)b->flush();
        drain();
      }
    }
    drain();
  };

  run(2000);  // warm-up: lazy kernel and libc state, first-touch of everything
  const std::uint64_t before = heap_allocations();
  run(20000);
  const std::uint64_t allocations = heap_allocations() - before;

  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(at_a.packets, 22000u);                                     // own multicasts, through the local path
  EXPECT_EQ(at_b.packets, static_cast<std::uint64_t>(22000 * links));  // active mode: a copy per link
  EXPECT_GT(heap_allocations(), 0u);  // the hook is live: this very test allocated earlier
  EXPECT_EQ(b->counters().drops(), 0u);
  if (links > 1) {
    const LinkSet& set = *b->link_set();
    for (LinkId link = 0; link < links; ++link)
      EXPECT_TRUE(set.monitor().up(1, link)) << "link " << int{link} << ": its pings went with the traffic";
  }
}

TEST(UdpZeroAlloc, SteadyStateSendAndReceiveAllocateNothing) { expect_steady_state_allocates_nothing(nullptr, 20); }

// Two links in active mode: every packet on both, pings and pongs beside them, sealed by each link.
TEST(UdpZeroAlloc, TwoLinksInActiveModeAllocateNothing) {
  auto key = ClusterKey::random();
  ASSERT_TRUE(key.ok());
  expect_steady_state_allocates_nothing(std::make_shared<const ClusterKey>(std::move(key).value()), 24, 2);
}

TEST(UdpZeroAlloc, SealingAndOpeningEveryPacketAllocatesNothing) {
  auto key = ClusterKey::random();
  ASSERT_TRUE(key.ok());
  expect_steady_state_allocates_nothing(std::make_shared<const ClusterKey>(std::move(key).value()), 22);
}

}  // namespace
}  // namespace rtotem::test
