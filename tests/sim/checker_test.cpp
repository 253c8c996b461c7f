// Tests of the history checker on hand-written histories: a clean one passes, and each property
// fails on a history made to break it (so no check is vacuous).
#include "src/sim/history_checker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace rtotem::sim {
namespace {

constexpr RingId kRing{1, 1};
constexpr RingId kNextRing{1, 2};
constexpr std::uint32_t kSize = 40;
const std::vector<NodeId> kNodes{1, 2, 3};

class CheckerTest : public ::testing::Test {
 protected:
  CheckerTest() : checker(kNodes) {}

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
    Delivered message{ring, seq, id.origin, delivery, {}, nullptr};
    mutate(payload, message);
    message.payload = payload;
    ++now;
    checker.record_delivery(now, node, message);
  }
  void deliver(NodeId node, const RingId& ring, Seq seq, MessageId id, Delivery delivery = Delivery::kAgreed) {
    deliver(node, ring, seq, id, [](auto&, auto&) {}, delivery);
  }
  void deliver_everywhere(Seq seq, MessageId id) {
    for (NodeId node : kNodes) deliver(node, kRing, seq, id);
  }

  std::set<Property> finish() {
    checker.finish(++now);
    std::set<Property> seen;
    for (const Violation& v : checker.violations()) seen.insert(v.property);
    return seen;
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

TEST_F(CheckerTest, CleanHistoryHasNoViolation) {
  const MessageId a = submit(1);
  const MessageId b = submit(2, Delivery::kSafe);
  deliver_everywhere(1, a);
  for (NodeId node : kNodes) {
    deliver(node, kRing, 2, b, Delivery::kSafe);
    checker.check_safe(now, node, Delivered{kRing, 2, 2, Delivery::kSafe, {}, nullptr}, {});
  }
  EXPECT_TRUE(checker.quiescent());
  EXPECT_TRUE(finish().empty());
  EXPECT_TRUE(checker.ok());
  EXPECT_EQ(checker.messages_delivered(), 2u);
  EXPECT_EQ(checker.deliveries(), 6u);
}

TEST_F(CheckerTest, AFlippedPayloadByteIsCreation) {
  const MessageId a = submit(1);
  deliver(1, kRing, 1, a);
  deliver(2, kRing, 1, a, [](auto& payload, auto&) { payload[kSize - 1] ^= std::byte{0x40}; });
  deliver(3, kRing, 1, a);
  EXPECT_EQ(finish(), std::set{Property::kNoCreation});
  EXPECT_EQ(checker.violations()[0].nodes, std::vector<NodeId>{2});
  EXPECT_EQ(kind_of(Property::kNoCreation), Kind::kSafety);
}

TEST_F(CheckerTest, AWrongSenderIsCreation) {
  const MessageId a = submit(1);
  deliver(1, kRing, 1, a);
  deliver(2, kRing, 1, a, [](auto&, auto& message) { message.sender = 3; });
  deliver(3, kRing, 1, a);
  EXPECT_EQ(finish(), std::set{Property::kNoCreation});
}

TEST_F(CheckerTest, AWrongDeliveryTypeIsCreation) {
  const MessageId a = submit(1, Delivery::kSafe);
  deliver(1, kRing, 1, a, Delivery::kSafe);
  deliver(2, kRing, 1, a, Delivery::kAgreed);
  deliver(3, kRing, 1, a, Delivery::kSafe);
  EXPECT_EQ(finish(), std::set{Property::kNoCreation});
}

TEST_F(CheckerTest, AMessageNeverSubmittedIsCreation) {
  deliver(2, kRing, 1, MessageId{1, 0});
  EXPECT_EQ(finish(), std::set{Property::kNoCreation});
}

TEST_F(CheckerTest, APayloadTooShortForAStampIsCreation) {
  deliver(2, kRing, 1, MessageId{1, 0}, [](auto& payload, auto&) { payload.resize(kStampSize - 1); });
  EXPECT_EQ(finish(), std::set{Property::kNoCreation});
}

TEST_F(CheckerTest, ARefusedSubmissionDeliveredIsCreation) {
  const MessageId a = submit(1, Delivery::kAgreed, /*accept=*/false);
  deliver_everywhere(1, a);
  // Still refused at the end: the application waits for it, a liveness failure as well.
  EXPECT_EQ(finish(), (std::set{Property::kNoCreation, Property::kLiveness}));
}

TEST_F(CheckerTest, DeliveringTwiceIsDuplication) {
  const MessageId a = submit(1);
  deliver_everywhere(1, a);
  deliver(3, kRing, 1, a);
  EXPECT_EQ(finish(), std::set{Property::kNoDuplication});
  EXPECT_EQ(checker.violations()[0].nodes, std::vector<NodeId>{3});
  EXPECT_EQ(checker.violations()[0].message, a);
}

TEST_F(CheckerTest, TwoNodesGivingOneSeqDifferentMessagesBreakTotalOrder) {
  const MessageId a = submit(1);
  const MessageId b = submit(2);
  for (NodeId node : {1, 3}) {
    deliver(node, kRing, 1, a);
    deliver(node, kRing, 2, b);
  }
  deliver(2, kRing, 1, b);
  deliver(2, kRing, 2, a);
  EXPECT_EQ(finish(), std::set{Property::kTotalOrder});
}

TEST_F(CheckerTest, ASkippedSeqBreaksTotalOrder) {
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  const MessageId c = submit(1);
  for (NodeId node : {1, 2}) {
    deliver(node, kRing, 1, a);
    deliver(node, kRing, 2, b);
    deliver(node, kRing, 3, c);
  }
  deliver(3, kRing, 1, a);
  deliver(3, kRing, 3, c);  // before 2: a gap at that moment
  deliver(3, kRing, 2, b);
  EXPECT_EQ(finish(), std::set{Property::kTotalOrder});
  EXPECT_EQ(checker.violations()[0].message, c);
}

// Each node's history is gap-free and every (ring, seq) names one message, yet two nodes went
// through the rings in opposite orders: only the pairwise comparison of histories sees it.
TEST_F(CheckerTest, RingsTakenInOppositeOrdersBreakTotalOrder) {
  const MessageId a = submit(1);
  const MessageId b = submit(2);
  for (NodeId node : {1, 3}) {
    deliver(node, kRing, 1, a);
    deliver(node, kNextRing, 1, b);
  }
  deliver(2, kNextRing, 1, b);
  deliver(2, kRing, 1, a);
  EXPECT_TRUE(checker.ok());
  EXPECT_EQ(finish(), std::set{Property::kTotalOrder});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{1, 2}));
}

TEST_F(CheckerTest, ReturningToARingLeftBreaksTotalOrder) {
  const MessageId a = submit(1);
  const MessageId b = submit(1);
  const MessageId c = submit(1);
  for (NodeId node : kNodes) {
    deliver(node, kRing, 1, a);
    deliver(node, kNextRing, 1, b);
    deliver(node, kRing, 2, c);
  }
  EXPECT_EQ(finish(), std::set{Property::kTotalOrder});
}

TEST_F(CheckerTest, ASafeMessageAMemberLacksBreaksSafeDelivery) {
  const MessageId a = submit(1, Delivery::kSafe);
  for (NodeId node : kNodes) deliver(node, kRing, 1, a, Delivery::kSafe);
  std::vector<std::byte> payload(kSize);
  write_payload(a, payload);
  const std::vector<NodeId> lacking{3};
  checker.check_safe(now, 1, Delivered{kRing, 1, 1, Delivery::kSafe, payload, nullptr}, lacking);
  EXPECT_EQ(finish(), std::set{Property::kSafeDelivery});
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{1, 3}));
  EXPECT_EQ(checker.violations()[0].message, a);
  EXPECT_EQ(kind_of(Property::kSafeDelivery), Kind::kSafety);
}

TEST_F(CheckerTest, ANodeMissingAMessageBreaksAgreement) {
  const MessageId a = submit(1);
  deliver(1, kRing, 1, a);
  deliver(2, kRing, 1, a);
  EXPECT_FALSE(checker.quiescent());
  EXPECT_EQ(finish(), (std::set{Property::kAgreement, Property::kLiveness}));
  EXPECT_EQ(checker.violations()[0].nodes, std::vector<NodeId>{3});
}

TEST_F(CheckerTest, AnAcceptedMessageNeverDeliveredBreaksSelfDelivery) {
  const MessageId a = submit(2);
  (void)a;
  EXPECT_EQ(finish(), (std::set{Property::kSelfDelivery, Property::kLiveness}));
  EXPECT_EQ(kind_of(Property::kSelfDelivery), Kind::kLiveness);
}

TEST_F(CheckerTest, ASubmissionStillRefusedAtTheEndBreaksLiveness) {
  deliver_everywhere(1, submit(1));
  (void)submit(3, Delivery::kAgreed, /*accept=*/false);
  EXPECT_FALSE(checker.quiescent());
  EXPECT_EQ(finish(), std::set{Property::kLiveness});
  EXPECT_EQ(checker.violations()[0].message, (MessageId{3, 0}));
}

TEST_F(CheckerTest, AStallIsALivenessFailure) {
  checker.record_stall(now, "virtual time stopped");
  EXPECT_EQ(finish(), std::set{Property::kLiveness});
}

TEST_F(CheckerTest, AViolationDescribesItsPropertyNodesMessageAndTime) {
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
  const MessageId a = submit(1);
  deliver_everywhere(1, a);
  for (std::size_t i = 0; i < kViolationsKept + 10; ++i) deliver(1, kRing, 1, a);
  EXPECT_EQ(checker.violation_count(), kViolationsKept + 10);
  EXPECT_EQ(checker.violations().size(), kViolationsKept);
}

}  // namespace
}  // namespace rtotem::sim
