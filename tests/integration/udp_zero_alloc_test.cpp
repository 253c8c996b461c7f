// The UDP datapath allocates nothing in steady state: acquire, multicast, flush, recvmmsg, the
// sink and the releases, counted by the process-wide malloc hook.
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

TEST(UdpZeroAlloc, SteadyStateSendAndReceiveAllocateNothing) {
  std::vector<UdpPeer> peers = {{1, addr("127.0.0.1", test_port(20))}, {2, addr("127.0.0.1", test_port(21))}};
  auto a = open_or_fail(node_config(1, peers[0].address, peers));
  auto b = open_or_fail(node_config(2, peers[1].address, peers));
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
}

}  // namespace
}  // namespace rtotem::test
