// The shared Backend behaviour every backend inherits: queueing as back-pressure, the local
// self-delivery path, MTU and address checks, close. Driven through a backend whose device has a
// set amount of room, so "device full" happens exactly when a test says.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "transport/backend.hpp"

namespace rtotem::transport {
namespace {

constexpr NodeId kSelf = 1;

std::string as_string(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

class FiniteDeviceBackend final : public Backend {
 public:
  static std::unique_ptr<FiniteDeviceBackend> make(BackendParams params) {
    const auto layout = BufferLayout::of(params, 0);
    auto arena = BufferArena::map(layout.total_bytes());
    return std::unique_ptr<FiniteDeviceBackend>(new FiniteDeviceBackend(params, std::move(arena.value()), layout));
  }
  ~FiniteDeviceBackend() override { close(); }

  std::string_view name() const noexcept override { return "finite"; }
  std::string local_address() const override { return "finite"; }

  std::size_t room = 1'000'000;                      // items the device takes before it is full
  std::vector<std::pair<NodeId, std::string>> wire;  // what left, in order
  // Like RDMA: the device reads the bytes after transmit returns, until complete() says it is done.
  bool holds = false;
  struct Posted {
    std::span<const std::byte> bytes;  // where the device will read
    std::string when_posted;           // what was there when it was handed over
  };
  std::vector<Posted> in_flight;
  void complete(std::size_t count) {
    release_seal_slots(count);
    in_flight.erase(in_flight.begin(), in_flight.begin() + static_cast<std::ptrdiff_t>(count));
  }

 private:
  FiniteDeviceBackend(const BackendParams& params, BufferArena arena, const BufferLayout& layout)
      : Backend(params, std::move(arena), layout) {}

  std::size_t transmit(std::span<TxItem> items) noexcept override {
    std::size_t n = std::min(room, items.size());
    for (std::size_t i = 0; i < n; ++i) {
      auto payload = items[i].buffer->payload();
      wire.emplace_back(items[i].dest, std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
      if (holds) in_flight.push_back({items[i].wire, as_string(items[i].wire)});
    }
    room -= n;
    return n;
  }
  bool holds_sent_bytes() const noexcept override { return holds; }

  std::size_t receive(std::span<InboundPacket>) noexcept override { return 0; }
  bool knows(NodeId node) const noexcept override { return node <= 5; }
};

BackendParams params() {
  BackendParams p;
  p.local_node = kSelf;
  p.cluster_id = 9;
  p.mtu = 512;
  p.send_buffers = 1024;
  p.recv_buffers = 64;
  return p;
}

SendBufferRef message(Backend& backend, const std::string& text) {
  SendBufferRef buffer;
  EXPECT_EQ(backend.acquire(buffer), Status::kOk);
  std::memcpy(buffer->writable_payload().data(), text.data(), text.size());
  buffer->set_payload_size(static_cast<std::uint32_t>(text.size()));
  return buffer;
}

struct Collect final : PacketSink {
  std::vector<std::pair<NodeId, std::string>> got;
  std::vector<BufferRef> kept;
  bool keep = false;
  void on_packets(std::span<InboundPacket> batch) override {
    for (auto& p : batch) {
      got.emplace_back(p.from, std::string(reinterpret_cast<const char*>(p.payload.data()), p.payload.size()));
      if (keep) kept.push_back(std::move(p.hold));
    }
  }
};

TEST(Backend, OwnMulticastComesBackOnceThroughTheLocalPath) {
  auto backend = FiniteDeviceBackend::make(params());
  ASSERT_EQ(backend->multicast(message(*backend, "m1")), Status::kOk);
  ASSERT_EQ(backend->flush(), Status::kOk);
  Collect sink;
  EXPECT_EQ(backend->poll(sink), 1u);
  EXPECT_EQ(backend->poll(sink), 0u);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0], std::make_pair(kSelf, std::string("m1")));
  EXPECT_EQ(backend->counters().rx_loopback, 1u);
  ASSERT_EQ(backend->wire.size(), 1u);
  EXPECT_EQ(backend->wire[0].first, kNoNode);  // queued as a multicast
}

TEST(Backend, LocalDeliverySharesTheSentBufferWithoutCopying) {
  auto backend = FiniteDeviceBackend::make(params());
  SendBufferRef sent = message(*backend, "zero-copy");
  ASSERT_EQ(backend->multicast(sent), Status::kOk);
  Collect sink;
  sink.keep = true;
  backend->poll(sink);
  ASSERT_EQ(sink.kept.size(), 1u);
  EXPECT_EQ(sink.kept[0].get(), static_cast<Buffer*>(sent.get()));
  EXPECT_EQ(sent->refs(), 3u);  // us, the sink, the transmit queue
}

TEST(Backend, UnicastToSelfNeverTouchesTheDevice) {
  auto backend = FiniteDeviceBackend::make(params());
  ASSERT_EQ(backend->unicast(kSelf, message(*backend, "token")), Status::kOk);
  EXPECT_FALSE(backend->has_pending_tx());
  Collect sink;
  EXPECT_EQ(backend->poll(sink), 1u);
  EXPECT_TRUE(backend->wire.empty());
}

TEST(Backend, FullDeviceKeepsTheRestQueuedInOrder) {
  auto backend = FiniteDeviceBackend::make(params());
  backend->room = 2;
  for (int i = 0; i < 5; ++i) ASSERT_EQ(backend->unicast(2, message(*backend, std::to_string(i))), Status::kOk);
  EXPECT_EQ(backend->flush(), Status::kWouldBlock);
  EXPECT_EQ(backend->counters().tx_would_block, 1u);
  EXPECT_TRUE(backend->has_pending_tx());
  backend->room = 100;
  EXPECT_EQ(backend->flush(), Status::kOk);
  ASSERT_EQ(backend->wire.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(backend->wire[i].second, std::to_string(i));
  EXPECT_EQ(backend->send_pool().available(), backend->send_pool().capacity());  // all released
}

TEST(Backend, FullQueueOnAFullDeviceIsBackPressureNotGrowth) {
  auto backend = FiniteDeviceBackend::make(params());
  backend->room = 0;
  for (std::size_t i = 0; i < kTxQueueMax; ++i) ASSERT_EQ(backend->unicast(2, message(*backend, "x")), Status::kOk);
  EXPECT_EQ(backend->unicast(2, message(*backend, "y")), Status::kQueueFull);
  EXPECT_EQ(backend->multicast(message(*backend, "z")), Status::kQueueFull);
  EXPECT_EQ(backend->counters().tx_queue_full, 2u);
  Collect sink;
  EXPECT_EQ(backend->poll(sink), 0u);  // the refused multicast was not half-sent locally either
}

TEST(Backend, FullQueueFlushesItselfWhenTheDeviceHasRoom) {
  auto backend = FiniteDeviceBackend::make(params());
  for (std::size_t i = 0; i < 3 * kTxQueueMax; ++i) ASSERT_EQ(backend->unicast(2, message(*backend, "x")), Status::kOk);
  EXPECT_EQ(backend->wire.size(), 2 * kTxQueueMax);  // a full queue is a batch: it went out
}

TEST(Backend, RefusesOversizedPayloadsAndUnknownNodes) {
  auto backend = FiniteDeviceBackend::make(params());
  EXPECT_EQ(backend->multicast(message(*backend, std::string(513, 'a'))), Status::kTooLarge);
  EXPECT_EQ(backend->unicast(kSelf, message(*backend, std::string(513, 'a'))), Status::kTooLarge);
  EXPECT_EQ(backend->unicast(6, message(*backend, "who")), Status::kUnknownNode);
  EXPECT_EQ(backend->counters().tx_too_large, 2u);
  EXPECT_EQ(backend->counters().tx_unknown_node, 1u);
  EXPECT_FALSE(backend->has_pending_tx());
}

TEST(Backend, ExhaustedPoolIsCountedBackPressure) {
  BackendParams p = params();
  p.send_buffers = kTxQueueMax;
  auto backend = FiniteDeviceBackend::make(p);
  std::vector<SendBufferRef> held(kTxQueueMax);
  for (auto& ref : held) ASSERT_EQ(backend->acquire(ref), Status::kOk);
  SendBufferRef one_more;
  EXPECT_EQ(backend->acquire(one_more), Status::kPoolExhausted);
  EXPECT_EQ(backend->counters().tx_pool_exhausted, 1u);
}

TEST(Backend, ClosedBackendRefusesEverything) {
  auto backend = FiniteDeviceBackend::make(params());
  SendBufferRef buffer = message(*backend, "late");
  backend->close();
  EXPECT_TRUE(backend->closed());
  EXPECT_EQ(backend->multicast(buffer), Status::kClosed);
  EXPECT_EQ(backend->unicast(kSelf, buffer), Status::kClosed);
  EXPECT_EQ(backend->flush(), Status::kClosed);
  Collect sink;
  EXPECT_EQ(backend->poll(sink), 0u);
}

TEST(Backend, CloseReturnsEveryQueuedBufferToThePool) {
  auto backend = FiniteDeviceBackend::make(params());
  backend->room = 0;
  for (int i = 0; i < 10; ++i) ASSERT_EQ(backend->multicast(message(*backend, "queued")), Status::kOk);
  EXPECT_EQ(backend->send_pool().available(), backend->send_pool().capacity() - 10);
  backend->close();
  EXPECT_EQ(backend->send_pool().available(), backend->send_pool().capacity());
}

TEST(Backend, PartialFlushesKeepOrderAcrossQueueCompaction) {
  auto backend = FiniteDeviceBackend::make(params());
  int next = 0;
  for (int round = 0; round < 6; ++round) {  // the queue's tail wraps the array: it compacts
    backend->room = 100;
    for (int i = 0; i < 120; ++i)
      ASSERT_EQ(backend->unicast(2, message(*backend, std::to_string(next++))), Status::kOk);
    (void)backend->flush();
  }
  backend->room = 1'000'000;
  ASSERT_EQ(backend->flush(), Status::kOk);
  ASSERT_EQ(backend->wire.size(), std::size_t(next));
  for (int i = 0; i < next; ++i) ASSERT_EQ(backend->wire[i].second, std::to_string(i));
}

TEST(BackendParams, RefusesNonsenseWithTheReason) {
  BackendParams p = params();
  p.local_node = kNoNode;
  EXPECT_NE(p.validate().error().message().find("node id"), std::string::npos);
  p = params();
  p.mtu = 100;
  EXPECT_NE(p.validate().error().message().find("mtu 100"), std::string::npos);
  p = params();
  p.send_buffers = 10;
  EXPECT_NE(p.validate().error().message().find("send_buffers"), std::string::npos);
}

TEST(Backend, EveryBufferLivesInOneRegion) {
  auto backend = FiniteDeviceBackend::make(params());
  auto region = backend->buffer_region();
  SendBufferRef buffer;
  ASSERT_EQ(backend->acquire(buffer), Status::kOk);
  EXPECT_GE(buffer->data(), region.data());
  EXPECT_LE(buffer->data() + buffer->capacity(), region.data() + region.size());
}

// A device that reads sealed bytes after transmit returns (RDMA) gets each in its own seal slot,
// untouched until it says it is done; with every slot in flight the rest waits, in order.
TEST(Backend, SealSlotsAreHeldUntilADeviceThatReadsLaterIsDone) {
  BackendParams p = params();
  auto key = ClusterKey::random();
  ASSERT_TRUE(key.ok());
  p.key = std::make_shared<const ClusterKey>(std::move(key).value());
  p.epoch = 1;
  auto backend = FiniteDeviceBackend::make(p);
  backend->holds = true;
  const std::size_t total = kSealBatchMax + 40;
  for (std::size_t i = 0; i < total; ++i)
    ASSERT_EQ(backend->unicast(2, message(*backend, std::to_string(i))), Status::kOk);
  auto unchanged = [&] {
    for (const auto& posted : backend->in_flight)
      if (as_string(posted.bytes) != posted.when_posted) return false;
    return true;
  };
  EXPECT_EQ(backend->flush(), Status::kWouldBlock);
  EXPECT_EQ(backend->wire.size(), kSealBatchMax);
  EXPECT_EQ(backend->flush(), Status::kWouldBlock);  // no slot free: nothing sent, nothing resealed
  EXPECT_EQ(backend->wire.size(), kSealBatchMax);
  EXPECT_TRUE(unchanged());
  backend->complete(10);
  EXPECT_EQ(backend->flush(), Status::kWouldBlock);
  EXPECT_EQ(backend->wire.size(), kSealBatchMax + 10);
  EXPECT_TRUE(unchanged());
  backend->complete(kSealBatchMax);
  EXPECT_EQ(backend->flush(), Status::kOk);
  ASSERT_EQ(backend->wire.size(), total);
  for (std::size_t i = 0; i < total; ++i) EXPECT_EQ(backend->wire[i].second, std::to_string(i));
  EXPECT_TRUE(unchanged());
}

}  // namespace
}  // namespace rtotem::transport
