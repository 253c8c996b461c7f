// What the RDMA backend's device tests share (rdma_backend_device_test.cpp,
// rdma_backend_device_limits_test.cpp): two RdmaBackends in one Soft-RoCE VM with two rxe devices
// on one L2 segment (vm_backend_test.sh: node 1 on rxe0 at $RXE_IP, node 2 on rxe1 at $RXE_IP_1),
// numbered packets whose every byte is checked on arrival, and a loop that polls both nodes.
// Skipped outside such a VM.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/rdma/rdma_backend.hpp"

namespace rtotem::transport::device_test {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

inline constexpr std::uint32_t kRecvBuffers = 64;
inline const char* const kGroup = "239.192.77.6";

inline InetAddress address(const char* text) { return InetAddress::parse(text, 0).value(); }

// Payload bytes of packet `seq`: the number, then a pattern that depends on it and the position.
inline std::byte pattern_byte(std::uint32_t seq, std::size_t i) {
  return static_cast<std::byte>((seq * 131u + i * 7u + 11u) & 0xff);
}

inline void fill_packet(std::span<std::byte> payload, std::uint32_t seq) {
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = pattern_byte(seq, i);
  if (payload.size() >= sizeof seq) std::memcpy(payload.data(), &seq, sizeof seq);
}

// The number a packet carries, or -1 when any byte differs from what fill_packet wrote.
inline std::int64_t seq_of(std::span<const std::byte> payload) {
  std::uint32_t seq = 0;
  if (payload.size() < sizeof seq) return -1;
  std::memcpy(&seq, payload.data(), sizeof seq);
  for (std::size_t i = sizeof seq; i < payload.size(); ++i)
    if (payload[i] != pattern_byte(seq, i)) return -1;
  return seq;
}

// The non-zero counters, for failure messages.
inline std::string nonzero(const BackendCounters& counters) {
  std::string out;
  counters.for_each([&](std::string_view name, std::uint64_t value) {
    if (value != 0) out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  });
  return out;
}

struct Arrival {
  NodeId from = kNoNode;
  std::int64_t seq = -1;  // -1: the bytes were not intact
  std::size_t size = 0;
};

// Records every packet it is handed (sender, number, size); holds their buffers while `hold`.
struct RecordingSink final : PacketSink {
  std::vector<Arrival> arrivals;
  std::vector<BufferRef> held;
  bool hold = false;

  void on_packets(std::span<InboundPacket> batch) override {
    for (auto& packet : batch) {
      arrivals.push_back({packet.from, seq_of(packet.payload), packet.payload.size()});
      if (hold) held.push_back(std::move(packet.hold));
    }
  }
  std::size_t count_from(NodeId node) const {
    std::size_t n = 0;
    for (const Arrival& arrival : arrivals) n += arrival.from == node;
    return n;
  }
  // The numbers from `node`, in arrival order (-1 for a damaged packet).
  std::vector<std::int64_t> seqs_from(NodeId node) const {
    std::vector<std::int64_t> seqs;
    for (const Arrival& arrival : arrivals)
      if (arrival.from == node) seqs.push_back(arrival.seq);
    return seqs;
  }
};

inline std::vector<std::int64_t> range(std::int64_t first, std::int64_t count) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = first; i < first + count; ++i) out.push_back(i);
  return out;
}

class RdmaDevice : public ::testing::Test {
 protected:
  using Tweak = std::function<void(NodeId, RdmaConfig&)>;

  void SetUp() override {
    ip1_ = std::getenv("RXE_IP");
    ip2_ = std::getenv("RXE_IP_1");
    if (!ip1_ || !ip2_) GTEST_SKIP() << "needs a Soft-RoCE VM with two rxe devices (tests/rdma/vm_backend_test.sh)";
  }

  RdmaConfig config_for(NodeId self) {
    RdmaConfig config;
    config.params.local_node = self;
    config.params.cluster_id = 0x7274;
    config.params.recv_buffers = kRecvBuffers;
    config.bind = address(self == 1 ? ip1_ : ip2_);
    config.group = address(kGroup);
    config.peers = {{1, address(ip1_)}, {2, address(ip2_)}};
    config.log = [this, self](std::string_view line) {
      std::fprintf(stderr, "node %u: %.*s\n", self, static_cast<int>(line.size()), line.data());
      logs[self].emplace_back(line);
    };
    return config;
  }

  // Opens node 1 (rxe0) and node 2 (rxe1), each config changed by `tweak` first.
  void open_both(const Tweak& tweak = {}) {
    for (NodeId node : {1u, 2u}) {
      RdmaConfig config = config_for(node);
      if (tweak) tweak(node, config);
      auto opened = RdmaBackend::open(config);
      ASSERT_TRUE(opened.ok()) << "node " << node << ": " << opened.error().message();
      (node == 1 ? node1 : node2) = std::move(*opened);
    }
  }

  RdmaBackend& node(NodeId id) { return id == 1 ? *node1 : *node2; }

  // Queues packet `seq` of `size` payload bytes from `from` to `dest` (kNoNode: the group).
  // Returns what acquire or the enqueue answered; nothing is flushed.
  static Status queue(RdmaBackend& from, NodeId dest, std::uint32_t seq, std::size_t size) {
    SendBufferRef buffer;
    if (Status status = from.acquire(buffer); status != Status::kOk) return status;
    fill_packet(buffer->writable_payload().first(size), seq);
    buffer->set_payload_size(static_cast<std::uint32_t>(size));
    return dest == kNoNode ? from.multicast(buffer) : from.unicast(dest, buffer);
  }

  // Polls and flushes both nodes until `done()` or `limit` passed; returns done().
  bool pump(RecordingSink& sink1, RecordingSink& sink2, const std::function<bool()>& done,
            std::chrono::milliseconds limit = 20s) {
    const auto deadline = Clock::now() + limit;
    while (!done()) {
      if (Clock::now() > deadline) return false;
      (void)node1->flush();
      (void)node2->flush();
      const std::size_t got = node1->poll(sink1) + node2->poll(sink2);
      if (got == 0) std::this_thread::sleep_for(200us);
    }
    return true;
  }

  // Keeps polling and flushing both nodes for `time`: what arrives meanwhile is what should not.
  void settle(RecordingSink& sink1, RecordingSink& sink2, std::chrono::milliseconds time = 300ms) {
    (void)pump(
        sink1, sink2, [] { return false; }, time);
  }

  // Node `from` has heard the other node once (its QP number learned: unicasts to it may go).
  void introduce(NodeId from) {
    const NodeId to = from == 1 ? 2 : 1;
    RecordingSink sink1, sink2;
    ASSERT_EQ(queue(node(to), kNoNode, 9999, 8), Status::kOk);
    ASSERT_TRUE(pump(sink1, sink2, [&] { return (from == 1 ? sink1 : sink2).count_from(to) == 1; }))
        << "node " << from << " never heard node " << to << ": " << nonzero(node(from).counters());
  }

  const char* ip1_ = nullptr;
  const char* ip2_ = nullptr;
  std::vector<std::string> logs[3];  // what each node logged (RdmaConfig::log), by node id
  std::unique_ptr<RdmaBackend> node1;
  std::unique_ptr<RdmaBackend> node2;
};

inline std::shared_ptr<const ClusterKey> make_key() {
  auto key = ClusterKey::random();
  EXPECT_TRUE(key.ok());
  return std::make_shared<const ClusterKey>(std::move(key).value());
}

// The same test with both nodes in the clear (false) and both sealing with one cluster key (true).
class RdmaDeviceSealedOrNot : public RdmaDevice, public ::testing::WithParamInterface<bool> {
 protected:
  bool sealed() const { return GetParam(); }
  void open_both_maybe_sealed(const Tweak& tweak = {}) {
    std::shared_ptr<const ClusterKey> key = sealed() ? make_key() : nullptr;
    open_both([&](NodeId node, RdmaConfig& config) {
      config.params.key = key;
      config.params.epoch = key ? 1 : 0;
      if (tweak) tweak(node, config);
    });
  }
  // Bytes a packet of `payload` bytes takes on the wire.
  std::size_t wire_size(std::size_t payload) const {
    return kWireHeaderSize + payload + (sealed() ? kSealOverhead : 0);
  }
};

inline std::string clear_or_sealed(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Sealed" : "Clear";
}

}  // namespace rtotem::transport::device_test
