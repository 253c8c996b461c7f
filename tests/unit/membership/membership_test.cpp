// The membership protocol, phase by phase, on small clusters of real Nodes over the simulated
// network: forming a ring from a cold start, losing a member (token loss, Gather, consensus
// timeout), a restart (ring seqs never reused), Recovery handing survivors the same old-ring
// messages, partitions and merges, and the packets Gather must ignore.
#include <gtest/gtest.h>

#include <algorithm>

#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "membership/node.hpp"
#include "tests/unit/membership/cluster_fixture.hpp"
#include "transport/sim/sim_network.hpp"

namespace rtotem::membership {
namespace {

using transport::BackendParams;
using transport::InboundPacket;
using transport::SendBufferRef;
using transport::SimBackend;
using transport::SimNetwork;

using namespace cluster_fixture;

TEST(Membership, ALoneNodeFormsARingOfItselfAndSaysSo) {
  Cluster cluster;
  Host& h = cluster.start(1);
  EXPECT_EQ(h.node->state(), MemberState::kGather);
  cluster.run_for(100);
  cluster.expect_one_ring({1});
  ASSERT_EQ(h.configs.size(), 2u);
  EXPECT_TRUE(h.configs[0].transitional);
  EXPECT_EQ(h.configs[0].members, std::vector<NodeId>{1});
  EXPECT_TRUE(h.configs[0].left.empty());
  EXPECT_TRUE(h.configs[1].joined.empty());
  EXPECT_EQ(h.node->ring_id(), (RingId{1, 1}));
  EXPECT_EQ(h.persisted, 1u);  // persisted before it was used
}

TEST(Membership, ThreeNodesStartedTogetherFormOneRingAndDeliverInOneOrder) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3});
  for (NodeId id : {1, 2, 3}) EXPECT_EQ(cluster.host(id).persisted, cluster.host(1).node->ring_id().seq);
  cluster.submit(2, "b");
  cluster.submit(3, "c", membership::Delivery::kSafe);
  cluster.submit(1, "a");
  cluster.run_for(500);
  std::vector<std::string> order;
  for (const auto& d : cluster.host(1).delivered) order.push_back(d.text);
  EXPECT_EQ(order.size(), 3u);
  for (NodeId id : {2, 3}) {
    std::vector<std::string> theirs;
    for (const auto& d : cluster.host(id).delivered) theirs.push_back(d.text);
    EXPECT_EQ(theirs, order) << "node " << id;
  }
}

// send_join (corosync's): a join waits a random delay, so many nodes' joins do not arrive as one
// burst, and a node that re-enters Gather several times within it sends one join, not one each.
TEST(Membership, WithSendJoinJoinsWaitARandomDelayAndReentriesWithinItSendOne) {
  constexpr std::uint32_t kSendJoinMs = 40;
  Cluster cluster(1, kSendJoinMs);
  std::vector<NodeId> all;
  for (NodeId id = 1; id <= 12; ++id) {
    Host& h = cluster.start(id);
    all.push_back(id);
    EXPECT_EQ(h.node->counters().joins_sent, 0u) << "node " << id << " sent its join at once";
    const auto due = h.timers[static_cast<std::size_t>(TimerId::kJoin)];
    ASSERT_TRUE(due.has_value());
    EXPECT_LT(*due, cluster.now() + ms_to_time(kSendJoinMs)) << "node " << id;
  }
  cluster.run_for(5000);
  cluster.expect_one_ring(all);
  // Every node heard of the 11 others, at 11 or fewer moments; a join for each would be 11 each.
  for (NodeId id : all) {
    const NodeCounters& c = cluster.host(id).node->counters();
    EXPECT_LT(c.joins_sent, c.gathers) << "node " << id;
  }
}

TEST(Membership, ACrashedMemberIsDeclaredFailedAndTheSurvivorsFormARing) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  const RingId before = cluster.host(1).node->ring_id();
  cluster.crash(3);
  cluster.run_for(3000);  // token loss, Gather, consensus timeout, Commit, Recovery
  cluster.expect_one_ring({1, 2});
  for (NodeId id : {1, 2}) {
    const Host& h = cluster.host(id);
    EXPECT_GT(h.node->ring_id().seq, before.seq);
    const Config& trans = h.configs[h.configs.size() - 2];
    EXPECT_TRUE(trans.transitional);
    EXPECT_EQ(trans.members, (std::vector<NodeId>{1, 2}));
    EXPECT_EQ(trans.left, std::vector<NodeId>{3});
    EXPECT_TRUE(h.last_config().joined.empty());
  }
  // One survivor lost the token; its join took the other into Gather.
  EXPECT_GE(cluster.host(1).node->counters().token_losses + cluster.host(2).node->counters().token_losses, 1u);
}

TEST(Membership, ARestartedNodeRejoinsOnARingItNeverNamedBefore) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  cluster.crash(1);  // the representative: it named the ring, and persisted its seq
  cluster.run_for(3000);
  cluster.expect_one_ring({2, 3});
  const Seq survivors = cluster.host(2).node->ring_id().seq;
  Host& back = cluster.start(1);
  EXPECT_EQ(back.node->ring_seq(), back.persisted);
  cluster.run_for(3000);
  cluster.expect_one_ring({1, 2, 3});
  EXPECT_GT(back.node->ring_id().seq, survivors);
  // From the restarted node: alone before, the others joined. From the others: 1 joined.
  EXPECT_EQ(back.configs[back.configs.size() - 2].members, std::vector<NodeId>{1});
  EXPECT_EQ(back.last_config().joined, (std::vector<NodeId>{2, 3}));
  EXPECT_EQ(cluster.host(2).last_config().joined, std::vector<NodeId>{1});
}

// Node 3 hears no multicast (the token still reaches it), so node 1's messages reach it neither
// from node 1 nor re-sent by node 2; when node 1 crashes and node 3 hears again, node 2 re-sends
// what node 3 lacks in Recovery, and both deliver the same old-ring messages in the same
// configurations.
TEST(Membership, RecoveryGivesTheSurvivorsTheSameOldRingMessages) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3});
  cluster.network().set_multicast_deaf(3, true);
  for (int i = 0; i < 5; ++i) cluster.submit(1, "m" + std::to_string(i));
  cluster.run_for(50);
  cluster.crash(1);
  cluster.network().set_multicast_deaf(3, false);
  cluster.run_for(3000);
  cluster.expect_one_ring({2, 3});
  EXPECT_GT(cluster.host(3).node->counters().recovery_received, 0u);
  EXPECT_GT(cluster.host(2).node->counters().recovery_sent, 0u);
  auto history = [&](NodeId id) {
    std::vector<std::string> out;
    for (const auto& d : cluster.host(id).delivered) out.push_back(d.text + (d.transitional ? "/t" : "/r"));
    return out;
  };
  EXPECT_EQ(history(2), history(3));
  EXPECT_EQ(history(3).size(), 5u);
}

// Node 3 cannot hear node 1, though the token goes round. Node 1, first on the token's way to
// node 3's requests, answers them into the cut; asked again, it leaves them for node 2, which
// holds the messages and reaches node 3. Everything arrives, the ring stays.
TEST(Membership, ARequestAskedAgainReachesTheNextHolder) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3});
  const RingId ring = cluster.host(1).node->ring_id();
  cluster.network().set_link(1, 3, false);
  for (int i = 0; i < 5; ++i) cluster.submit(1, "m" + std::to_string(i));
  cluster.run_for(500);
  EXPECT_EQ(cluster.host(3).delivered.size(), 5u);
  EXPECT_EQ(cluster.host(3).node->ring_id(), ring);
  EXPECT_GT(cluster.host(2).node->counters().retransmits_sent, 0u);
  EXPECT_EQ(cluster.host(3).node->counters().failed_to_receive, 0u);
}

TEST(Membership, APartitionFormsTwoRingsAndTheHealMergesThem) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3, 4, 5}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3, 4, 5});
  const std::vector<std::vector<NodeId>> halves{{1, 2}, {3, 4, 5}};
  cluster.network().partition(halves);
  cluster.run_for(3000);
  cluster.expect_one_ring({1, 2});
  cluster.expect_one_ring({3, 4, 5});
  cluster.network().heal();
  cluster.run_for(3000);
  cluster.expect_one_ring({1, 2, 3, 4, 5});
  EXPECT_GT(cluster.host(1).node->counters().merge_detects_sent + cluster.host(3).node->counters().merge_detects_sent,
            0u);
}

// Rings {1, 2} and {3}; 1 and 2 begin to hear 3 (its merge detection) but it does not hear them
// yet, so they gather with it and wait for its join. Node 3 stops gracefully. Its leave names
// only itself failed, and a node's word that it is gone is taken from anyone, not only from a
// member of our last ring: 1 and 2 form their ring at once instead of waiting out the consensus
// timeout (240 ms here) for a node that already left.
TEST(Membership, AGracefulLeaveDuringAMergeIsTakenFromANodeOfAnotherRing) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  const std::vector<std::vector<NodeId>> halves{{1, 2}, {3}};
  cluster.network().partition(halves);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2});
  cluster.expect_one_ring({3});
  cluster.network().heal();
  for (NodeId from : {1, 2}) cluster.network().set_link(from, 3, false);
  for (int ms = 0; ms < 3000 && cluster.host(1).node->operational(); ++ms) cluster.run_for(1);
  cluster.run_for(20);
  ASSERT_EQ(cluster.host(1).node->state(), MemberState::kGather) << "no merge began";
  auto timeouts = [&] {
    return cluster.host(1).node->counters().consensus_timeouts + cluster.host(2).node->counters().consensus_timeouts;
  };
  const std::uint64_t before = timeouts();
  cluster.leave(3);
  cluster.run_for(100);
  cluster.expect_one_ring({1, 2});
  EXPECT_EQ(timeouts(), before);
}

TEST(Membership, StaleAndSpoofedJoinsLeaveAnOperationalRingAlone) {
  Cluster cluster;
  for (NodeId id : {1, 2}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2});
  const RingId ring = cluster.host(1).node->ring_id();
  auto send_join = [&](NodeId from, Join join) {
    std::vector<std::byte> packet(join_size(join));
    encode_join(join, packet);
    SendBufferRef buffer;
    auto& backend = *cluster.host(from).backend;
    ASSERT_EQ(backend.acquire(buffer), Status::kOk);
    std::memcpy(buffer->writable_payload().data(), packet.data(), packet.size());
    buffer->set_payload_size(static_cast<std::uint32_t>(packet.size()));
    ASSERT_EQ(backend.multicast(buffer), Status::kOk);
    ASSERT_EQ(backend.flush(), Status::kOk);
  };
  Join stale;
  stale.sender = 2;
  stale.ring_seq = ring.seq - 1;  // sent before node 2 saw the ring
  stale.proc_set.ids[0] = 2;
  stale.proc_set.count = 1;
  send_join(2, stale);
  Join spoofed = stale;
  spoofed.sender = 7;  // node 2's packet naming node 7
  spoofed.ring_seq = ring.seq + 10;
  send_join(2, spoofed);
  cluster.run_for(100);
  EXPECT_EQ(cluster.host(1).node->counters().joins_stale, 1u);
  EXPECT_EQ(cluster.host(1).node->counters().packets_spoofed, 1u);
  cluster.expect_one_ring({1, 2});
  EXPECT_EQ(cluster.host(1).node->ring_id(), ring);
}

TEST(Membership, ANewJoinerMakesTheRingReformWithIt) {
  Cluster cluster;
  for (NodeId id : {1, 2}) cluster.start(id);
  cluster.run_for(2000);
  const RingId before = cluster.host(1).node->ring_id();
  cluster.start(3);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3});
  EXPECT_GT(cluster.host(1).node->ring_id().seq, before.seq);
  const Host& h1 = cluster.host(1);
  EXPECT_EQ(h1.configs[h1.configs.size() - 2].members, (std::vector<NodeId>{1, 2}));  // transitional
  EXPECT_EQ(h1.last_config().joined, std::vector<NodeId>{3});
}

// Bytes that tell where they came from: a piece out of place would show.
std::string large_text(char tag, std::size_t size) {
  std::string text(size, tag);
  for (std::size_t i = 0; i < size; i += 7) text[i] = static_cast<char>('0' + i % 10);
  return text;
}

std::vector<std::string> texts(const Host& h) {
  std::vector<std::string> out;
  for (const auto& d : h.delivered) out.push_back(d.text);
  return out;
}

// Split into dozens of packets, interleaved with each other and with small ones packed together:
// every node delivers each whole, in one order.
TEST(LargeMessages, SplitMessagesArriveWholeInOneOrderEverywhere) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3});
  const std::string big = large_text('b', 64 << 10), mid = large_text('m', 5000);
  cluster.submit(2, big);
  cluster.submit(1, "small one");
  cluster.submit(1, "small two");
  cluster.submit(3, mid, membership::Delivery::kSafe);
  cluster.submit(1, mid);
  cluster.run_for(500);
  const std::vector<std::string> order = texts(cluster.host(1));
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(std::count(order.begin(), order.end(), big), 1);
  EXPECT_EQ(std::count(order.begin(), order.end(), mid), 2);
  for (NodeId id : {2, 3}) EXPECT_EQ(texts(cluster.host(id)), order) << "node " << id;
  EXPECT_EQ(cluster.host(2).node->counters().messages_split, 1u);
  EXPECT_EQ(cluster.host(1).node->counters().messages_packed, 1u);  // "small two" behind "small one"
}

// Node 3 dies while node 2's message is on the wire: the ring gets at most one token visit's worth
// of its 69 packets. Nobody delivers the cut-short message; node 2 sends it again, whole, on the
// next ring, and both survivors deliver it there, once.
TEST(LargeMessages, AMessageCutShortByARingChangeIsSentAgainWhole) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3});
  const std::string big = large_text('x', 64 << 10);
  cluster.submit(2, big);
  cluster.crash(3);
  cluster.run_for(3000);
  cluster.expect_one_ring({1, 2});
  EXPECT_EQ(cluster.host(2).node->counters().messages_restarted, 1u);
  for (NodeId id : {1, 2}) {
    const Host& h = cluster.host(id);
    ASSERT_EQ(texts(h), std::vector<std::string>{big}) << "node " << id;
    EXPECT_EQ(h.delivered[0].ring, h.node->ring_id()) << "delivered on the new ring";
    EXPECT_FALSE(h.delivered[0].transitional);
    EXPECT_EQ(h.node->counters().messages_cut_short, 1u) << "node " << id;
  }
}

// Node 3's switch drops it from the multicast group: tokens still reach it, messages do not, so
// it holds the ring's aru back and nothing can be discarded. After fail_recv_const visits and
// fail_recv_ms (400 ms here) it leaves; 1 and 2 go on and deliver. Once it hears multicasts
// again, the rings merge.
TEST(Membership, ANodeThatFailsToReceiveLeavesTheRingAndComesBackWhenItHearsAgain) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3});
  cluster.network().set_multicast_deaf(3, true);
  for (int i = 0; i < 5; ++i) cluster.submit(1, "m" + std::to_string(i));
  cluster.run_for(300);
  EXPECT_EQ(cluster.host(3).node->counters().failed_to_receive, 0u) << "not before fail_recv_ms";
  cluster.run_for(3000);
  EXPECT_EQ(cluster.host(3).node->counters().failed_to_receive, 1u);
  cluster.expect_one_ring({1, 2});
  EXPECT_EQ(texts(cluster.host(1)).size(), 5u);
  EXPECT_EQ(texts(cluster.host(2)), texts(cluster.host(1)));
  cluster.network().set_multicast_deaf(3, false);
  cluster.run_for(3000);
  cluster.expect_one_ring({1, 2, 3});
}

}  // namespace
}  // namespace rtotem::membership
