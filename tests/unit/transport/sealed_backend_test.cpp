// Backends with a cluster key, on the simulated network: packets leave sealed and arrive in the
// clear, the protocol's MTU shrinks by the seal, and what does not open (another key, crypto on
// one side only, a duplicate) is dropped and counted before anyone reads it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/unit/transport/sim/sim_cluster_fixture.hpp"

namespace rtotem::transport {
namespace {

std::shared_ptr<const ClusterKey> make_key() {
  auto key = ClusterKey::random();
  EXPECT_TRUE(key.ok());
  return std::make_shared<const ClusterKey>(std::move(key).value());
}

std::vector<BackendParams> sealed_nodes(NodeId count, const std::shared_ptr<const ClusterKey>& key) {
  std::vector<BackendParams> nodes = nodes_1_to(count);
  for (BackendParams& params : nodes) {
    params.key = key;
    params.epoch = 100;
  }
  return nodes;
}

TEST(SealedBackend, PacketsLeaveSealedAndArriveInTheClear) {
  SimCluster cluster(1, {}, sealed_nodes(3, make_key()));
  cluster.multicast(1, "hello");
  cluster.unicast(2, 3, "token");
  cluster.run();
  ASSERT_EQ(cluster.received_by(1).size(), 1u);  // its own, through the local path, in the clear
  EXPECT_EQ(cluster.received_by(1)[0].payload, "hello");
  ASSERT_EQ(cluster.received_by(2).size(), 1u);
  EXPECT_EQ(cluster.received_by(2)[0].payload, "hello");
  ASSERT_EQ(cluster.received_by(3).size(), 2u);
  EXPECT_EQ(cluster.received_by(3)[1].payload, "token");
  // Nonce and tag on every packet (the simulated device counts a multicast once).
  EXPECT_EQ(cluster.node(1).counters().tx_bytes, kWireHeaderSize + 5 + kSealOverhead);
  EXPECT_EQ(cluster.node(3).counters().drops(), 0u);
}

TEST(SealedBackend, TheProtocolsMtuShrinksByTheSealAndAFullPacketStillFits) {
  SimCluster cluster(1, {}, sealed_nodes(2, make_key()));
  const std::uint32_t wire_mtu = params_of(1).mtu;
  EXPECT_EQ(cluster.node(1).mtu(), wire_mtu - kSealOverhead);
  SendBufferRef big;
  ASSERT_EQ(cluster.node(1).acquire(big), Status::kOk);
  big->set_payload_size(wire_mtu);
  EXPECT_EQ(cluster.node(1).multicast(big), Status::kTooLarge);
  big.reset();
  cluster.multicast(1, std::string(cluster.node(1).mtu(), 'x'));
  cluster.run();
  ASSERT_EQ(cluster.received_by(2).size(), 1u);
  EXPECT_EQ(cluster.received_by(2)[0].payload.size(), cluster.node(1).mtu());
  EXPECT_EQ(cluster.node(2).counters().drop_truncated, 0u);
}

TEST(SealedBackend, MoreThanASealBatchQueuedGoesOutInOrder) {
  SimFaults same_delay;
  same_delay.delay_min_us = same_delay.delay_max_us = 10;  // the network keeps send order
  SimCluster cluster(1, same_delay, sealed_nodes(2, make_key()));
  SimBackend& sender = cluster.node(1);
  std::vector<SendBufferRef> queued;
  for (int i = 0; i < 3 * static_cast<int>(kSealBatchMax) + 5; ++i) {
    SendBufferRef buffer;
    ASSERT_EQ(sender.acquire(buffer), Status::kOk);
    const std::string text = std::to_string(i);
    std::memcpy(buffer->writable_payload().data(), text.data(), text.size());
    buffer->set_payload_size(static_cast<std::uint32_t>(text.size()));
    ASSERT_EQ(sender.unicast(2, buffer), Status::kOk);
  }
  ASSERT_EQ(sender.flush(), Status::kOk);
  cluster.run();
  const auto got = cluster.received_by(2);
  ASSERT_EQ(got.size(), 3 * kSealBatchMax + 5);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].payload, std::to_string(i));
}

TEST(SealedBackend, AnotherKeyIsDroppedAsAuthFailureBeforeTheSinkSeesIt) {
  std::vector<BackendParams> nodes = sealed_nodes(3, make_key());
  nodes[2].key = make_key();  // node 3 has a key of its own
  SimCluster cluster(1, {}, nodes);
  cluster.multicast(1, "ours");
  cluster.multicast(3, "theirs");
  cluster.run();
  EXPECT_TRUE(cluster.received_by(3).size() == 1 && cluster.received_by(3)[0].payload == "theirs");
  ASSERT_EQ(cluster.received_by(2).size(), 1u);
  EXPECT_EQ(cluster.received_by(2)[0].payload, "ours");
  EXPECT_EQ(cluster.node(2).counters().drop_auth, 1u);
  EXPECT_EQ(cluster.node(3).counters().drop_auth, 1u);
  EXPECT_EQ(cluster.node(1).counters().drop_auth, 1u);
}

TEST(SealedBackend, CryptoOnOneSideOnlyHearsNothingFromTheOther) {
  std::vector<BackendParams> nodes = sealed_nodes(2, make_key());
  nodes[1].key.reset();  // node 2 runs in the clear
  SimCluster cluster(1, {}, nodes);
  cluster.multicast(1, "sealed");
  cluster.multicast(2, "clear");
  cluster.run();
  EXPECT_EQ(cluster.received_by(1).size(), 1u);  // its own only
  EXPECT_EQ(cluster.received_by(2).size(), 1u);
  EXPECT_EQ(cluster.node(1).counters().drop_auth, 1u);
  EXPECT_EQ(cluster.node(2).counters().drop_auth, 1u);
}

TEST(SealedBackend, ADuplicatedPacketIsDeliveredOnceAndCountedAsAReplay) {
  SimFaults faults;
  faults.duplicate = 1.0;
  SimCluster cluster(1, faults, sealed_nodes(2, make_key()));
  for (int i = 0; i < 10; ++i) cluster.multicast(1, "m" + std::to_string(i));
  cluster.run();
  EXPECT_EQ(cluster.network.stats().delivered, 20u);  // every copy reached node 2 ...
  EXPECT_EQ(cluster.received_by(2).size(), 10u);      // ... and was taken once
  EXPECT_EQ(cluster.node(2).counters().drop_replay, 10u);
}

TEST(SealedBackend, ParamsNeedAnEpochAndRoomForTheSeal) {
  BackendParams params = params_of(1);
  params.key = make_key();
  EXPECT_EQ(params.validate().error().message(), "a sealing backend needs an epoch above 0");
  params.epoch = 1;
  params.mtu = kMtuMin;
  EXPECT_EQ(params.validate().error().message(),
            "mtu 256 leaves 216 bytes a packet once sealed (40 bytes of nonce and tag), below 256");
  params.mtu = kMtuMin + kSealOverhead;
  EXPECT_TRUE(params.validate().ok());
  // The seal slots share the one arena (one RDMA registration), after the receive buffers.
  const BufferLayout layout = BufferLayout::of(params, 0);
  EXPECT_EQ(layout.seal_bytes, kSealBatchMax * layout.seal_slot);
  EXPECT_GE(layout.seal_slot, params.mtu + kWireHeaderSize);
  EXPECT_EQ(layout.total_bytes(), layout.send_bytes + layout.recv_bytes + layout.seal_bytes);
}

}  // namespace
}  // namespace rtotem::transport
