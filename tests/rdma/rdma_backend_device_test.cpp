// The RDMA backend on a real device, in one Soft-RoCE VM with two rxe devices (vm_backend_test.sh:
// rxe0 at $RXE_IP, rxe1 at $RXE_IP_1, one L2 segment). Node 1 multicasts from rxe0; node 2 on rxe1
// is a protocol that holds every buffer it is handed. Skipped outside such a VM.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "transport/rdma/rdma_backend.hpp"

namespace rtotem::transport {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kRecvBuffers = 64;

InetAddress address(const char* text) { return InetAddress::parse(text, 0).value(); }

RdmaConfig config_for(NodeId self, const char* ip1, const char* ip2) {
  RdmaConfig config;
  config.params.local_node = self;
  config.params.cluster_id = 0x7274;
  config.params.recv_buffers = kRecvBuffers;
  config.bind = address(self == 1 ? ip1 : ip2);
  config.group = address("239.192.77.6");
  config.peers = {{1, address(ip1)}, {2, address(ip2)}};
  return config;
}

struct HoldingSink final : PacketSink {
  std::vector<BufferRef> held;
  std::size_t got = 0;
  bool hold = true;
  void on_packets(std::span<InboundPacket> batch) override {
    got += batch.size();
    if (hold)
      for (auto& packet : batch) held.push_back(std::move(packet.hold));
  }
};

struct DiscardSink final : PacketSink {
  void on_packets(std::span<InboundPacket>) override {}
};

class RdmaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* ip1 = std::getenv("RXE_IP");
    const char* ip2 = std::getenv("RXE_IP_1");
    if (!ip1 || !ip2) GTEST_SKIP() << "needs a Soft-RoCE VM with two rxe devices (tests/rdma/vm_backend_test.sh)";
    for (NodeId node : {1u, 2u}) {
      auto opened = RdmaBackend::open(config_for(node, ip1, ip2));
      ASSERT_TRUE(opened.ok()) << opened.error().message();
      (node == 1 ? sender : receiver) = std::move(*opened);
    }
  }

  // Multicasts `count` numbered packets from node 1, waiting out back-pressure (its own echoes
  // are polled and dropped meanwhile).
  void send(int first, int count) {
    DiscardSink discard;
    for (int i = first; i < first + count;) {
      SendBufferRef buffer;
      Status status = sender->acquire(buffer);
      if (status == Status::kOk) {
        const std::string text = std::to_string(i);
        std::memcpy(buffer->writable_payload().data(), text.data(), text.size());
        buffer->set_payload_size(static_cast<std::uint32_t>(text.size()));
        status = sender->multicast(buffer);
      }
      if (status == Status::kOk) {
        ++i;
        continue;
      }
      ASSERT_TRUE(status == Status::kQueueFull || status == Status::kPoolExhausted) << describe(status);
      (void)sender->flush();
      (void)sender->poll(discard);
    }
    while (sender->flush() == Status::kWouldBlock) (void)sender->poll(discard);
  }

  // Polls node 2 until it got `want` packets or `limit` passed.
  void receive(HoldingSink& sink, std::size_t want, std::chrono::milliseconds limit) {
    DiscardSink discard;
    const auto deadline = Clock::now() + limit;
    while (sink.got < want && Clock::now() < deadline) {
      (void)receiver->poll(sink);
      (void)sender->poll(discard);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  std::unique_ptr<RdmaBackend> sender;
  std::unique_ptr<RdmaBackend> receiver;
};

// A protocol that holds every receive buffer leaves no WR on the QP: the device drops what comes
// (UDP's socket would queue it) and each poll counts rx_ring_empty. Released, the buffers go back
// to the QP and packets arrive again.
TEST_F(RdmaDevice, HeldReceiveBuffersAreCountedAsAnEmptyRing) {
  HoldingSink sink;
  send(0, kRecvBuffers + 40);
  receive(sink, kRecvBuffers + 40, std::chrono::seconds(5));
  EXPECT_EQ(sink.got, kRecvBuffers);  // the ring's worth; the rest found no WR posted
  EXPECT_GT(receiver->counters().rx_ring_empty, 0u);
  EXPECT_EQ(receiver->counters().rx_completion_errors, 0u);

  const std::uint64_t empty_while_held = receiver->counters().rx_ring_empty;
  sink.held.clear();  // released: re-posted on the next poll
  sink.hold = false;
  sink.got = 0;
  (void)receiver->poll(sink);
  send(1000, 10);
  receive(sink, 10, std::chrono::seconds(10));
  EXPECT_EQ(sink.got, 10u);
  EXPECT_EQ(receiver->counters().rx_ring_empty, empty_while_held);  // not counted once released
}

}  // namespace
}  // namespace rtotem::transport
