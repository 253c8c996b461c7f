// One Node fed hand-built packets: its token handling, retransmission requests, delivery order,
// safe delivery and timers. The other ring members are played by the test through their own
// simulated backends, so what the node sends is read off the network as decoded packets.
#include "membership/node.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/membership/node_fixture.hpp"
#include "transport/sim/sim_network.hpp"

namespace rtotem::membership {
namespace {

using transport::BackendParams;
using transport::InboundPacket;
using transport::SendBufferRef;
using transport::SimBackend;
using transport::SimNetwork;
using namespace fixture;

struct Recorder final : NodeEvents {
  std::map<TimerId, Time> timers;
  std::vector<std::pair<Seq, std::string>> delivered;
  void arm_timer(TimerId timer, Time deadline) override { timers[timer] = deadline; }
  void cancel_timer(TimerId timer) override { timers.erase(timer); }
  void deliver(const Delivered& m) override {
    delivered.emplace_back(m.seq, std::string(reinterpret_cast<const char*>(m.payload.data()), m.payload.size()));
  }
  void configuration(const ConfigChange&) override { ADD_FAILURE() << "install_ring delivers no configuration"; }
  void persist_ring_seq(Seq) override { ADD_FAILURE() << "install_ring persists no ring seq"; }
};

struct Collected final : transport::PacketSink {
  std::vector<std::pair<NodeId, std::vector<std::byte>>> packets;
  std::vector<transport::BufferRef> holds;
  void on_packets(std::span<InboundPacket> batch) override {
    for (auto& p : batch) packets.emplace_back(p.from, std::vector<std::byte>(p.payload.begin(), p.payload.end()));
  }
};

// Node 2 under test in ring {1, 2, 3}; the test speaks as nodes 1 and 3.
struct NodeTest : ::testing::Test {
  SimNetwork network{1, {.delay_min_us = 1, .delay_max_us = 1}};
  std::unique_ptr<SimBackend> b1 = network.attach(params(1)).value();
  std::unique_ptr<SimBackend> b2 = network.attach(params(2)).value();
  std::unique_ptr<SimBackend> b3 = network.attach(params(3)).value();
  Recorder events;
  TotemConfig config = test_config();
  Node node{2, config, *b2, events};
  const RingId ring{1, 5};
  Time now = 0;

  Feed feed{node, now};

  void SetUp() override {
    const NodeId members[] = {1, 2, 3};
    node.install_ring(ring, members, now);
  }
  // Moves time on by 10 µs: packets land, node 2 handles its batch, flushes.
  void step() {
    now += 10;
    network.advance_to(now);
    while (b2->poll(feed) == transport::kRxBatchMax) {}
    (void)b2->flush();
    network.advance_to(now + 5);
  }
  void send_from(transport::Backend& from, NodeId to, std::span<const std::byte> packet) {
    send_packet(from, to, packet);
  }
  void mcast_from_1(Seq seq, const std::string& text, Delivery delivery = Delivery::kAgreed) {
    std::vector<std::byte> packet(mcast_header_size() + kChunkHeaderSize + text.size());
    McastHeader header{ring, seq, 1, delivery, false};
    const std::size_t at = encode_mcast_header(header, packet);
    const auto size = static_cast<std::uint16_t>(text.size());
    encode_chunk_header(ChunkKind::kWhole, size, size, 0, std::span(packet).subspan(at));
    std::memcpy(packet.data() + at + kChunkHeaderSize, text.data(), text.size());
    send_from(*b1, kNoNode, packet);
  }
  void token_from_1(Token token) {
    token.ring_id = ring;
    std::vector<std::byte> packet(token_size(token));
    encode_token(token, packet);
    send_from(*b1, 2, packet);
  }
  // The tokens node 3 has received from node 2, decoded.
  std::vector<Token> tokens_at_3() { return tokens_at(*b3, 2); }
  std::vector<Token> tokens_at(SimBackend& backend, NodeId sender) {
    Collected got;
    while (backend.poll(got) == transport::kRxBatchMax) {}
    std::vector<Token> tokens;
    for (auto& [from, bytes] : got.packets) {
      PacketType type{};
      DecodeError error{};
      if (peek_type(bytes, type, error) && type == PacketType::kToken) {
        tokens.emplace_back();
        EXPECT_EQ(decode_token(bytes, tokens.back()), DecodeError::kNone);
        EXPECT_EQ(from, sender);
      }
    }
    return tokens;
  }
};

TEST_F(NodeTest, InstallArmsTheTokenLossTimerAndOnlyTheRepresentativeOriginates) {
  EXPECT_TRUE(node.operational());
  EXPECT_EQ(events.timers.at(TimerId::kTokenLoss), config.token_timeout_ms * 1000ull);
  step();
  EXPECT_TRUE(tokens_at_3().empty());  // node 2 is not the representative
}

TEST_F(NodeTest, ATokenWithAHoleYieldsAnRtrEntryAndDeliveryStopsAtTheHole) {
  mcast_from_1(1, "one");
  mcast_from_1(3, "three");
  Token token;
  token.token_seq = 1;
  token.seq = 3;
  token.aru = 0;
  token.aru_addr = 1;
  token_from_1(token);
  step();
  auto tokens = tokens_at_3();
  ASSERT_EQ(tokens.size(), 1u);
  const Token& out = tokens[0];
  EXPECT_EQ(out.token_seq, 2u);
  ASSERT_EQ(out.rtr_count, 1u);
  EXPECT_EQ(out.rtr[0], 2u);
  EXPECT_EQ(out.aru, 0u);  // node 1 set it lower; ours is 1, so it stays
  ASSERT_EQ(events.delivered.size(), 1u);
  EXPECT_EQ(events.delivered[0], std::make_pair(Seq{1}, std::string("one")));
  EXPECT_EQ(node.counters().retransmits_requested, 1u);

  mcast_from_1(2, "two");  // the retransmission arrives
  step();
  ASSERT_EQ(events.delivered.size(), 3u);
  EXPECT_EQ(events.delivered[2], std::make_pair(Seq{3}, std::string("three")));
}

TEST_F(NodeTest, SubmittedMessagesGetTheNextSequenceNumbersOnTheToken) {
  const std::string text = "hello";
  ASSERT_EQ(node.submit(std::as_bytes(std::span(text)), Delivery::kAgreed, now), Status::kOk);
  Token token;
  token.token_seq = 7;
  token.seq = 0;
  token_from_1(token);
  step();
  auto tokens = tokens_at_3();
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].seq, 1u);
  EXPECT_EQ(tokens[0].fcc, 1u);
  EXPECT_EQ(tokens[0].aru, 1u);  // node 2 holds everything, so aru follows seq
  EXPECT_EQ(tokens[0].aru_addr, kNoNode);
  ASSERT_EQ(events.delivered.size(), 1u);  // self-delivery, in order
  EXPECT_EQ(events.delivered[0].second, "hello");
  EXPECT_EQ(node.send_queue_size(), 0u);
}

TEST_F(NodeTest, ADuplicateTokenIsIgnored) {
  Token token;
  token.token_seq = 4;
  token.fcc = 1;  // a busy ring: passed on at once
  token_from_1(token);
  step();
  token_from_1(token);
  step();
  EXPECT_EQ(tokens_at_3().size(), 1u);
  EXPECT_EQ(node.counters().tokens_duplicate, 1u);
}

TEST_F(NodeTest, TheTokenIsResentUntilTheSuccessorShowsItHasIt) {
  Token token;
  token.token_seq = 1;
  token.fcc = 1;  // not idle: passed on at once
  token_from_1(token);
  step();
  ASSERT_EQ(tokens_at_3().size(), 1u);
  ASSERT_TRUE(events.timers.count(TimerId::kTokenRetransmit));
  now = events.timers[TimerId::kTokenRetransmit];
  node.on_timer(TimerId::kTokenRetransmit, now);
  (void)b2->flush();
  network.advance_to(now + 10);
  auto resent = tokens_at_3();
  ASSERT_EQ(resent.size(), 1u);
  EXPECT_EQ(resent[0].token_seq, 2u);  // the same token, not a new one
  EXPECT_EQ(node.counters().tokens_retransmitted, 1u);
}

TEST_F(NodeTest, ASafeMessageWaitsUntilTheTokenShowsEveryMemberHasIt) {
  mcast_from_1(1, "careful", Delivery::kSafe);
  mcast_from_1(2, "after", Delivery::kAgreed);
  Token token;
  token.token_seq = 1;
  token.seq = 2;
  token.aru = 2;  // every node visited since holds up to 2...
  token.aru_addr = kNoNode;
  token.fcc = 2;
  token_from_1(token);
  step();
  EXPECT_TRUE(events.delivered.empty());  // ...but one visit proves nothing: the agreed one waits too
  token.token_seq = 4;
  token.fcc = 0;
  token_from_1(token);  // the next rotation still carries aru 2
  step();
  ASSERT_EQ(events.delivered.size(), 2u);
  EXPECT_EQ(events.delivered[0].second, "careful");
}

// Before any message has been ordered on the ring, its token rests with the representative.
TEST_F(NodeTest, OnAnIdleRingOnlyTheRepresentativeHoldsTheToken) {
  Token idle;
  idle.token_seq = 1;
  token_from_1(idle);
  step();
  EXPECT_EQ(tokens_at_3().size(), 1u);  // node 2 passes it straight on
  EXPECT_FALSE(events.timers.count(TimerId::kTokenHold));

  // Node 1, the representative, originates an idle token and holds it; a submission releases it.
  Recorder rep_events;
  Node rep(1, config, *b1, rep_events);
  const NodeId members[] = {1, 2, 3};
  rep.install_ring(ring, members, now);
  (void)b1->flush();
  network.advance_to(now + 10);
  EXPECT_TRUE(tokens_at(*b2, 1).empty());
  ASSERT_TRUE(rep_events.timers.count(TimerId::kTokenHold));
  EXPECT_EQ(rep_events.timers.at(TimerId::kTokenHold), now + config.token_hold_ms * 1000ull);
  const std::string text = "wake";
  ASSERT_EQ(rep.submit(std::as_bytes(std::span(text)), Delivery::kAgreed, now), Status::kOk);
  EXPECT_EQ(rep_events.timers.at(TimerId::kTokenHold), now);  // at once, through the host's loop
  rep.on_timer(TimerId::kTokenHold, now);
  (void)b1->flush();
  network.advance_to(now + 20);
  auto tokens = tokens_at(*b2, 1);
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].seq, 1u);
}

// A member's hold cancel can overtake the token on its way to the representative: it then
// stands for the next visit, which passes the idle token on at once instead of holding it.
TEST_F(NodeTest, AHoldCancelThatOvertakesTheTokenSkipsTheNextHold) {
  Recorder rep_events;
  Node rep(1, config, *b1, rep_events);
  const NodeId members[] = {1, 2, 3};
  rep.install_ring(ring, members, now);
  rep.on_timer(TimerId::kTokenHold, now);  // the first rotation goes out
  (void)b1->flush();
  network.advance_to(now + 10);
  ASSERT_EQ(tokens_at(*b2, 1).size(), 1u);

  std::vector<std::byte> cancel(hold_cancel_size());
  encode_hold_cancel({ring}, cancel);
  Feed rep_feed{rep, now};
  auto rep_step = [&] {
    now += 10;
    network.advance_to(now);
    while (b1->poll(rep_feed) == transport::kRxBatchMax) {}
    (void)b1->flush();
    network.advance_to(now + 5);
  };
  send_from(*b2, 1, cancel);  // node 2 has a message; the token is at node 3
  rep_step();
  EXPECT_TRUE(tokens_at(*b2, 1).empty());
  Token idle;
  idle.ring_id = ring;
  idle.token_seq = 4;
  std::vector<std::byte> token(token_size(idle));
  encode_token(idle, token);
  send_from(*b3, 1, token);
  rep_step();
  EXPECT_EQ(tokens_at(*b2, 1).size(), 1u) << "the representative held the token";
  EXPECT_FALSE(rep_events.timers.count(TimerId::kTokenHold));
  EXPECT_EQ(rep.counters().token_holds_cancelled, 1u);
}

// Once a message is ordered, the idle token rests with its sender: node 2 holds it after node
// 1's message is delivered everywhere, and passes it on at once when it submits.
TEST_F(NodeTest, OnAnIdleRingTheLastSenderHoldsTheToken) {
  const std::string text = "from 2";
  ASSERT_EQ(node.submit(std::as_bytes(std::span(text)), Delivery::kAgreed, now), Status::kOk);
  Token token;
  token.token_seq = 1;
  token_from_1(token);
  step();  // node 2 sends seq 1 with the token
  ASSERT_EQ(tokens_at_3().size(), 1u);
  for (std::uint64_t visit = 2; visit <= 4; ++visit) {  // seq 1 becomes stable, then discarded
    Token next;
    next.token_seq = visit * 3;
    next.seq = next.aru = 1;
    token_from_1(next);
    step();
  }
  EXPECT_TRUE(events.timers.count(TimerId::kTokenHold)) << "node 2 passed an idle token it should rest";
  const std::string more = "more";
  ASSERT_EQ(node.submit(std::as_bytes(std::span(more)), Delivery::kAgreed, now), Status::kOk);
  EXPECT_EQ(events.timers.at(TimerId::kTokenHold), now);  // at once, through the host's loop
  EXPECT_EQ(node.counters().hold_cancels_sent, 0u);       // nobody else to ask
}

TEST_F(NodeTest, SubmissionsBeyondTheQueueAreBackPressure) {
  const std::vector<std::byte> full(piece_max(b2->mtu()));              // a packet each: none packs with another
  for (std::uint32_t i = 0; i < config.send_queue_for(b2->mtu()); ++i)  // derived: 1024
    ASSERT_EQ(node.submit(full, Delivery::kAgreed, now), Status::kOk);
  EXPECT_EQ(node.submit(full, Delivery::kAgreed, now), Status::kQueueFull);
  const std::string small = "x";  // no room behind a full packet either
  EXPECT_EQ(node.submit(std::as_bytes(std::span(small)), Delivery::kAgreed, now), Status::kQueueFull);
  std::vector<std::byte> big(node.max_message_size() + 1);
  EXPECT_EQ(node.submit(big, Delivery::kAgreed, now), Status::kTooLarge);
}

TEST_F(NodeTest, MalformedAndForeignPacketsAreCountedNotHandled) {
  const std::byte junk[] = {std::byte{9}, std::byte{0}, std::byte{0}, std::byte{0}};
  send_from(*b1, 2, junk);
  std::vector<std::byte> foreign(mcast_header_size());
  encode_mcast_header(McastHeader{RingId{1, 4}, 1, 1, Delivery::kAgreed, false}, foreign);
  send_from(*b1, kNoNode, foreign);
  step();
  EXPECT_EQ(node.counters().packets_malformed, 1u);
  EXPECT_EQ(node.counters().mcasts_foreign_ring, 1u);
  EXPECT_TRUE(events.delivered.empty());
}

// The host moved node 2 to another backend (its link failed), one with a larger mtu, as UDP is
// beside RDMA: what it sends goes there, and it gathers a new ring over it at once; what it had
// queued stays queued, and a message submitted next is not packed into a queued packet beyond
// that packet's buffer (from the old pool, sized for the old mtu). (Not the fixture: the node must
// go before the backends whose buffers it holds, the new one included.)
TEST(NodeRebind, ARebindSendsThroughTheNewBackendAndGathersThere) {
  SimNetwork network{1, {.delay_min_us = 1, .delay_max_us = 1}};
  SimNetwork other{2, {.delay_min_us = 1, .delay_max_us = 1}};
  std::unique_ptr<SimBackend> b2 = network.attach(params(2)).value();
  std::unique_ptr<SimBackend> b3 = network.attach(params(3)).value();
  BackendParams larger = params(2);
  larger.mtu = 1400;
  std::unique_ptr<SimBackend> moved = other.attach(larger).value();
  std::unique_ptr<SimBackend> watcher = other.attach(params(3)).value();
  Recorder events;
  Node node{2, test_config(), *b2, events};
  const NodeId members[] = {1, 2, 3};
  Time now = 0;
  node.install_ring(RingId{1, 5}, members, now);
  const std::vector<std::byte> nearly_full(piece_max(b2->mtu()) - 100);  // queued before the link failed
  ASSERT_EQ(node.submit(nearly_full, Delivery::kAgreed, now), Status::kOk);
  auto rebound = node.rebind(*moved, now);
  ASSERT_TRUE(rebound.ok()) << rebound.error().message();
  EXPECT_EQ(node.state(), MemberState::kGather);
  EXPECT_EQ(node.send_queue_size(), 1u);
  const std::vector<std::byte> more(200);  // room for it at the new mtu, not in the old buffer
  ASSERT_EQ(node.submit(more, Delivery::kAgreed, now), Status::kOk);
  EXPECT_EQ(node.send_queue_size(), 2u) << "packed into the old buffer";
  EXPECT_EQ(b2->flush(), Status::kOk);
  EXPECT_EQ(moved->flush(), Status::kOk);
  now += 10;
  network.advance_to(now);
  other.advance_to(now);
  Collected on_new;
  while (watcher->poll(on_new) == transport::kRxBatchMax) {}
  int joins = 0;
  for (const auto& [from, bytes] : on_new.packets) {
    PacketType type{};
    DecodeError error{};
    if (from == 2 && peek_type(bytes, type, error) && type == PacketType::kJoin) ++joins;
  }
  EXPECT_EQ(joins, 1) << on_new.packets.size() << " packets on the new network";
  Collected on_old;
  while (b3->poll(on_old) == transport::kRxBatchMax) {}
  EXPECT_TRUE(on_old.packets.empty()) << "node 2 still sends on the old backend";
}

// Node 2 was sized for its backend's mtu and receive buffers: a backend with less is refused and
// nothing changes.
TEST_F(NodeTest, ARebindToABackendWithLessIsRefusedAndChangesNothing) {
  SimNetwork other{2};
  BackendParams smaller = params(2);
  smaller.mtu = 512;
  std::unique_ptr<SimBackend> small = other.attach(smaller).value();
  auto refused = node.rebind(*small, now);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("mtu"), std::string::npos) << refused.error().message();
  std::unique_ptr<SimBackend> stranger = other.attach(params(3)).value();
  EXPECT_FALSE(node.rebind(*stranger, now).ok()) << "a backend for node 3";
  EXPECT_TRUE(node.operational());
  EXPECT_EQ(node.ring_id(), ring);
}

}  // namespace
}  // namespace rtotem::membership

namespace rtotem::membership {
namespace {

TEST(NodeMtu, ARetransmitListIsCutToWhatATokenCanCarry) {
  SimNetwork network{1, {.delay_min_us = 1, .delay_max_us = 1}};
  auto small = [](NodeId id) {
    BackendParams p = params(id);
    p.mtu = 256;
    return p;
  };
  auto b1 = network.attach(small(1)).value();
  auto b2 = network.attach(small(2)).value();
  Recorder events;
  Node node(2, test_config(), *b2, events);
  const NodeId members[] = {1, 2};
  node.install_ring(RingId{1, 1}, members, 0);

  Token token;  // 100 messages this node has none of
  token.ring_id = RingId{1, 1};
  token.token_seq = 1;
  token.seq = 100;
  std::vector<std::byte> packet(token_size(token));
  encode_token(token, packet);
  SendBufferRef buffer;
  ASSERT_EQ(b1->acquire(buffer), Status::kOk);
  std::memcpy(buffer->writable_payload().data(), packet.data(), packet.size());
  buffer->set_payload_size(static_cast<std::uint32_t>(packet.size()));
  ASSERT_EQ(b1->unicast(2, buffer), Status::kOk);
  ASSERT_EQ(b1->flush(), Status::kOk);
  network.advance_to(10);
  struct Feed final : transport::PacketSink {
    Node& n;
    explicit Feed(Node& node_in) : n(node_in) {}
    void on_packets(std::span<InboundPacket> batch) override { n.on_packets(batch, 10); }
  } feed(node);
  b2->poll(feed);
  ASSERT_EQ(b2->flush(), Status::kOk);
  EXPECT_EQ(node.counters().send_refused, 0u);
  EXPECT_EQ(b2->counters().tx_too_large, 0u);
  EXPECT_EQ(node.counters().retransmits_requested, rtr_max_for_mtu(256));
  EXPECT_EQ(rtr_max_for_mtu(256), 23u);  // (256 - 72) / 8
}

TEST(TotemConfigCheck, RefusesBackendsTooSmallForTheProtocolWithTheReason) {
  const TotemConfig config = test_config();
  BackendParams p = params(1);
  EXPECT_TRUE(config.check(p).ok());
  p.recv_buffers = 100;
  EXPECT_NE(config.check(p).error().message().find("recv_buffers 100"), std::string::npos);
  p = params(1);
  p.send_buffers = 100;
  EXPECT_NE(config.check(p).error().message().find("send_buffers 100"), std::string::npos);
  p = params(1);
  p.mtu = 40;
  EXPECT_NE(config.check(p).error().message().find("mtu 40"), std::string::npos);
}

}  // namespace
}  // namespace rtotem::membership
