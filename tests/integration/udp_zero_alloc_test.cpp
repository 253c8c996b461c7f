// The UDP datapath allocates nothing in steady state: acquire, multicast, flush, recvmmsg, the
// sink and the releases, counted by the process-wide malloc hook; with a cluster key, sealing and
// opening every packet too.
#include "src/common/alloc_counter.hpp"
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

// Null `key`: in the clear. `port`: the first of two.
void expect_steady_state_allocates_nothing(std::shared_ptr<const ClusterKey> key, int port) {
  std::vector<UdpPeer> peers = {{1, addr("127.0.0.1", test_port(port))}, {2, addr("127.0.0.1", test_port(port + 1))}};
  UdpConfig config_a = node_config(1, peers[0].address, peers);
  UdpConfig config_b = node_config(2, peers[1].address, peers);
  for (UdpConfig* config : {&config_a, &config_b}) {
    config->params.key = key;
    config->params.epoch = 1;
  }
  auto a = open_or_fail(config_a);
  auto b = open_or_fail(config_b);
  ASSERT_TRUE(a && b);
  CountingSink at_a, at_b;
  std::uint64_t refused = 0;

  auto run = [&](int messages) {
    for (int i = 0; i < messages; ++i) {
      SendBufferRef buffer;
      if (a->acquire(buffer) != Status::kOk) {
        ++refused;
        continue;
      }
      buffer->writable_payload()[0] = std::byte(i);
      buffer->set_payload_size(1000);
      if (a->multicast(buffer) != Status::kOk) ++refused;
      if (i % 32 == 31) {
        (void)a->flush();
        while (b->poll(at_b) > 0 || a->poll(at_a) > 0) {
        }
      }
    }
    (void)a->flush();
    while (b->poll(at_b) > 0 || a->poll(at_a) > 0) {
    }
  };

  run(2000);  // warm-up: lazy kernel and libc state, first-touch of everything
  const std::uint64_t before = heap_allocations();
  run(20000);
  const std::uint64_t allocations = heap_allocations() - before;

  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(refused, 0u);
  EXPECT_EQ(at_a.packets, 22000u);  // own multicasts, through the local path
  EXPECT_GE(at_b.packets, 21000u);  // loopback UDP may drop under a burst; nothing is retried here
  EXPECT_GT(heap_allocations(), 0u);  // the hook is live: this very test allocated earlier
  EXPECT_EQ(b->counters().drops(), 0u);
}

TEST(UdpZeroAlloc, SteadyStateSendAndReceiveAllocateNothing) { expect_steady_state_allocates_nothing(nullptr, 20); }

TEST(UdpZeroAlloc, SealingAndOpeningEveryPacketAllocatesNothing) {
  auto key = ClusterKey::random();
  ASSERT_TRUE(key.ok());
  expect_steady_state_allocates_nothing(std::make_shared<const ClusterKey>(std::move(key).value()), 22);
}

}  // namespace
}  // namespace rtotem::test
