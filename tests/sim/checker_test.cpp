// Tests of the history checker on hand-written histories: a clean one passes, and each property
// fails on a history made to break it (so no check is vacuous).
#include "src/sim/history_checker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace rtotem::sim {
namespace {

constexpr RingId kRing{1, 1};
constexpr RingId kNextRing{1, 2};
constexpr RingId kThirdRing{1, 3};
constexpr std::uint32_t kSize = 40;
constexpr Time kBoundUs = 1000;  // progress: each delivery advances `now` by 1 us
const std::vector<NodeId> kNodes{1, 2, 3};
// Connectivity masks (bit i: node i + 1; a node's own bit: it is up).
const std::vector<std::uint64_t> kAllConnected{0b111, 0b111, 0b111};

std::vector<NodeId> minus(const std::vector<NodeId>& a, const std::vector<NodeId>& b) {
  std::vector<NodeId> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool mentions(const Violation& violation, const std::string& text) {
  return violation.detail.find(text) != std::string::npos;
}

class CheckerTest : public ::testing::Test {
 protected:
  CheckerTest() : checker(kNodes, kBoundUs) {}

  MessageId submit(NodeId origin, Delivery delivery = Delivery::kAgreed, bool accept = true) {
    const MessageId id{origin, next_counter[origin]++};
    checker.record_offer(now, id, kSize, delivery);
    if (accept) checker.record_accepted(now, id);
    return id;
  }

  // `node` delivers `id` as `seq` of `ring`; `mutate` may spoil the payload or header first.
  template <class Mutate>
  void deliver(NodeId node, const RingId& ring, Seq seq, MessageId id, Mutate mutate,
               Delivery delivery = Delivery::kAgreed) {
    std::vector<std::byte> payload(kSize);
    write_payload(id, payload);
    Delivered message{ring, seq, id.origin, delivery, false, 0, {}, nullptr};
    mutate(payload, message);
    message.payload = payload;
    ++now;
    checker.record_delivery(now, node, message);
  }
  void deliver(NodeId node, const RingId& ring, Seq seq, MessageId id, Delivery delivery = Delivery::kAgreed) {
    deliver(
        node, ring, seq, id, [](auto&, auto&) {}, delivery);
  }
  // Delivered in the transitional configuration that closes `ring`.
  void deliver_transitional(NodeId node, const RingId& ring, Seq seq, MessageId id) {
    deliver(node, ring, seq, id, [](auto&, auto& message) { message.transitional = true; });
  }
  void deliver_everywhere(Seq seq, MessageId id) {
    for (NodeId node : kNodes) deliver(node, kRing, seq, id);
  }

  void transitional(NodeId node, const RingId& ring, std::vector<NodeId> members, std::vector<NodeId> left) {
    checker.record_configuration(now, node, ConfigChange{true, ring, members, {}, left});
  }
  void regular(NodeId node, const RingId& ring, std::vector<NodeId> members, std::vector<NodeId> joined) {
    checker.record_configuration(now, node, ConfigChange{false, ring, members, joined, {}});
  }
  // `node` leaves its ring for `ring`: `trans` came along, `left` did not.
  void move(NodeId node, const RingId& ring, std::vector<NodeId> trans, std::vector<NodeId> left,
            std::vector<NodeId> members) {
    transitional(node, ring, trans, left);
    regular(node, ring, members, minus(members, trans));
  }
  // A fresh (or restarted) `node` comes up in `ring`.
  void start(NodeId node, const RingId& ring, std::vector<NodeId> members) { move(node, ring, {node}, {}, members); }
  // Every member comes up fresh in `ring`.
  void form(const RingId& ring, std::vector<NodeId> members) {
    for (NodeId node : members) start(node, ring, members);
  }

  std::set<Property> properties() const {
    std::set<Property> seen;
    for (const Violation& v : checker.violations()) seen.insert(v.property);
    return seen;
  }
  std::set<Property> finish(std::vector<NodeId> live = kNodes) {
    checker.finish(++now, live);
    return properties();
  }

  HistoryChecker checker;
  Time now = 1000;
  std::uint64_t next_counter[4] = {};
};

TEST(Payload, StampAndFillerReadBack) {
  std::vector<std::byte> payload(100);
  write_payload({7, 123456789012ULL}, payload);
  MessageId read;
  ASSERT_TRUE(read_stamp(payload, read));
  EXPECT_EQ(read, (MessageId{7, 123456789012ULL}));
  EXPECT_TRUE(payload_matches({7, 123456789012ULL}, payload));
  EXPECT_FALSE(payload_matches({7, 123456789013ULL}, payload));
  payload[99] ^= std::byte{1};
  EXPECT_FALSE(payload_matches({7, 123456789012ULL}, payload));
  EXPECT_FALSE(read_stamp(std::span(payload).first(kStampSize - 1), read));
}

// The filler is one LCG chain, word after word, whatever the length (the checker computes it in
// interleaved lanes), and a flip of any byte, the tail's included, is seen.
TEST(Payload, TheFillerIsOneChainAndEveryByteIsChecked) {
  constexpr std::uint64_t kMul = 6364136223846793005, kAdd = 1442695040888963407;
  for (std::size_t size = kStampSize; size <= kStampSize + 8 * 9 + 7; ++size) {
    std::vector<std::byte> payload(size);
    const MessageId id{3, 1000 + size};
    write_payload(id, payload);
    for (std::size_t at = kStampSize + 8; at + 8 <= size; at += 8) {
      std::uint64_t previous, word;
      std::memcpy(&previous, payload.data() + at - 8, 8);
      std::memcpy(&word, payload.data() + at, 8);
      ASSERT_EQ(word, previous * kMul + kAdd) << "size " << size << " at " << at;
    }
    ASSERT_TRUE(payload_matches(id, payload)) << size;
    for (std::size_t at = 0; at < size; ++at) {
      payload[at] ^= std::byte{0x40};
      ASSERT_FALSE(payload_matches(id, payload)) << "size " << size << " flipped at " << at;
      payload[at] ^= std::byte{0x40};
    }
  }
}

TEST_F(CheckerTest, CleanHistoryHasNoViolation) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(2, Delivery::kSafe);
  deliver_everywhere(1, a);
  for (NodeId node : kNodes) {
    deliver(node, kRing, 2, b, Delivery::kSafe);
    checker.check_safe(now, node, Delivered{kRing, 2, 2, Delivery::kSafe, false, 0, {}, nullptr}, {});
  }
  EXPECT_TRUE(checker.quiescent(kNodes));
  EXPECT_TRUE(finish().empty());
  EXPECT_TRUE(checker.ok());
  EXPECT_EQ(checker.messages_delivered(), 2u);
  EXPECT_EQ(checker.deliveries(), 6u);
  EXPECT_EQ(checker.configurations(), 6u);
}

TEST_F(CheckerTest, AFlippedPayloadByteIsCreation) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver(1, kRing, 1, a);
  deliver(2, kRing, 1, a, [](auto& payload, auto&) { payload[kSize - 1] ^= std::byte{0x40}; });
  deliver(3, kRing, 1, a);
  ASSERT_EQ(finish(), std::set{Property::kNoCreation});
  EXPECT_EQ(checker.violations()[0].nodes, std::vector<NodeId>{2});
  EXPECT_EQ(kind_of(Property::kNoCreation), Kind::kSafety);
}

TEST_F(CheckerTest, AWrongSenderIsCreation) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver(1, kRing, 1, a);
  deliver(2, kRing, 1, a, [](auto&, auto& message) { message.sender = 3; });
  deliver(3, kRing, 1, a);
  ASSERT_EQ(finish(), std::set{Property::kNoCreation});
}

TEST_F(CheckerTest, AWrongDeliveryTypeIsCreation) {
  form(kRing, kNodes);
  const MessageId a = submit(1, Delivery::kSafe);
  deliver(1, kRing, 1, a, Delivery::kSafe);
  deliver(2, kRing, 1, a, Delivery::kAgreed);
  deliver(3, kRing, 1, a, Delivery::kSafe);
  ASSERT_EQ(finish(), std::set{Property::kNoCreation});
}

TEST_F(CheckerTest, AMessageNeverSubmittedIsCreation) {
  form(kRing, kNodes);
  deliver(2, kRing, 1, MessageId{1, 0});
  ASSERT_EQ(finish(), std::set{Property::kNoCreation});
}

TEST_F(CheckerTest, APayloadTooShortForAStampIsCreation) {
  form(kRing, kNodes);
  deliver(2, kRing, 1, MessageId{1, 0}, [](auto& payload, auto&) { payload.resize(kStampSize - 1); });
  ASSERT_EQ(finish(), std::set{Property::kNoCreation});
}

TEST_F(CheckerTest, ARefusedSubmissionDeliveredIsCreation) {
  form(kRing, kNodes);
  const MessageId a = submit(1, Delivery::kAgreed, /*accept=*/false);
  deliver_everywhere(1, a);
  // Still refused at the end: the application waits for it, a liveness failure as well.
  ASSERT_EQ(finish(), (std::set{Property::kNoCreation, Property::kLiveness}));
}

TEST_F(CheckerTest, DeliveringTwiceIsDuplication) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver_everywhere(1, a);
  deliver(3, kRing, 1, a);
  ASSERT_EQ(finish(), std::set{Property::kNoDuplication});
  EXPECT_EQ(checker.violations()[0].nodes, std::vector<NodeId>{3});
  EXPECT_EQ(checker.violations()[0].message, a);
}

TEST_F(CheckerTest, TwoNodesGivingOneSeqDifferentMessagesBreakTotalOrder) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(2);
  for (NodeId node : {1, 3}) {
    deliver(node, kRing, 1, a);
    deliver(node, kRing, 2, b);
  }
  deliver(2, kRing, 1, b);
  deliver(2, kRing, 2, a);
  // Node 2's order is no prefix of the others' either.
  ASSERT_EQ(properties(), (std::set{Property::kTotalOrder, Property::kPrefix}));
  // Ending in one configuration with different sequences, they also break final agreement.
  ASSERT_EQ(finish(), (std::set{Property::kTotalOrder, Property::kPrefix, Property::kAgreement}));
}

TEST_F(CheckerTest, GapsBetweenSeqsAreLegal) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  for (NodeId node : kNodes) {
    deliver(node, kRing, 3, a);  // seqs 1, 2 went to Recovery
    deliver(node, kRing, 7, b);
  }
  EXPECT_TRUE(finish().empty());
}

// Node 3 alone delivers (others delivering a, b, c would break the prefix rule too), each message
// from another sender (FIFO).
TEST_F(CheckerTest, ASeqBelowOneAlreadyDeliveredBreaksTotalOrder) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(2);
  const MessageId c = submit(3);
  deliver(3, kRing, 1, a);
  deliver(3, kRing, 3, c);
  EXPECT_TRUE(checker.ok());
  deliver(3, kRing, 2, b);  // after 3: out of order
  ASSERT_EQ(properties(), std::set{Property::kTotalOrder});
  EXPECT_EQ(checker.violations()[0].message, b);
}

// Each node's deliveries follow its configurations and every (ring, seq) names one message, yet
// nodes went through the rings in opposite orders: only the pairwise comparison of histories sees it.
TEST_F(CheckerTest, RingsTakenInOppositeOrdersBreakTotalOrder) {
  const MessageId a = submit(1);
  const MessageId b = submit(2);
  const MessageId c = submit(3);
  for (NodeId node : {1, 3}) {
    start(node, kRing, kNodes);
    deliver(node, kRing, 1, a);
    move(node, kNextRing, {1, 3}, {2}, kNodes);
    deliver(node, kNextRing, 1, b);
    move(node, kThirdRing, {1, 3}, {2}, kNodes);
  }
  start(2, kNextRing, kNodes);
  deliver(2, kNextRing, 1, b);
  move(2, kRing, {2}, {1, 3}, kNodes);
  deliver(2, kRing, 1, a);
  move(2, kThirdRing, {2}, {1, 3}, kNodes);
  for (NodeId node : kNodes) deliver(node, kThirdRing, 1, c);
  EXPECT_TRUE(checker.ok());
  ASSERT_EQ(finish(), std::set{Property::kTotalOrder});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{1, 2}));
}

TEST_F(CheckerTest, ReturningToARingLeftBreaksTotalOrder) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  const MessageId c = submit(1);
  for (NodeId node : kNodes) {
    deliver(node, kRing, 1, a);
    move(node, kNextRing, kNodes, {}, kNodes);
    deliver(node, kNextRing, 1, b);
  }
  EXPECT_TRUE(checker.ok());
  for (NodeId node : kNodes) deliver(node, kRing, 2, c);
  ASSERT_EQ(finish(), std::set{Property::kTotalOrder});
  EXPECT_TRUE(mentions(checker.violations()[0], "after leaving")) << checker.violations()[0].detail;
}

TEST_F(CheckerTest, ASafeMessageAMemberLacksBreaksSafeDelivery) {
  form(kRing, kNodes);
  const MessageId a = submit(1, Delivery::kSafe);
  for (NodeId node : kNodes) deliver(node, kRing, 1, a, Delivery::kSafe);
  std::vector<std::byte> payload(kSize);
  write_payload(a, payload);
  const std::vector<NodeId> lacking{3};
  checker.check_safe(now, 1, Delivered{kRing, 1, 1, Delivery::kSafe, false, 0, payload, nullptr}, lacking);
  ASSERT_EQ(finish(), std::set{Property::kSafeDelivery});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(checker.violations()[0].message, a);
  EXPECT_EQ(kind_of(Property::kSafeDelivery), Kind::kSafety);
}

// --- Configurations ---

TEST_F(CheckerTest, ADeliveryBeforeAnyConfigurationIsAConfigurationFault) {
  const MessageId a = submit(1);
  deliver(1, kRing, 1, a);
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_EQ(checker.violations()[0].nodes, std::vector<NodeId>{1});
  EXPECT_EQ(kind_of(Property::kConfiguration), Kind::kSafety);
}

TEST_F(CheckerTest, ARegularDeliveryOfAnotherRingIsAConfigurationFault) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  deliver(1, kRing, 1, a);
  deliver(2, kRing, 1, a);
  EXPECT_TRUE(checker.ok());
  deliver(2, kNextRing, 1, b);  // kNextRing: never installed at node 2
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_TRUE(mentions(checker.violations()[0], "while in regular 1/1 {1,2,3}")) << checker.violations()[0].detail;
}

TEST_F(CheckerTest, ARegularDeliveryAfterTheTransitionalConfigurationBeganIsAConfigurationFault) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  deliver(1, kRing, 1, a);
  transitional(1, kNextRing, {1}, {2, 3});
  deliver_transitional(1, kRing, 2, b);  // legal: an old-ring message in the transitional one
  EXPECT_TRUE(checker.ok());
  const MessageId c = submit(1);
  deliver(1, kRing, 3, c);  // regular, though the regular configuration of kRing is over
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

TEST_F(CheckerTest, ATransitionalDeliveryOfTheWrongRingIsAConfigurationFault) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  transitional(1, kNextRing, {1}, {2, 3});
  deliver_transitional(1, kNextRing, 1, a);  // the transitional configuration closes kRing, not kNextRing
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_TRUE(mentions(checker.violations()[0], "transitional delivery of seq 1 of ring 1/2"))
      << checker.violations()[0].detail;
}

TEST_F(CheckerTest, ATransitionalDeliveryInARegularConfigurationIsAConfigurationFault) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver_transitional(1, kRing, 1, a);
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

TEST_F(CheckerTest, AFreshNodesTransitionalConfigurationDeliversNothing) {
  const MessageId a = submit(1);
  transitional(1, kRing, {1}, {});
  EXPECT_TRUE(checker.ok());
  deliver_transitional(1, kRing, 1, a);
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

TEST_F(CheckerTest, NodesReportingDifferentMembersForOneRingIsAConfigurationFault) {
  start(1, kRing, kNodes);
  start(2, kRing, kNodes);
  EXPECT_TRUE(checker.ok());
  start(3, kRing, {1, 3});
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{3, 1}));
  EXPECT_TRUE(mentions(checker.violations()[0], "{1,3}")) << checker.violations()[0].detail;
}

TEST_F(CheckerTest, NodesReportingDifferentTransitionalMembersIsAConfigurationFault) {
  form(kRing, kNodes);
  move(1, kNextRing, {1, 2}, {3}, {1, 2});
  EXPECT_TRUE(checker.ok());
  transitional(2, kNextRing, {2}, {1, 3});  // the same move, seen otherwise
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{2, 1}));
}

TEST_F(CheckerTest, TransitionalMembersFromOutsideTheClosedRingAreAConfigurationFault) {
  form(kRing, {1, 2});
  start(3, RingId{3, 1}, {3});
  EXPECT_TRUE(checker.ok());
  transitional(1, kNextRing, {1, 3}, {2});  // 3 was never on kRing
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

TEST_F(CheckerTest, AWrongLeftSetIsAConfigurationFault) {
  form(kRing, kNodes);
  move(1, kNextRing, {1, 2}, {3}, {1, 2});
  EXPECT_TRUE(checker.ok());
  transitional(2, kNextRing, {1, 2}, {});
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_TRUE(mentions(checker.violations()[0], "says {} left, not {3}")) << checker.violations()[0].detail;
}

TEST_F(CheckerTest, AWrongJoinedSetIsAConfigurationFault) {
  form(kRing, {1, 2});
  start(3, RingId{3, 1}, {3});
  move(1, kNextRing, {1, 2}, {}, kNodes);
  EXPECT_TRUE(checker.ok());
  transitional(2, kNextRing, {1, 2}, {});
  regular(2, kNextRing, kNodes, {2, 3});
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_TRUE(mentions(checker.violations()[0], "says {2,3} joined, not {3}")) << checker.violations()[0].detail;
}

TEST_F(CheckerTest, ARegularConfigurationWithoutItsTransitionalOneIsAConfigurationFault) {
  form(kRing, kNodes);
  regular(1, kNextRing, kNodes, {});
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

TEST_F(CheckerTest, ARegularConfigurationOfAnotherRingThanItsTransitionalOneIsAConfigurationFault) {
  form(kRing, kNodes);
  transitional(1, kNextRing, kNodes, {});
  regular(1, kThirdRing, kNodes, {});
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

TEST_F(CheckerTest, RegularMembersLackingATransitionalMemberAreAConfigurationFault) {
  form(kRing, kNodes);
  transitional(1, kNextRing, {1, 2}, {3});
  regular(1, kNextRing, {1}, {});
  EXPECT_FALSE(checker.ok());
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

TEST_F(CheckerTest, MembersWithoutTheNodeItselfAreAConfigurationFault) {
  transitional(1, kRing, {2}, {});
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_TRUE(mentions(checker.violations()[0], "lack the node itself")) << checker.violations()[0].detail;
}

TEST_F(CheckerTest, InstallingARingLeftAgainIsAConfigurationFault) {
  form(kRing, kNodes);
  for (NodeId node : kNodes) move(node, kNextRing, kNodes, {}, kNodes);
  EXPECT_TRUE(checker.ok());
  move(1, kRing, kNodes, {}, kNodes);
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

// --- Virtual synchrony ---

TEST_F(CheckerTest, NodesMovingTogetherAfterDifferentDeliveriesBreakVirtualSynchrony) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  for (NodeId node : kNodes) deliver(node, kRing, 1, a);
  deliver(1, kRing, 2, b);
  deliver(3, kRing, 2, b);
  checker.record_crash(now, 3);
  move(1, kNextRing, {1, 2}, {3}, {1, 2});
  EXPECT_TRUE(checker.ok());
  move(2, kNextRing, {1, 2}, {3}, {1, 2});  // as node 1 did, without b
  ASSERT_EQ(properties(), std::set{Property::kVirtualSynchrony});
  const Violation& violation = checker.violations()[0];
  EXPECT_EQ(violation.nodes, (std::vector<NodeId>{2, 1}));
  EXPECT_EQ(violation.message, b);
  EXPECT_TRUE(mentions(violation, "from regular 1/1 {1,2,3} to transitional 1/1->1/2 {1,2}")) << violation.detail;
  EXPECT_TRUE(mentions(violation, "node 1 delivered 2 messages, node 2 1")) << violation.detail;
  EXPECT_EQ(kind_of(Property::kVirtualSynchrony), Kind::kSafety);
}

TEST_F(CheckerTest, NodesMovingTogetherAfterTheSameDeliveriesKeepVirtualSynchrony) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  const MessageId c = submit(2);
  for (NodeId node : kNodes) deliver(node, kRing, 1, a);
  for (NodeId node : {1, 2}) {
    transitional(node, kNextRing, {1, 2}, {3});
    deliver_transitional(node, kRing, 3, b);  // seq 2 was 3's, and nobody left holds it
    regular(node, kNextRing, {1, 2}, {});
    deliver(node, kNextRing, 4, c);
  }
  checker.record_crash(now, 3);
  EXPECT_TRUE(checker.quiescent(std::vector<NodeId>{1, 2}));
  EXPECT_TRUE(finish({1, 2}).empty());
}

TEST_F(CheckerTest, DifferentTransitionalDeliveriesBreakVirtualSynchrony) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(2);
  for (NodeId node : {1, 2}) transitional(node, kNextRing, {1, 2}, {3});
  deliver_transitional(1, kRing, 1, a);
  deliver_transitional(1, kRing, 2, b);
  deliver_transitional(2, kRing, 2, b);  // a missing: it cannot be, both held the same by now
  regular(1, kNextRing, {1, 2}, {});
  EXPECT_TRUE(checker.ok());
  regular(2, kNextRing, {1, 2}, {});
  ASSERT_EQ(properties(), std::set{Property::kVirtualSynchrony});
  EXPECT_TRUE(mentions(checker.violations()[0], "delivery 1 is 1#0 at node 1, 2#0 at node 2"))
      << checker.violations()[0].detail;
}

// A partition: 1 goes its way, 2 and 3 theirs. What 1 delivered in kRing that they did not is no
// fault: they did not move to the same configuration.
TEST_F(CheckerTest, NodesMovingToDifferentConfigurationsMayDifferInTheOldOne) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  for (NodeId node : kNodes) deliver(node, kRing, 1, a);
  deliver(1, kRing, 2, b);
  move(1, RingId{1, 2}, {1}, {2, 3}, {1});
  move(2, RingId{2, 2}, {2, 3}, {1}, {2, 3});
  move(3, RingId{2, 2}, {2, 3}, {1}, {2, 3});
  EXPECT_TRUE(checker.ok());
  move(1, kThirdRing, {1}, {}, kNodes);
  move(2, kThirdRing, {2, 3}, {}, kNodes);
  move(3, kThirdRing, {2, 3}, {}, kNodes);
  const MessageId c = submit(3);
  for (NodeId node : kNodes) deliver(node, kThirdRing, 1, c);
  EXPECT_TRUE(checker.quiescent(kNodes));
  EXPECT_TRUE(finish().empty());
}

// --- Crashes and restarts ---

// Node 3 crashes having delivered less than the others (never compared), restarts fresh, and
// rejoins: its new incarnation's submissions count from where the old one's stopped.
TEST_F(CheckerTest, ARestartedNodeRejoinsAndDeliversNewMessages) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  for (NodeId node : kNodes) deliver(node, kRing, 1, a);
  deliver(1, kRing, 2, b);
  deliver(2, kRing, 2, b);
  checker.record_crash(now, 3);
  for (NodeId node : {1, 2}) move(node, kNextRing, {1, 2}, {3}, {1, 2});
  EXPECT_FALSE(checker.quiescent(kNodes));
  start(3, RingId{3, 2}, {3});
  for (NodeId node : {1, 2}) move(node, kThirdRing, {1, 2}, {}, kNodes);
  move(3, kThirdRing, {3}, {}, kNodes);
  const MessageId c = submit(3);
  for (NodeId node : kNodes) deliver(node, kThirdRing, 1, c);
  EXPECT_TRUE(checker.quiescent(kNodes));
  EXPECT_TRUE(finish().empty());
  EXPECT_EQ(checker.configurations(), 18u);
}

TEST_F(CheckerTest, DeliveringAgainAfterARestartIsDuplication) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver_everywhere(1, a);
  checker.record_crash(now, 3);
  start(3, RingId{3, 2}, {3});
  EXPECT_TRUE(checker.ok());
  deliver(3, RingId{3, 2}, 1, a);
  ASSERT_EQ(properties(), std::set{Property::kNoDuplication});
}

// Node 1 restarts without its state and names ring 1/1 again, alone: one ring id, two rings. It
// installs a ring it left (at its crash), with other members than the first time.
TEST_F(CheckerTest, ARingIdReusedAfterARestartIsAConfigurationFault) {
  form(kRing, kNodes);
  checker.record_crash(now, 1);
  for (NodeId node : {2, 3}) move(node, RingId{2, 2}, {2, 3}, {1}, {2, 3});
  start(1, RingId{1, 2}, {1});
  EXPECT_TRUE(checker.ok());
  checker.record_crash(now, 1);
  start(1, kRing, {1});
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
  EXPECT_TRUE(mentions(checker.violations()[0], "again")) << checker.violations()[0].detail;
}

TEST_F(CheckerTest, ADeliveryAfterACrashBeforeTheRestartIsAConfigurationFault) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver(1, kRing, 1, a);
  checker.record_crash(now, 3);
  deliver(3, kRing, 1, a);
  ASSERT_EQ(properties(), std::set{Property::kConfiguration});
}

// Without the crash, node 3 would owe the delivery of a (self-delivery) and the acceptance of its
// second offer (liveness): AnAcceptedMessageNeverDeliveredBreaksSelfDelivery,
// ASubmissionStillRefusedAtTheEndBreaksLiveness.
TEST_F(CheckerTest, ACrashExemptsItsOriginFromSelfDeliveryAndDropsItsRefusedOffers) {
  form(kRing, kNodes);
  const MessageId a = submit(3);                         // accepted, never delivered at 3
  (void)submit(3, Delivery::kAgreed, /*accept=*/false);  // offered, never accepted
  for (NodeId node : {1, 2}) deliver(node, kRing, 1, a);
  EXPECT_FALSE(checker.quiescent(kNodes));
  checker.record_crash(now, 3);
  for (NodeId node : {1, 2}) move(node, kNextRing, {1, 2}, {3}, {1, 2});
  const std::vector<NodeId> live{1, 2};
  EXPECT_TRUE(checker.quiescent(live));
  EXPECT_TRUE(finish(live).empty());
}

// --- The prefix rule and FIFO ---

// Node 2 skips b: its seqs still increase and name the right messages, so only the prefix rule
// sees the hole while the ring runs (virtual synchrony would, once 2 moved on with another node).
// A member that stops early is no fault: NodesMovingToDifferentConfigurationsMayDifferInTheOldOne.
TEST_F(CheckerTest, SkippingWhatAnotherMemberDeliveredInARegularConfigurationBreaksThePrefixRule) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  const MessageId c = submit(1);
  for (NodeId node : {1, 3}) {
    deliver(node, kRing, 1, a);
    deliver(node, kRing, 2, b);
    deliver(node, kRing, 3, c);
  }
  deliver(2, kRing, 1, a);
  EXPECT_TRUE(checker.ok());
  deliver(2, kRing, 3, c);
  ASSERT_EQ(properties(), std::set{Property::kPrefix});
  const Violation& violation = checker.violations()[0];
  EXPECT_EQ(violation.nodes, std::vector<NodeId>{2});
  EXPECT_EQ(violation.message, c);
  EXPECT_TRUE(mentions(violation, "delivery 2 in regular 1/1 {1,2,3} is 1#2, where another member delivered 1#1"))
      << violation.detail;
  EXPECT_EQ(kind_of(Property::kPrefix), Kind::kSafety);
}

TEST_F(CheckerTest, TheMemberWithTheHoleDeliveringFirstBreaksThePrefixRuleToo) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  deliver(2, kRing, 2, b);  // seq 1 skipped
  EXPECT_TRUE(checker.ok());
  deliver(1, kRing, 1, a);
  ASSERT_EQ(properties(), std::set{Property::kPrefix});
  EXPECT_EQ(checker.violations()[0].nodes, std::vector<NodeId>{1});
}

// Every node agrees on the order, and each ring's seqs increase: only FIFO sees that b, sent
// after a, came first (as if a were sent again on the next ring after b went out on this one).
TEST_F(CheckerTest, ASendersMessagesDeliveredOutOfTheirOrderBreakFifo) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  for (NodeId node : kNodes) {
    deliver(node, kRing, 1, b);
    move(node, kNextRing, kNodes, {}, kNodes);
    deliver(node, kNextRing, 1, a);
  }
  ASSERT_EQ(finish(), std::set{Property::kFifo});
  EXPECT_EQ(checker.violation_count(), 3u);  // at each node
  EXPECT_EQ(checker.violations()[0].nodes, std::vector<NodeId>{1});
  EXPECT_EQ(checker.violations()[0].message, a);
  EXPECT_TRUE(mentions(checker.violations()[0], "node 1 delivered 1#0 after 1#1")) << checker.violations()[0].detail;
  EXPECT_EQ(kind_of(Property::kFifo), Kind::kSafety);
}

// --- What a configuration owes its members ---

// Node 1 delivered a as safe in kRing: every member held it, so 2 and 3, cut off from 1, must
// deliver it in kRing or in their transitional configuration. They delivered it in neither.
TEST_F(CheckerTest, ASafeMessageMembersLeftWithoutDeliveringBreaksSafeDelivery) {
  form(kRing, kNodes);
  const MessageId a = submit(1, Delivery::kSafe);
  deliver(1, kRing, 1, a, Delivery::kSafe);
  move(1, RingId{1, 2}, {1}, {2, 3}, {1});
  for (NodeId node : {2, 3}) move(node, RingId{2, 2}, {2, 3}, {1}, {2, 3});
  move(1, kThirdRing, {1}, {}, kNodes);
  for (NodeId node : {2, 3}) move(node, kThirdRing, {2, 3}, {}, kNodes);
  EXPECT_TRUE(checker.ok());
  ASSERT_EQ(finish(), std::set{Property::kSafeDelivery});
  EXPECT_EQ(checker.violation_count(), 2u);  // 2 and 3
  const Violation& violation = checker.violations()[0];
  EXPECT_EQ(violation.nodes, (std::vector<NodeId>{2, 1}));
  EXPECT_EQ(violation.message, a);
  EXPECT_TRUE(mentions(violation, "node 1 delivered it as safe in regular 1/1 {1,2,3}")) << violation.detail;
}

// The same partition, but 2 delivers a in its transitional configuration, and 3 crashed: nothing
// is owed.
TEST_F(CheckerTest, ASafeMessageDeliveredInTheTransitionalConfigurationOrByACrashedMemberIsNoFault) {
  form(kRing, kNodes);
  const MessageId a = submit(1, Delivery::kSafe);
  deliver(1, kRing, 1, a, Delivery::kSafe);
  checker.record_crash(now, 3);
  move(1, RingId{1, 2}, {1}, {2, 3}, {1});
  transitional(2, RingId{2, 2}, {2}, {1, 3});
  deliver(
      2, kRing, 1, a, [](auto&, auto& message) { message.transitional = true; }, Delivery::kSafe);
  regular(2, RingId{2, 2}, {2}, {});
  move(1, kThirdRing, {1}, {}, {1, 2});
  move(2, kThirdRing, {2}, {}, {1, 2});
  EXPECT_TRUE(finish({1, 2}).empty());
}

// Safe in a transitional configuration binds its members too (here virtual synchrony sees it as
// well: they made the same move).
TEST_F(CheckerTest, ASafeMessageDeliveredInATransitionalConfigurationIsOwedToItsMembers) {
  form(kRing, kNodes);
  const MessageId a = submit(1, Delivery::kSafe);
  checker.record_crash(now, 3);
  for (NodeId node : {1, 2}) transitional(node, kNextRing, {1, 2}, {3});
  deliver(
      1, kRing, 1, a, [](auto&, auto& message) { message.transitional = true; }, Delivery::kSafe);
  for (NodeId node : {1, 2}) regular(node, kNextRing, {1, 2}, {});
  ASSERT_EQ(finish({1, 2}), (std::set{Property::kSafeDelivery, Property::kVirtualSynchrony}));
}

// The transitional configuration kRing -> 1/2 lists node 2, but 2 came into ring 1/2 from a ring of
// its own: the two disagree on who went where, though each one's configurations are well formed.
TEST_F(CheckerTest, AMemberListedInATransitionalConfigurationThatCameThroughAnotherBreaksConfiguration) {
  form(kRing, kNodes);
  checker.record_crash(now, 3);
  move(1, RingId{1, 2}, {1, 2}, {3}, {1, 2});
  move(2, RingId{2, 3}, {2}, {1, 3}, {2});
  move(2, RingId{1, 2}, {2}, {}, {1, 2});
  EXPECT_TRUE(checker.ok());
  ASSERT_EQ(finish({1, 2}), std::set{Property::kConfiguration});
  const Violation& violation = checker.violations()[0];
  EXPECT_EQ(violation.nodes, (std::vector<NodeId>{2, 1}));
  EXPECT_TRUE(mentions(violation,
                       "transitional 1/1->1/2 {1,2} (installed by node 1) lists node 2, which came into "
                       "regular 1/2 {1,2} through transitional 2/3->1/2 {2} instead"))
      << violation.detail;
}

// Node 2 was last to learn that ring 1/2's Recovery ended and lost the token for good: it went
// back to Gather from kRing while 1 installed 1/2 listing it. Someone always learns last, so
// that is allowed; 1 sees 2 leave at its next configuration.
TEST_F(CheckerTest, AMemberListedInATransitionalConfigurationMayNeverInstallTheNewRing) {
  form(kRing, kNodes);
  checker.record_crash(now, 3);
  move(1, RingId{1, 2}, {1, 2}, {3}, {1, 2});
  move(2, RingId{2, 2}, {2}, {1, 3}, {2});
  move(1, kThirdRing, {1}, {2}, {1, 2});
  move(2, kThirdRing, {2}, {}, {1, 2});
  EXPECT_TRUE(finish({1, 2}).empty());
}

TEST_F(CheckerTest, AMemberListedInATransitionalConfigurationMayCrashInstead) {
  form(kRing, kNodes);
  checker.record_crash(now, 2);
  checker.record_crash(now, 3);
  move(1, RingId{1, 2}, {1, 2}, {3}, {1, 2});  // 2 crashed in Recovery, after the consensus
  move(1, kThirdRing, {1}, {2}, {1});
  EXPECT_TRUE(finish({1}).empty());
}

// --- Progress while the faults go on ---

TEST_F(CheckerTest, ARingOfAConnectedMajorityThatStopsDeliveringBreaksProgress) {
  checker.record_connectivity(now, kAllConnected);
  form(kRing, kNodes);
  deliver_everywhere(1, submit(1));
  now += kBoundUs + 1;
  deliver_everywhere(2, submit(1));
  EXPECT_TRUE(checker.ok());
  checker.end_connectivity(now);
  ASSERT_EQ(properties(), std::set{Property::kProgress});
  const Violation& violation = checker.violations()[0];
  EXPECT_EQ(violation.nodes, kNodes);
  EXPECT_TRUE(mentions(violation, "from t=1003 us to t=2007 us")) << violation.detail;
  EXPECT_EQ(kind_of(Property::kProgress), Kind::kLiveness);
}

TEST_F(CheckerTest, ARingDeliveringOncePerBoundMakesProgress) {
  checker.record_connectivity(now, kAllConnected);
  form(kRing, kNodes);
  for (Seq seq = 1; seq <= 5; ++seq) {
    deliver_everywhere(seq, submit(1));
    now += kBoundUs - 10;
  }
  checker.end_connectivity(now);
  EXPECT_TRUE(checker.ok());
}

// A partition leaves {1, 2}, a majority: the ring of all three delivers at 1 and 2 no more than
// it can at 3, cut off, and theirs must deliver within the bound of the change.
TEST_F(CheckerTest, AMajorityCutFromItsRingMustDeliverOnARingOfItsOwn) {
  checker.record_connectivity(now, kAllConnected);
  form(kRing, kNodes);
  deliver_everywhere(1, submit(1));
  checker.record_connectivity(now, std::vector<std::uint64_t>{0b011, 0b011, 0b100});
  for (Seq seq = 2; seq <= 4; ++seq) {
    now += kBoundUs / 2;
    const MessageId m = submit(1);
    for (NodeId node : {1, 2}) deliver(node, kRing, seq, m);  // not at 3: not at every member
  }
  checker.end_connectivity(now);
  ASSERT_EQ(properties(), std::set{Property::kProgress});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{1, 2}));
}

TEST_F(CheckerTest, AMajorityOnARingOfItsOwnWithinTheBoundMakesProgress) {
  checker.record_connectivity(now, kAllConnected);
  form(kRing, kNodes);
  checker.record_connectivity(now, std::vector<std::uint64_t>{0b011, 0b011, 0b100});
  now += kBoundUs / 2;
  move(3, RingId{3, 2}, {3}, {1, 2}, {3});
  for (NodeId node : {1, 2}) move(node, kNextRing, {1, 2}, {3}, {1, 2});
  for (Seq seq = 1; seq <= 3; ++seq) {
    const MessageId m = submit(1);
    for (NodeId node : {1, 2}) deliver(node, kNextRing, seq, m);
    now += kBoundUs / 2;
  }
  checker.end_connectivity(now);
  EXPECT_TRUE(checker.ok());
}

// 1 and 2 reach each other one way only: {1, 3} and {2, 3} are the connected majorities. A ring
// of all three holds one, and delivering at every member (the others relay what one misses), it
// serves that majority: progress.
TEST_F(CheckerTest, ARingHoldingAConnectedMajorityThatDeliversEverywhereIsProgress) {
  checker.record_connectivity(now, std::vector<std::uint64_t>{0b101, 0b110, 0b111});
  form(kRing, kNodes);
  for (Seq seq = 1; seq <= 5; ++seq) {
    deliver_everywhere(seq, submit(1));
    now += kBoundUs / 2;
  }
  checker.end_connectivity(now);
  EXPECT_TRUE(checker.ok());
}

// {1, 2} is the connected majority; a ring of 1 and 3, cut off from each other, holds none, and
// counts for nothing however much it delivers.
TEST_F(CheckerTest, ARingHoldingNoConnectedMajorityIsNoProgressHoweverMuchItDelivers) {
  checker.record_connectivity(now, std::vector<std::uint64_t>{0b011, 0b011, 0b100});
  const RingId one_three{1, 3};
  form(one_three, {1, 3});
  start(2, RingId{2, 3}, {2});
  for (Seq seq = 1; seq <= 5; ++seq) {
    const MessageId m = submit(1);
    for (NodeId node : {1, 3}) deliver(node, one_three, seq, m);
    now += kBoundUs / 2;
  }
  checker.end_connectivity(now);
  ASSERT_EQ(properties(), std::set{Property::kProgress});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{1, 2}));
}

// 3 delivered a message just before it was cut off; 1 and 2 deliver it later, as Recovery does
// with the old ring's last messages. The ring of all three holds the connected majority {1, 2},
// but that message is not its progress since the cut: 3 had it before.
TEST_F(CheckerTest, AnOldRingsMessageItsCutOffMemberHadBeforeIsNoProgress) {
  checker.record_connectivity(now, kAllConnected);
  form(kRing, kNodes);
  const MessageId m = submit(1);
  deliver(3, kRing, 1, m);
  checker.record_connectivity(now, std::vector<std::uint64_t>{0b011, 0b011, 0b100});
  now += kBoundUs * 3 / 4;
  for (NodeId node : {1, 2}) deliver(node, kRing, 1, m);
  now += kBoundUs * 3 / 4;
  checker.end_connectivity(now);
  ASSERT_EQ(properties(), std::set{Property::kProgress});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{1, 2}));
}

// The same ring, when what 2 sends stops reaching 1: it delivers nowhere everywhere, so no ring
// holding {1, 3} or {2, 3} makes progress.
TEST_F(CheckerTest, ARingHoldingAConnectedMajorityThatStallsAtOneMemberIsNoProgress) {
  checker.record_connectivity(now, std::vector<std::uint64_t>{0b101, 0b110, 0b111});
  form(kRing, kNodes);
  for (Seq seq = 1; seq <= 5; ++seq) {
    const MessageId m = submit(2);
    for (NodeId node : {2, 3}) deliver(node, kRing, seq, m);
    now += kBoundUs / 2;
  }
  checker.end_connectivity(now);
  ASSERT_EQ(properties(), std::set{Property::kProgress});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{1, 3}));
}

TEST_F(CheckerTest, WithoutAConnectedMajorityNoProgressIsOwed) {
  checker.record_connectivity(now, std::vector<std::uint64_t>{0b001, 0b010, 0b100});
  form(kRing, kNodes);
  now += 10 * kBoundUs;
  checker.end_connectivity(now);
  EXPECT_TRUE(checker.ok());
}

TEST(ProgressBound, IsTheWorstPathToAWorkingRingWithOneRetry) {
  membership::TotemConfig totem;
  totem.token_timeout_ms = 1000;
  totem.fail_recv_ms = 1000;
  const auto resolved = totem.resolved();
  ASSERT_TRUE(resolved);
  EXPECT_EQ(progress_bound_us(*resolved, 0), 3'600'000u);    // 1 + 1.2 + 1 + 0.2 + 4 x 0.05 s
  EXPECT_EQ(progress_bound_us(*resolved, 64), 10'000'000u);  // and 2 joins (0.1 s) a node
}

// --- The end of the run ---

TEST_F(CheckerTest, ANodeMissingAMessageInTheFinalConfigurationBreaksAgreement) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver(1, kRing, 1, a);
  deliver(2, kRing, 1, a);
  EXPECT_FALSE(checker.quiescent(kNodes));
  ASSERT_EQ(finish(), std::set{Property::kAgreement});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{3, 1}));
  EXPECT_EQ(checker.violations()[0].message, a);
  EXPECT_EQ(kind_of(Property::kAgreement), Kind::kLiveness);
}

TEST_F(CheckerTest, AnAcceptedMessageNeverDeliveredBreaksSelfDelivery) {
  form(kRing, kNodes);
  const MessageId a = submit(2);
  const MessageId b = submit(2);
  (void)submit(2);  // never delivered either
  for (NodeId node : kNodes) deliver(node, kRing, 1, a);
  EXPECT_FALSE(checker.quiescent(kNodes));
  ASSERT_EQ(finish(), (std::set{Property::kSelfDelivery, Property::kLiveness}));
  EXPECT_EQ(checker.violation_count(), 2u);  // one of each for origin 2, however many it lacks
  const auto self_delivery = std::find_if(checker.violations().begin(), checker.violations().end(),
                                          [](const Violation& v) { return v.property == Property::kSelfDelivery; });
  ASSERT_NE(self_delivery, checker.violations().end());
  EXPECT_EQ(self_delivery->message, b);
  EXPECT_TRUE(mentions(*self_delivery, "2 messages accepted by node 2")) << self_delivery->detail;
  EXPECT_EQ(kind_of(Property::kSelfDelivery), Kind::kLiveness);
}

TEST_F(CheckerTest, ASubmissionStillRefusedAtTheEndBreaksLiveness) {
  form(kRing, kNodes);
  deliver_everywhere(1, submit(1));
  (void)submit(3, Delivery::kAgreed, /*accept=*/false);
  EXPECT_FALSE(checker.quiescent(kNodes));
  ASSERT_EQ(finish(), std::set{Property::kLiveness});
  EXPECT_EQ(checker.violations()[0].message, (MessageId{3, 0}));
}

TEST_F(CheckerTest, LiveNodesInDifferentRingsAtTheEndBreakLiveness) {
  form(kRing, kNodes);
  move(1, kNextRing, {1}, {2, 3}, {1});
  for (NodeId node : {2, 3}) move(node, RingId{2, 2}, {2, 3}, {1}, {2, 3});
  EXPECT_FALSE(checker.quiescent(kNodes));
  ASSERT_EQ(finish(), std::set{Property::kLiveness});
  const Violation& violation = checker.violations()[0];
  EXPECT_EQ(violation.nodes, kNodes);
  EXPECT_TRUE(mentions(violation, "node 1 in regular 1/2 {1}; node 2 in regular 2/2 {2,3}")) << violation.detail;
}

TEST_F(CheckerTest, ARingStillHoldingACrashedNodeAtTheEndBreaksLiveness) {
  form(kRing, kNodes);
  checker.record_crash(now, 3);
  const std::vector<NodeId> live{1, 2};
  EXPECT_FALSE(checker.quiescent(live));
  ASSERT_EQ(finish(live), std::set{Property::kLiveness});
}

TEST_F(CheckerTest, ANodeStillInItsTransitionalConfigurationIsNotQuiescent) {
  form(kRing, kNodes);
  EXPECT_TRUE(checker.quiescent(kNodes));
  transitional(1, kNextRing, kNodes, {});
  EXPECT_FALSE(checker.quiescent(kNodes));
  ASSERT_EQ(finish(), std::set{Property::kLiveness});
}

TEST_F(CheckerTest, AStallIsALivenessFailure) {
  form(kRing, kNodes);
  checker.record_stall(now, "virtual time stopped");
  ASSERT_EQ(finish(), std::set{Property::kLiveness});
}

TEST_F(CheckerTest, AViolationDescribesItsPropertyNodesMessageAndTime) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver_everywhere(1, a);
  deliver(3, kRing, 1, a);
  (void)finish();
  const std::string text = describe(checker.violations().at(0));
  EXPECT_NE(text.find("safety: no-duplication"), std::string::npos) << text;
  EXPECT_NE(text.find("nodes 3"), std::string::npos) << text;
  EXPECT_NE(text.find("message 1#0"), std::string::npos) << text;
  EXPECT_NE(text.find("t=0.001004 s"), std::string::npos) << text;
}

TEST_F(CheckerTest, OnlyTheFirstViolationsAreKeptButAllAreCounted) {
  form(kRing, kNodes);
  const MessageId a = submit(1);
  deliver_everywhere(1, a);
  for (std::size_t i = 0; i < kViolationsKept + 10; ++i) deliver(1, kRing, 1, a);
  EXPECT_EQ(checker.violation_count(), kViolationsKept + 10);
  EXPECT_EQ(checker.violations().size(), kViolationsKept);
}

}  // namespace
}  // namespace rtotem::sim
