// One Node forming a ring, fed hand-built joins and multicasts: what it takes as proof that the
// commit token arrived, and which ring seqs it persists. Node 1 is under test, on ring {1, 2};
// the test speaks as node 2 and as a stranger, node 3, through their own simulated backends.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "membership/node.hpp"
#include "membership/node_set.hpp"
#include "tests/unit/membership/node_fixture.hpp"
#include "transport/sim/sim_network.hpp"

namespace rtotem::membership {
namespace {

using transport::InboundPacket;
using transport::SimBackend;
using transport::SimNetwork;
using namespace fixture;

struct Recorder final : NodeEvents {
  std::map<TimerId, Time> timers;
  std::vector<Seq> persisted;
  void arm_timer(TimerId timer, Time deadline) override { timers[timer] = deadline; }
  void cancel_timer(TimerId timer) override { timers.erase(timer); }
  void deliver(const Delivered&) override {}
  void configuration(const ConfigChange&) override {}
  void persist_ring_seq(Seq seq) override { persisted.push_back(seq); }
};

// The packets of one type a backend received, as (sender, bytes).
struct Collected final : transport::PacketSink {
  PacketType wanted;
  std::vector<std::pair<NodeId, std::vector<std::byte>>> packets;
  explicit Collected(PacketType type) : wanted(type) {}
  void on_packets(std::span<InboundPacket> batch) override {
    for (auto& p : batch) {
      PacketType type{};
      DecodeError error{};
      if (peek_type(p.payload, type, error) && type == wanted)
        packets.emplace_back(p.from, std::vector<std::byte>(p.payload.begin(), p.payload.end()));
    }
  }
};

NodeList list(std::initializer_list<NodeId> ids) {
  NodeList out;
  for (NodeId id : ids) insert(out, id);
  return out;
}

struct NodeFormingTest : ::testing::Test {
  SimNetwork network{1, {.delay_min_us = 1, .delay_max_us = 1}};
  std::unique_ptr<SimBackend> b1 = network.attach(params(1)).value();
  std::unique_ptr<SimBackend> b2 = network.attach(params(2)).value();
  std::unique_ptr<SimBackend> b3 = network.attach(params(3)).value();
  Recorder events;
  TotemConfig config = test_config();
  Node node{1, config, *b1, events};
  const RingId ring{1, 5};
  Time now = 0;

  Feed feed{node, now};

  void SetUp() override {
    const NodeId members[] = {1, 2};
    node.install_ring(ring, members, now);
    ASSERT_EQ(b1->flush(), Status::kOk);
  }
  // Moves time on by 10 µs: packets land, node 1 handles its batch, flushes.
  void step() {
    now += 10;
    network.advance_to(now);
    while (b1->poll(feed) == transport::kRxBatchMax) {}
    ASSERT_EQ(b1->flush(), Status::kOk);
    network.advance_to(now + 5);
  }
  void timer(TimerId id) {
    ASSERT_TRUE(events.timers.contains(id));
    now = std::max(now, events.timers.at(id));
    events.timers.erase(id);
    node.on_timer(id, now);
    ASSERT_EQ(b1->flush(), Status::kOk);
    network.advance_to(now + 5);
  }
  void multicast_from(SimBackend& from, std::span<const std::byte> packet) { send_packet(from, kNoNode, packet); }
  void join_from(SimBackend& from, Seq ring_seq, NodeList proc_set, NodeList failed_set) {
    const Join join{from.local_node(), ring_seq, proc_set, failed_set};
    std::vector<std::byte> packet(join_size(join));
    encode_join(join, packet);
    multicast_from(from, packet);
  }
  // Packets of `type` node 2 has received since it was last asked.
  std::size_t received_at_2(PacketType type) {
    Collected got(type);
    while (b2->poll(got) == transport::kRxBatchMax) {}
    return got.packets.size();
  }
  // Node 3, a stranger, sends a join while we gather; what our next join names failed.
  NodeList failed_after_join_from_3(Seq ring_seq, NodeList proc_set, NodeList failed_set) {
    join_from(*b3, ring_seq, proc_set, failed_set);
    step();
    timer(TimerId::kJoin);
    return last_join_at_2().failed_set;
  }
  // The last join node 2 has received since it was last asked.
  Join last_join_at_2() {
    Collected got(PacketType::kJoin);
    while (b2->poll(got) == transport::kRxBatchMax) {}
    Join join;
    EXPECT_FALSE(got.packets.empty());
    if (!got.packets.empty()) {
      EXPECT_EQ(decode_join(got.packets.back().second, join), DecodeError::kNone);
    }
    return join;
  }
};

// Node 2 agrees on ring {1, 2} again; node 1, its representative, sends it the commit token,
// which is lost. A multicast node 2 sent on the old ring before it saw the token arrives late.
// Only the commit token's ring, not the ring being left, can show that node 2 holds it: node 1
// must keep resending it, or forming the ring waits for the token timeout.
TEST_F(NodeFormingTest, ALateOldRingMulticastFromTheSuccessorDoesNotStopTheCommitTokensResending) {
  join_from(*b2, ring.seq, list({1, 2}), {});
  step();
  EXPECT_EQ(node.state(), MemberState::kGather);
  timer(TimerId::kJoin);  // node 2 agrees with us: we form the ring
  ASSERT_EQ(node.state(), MemberState::kCommit);
  EXPECT_EQ(received_at_2(PacketType::kCommit), 1u);  // lost: node 2 never handles it

  std::vector<std::byte> late(mcast_header_size() + 8);
  encode_mcast_header(McastHeader{ring, 7, 2, Delivery::kAgreed, false}, late);
  multicast_from(*b2, late);
  step();
  ASSERT_TRUE(events.timers.contains(TimerId::kTokenRetransmit)) << "resending stopped";
  timer(TimerId::kTokenRetransmit);
  EXPECT_EQ(received_at_2(PacketType::kCommit), 1u);
  EXPECT_EQ(node.counters().tokens_retransmitted, 1u);
}

// Node 3 ended its last round (seq 4) failing us, and formed a ring of its own; now it merges
// with us (node 2 heard it first). Its last join of that round, still in flight, reaches us after
// our Gather began: its seq is below our ring's, so it is the old round's verdict, not node 3's
// word in this one. Taken as this round's, we would fail node 3 back, and the two of us would
// fail each other round after round (seed 155044: two connected nodes stayed singletons 1.4 s).
TEST_F(NodeFormingTest, AJoinFromBeforeOurRingDoesNotFailItsSenderInOurGather) {
  join_from(*b2, ring.seq, list({1, 2, 3}), {});  // node 2 heard node 3's merge detection
  step();
  ASSERT_EQ(node.state(), MemberState::kGather);
  join_from(*b3, ring.seq - 1, list({1, 2, 3}), list({1, 2}));  // the late one
  step();
  EXPECT_EQ(node.counters().joins_stale, 1u);
  timer(TimerId::kJoin);
  const Join ours = last_join_at_2();
  EXPECT_EQ(ours.failed_set.count, 0u) << "node 3 failed for an old round's verdict";
  EXPECT_TRUE(contains(ours.proc_set, 3));
}

// The stale rule's other half: the seq our joins carry dates our verdicts. Node 3 gave up on us
// this round, so we gave up on it; then it went on to a ring of its own (seq + 5) and joins from
// there, which we do not take: it is failed for this round. Raising our seq from that join would
// date our verdict on node 3 after its new ring, and node 3, gathering there, would take it as
// that round's word and fail us back, round after round (seed 155557: nodes 2 and 3, which hear
// each other, formed singletons for 3.9 s while node 1, which heard no one, failed them both).
TEST_F(NodeFormingTest, AJoinFromANodeFailedThisRoundDoesNotDateOurVerdictOnIt) {
  join_from(*b2, ring.seq, list({1, 2, 3}), {});
  step();
  ASSERT_EQ(node.state(), MemberState::kGather);
  join_from(*b3, ring.seq, list({1, 2, 3}), list({1}));
  step();
  join_from(*b3, ring.seq + 5, list({1, 3}), {});
  step();
  timer(TimerId::kJoin);
  const Join ours = last_join_at_2();
  ASSERT_TRUE(contains(ours.failed_set, 3));
  EXPECT_LT(ours.ring_seq, ring.seq + 5) << "our verdict on node 3 dated after its new ring";
}

// Yet a node leaving names itself failed in its last join, whatever its seq: that word is its
// last, and waiting for it would cost the round a consensus timeout.
TEST_F(NodeFormingTest, ALeavingJoinIsTakenWhateverItsSeq) {
  join_from(*b2, ring.seq, list({1, 2, 3}), {});
  step();
  ASSERT_EQ(node.state(), MemberState::kGather);
  join_from(*b3, ring.seq - 1, list({1, 2, 3}), list({3}));
  step();
  EXPECT_EQ(node.counters().joins_stale, 0u);
  timer(TimerId::kJoin);
  const Join ours = last_join_at_2();
  EXPECT_TRUE(contains(ours.failed_set, 3));
}

// Node 2, a member of our ring, failed to receive and left it: its joins name us failed. We go
// to Gather at once, without it, rather than wait out the token timeout for a token it no longer
// passes (seed 139748: that wait broke the liveness bound). A stranger's such join changes
// nothing (below).
TEST_F(NodeFormingTest, AMemberWhoseJoinFailsUsHasLeftOurRingAndWeGatherAtOnce) {
  ASSERT_EQ(node.state(), MemberState::kOperational);
  join_from(*b2, ring.seq, list({1, 2}), list({1}));
  step();
  EXPECT_EQ(node.state(), MemberState::kGather);
  EXPECT_EQ(node.counters().joins_failing_us, 0u);
  timer(TimerId::kConsensus);  // nobody else to agree with: a ring of our own, without node 2
  EXPECT_EQ(node.state(), MemberState::kCommit);
}

// But a member's join from before our ring, failing us, is left over from the round that formed
// it: the ring stays.
TEST_F(NodeFormingTest, AMembersFailingJoinFromBeforeOurRingLeavesItAlone) {
  join_from(*b2, ring.seq - 1, list({1, 2}), list({1}));
  step();
  EXPECT_EQ(node.state(), MemberState::kOperational);
  EXPECT_EQ(node.counters().joins_stale, 1u);
}

// A join at exactly our ring's seq was sent by a node that has heard of our ring: it is this
// round's word, the stale rule's boundary (only seqs below ours are dropped).
TEST_F(NodeFormingTest, AJoinAtOurRingsSeqIsTakenInGather) {
  join_from(*b2, ring.seq, list({1, 2, 3}), {});
  step();
  ASSERT_EQ(node.state(), MemberState::kGather);
  join_from(*b3, ring.seq, list({1, 2, 3}), list({1}));
  step();
  EXPECT_EQ(node.counters().joins_stale, 0u);
  timer(TimerId::kJoin);
  const Join ours = last_join_at_2();
  EXPECT_TRUE(contains(ours.failed_set, 3)) << "node 3 gave up on us this round: we cannot share a ring";
}

// Forming ring {1, 2} (Commit): node 2, a member of that ring, gives up on us. It will not pass
// the commit token on, so we gather again at once. A stranger's failing join is deferred, as
// every stranger's join is while a ring is being formed.
TEST_F(NodeFormingTest, InCommitAMembersFailingJoinGathersAndAStrangersIsDeferred) {
  join_from(*b2, ring.seq, list({1, 2}), {});
  step();
  timer(TimerId::kJoin);
  ASSERT_EQ(node.state(), MemberState::kCommit);
  const Seq forming = node.ring_seq();
  join_from(*b3, forming, list({1, 2, 3}), list({1}));
  step();
  EXPECT_EQ(node.state(), MemberState::kCommit) << "a stranger's word does not abort the ring being formed";
  EXPECT_EQ(node.counters().joins_deferred, 1u);
  join_from(*b2, forming, list({1, 2}), list({1}));
  step();
  EXPECT_EQ(node.state(), MemberState::kGather);
  timer(TimerId::kJoin);
  const Join ours = last_join_at_2();
  EXPECT_TRUE(contains(ours.failed_set, 2));
  EXPECT_FALSE(contains(ours.proc_set, 3)) << "the deferred join was not taken";
}

// Forming ring {1, 2} without node 3, which node 2 agreed to fail. Its earlier joins of the round
// and resent copies of the one it agreed with are old news: sets only grow until a ring is
// installed, so they lie within ours. So is a join from before our ring, whatever it names, and
// one that names the same ring (node 2 heard of node 4 and gave up on it: it still takes the
// token). A join naming another ring was sent after it agreed: it has heard of node 4 and will
// refuse the commit token, so we gather again at once rather than wait out the token timeout
// (seed 266368: node 1 waited 1 s for a ring node 2 had moved on from).
TEST_F(NodeFormingTest, InCommitAMembersJoinNamingMoreThanTheConsensusGathers) {
  join_from(*b2, ring.seq, list({1, 2, 3}), {});
  step();
  ASSERT_EQ(node.state(), MemberState::kGather);
  timer(TimerId::kConsensus);  // node 3 is silent: given up on
  join_from(*b2, ring.seq, list({1, 2, 3}), list({3}));
  step();
  ASSERT_EQ(node.state(), MemberState::kCommit);
  join_from(*b2, ring.seq, list({1, 2, 3}), {});               // from before it gave up on node 3, late
  join_from(*b2, ring.seq, list({1, 2, 3}), list({3}));        // the one it agreed with, resent
  join_from(*b2, ring.seq - 1, list({1, 2, 3, 4}), {});        // from the round that formed our ring
  join_from(*b2, ring.seq, list({1, 2, 3, 4}), list({3, 4}));  // the same ring
  step();
  EXPECT_EQ(node.state(), MemberState::kCommit);
  EXPECT_EQ(node.counters().joins_stale, 4u);
  join_from(*b2, ring.seq, list({1, 2, 3, 4}), list({3}));
  step();
  EXPECT_EQ(node.state(), MemberState::kGather);
  timer(TimerId::kJoin);
  EXPECT_TRUE(contains(last_join_at_2().proc_set, 4));
}

// Forming ring {1, 2, 3} with node 3, which was not on our last ring: it leaves. That ring will
// not form, so we gather without it at once, as for any member of the ring being formed.
TEST_F(NodeFormingTest, InCommitAMemberFromOutsideOurRingLeavingGathers) {
  join_from(*b2, ring.seq, list({1, 2, 3}), {});
  join_from(*b3, ring.seq, list({1, 2, 3}), {});
  step();
  ASSERT_EQ(node.state(), MemberState::kCommit);  // both agree with us
  join_from(*b3, ring.seq, list({1, 2, 3}), list({3}));
  step();
  EXPECT_EQ(node.state(), MemberState::kGather);
  timer(TimerId::kJoin);
  EXPECT_TRUE(contains(last_join_at_2().failed_set, 3));
}

// In Gather, a stranger's verdict is taken on a node outside our ring, as corosync takes it: nodes
// that never shared a ring (every node at a cold start) would otherwise never agree on one
// another's failures, and each would form a ring alone (seed 266368: nodes 1 and 3 did, for 4 s,
// one having given up on node 2 and the other never adopting it). Its verdict on a member of our
// ring is not taken: that member's ring-mates judge it.
TEST_F(NodeFormingTest, AStrangersVerdictIsTakenOnANodeOutsideOurRingOnly) {
  join_from(*b2, ring.seq, list({1, 2, 3, 4}), {});
  step();
  ASSERT_EQ(node.state(), MemberState::kGather);
  const NodeList failed = failed_after_join_from_3(ring.seq, list({1, 2, 3, 4}), list({2, 4}));
  EXPECT_TRUE(contains(failed, 4));
  EXPECT_FALSE(contains(failed, 2));
}

// Nor from a join older than a ring seq we know of: the stale rule dates joins by our last ring's
// seq, so a late join of an old round between that and our highest passes it (every join does at
// a cold start or after a restart, ring seq 0). Node 2 has heard of ring seq 9; node 3's join at
// seq 5 was sent before node 3 had.
TEST_F(NodeFormingTest, AStrangersVerdictIsTakenOnlyFromAJoinAsNewAsTheRingSeqsWeKnow) {
  join_from(*b2, ring.seq + 4, list({1, 2, 3, 4}), {});
  step();
  ASSERT_EQ(node.state(), MemberState::kGather);
  ASSERT_EQ(node.ring_seq(), ring.seq + 4);
  EXPECT_FALSE(contains(failed_after_join_from_3(ring.seq, list({1, 2, 3, 4}), list({4})), 4));
  EXPECT_TRUE(contains(failed_after_join_from_3(ring.seq + 4, list({1, 2, 3, 4}), list({4})), 4));
}

// But a stranger leaving with a join from below our ring's seq (other such joins are stale) is
// taken on itself alone: its other verdicts are an old round's.
TEST_F(NodeFormingTest, AStrangersLeavingJoinFromBeforeOurRingIsTakenOnItselfAlone) {
  join_from(*b2, ring.seq, list({1, 2, 3, 4}), {});
  step();
  ASSERT_EQ(node.state(), MemberState::kGather);
  const NodeList failed = failed_after_join_from_3(ring.seq - 1, list({1, 2, 3, 4}), list({3, 4}));
  EXPECT_TRUE(contains(failed, 3));
  EXPECT_FALSE(contains(failed, 4));
}

// A join tells of a ring seq above ours. Had we not stored it, a quick restart would bring us
// back below a ring we were then put on (a commit token's seq is persisted only if it is above
// the seq we held), and our joins would look stale to its members.
TEST_F(NodeFormingTest, ARingSeqLearnedFromAJoinIsPersistedBeforeItIsUsed) {
  join_from(*b3, 40, list({3}), list({1}));  // a stranger that gave up on us: nothing else changes
  step();
  EXPECT_EQ(node.counters().joins_failing_us, 1u);
  EXPECT_EQ(node.state(), MemberState::kOperational);
  EXPECT_EQ(node.ring_seq(), 40u);
  EXPECT_EQ(events.persisted, std::vector<Seq>{40});
  join_from(*b3, 30, list({3}), list({1}));  // lower: nothing to store
  step();
  EXPECT_EQ(events.persisted, std::vector<Seq>{40});
}

}  // namespace
}  // namespace rtotem::membership
