// Tests of the simulated transport: fan-out, faults, partitions, replay by seed, and the
// lifetimes of the buffers a packet in flight holds.
#include "transport/sim/sim_network.hpp"
#include "tests/unit/transport/sim/sim_cluster_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rtotem::transport {
namespace {

bool accounts_for_every_copy(const SimNetwork& network) {
  const SimNetworkStats& s = network.stats();
  return s.sent + s.duplicated ==
         s.delivered + s.lost + s.cut + s.no_receiver + s.ring_full + s.crashed + network.in_flight();
}

// ---- Fan-out ------------------------------------------------------------------------------------

TEST(SimNetwork, MulticastReachesEveryOtherNodeAndTheSenderOnceThroughLoopback) {
  SimCluster cluster(1, {}, 4);
  cluster.multicast(1, "hello");
  cluster.run();

  for (NodeId node = 1; node <= 4; ++node) {
    const auto got = cluster.received_by(node);
    ASSERT_EQ(got.size(), 1u) << "node " << node;
    EXPECT_EQ(got[0].from, 1u);
    EXPECT_EQ(got[0].payload, "hello");
  }
  EXPECT_EQ(cluster.node(1).counters().rx_loopback, 1u);
  EXPECT_EQ(cluster.node(1).counters().rx_packets, 0u);
  EXPECT_EQ(cluster.node(2).counters().rx_packets, 1u);
  EXPECT_EQ(cluster.network.stats().sent, 3u);
  EXPECT_EQ(cluster.network.stats().delivered, 3u);
}

TEST(SimNetwork, UnicastReachesOnlyItsDestination) {
  SimCluster cluster(1, {}, 3);
  cluster.unicast(1, 3, "direct");
  cluster.run();

  ASSERT_EQ(cluster.log.size(), 1u);
  EXPECT_EQ(cluster.log[0], (Received{cluster.log[0].time_us, 1, 3, "direct"}));
  EXPECT_EQ(cluster.network.stats().sent, 1u);
}

TEST(SimNetwork, UnicastToANodeNotAttachedCountsNoReceiver) {
  SimCluster cluster(1, {}, 2);
  cluster.unicast(1, 9, "nobody");
  cluster.run();

  EXPECT_TRUE(cluster.log.empty());
  EXPECT_EQ(cluster.network.stats().no_receiver, 1u);
}

TEST(SimNetwork, AClosedNodeReceivesNothing) {
  SimCluster cluster(1, {}, 2);
  cluster.node(2).close();
  cluster.unicast(1, 2, "too late");
  cluster.run();

  EXPECT_TRUE(cluster.log.empty());
  EXPECT_EQ(cluster.network.stats().no_receiver, 1u);
}

// ---- Replay -------------------------------------------------------------------------------------

struct FaultyRun {
  std::vector<Received> trace;
  SimNetworkStats stats;
};

FaultyRun run_with_faults(std::uint64_t seed) {
  SimCluster cluster(seed, {.loss = 0.2, .duplicate = 0.2, .delay_min_us = 1, .delay_max_us = 500}, 4);
  for (int round = 0; round < 50; ++round) {
    for (NodeId node = 1; node <= 4; ++node)
      cluster.multicast(node, std::to_string(node) + ":" + std::to_string(round));
    cluster.unicast(1 + round % 4, 1 + (round + 1) % 4, "u" + std::to_string(round));
    cluster.run_until(cluster.network.now_us() + 10);
  }
  cluster.run();
  EXPECT_TRUE(accounts_for_every_copy(cluster.network));
  return {cluster.log, cluster.network.stats()};
}

TEST(SimNetwork, SameSeedReplaysTheSameDeliveryTrace) {
  const FaultyRun first = run_with_faults(0x51c9);
  const FaultyRun second = run_with_faults(0x51c9);

  EXPECT_GT(first.stats.lost, 0u);
  EXPECT_GT(first.stats.duplicated, 0u);
  EXPECT_EQ(first.trace, second.trace);
  EXPECT_EQ(first.stats, second.stats);
}

TEST(SimNetwork, AnotherSeedGivesAnotherTrace) { EXPECT_NE(run_with_faults(1).trace, run_with_faults(2).trace); }

// ---- Faults -------------------------------------------------------------------------------------

TEST(SimNetwork, LossOneDeliversNothingAndCountsEveryCopyLost) {
  SimCluster cluster(1, {.loss = 1.0}, 3);
  for (int i = 0; i < 10; ++i) cluster.multicast(1, "m");
  cluster.unicast(2, 3, "u");
  cluster.run();

  EXPECT_TRUE(cluster.received_by(2).empty());
  EXPECT_TRUE(cluster.received_by(3).empty());
  EXPECT_EQ(cluster.received_by(1).size(), 10u);  // loopback does not cross the network
  EXPECT_EQ(cluster.network.stats().lost, 21u);
  EXPECT_EQ(cluster.network.stats().delivered, 0u);
}

TEST(SimNetwork, DuplicateOneDeliversEveryCopyTwice) {
  SimCluster cluster(1, {.duplicate = 1.0}, 2);
  for (int i = 0; i < 5; ++i) cluster.unicast(1, 2, std::to_string(i));
  cluster.run();

  const auto got = cluster.received_by(2);
  ASSERT_EQ(got.size(), 10u);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(std::count_if(got.begin(), got.end(), [i](const Received& r) { return r.payload == std::to_string(i); }),
              2);
  EXPECT_EQ(cluster.network.stats().duplicated, 5u);
  EXPECT_EQ(cluster.network.stats().delivered, 10u);
}

TEST(SimNetwork, JitterReordersPacketsSentInOrder) {
  SimCluster cluster(1, {.delay_min_us = 1, .delay_max_us = 1000}, 2);
  for (int i = 0; i < 200; ++i) {
    cluster.unicast(1, 2, std::to_string(i));
    cluster.run_until(cluster.network.now_us() + 1);
  }
  cluster.run();

  const auto got = cluster.received_by(2);
  ASSERT_EQ(got.size(), 200u);
  std::vector<int> order;
  for (const Received& r : got) order.push_back(std::stoi(r.payload));
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
  std::sort(order.begin(), order.end());
  for (int i = 0; i < 200; ++i) ASSERT_EQ(order[i], i);  // reordered, none lost or made up
}

TEST(SimNetwork, EqualDelaysKeepSendOrder) {
  SimCluster cluster(1, {.delay_min_us = 10, .delay_max_us = 10}, 2);
  for (int i = 0; i < 100; ++i) cluster.unicast(1, 2, std::to_string(i));
  cluster.run();

  const auto got = cluster.received_by(2);
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(got[i].payload, std::to_string(i));
    EXPECT_EQ(got[i].time_us, 10u);
  }
}

// ---- Partitions and links -----------------------------------------------------------------------

TEST(SimNetwork, PartitionBlocksAcrossGroupsAndHealRestores) {
  SimCluster cluster(1, {}, 4);
  const std::vector<std::vector<NodeId>> groups{{1, 2}, {3, 4}};
  cluster.network.partition(groups);
  EXPECT_TRUE(cluster.network.reachable(1, 2));
  EXPECT_FALSE(cluster.network.reachable(1, 3));
  EXPECT_FALSE(cluster.network.reachable(4, 2));

  cluster.multicast(1, "split");
  cluster.run();
  EXPECT_EQ(cluster.received_by(2).size(), 1u);
  EXPECT_TRUE(cluster.received_by(3).empty());
  EXPECT_TRUE(cluster.received_by(4).empty());
  EXPECT_EQ(cluster.network.stats().cut, 2u);

  cluster.network.heal();
  cluster.multicast(1, "healed");
  cluster.run();
  EXPECT_EQ(cluster.received_by(3).size(), 1u);
  EXPECT_EQ(cluster.received_by(4).size(), 1u);
  EXPECT_EQ(cluster.network.stats().cut, 2u);
}

TEST(SimNetwork, ANodeInNoGroupReachesNoOne) {
  SimCluster cluster(1, {}, 4);
  const std::vector<std::vector<NodeId>> groups{{1, 2}};
  cluster.network.partition(groups);

  EXPECT_FALSE(cluster.network.reachable(3, 4));
  EXPECT_FALSE(cluster.network.reachable(1, 3));
  cluster.multicast(3, "alone");
  cluster.run();
  EXPECT_EQ(cluster.log.size(), 1u);  // its own loopback only
  EXPECT_EQ(cluster.network.stats().cut, 3u);
}

TEST(SimNetwork, APartitionCutsPacketsAlreadyInFlight) {
  SimCluster cluster(1, {.delay_min_us = 100, .delay_max_us = 100}, 3);
  cluster.multicast(1, "in flight");
  cluster.run_until(50);
  EXPECT_EQ(cluster.network.in_flight(), 2u);

  const std::vector<std::vector<NodeId>> groups{{1}, {2, 3}};
  cluster.network.partition(groups);
  cluster.run();

  EXPECT_TRUE(cluster.received_by(2).empty());
  EXPECT_TRUE(cluster.received_by(3).empty());
  EXPECT_EQ(cluster.network.stats().cut, 2u);
  EXPECT_EQ(cluster.network.stats().delivered, 0u);
}

TEST(SimNetwork, ADownLinkCutsOneDirectionOnly) {
  SimCluster cluster(1, {}, 2);
  cluster.network.set_link(1, 2, false);
  EXPECT_FALSE(cluster.network.reachable(1, 2));
  EXPECT_TRUE(cluster.network.reachable(2, 1));

  cluster.unicast(1, 2, "lost way");
  cluster.unicast(2, 1, "open way");
  cluster.run();
  ASSERT_EQ(cluster.log.size(), 1u);
  EXPECT_EQ(cluster.log[0].payload, "open way");

  cluster.network.set_link(1, 2, true);
  cluster.unicast(1, 2, "back up");
  cluster.run();
  EXPECT_EQ(cluster.received_by(2).size(), 1u);
}

// ---- Buffers ------------------------------------------------------------------------------------

TEST(SimNetwork, RingFullDropsWhileTheReceiverHoldsEveryBufferAndReleasingRestoresReceiving) {
  std::vector<BackendParams> nodes = nodes_1_to(2);
  nodes[1].recv_buffers = kRxBatchMax;
  SimCluster cluster(1, {}, nodes);
  cluster.sink(2).keep = true;

  for (int i = 0; i < 40; ++i) cluster.unicast(1, 2, std::to_string(i));
  cluster.run();
  EXPECT_EQ(cluster.received_by(2).size(), kRxBatchMax);
  EXPECT_EQ(cluster.network.stats().ring_full, 40 - kRxBatchMax);

  cluster.sink(2).held.clear();  // every buffer is re-posted
  cluster.sink(2).keep = false;
  for (int i = 0; i < 40; ++i) cluster.unicast(1, 2, "again");
  cluster.run();
  EXPECT_EQ(cluster.received_by(2).size(), kRxBatchMax + 40);
  EXPECT_EQ(cluster.network.stats().ring_full, 40 - kRxBatchMax);
}

TEST(SimNetwork, CopiesInFlightHoldTheSendersBufferUntilTheyLand) {
  SimCluster cluster(1, {.delay_min_us = 100, .delay_max_us = 100}, 3);
  const std::uint32_t capacity = cluster.node(1).send_pool().capacity();
  cluster.multicast(1, "shared");
  cluster.run_until(50);  // the loopback copy is delivered and released by now

  EXPECT_EQ(cluster.node(1).send_pool().available(), capacity - 1);  // one buffer, two copies
  cluster.run();
  EXPECT_EQ(cluster.node(1).send_pool().available(), capacity);
}

TEST(SimNetwork, DestroyingASenderDropsItsPacketsInFlight) {
  SimCluster cluster(1, {.delay_min_us = 100, .delay_max_us = 100}, 3);
  for (int i = 0; i < 5; ++i) cluster.multicast(1, "doomed");
  cluster.run_until(50);

  cluster.crash(1);  // its send pool asserts that no Ref to its buffers survives
  EXPECT_EQ(cluster.network.in_flight(), 0u);
  cluster.run();
  EXPECT_TRUE(cluster.received_by(2).empty());
  EXPECT_TRUE(cluster.received_by(3).empty());
  EXPECT_EQ(cluster.network.stats().crashed, 10u);
  EXPECT_TRUE(accounts_for_every_copy(cluster.network));

  auto restarted = cluster.network.attach(params_of(1));  // the node id is free again
  EXPECT_TRUE(restarted.ok());
}

// With set_crashed_copies_land, a crash drops only what was addressed to the node: what it sent
// had left its host and lands, from copies of its bytes (its pool is gone); once it is attached
// again, those count as a dead incarnation's.
TEST(SimNetwork, ACrashedSendersCopiesLandWhenToldToAndCountAfterItsRestart) {
  SimCluster cluster(1, {.delay_min_us = 100, .delay_max_us = 100}, 3);
  cluster.network.set_crashed_copies_land(true);
  cluster.multicast(1, "posthumous");
  cluster.run_until(50);
  cluster.crash(1);
  EXPECT_EQ(cluster.network.in_flight(), 2u);
  auto restarted = cluster.network.attach(params_of(1));
  ASSERT_TRUE(restarted.ok());
  cluster.run();
  ASSERT_EQ(cluster.received_by(2).size(), 1u);
  EXPECT_EQ(cluster.received_by(2)[0].payload, "posthumous");
  EXPECT_EQ(cluster.received_by(3).size(), 1u);
  EXPECT_EQ(cluster.network.stats().from_dead_incarnation, 2u);
  EXPECT_TRUE(accounts_for_every_copy(cluster.network));
}

// The heavy tail: a late copy takes late_min..late_max instead of the jitter.
TEST(SimNetwork, ALateCopyTakesTheLateDelay) {
  SimCluster late(1, {.delay_min_us = 10, .delay_max_us = 20, .late = 1, .late_min_us = 5000, .late_max_us = 6000}, 2);
  late.unicast(1, 2, "slow");
  late.run();
  ASSERT_EQ(late.log.size(), 1u);
  EXPECT_GE(late.log[0].time_us, 5000u);
  EXPECT_LE(late.log[0].time_us, 6000u);
  EXPECT_EQ(late.network.stats().late, 1u);
}

// The Damage hook rewrites a corrupted copy: here its last byte cut, which the receiver refuses.
TEST(SimNetwork, ACorruptedCopyIsDamagedByTheHookAndRefused) {
  SimCluster cluster(1, {.corrupt = 1}, 2);
  cluster.network.set_damage([](std::span<std::byte> wire, Rng&) { return wire.size() - 1; });
  cluster.unicast(1, 2, "cut short");
  cluster.run();
  EXPECT_TRUE(cluster.log.empty());
  EXPECT_EQ(cluster.network.stats().corrupted, 1u);
  EXPECT_EQ(cluster.node(2).counters().drop_bad_length, 1u);
}

TEST(SimNetwork, DestroyingAReceiverReleasesTheSendersBuffers) {
  SimCluster cluster(1, {.delay_min_us = 100, .delay_max_us = 100}, 2);
  const std::uint32_t capacity = cluster.node(1).send_pool().capacity();
  cluster.unicast(1, 2, "to a dying node");
  EXPECT_EQ(cluster.node(1).send_pool().available(), capacity - 1);

  cluster.crash(2);
  EXPECT_EQ(cluster.node(1).send_pool().available(), capacity);
  EXPECT_EQ(cluster.network.stats().crashed, 1u);
  cluster.run();
  EXPECT_TRUE(cluster.log.empty());
}

// ---- Validation ---------------------------------------------------------------------------------

TEST(SimNetwork, ForeignClusterPacketsAreDroppedAndCounted) {
  SimCluster cluster(1, {}, {params_of(1, kCluster), params_of(2, kCluster + 1)});
  cluster.multicast(1, "wrong cluster");
  cluster.run();

  EXPECT_TRUE(cluster.received_by(2).empty());
  EXPECT_EQ(cluster.node(2).counters().drop_foreign_cluster, 1u);
  EXPECT_EQ(cluster.node(2).counters().rx_packets, 0u);
  EXPECT_EQ(cluster.network.stats().delivered, 1u);  // the network delivered; the backend refused
}

TEST(SimNetwork, APacketLargerThanTheReceiversBufferIsDroppedAsTruncated) {
  std::vector<BackendParams> nodes = nodes_1_to(2);
  nodes[0].mtu = 1024;
  nodes[1].mtu = kMtuMin;
  SimCluster cluster(1, {}, nodes);
  cluster.unicast(1, 2, std::string(900, 'x'));
  cluster.run();

  EXPECT_TRUE(cluster.received_by(2).empty());
  EXPECT_EQ(cluster.node(2).counters().drop_truncated, 1u);
}

TEST(SimNetwork, AttachRefusesATakenNodeIdAndInvalidParams) {
  SimNetwork network(1);
  auto first = network.attach(params_of(1));
  ASSERT_TRUE(first.ok());

  auto again = network.attach(params_of(1));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message().find("already attached"), std::string::npos);
  EXPECT_FALSE(network.attach(params_of(kNoNode)).ok());

  first.value().reset();
  auto after_crash = network.attach(params_of(1));
  EXPECT_TRUE(after_crash.ok());
  EXPECT_EQ(after_crash.value()->local_address(), "sim:1");
  EXPECT_EQ(after_crash.value()->name(), "sim");
}

}  // namespace
}  // namespace rtotem::transport
