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
    while (b1->poll(feed) == transport::kRxBatchMax) {
    }
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
    while (b2->poll(got) == transport::kRxBatchMax) {
    }
    return got.packets.size();
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

// A join tells of a ring seq above ours. Had we not stored it, a quick restart would bring us
// back below a ring we were then put on (a commit token's seq is persisted only if it is above
// the seq we held), and our joins would look stale to its members.
TEST_F(NodeFormingTest, ARingSeqLearnedFromAJoinIsPersistedBeforeItIsUsed) {
  join_from(*b3, 40, list({3}), list({1}));  // a stranger that gave up on us: nothing else changes
  step();
  EXPECT_EQ(node.counters().joins_failing_us, 1u);
  EXPECT_EQ(node.ring_seq(), 40u);
  EXPECT_EQ(events.persisted, std::vector<Seq>{40});
  join_from(*b3, 30, list({3}), list({1}));  // lower: nothing to store
  step();
  EXPECT_EQ(events.persisted, std::vector<Seq>{40});
}

}  // namespace
}  // namespace rtotem::membership
