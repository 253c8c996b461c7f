// The idle ring's token hold: one member (the sender of the last message, else the
// representative) keeps an idle token for token_hold_ms per rotation, and a member with a new
// message asks it to let go (a hold cancel), so a message waits about one rotation from
// whichever node it is sent, not for the rest of a hold; and a node that sends alone finds the
// token at hand.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "tests/unit/membership/cluster_fixture.hpp"

namespace rtotem::membership {
namespace {

using namespace cluster_fixture;

// From its submission to its delivery at its own sender, in virtual us.
Time self_delivery_us(Cluster& cluster, NodeId sender, const std::string& text) {
  const Time sent = cluster.now();
  cluster.submit(sender, text);
  cluster.run_for(200);  // beyond any hold (token 200 ms: hold 38 ms)
  for (const DeliveredText& d : cluster.host(sender).delivered)
    if (d.text == text) return d.at - sent;
  ADD_FAILURE() << "node " << sender << " never delivered its own " << text;
  return ~Time{0};
}

// A rotation here is 3 hops of 20..60 us; a message that waited for a hold to run out would wait
// up to 38 ms. Submissions fall at many points of the hold and of the rotation between holds,
// among them the moment when the cancel overtakes the token on its way to the representative.
TEST(TokenHold, AMessageFromAnyNodeOfAnIdleRingIsDeliveredWithinAboutARotation) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  cluster.expect_one_ring({1, 2, 3});
  const Time hold_us = ms_to_time(cluster.config().token_hold_ms);
  ASSERT_GT(hold_us, 20'000u);
  int sent = 0;
  for (NodeId sender : {1, 2, 3}) {
    for (Time offset_us = 0; offset_us < hold_us; offset_us += hold_us / 23 + 7) {
      cluster.run_for_us(offset_us);  // idle again, then at a drawn point of the hold
      const Time waited = self_delivery_us(cluster, sender, fmt::format("m{}", ++sent));
      EXPECT_LT(waited, 2'000u) << "node " << sender << " at " << offset_us << " us into the hold";
    }
  }
  // The cancels let the token go; they did not stop the idle ring from holding it.
  std::uint64_t cancelled = 0, cancels = 0;
  for (NodeId id : {1, 2, 3}) {
    cancelled += cluster.host(id).node->counters().token_holds_cancelled;
    cancels += cluster.host(id).node->counters().hold_cancels_sent;
  }
  EXPECT_GT(cancelled, 0u);
  EXPECT_LE(cancelled, cancels);
}

// The token rests where the last message came from: a node that sends one message at a time on
// an idle ring holds it between them, and sends the next at once, with no packet before it.
TEST(TokenHold, ANodeThatSendsAloneKeepsTheTokenBetweenItsMessages) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  (void)self_delivery_us(cluster, 3, "first");  // the token comes to rest at node 3
  const std::uint64_t cancels_before = cluster.host(3).node->counters().hold_cancels_sent;
  for (int i = 0; i < 10; ++i) {
    cluster.run_for(50);  // idle: node 3 holds the token
    const Time sent = cluster.now();
    cluster.submit(3, fmt::format("again{}", i));
    cluster.run_for_us(1);  // the hold ends at once, and node 3 sends before any packet lands
    ASSERT_FALSE(cluster.host(3).delivered.empty());
    EXPECT_EQ(cluster.host(3).delivered.back().text, fmt::format("again{}", i));
    EXPECT_EQ(cluster.host(3).delivered.back().at, sent);
  }
  EXPECT_EQ(cluster.host(3).node->counters().hold_cancels_sent, cancels_before);
}

// Cancels cost nothing on an idle ring: none is sent while nobody submits, and one member holds
// the token once per rotation as before.
TEST(TokenHold, AnIdleRingSendsNoCancelAndHoldsOncePerRotation) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  const NodeCounters before = cluster.host(1).node->counters();
  cluster.run_for(1000);
  for (NodeId id : {1, 2, 3}) EXPECT_EQ(cluster.host(id).node->counters().hold_cancels_sent, 0u) << "node " << id;
  const std::uint64_t rotations = cluster.host(1).node->counters().tokens_received - before.tokens_received;
  const Time hold_us = ms_to_time(cluster.config().token_hold_ms);
  EXPECT_LE(rotations, ms_to_time(1000) / hold_us + 1);  // one hold per rotation: the ring rests
  EXPECT_GE(rotations, ms_to_time(1000) / (hold_us + 1'000));
}

// A cancel is only a hint: one from outside the ring, or for another ring, is counted and changes
// nothing; the held token still goes on when its hold ends.
TEST(TokenHold, ACancelForAnotherRingIsIgnored) {
  Cluster cluster;
  for (NodeId id : {1, 2, 3}) cluster.start(id);
  cluster.run_for(2000);
  Host& rep = cluster.host(1);
  const RingId stale{1, rep.node->ring_id().seq - 1};
  HoldCancel cancel{stale};
  std::vector<std::byte> packet(hold_cancel_size());
  encode_hold_cancel(cancel, packet);
  cluster.send_as(2, 1, packet);
  cluster.run_for(1);
  EXPECT_EQ(rep.node->counters().hold_cancels_foreign_ring, 1u);
  EXPECT_EQ(rep.node->counters().token_holds_cancelled, 0u);
}

}  // namespace
}  // namespace rtotem::membership
