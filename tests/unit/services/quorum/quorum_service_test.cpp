// QuorumService on a hand-driven ring: members decide together once every member reported, may
// only lose quorum before that, and runtime changes act in the ring they were checked in, never
// leaving two sides of a split quorate however the split delivers them.
#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "src/services/quorum/quorum_service.hpp"

namespace rtotem::quorum {
namespace {

using Bytes = std::vector<std::byte>;
using membership::ConfigChange;
using membership::Delivered;

struct Host final : QuorumEvents {
  std::vector<QuorumState> changes;
  void quorum_changed(const QuorumState& state) override { changes.push_back(state); }
};

// A packet a service submitted, and how it asked the ring to order it.
struct Queued {
  NodeId sender = 0;
  Bytes bytes;
  membership::Delivery delivery = membership::Delivery::kAgreed;
  // As ring `id` delivers it, in its regular configuration or its transitional one.
  Delivered in(RingId id, bool transitional = false) const {
    return Delivered{
        .ring_id = id, .sender = sender, .delivery = delivery, .transitional = transitional, .payload = bytes};
  }
};

// Nodes whose services submit into one queue; install() and order() play the ring.
class Ring {
 public:
  Ring(QuorumOptions options, NodeId nodes, std::uint32_t sync_timeout_ms = 0) {
    std::vector<NodeVotes> list;
    for (NodeId id = 1; id <= nodes; ++id) list.push_back({id, 1});
    Result<QuorumConfig> config = resolve_quorum(options, list);
    RTOTEM_ASSERT(config.ok());
    config.value().sync_timeout_ms = sync_timeout_ms;
    for (NodeId id = 1; id <= nodes; ++id) {
      hosts_[id] = std::make_unique<Host>();
      services_[id] = std::make_unique<QuorumService>(
          id, config.value(),
          [this, id](std::span<const std::byte> packet, membership::Delivery delivery) {
            if (refusing_) return Status::kPoolExhausted;
            queue_.push_back(Queued{id, Bytes(packet.begin(), packet.end()), delivery});
            return Status::kOk;
          },
          *hosts_[id]);
    }
  }

  QuorumService& at(NodeId id) { return *services_.at(id); }
  Host& host(NodeId id) { return *hosts_.at(id); }
  const Decision& decision(NodeId id) { return at(id).state().decision; }
  void refuse(bool on) { refusing_ = on; }
  std::size_t queued() const { return queue_.size(); }

  // Installs ring (members.front(), seq) at each member, without ordering anything yet.
  RingId install(std::vector<NodeId> members, membership::Seq seq, Time now = 0) {
    const RingId id{members.front(), seq};
    for (NodeId node : members) {
      const std::vector<NodeId> came = joined(node, members);
      at(node).on_configuration(ConfigChange{.transitional = true, .ring_id = id, .members = members}, now);
      at(node).on_configuration(ConfigChange{.transitional = false, .ring_id = id, .members = members, .joined = came},
                                now);
    }
    return id;
  }
  // Orders what the members submitted (in submission order, the first `most` of it) and delivers
  // it to all of them in ring `id`.
  void order(RingId id, const std::vector<NodeId>& members, std::size_t most = SIZE_MAX) {
    std::vector<Queued> mine;
    std::erase_if(queue_, [&](Queued& entry) {
      if (!std::ranges::binary_search(members, entry.sender) || mine.size() == most) return false;
      mine.push_back(std::move(entry));
      return true;
    });
    for (const Queued& packet : mine) deliver(packet.in(id), members);
  }
  void deliver(const Delivered& message, const std::vector<NodeId>& to) {
    for (NodeId node : to) at(node).on_deliver(message);
  }
  // Takes `sender`'s first queued packet out (to order it later, with put_back).
  Queued take(NodeId sender) {
    const auto it = std::ranges::find(queue_, sender, &Queued::sender);
    RTOTEM_ASSERT(it != queue_.end());
    Queued packet = std::move(*it);
    queue_.erase(it);
    return packet;
  }
  void put_back(Queued packet) { queue_.push_back(std::move(packet)); }
  // `members` leave their ring for ring (members.front(), seq): each delivers its transitional
  // configuration, then `late` (a message of the ring left, if given), then the new regular one.
  RingId split(std::vector<NodeId> members, membership::Seq seq, std::optional<Delivered> late = {}) {
    const RingId id{members.front(), seq};
    for (NodeId node : members) {
      const std::vector<NodeId> came = joined(node, members);
      at(node).on_configuration(ConfigChange{.transitional = true, .ring_id = id, .members = members}, 0);
      if (late) at(node).on_deliver(*late);
      at(node).on_configuration(ConfigChange{.transitional = false, .ring_id = id, .members = members, .joined = came},
                                0);
    }
    return id;
  }
  RingId form(std::vector<NodeId> members, membership::Seq seq, Time now = 0) {
    const RingId id = install(members, seq, now);
    order(id, members);
    return id;
  }

 private:
  // Who of `members` joins `node` in its next ring (EVS: those not of its ring before); from then
  // on `node` is in `members`.
  std::vector<NodeId> joined(NodeId node, const std::vector<NodeId>& members) {
    std::vector<NodeId>& before = rings_[node];
    std::vector<NodeId> came;
    for (NodeId member : members)
      if (member != node && !std::ranges::binary_search(before, member)) came.push_back(member);
    before = members;
    return came;
  }

  std::map<NodeId, std::unique_ptr<Host>> hosts_;
  std::map<NodeId, std::vector<NodeId>> rings_;  // each node's ring, as install() and split() left it
  std::map<NodeId, std::unique_ptr<QuorumService>> services_;
  std::vector<Queued> queue_;
  bool refusing_ = false;
};

TEST(QuorumService, MembersDecideTogetherOnceEveryMemberReported) {
  Ring ring({}, 3);
  const RingId id = ring.install({1, 2, 3}, 4);
  EXPECT_FALSE(ring.at(1).state().synced);
  EXPECT_TRUE(ring.host(1).changes.empty()) << "nothing to tell before the reports";
  ring.order(id, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) {
    ASSERT_EQ(ring.host(node).changes.size(), 1U) << node;
    const QuorumState& state = ring.host(node).changes.back();
    EXPECT_TRUE(state.synced);
    EXPECT_EQ(state.ring_id, id) << "the same ring id as the configuration's";
    EXPECT_EQ(state.members, (std::vector<NodeId>{1, 2, 3}));
    EXPECT_EQ(state.votes, (std::vector<std::uint32_t>{1, 1, 1}));
    EXPECT_TRUE(state.decision.quorate);
    EXPECT_EQ(state.decision.quorum, 2U);
  }
}

TEST(QuorumService, TheMinorityLosesQuorumAtItsConfigurationAndTheMajorityNeverDoes) {
  Ring ring({}, 3);
  ring.form({1, 2, 3}, 4);
  ring.install({1, 2}, 8);
  ring.install({3}, 8);
  EXPECT_FALSE(ring.decision(3).quorate) << "before any report: one vote of three cannot hold quorum";
  ASSERT_EQ(ring.host(3).changes.size(), 2U);
  EXPECT_FALSE(ring.host(3).changes.back().synced);
  EXPECT_TRUE(ring.decision(1).quorate);
  ASSERT_EQ(ring.host(1).changes.size(), 2U) << "only lost a member: tells its quorum at once";
  EXPECT_TRUE(ring.host(1).changes.back().early);
  ring.order(RingId{1, 8}, {1, 2});
  ring.order(RingId{3, 8}, {3});
  EXPECT_TRUE(ring.decision(1).quorate);
  EXPECT_TRUE(ring.decision(2).quorate);
  EXPECT_FALSE(ring.decision(3).quorate);
  for (const QuorumState& state : ring.host(1).changes) EXPECT_TRUE(state.decision.quorate);
}

// What Pacemaker waits for after a node fails: the quorum of the ring left, told at its
// configuration from the votes every member held, then confirmed by their reports.
TEST(QuorumService, ARingThatOnlyLostMembersTellsItsQuorumAtOnceAndTheReportsConfirmIt) {
  Ring ring({}, 5);
  ring.form({1, 2, 3, 4, 5}, 4);
  const RingId left = ring.install({1, 2, 3}, 8);
  for (NodeId node : {1, 2, 3}) {
    ASSERT_EQ(ring.host(node).changes.size(), 2U) << node;
    const QuorumState& early = ring.host(node).changes.back();
    EXPECT_TRUE(early.early);
    EXPECT_FALSE(early.synced);
    EXPECT_EQ(early.ring_id, left);
    EXPECT_EQ(early.members, (std::vector<NodeId>{1, 2, 3}));
    EXPECT_TRUE(early.decision.quorate);
    EXPECT_EQ(early.decision.total_votes, 3U);
    EXPECT_EQ(early.decision.expected_votes, 5U);
    EXPECT_FALSE(ring.at(node).state().synced) << "client multicasts still wait for the reports";
  }
  ring.order(left, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) {
    ASSERT_EQ(ring.host(node).changes.size(), 3U) << node;
    EXPECT_TRUE(ring.host(node).changes.back().synced);
    EXPECT_EQ(ring.host(node).changes.back().decision, ring.host(node).changes[1].decision) << node;
  }
}

// Where a member may hold something else of the ring before, the ring waits for the reports.
TEST(QuorumService, ARingDecidesEarlyOnlyWhereEveryMemberHoldsTheSame) {
  {
    Ring ring({}, 3);
    ring.form({1, 2}, 4);
    ring.install({1, 2, 3}, 8);
    EXPECT_EQ(ring.host(1).changes.size(), 1U) << "3 joined: its report is news";
  }
  {
    Ring ring({}, 3);
    ring.install({1, 2, 3}, 4);
    ring.install({1, 2}, 8);
    EXPECT_TRUE(ring.host(1).changes.empty()) << "the ring before was never in sync";
  }
  {
    Ring ring({}, 3);
    const RingId all = ring.form({1, 2, 3}, 4);
    ASSERT_EQ(ring.at(1).set_expected(3), 0);
    ring.order(all, {1, 2, 3});
    const std::size_t told = ring.host(1).changes.size();
    ring.install({1, 2}, 8);
    EXPECT_EQ(ring.host(1).changes.size(), told) << "a change ordered there: a member may have taken it otherwise";
  }
}

TEST(QuorumService, ARestartedNodeJoinsTheQuorumOfARunningClusterUnderWaitForAll) {
  Ring ring({.wait_for_all = true}, 3);
  ring.form({1, 2}, 4);
  EXPECT_FALSE(ring.decision(1).quorate) << "not all seen yet";
  EXPECT_TRUE(ring.decision(1).waiting_for_all);
  ring.form({1, 2, 3}, 8);
  EXPECT_TRUE(ring.decision(1).quorate);
  ring.form({1, 2}, 12);
  ring.form({3}, 12);
  EXPECT_TRUE(ring.decision(1).quorate) << "seen once: a majority holds";
  EXPECT_FALSE(ring.decision(3).quorate);
  EXPECT_TRUE(ring.at(3).state().decision.waiting_for_all) << "inquorate again: waits for all again";
  ring.form({1, 2, 3}, 16);
  EXPECT_TRUE(ring.decision(3).quorate);
}

TEST(QuorumService, AReportMadeForTheRingBeforeDoesNotCountInTheNextOne) {
  Ring ring({.wait_for_all = true}, 3);
  ring.install({1, 2, 3}, 4);  // their NODEINFOs stay queued in the Nodes, as across a ring change
  const RingId next = ring.install({1, 2, 3}, 8);
  ring.order(next, {1, 2, 3}, 3);
  EXPECT_FALSE(ring.at(1).state().synced) << "reports for ring 4 ordered by ring 8";
  ring.order(next, {1, 2, 3});
  EXPECT_TRUE(ring.at(1).state().synced);
  EXPECT_TRUE(ring.decision(1).quorate);
}

TEST(QuorumService, LastManStandingLowersExpectedVotesOnlyThroughTheRing) {
  Ring ring({.wait_for_all = true, .last_man_standing = true, .last_man_standing_window_ms = 1000}, 5);
  ring.form({1, 2, 3, 4, 5}, 4, 0);
  EXPECT_FALSE(ring.at(1).next_deadline()) << "nobody left";
  const RingId three = ring.form({1, 2, 3}, 8, 5'000'000);
  EXPECT_TRUE(ring.decision(1).quorate);
  ASSERT_TRUE(ring.at(1).next_deadline());
  EXPECT_EQ(*ring.at(1).next_deadline(), 6'000'000U);
  ring.at(1).on_time(5'999'999);
  EXPECT_EQ(ring.queued(), 0U) << "the window has not passed";
  ring.at(1).on_time(6'000'000);
  ring.at(2).on_time(6'000'000);
  EXPECT_EQ(ring.queued(), 2U);
  EXPECT_EQ(ring.decision(3).expected_votes, 5U) << "nothing lowered until it is delivered";
  ring.order(three, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) {
    EXPECT_EQ(ring.decision(node).expected_votes, 3U) << node;
    EXPECT_EQ(ring.decision(node).quorum, 2U) << node;
  }
  ring.form({1, 2}, 12, 7'000'000);
  EXPECT_TRUE(ring.decision(1).quorate) << "two of the lowered three";
  ring.form({1}, 16, 8'000'000);
  EXPECT_FALSE(ring.decision(1).quorate) << "down to one needs the tie breaker";
}

TEST(QuorumService, AWindowThatRanOutInARingNoLongerThereLowersNothing) {
  Ring ring({.last_man_standing = true, .last_man_standing_window_ms = 1000}, 5);
  ring.form({1, 2, 3, 4, 5}, 4, 0);
  const RingId four = ring.form({1, 2, 3, 4}, 8, 0);
  ring.at(1).on_time(1'000'000);
  ring.install({1, 2, 3, 4, 5}, 12, 1'000'000);  // 5 is back before LMS_EXPIRED is ordered
  ring.order(four, {1, 2, 3, 4});
  ring.order(RingId{1, 12}, {1, 2, 3, 4, 5});
  EXPECT_EQ(ring.decision(1).expected_votes, 5U);
}

TEST(QuorumService, LastManStandingWithTheTieBreakerGoesDownToOneNode) {
  Ring ring({.last_man_standing = true, .last_man_standing_window_ms = 1000, .auto_tie_breaker = true}, 4);
  ring.form({1, 2, 3, 4}, 4, 0);
  const RingId two = ring.form({1, 2}, 8, 0);
  EXPECT_TRUE(ring.decision(1).quorate);
  EXPECT_TRUE(ring.decision(1).tie_broken);
  ring.at(1).on_time(1'000'000);
  ring.order(two, {1, 2});
  EXPECT_EQ(ring.decision(1).expected_votes, 2U);
  const RingId one = ring.form({1}, 12, 2'000'000);
  EXPECT_TRUE(ring.decision(1).quorate) << "half of two, with the lowest node";
  ring.at(1).on_time(3'000'000);
  ring.order(one, {1});
  EXPECT_EQ(ring.decision(1).expected_votes, 1U);
  ring.form({2}, 12, 2'000'000);
  EXPECT_FALSE(ring.decision(2).quorate);
}

TEST(QuorumService, RuntimeVotesAndExpectedVotesAreCheckedThenActWhereDelivered) {
  Ring ring({}, 3);
  const RingId id = ring.form({1, 2, 3}, 4);
  EXPECT_EQ(ring.at(1).set_votes(9, 1), -ENOENT);
  EXPECT_EQ(ring.at(1).set_votes(2, 0), 0) << "2 of 2 votes still a quorum";
  EXPECT_EQ(ring.at(1).set_expected(2), -EINVAL) << "below the votes present";
  EXPECT_EQ(ring.at(1).set_expected(0), -EINVAL);
  EXPECT_EQ(ring.at(1).set_expected(7), -EINVAL) << "quorum 4 of 3 present: would end quorum";
  EXPECT_EQ(ring.at(1).set_expected(5), 0);
  EXPECT_EQ(ring.decision(2).expected_votes, 3U) << "not before it is delivered";
  ring.order(id, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) {
    EXPECT_EQ(ring.at(node).state().votes, (std::vector<std::uint32_t>{1, 0, 1})) << node;
    EXPECT_EQ(ring.decision(node).total_votes, 2U);
    EXPECT_EQ(ring.decision(node).expected_votes, 5U);
    EXPECT_FALSE(ring.decision(node).quorate) << "quorum 3 of 2 votes";
  }
  ring.form({1, 2, 3}, 8);
  EXPECT_EQ(ring.at(1).state().votes, (std::vector<std::uint32_t>{1, 0, 1})) << "node 2 reports what it was set to";
  ring.install({1, 2, 3}, 12);
  EXPECT_EQ(ring.at(1).set_votes(1, 2), -EAGAIN) << "checked against reports not yet in";
  EXPECT_EQ(ring.at(1).set_expected(6), -EAGAIN);
}

// votequorum raises expected votes to the votes present: with node 6 away, node 4's raise to 3
// would leave 7 expected of 8 votes in all, and {4,6} and {1,2,3,5} quorate at once (4 of 7 each).
TEST(QuorumService, VotesAddedRaiseTheExpectedVotesByAsMany) {
  Ring ring({}, 6);
  const RingId five = ring.form({1, 2, 3, 4, 5}, 4);
  ASSERT_EQ(ring.at(1).set_votes(4, 3), 0);
  ring.order(five, {1, 2, 3, 4, 5});
  EXPECT_EQ(ring.decision(1).total_votes, 7U);
  EXPECT_EQ(ring.decision(1).expected_votes, 8U);
  EXPECT_TRUE(ring.decision(1).quorate);
  ring.form({4, 6}, 8);
  ring.form({1, 2, 3, 5}, 8);
  EXPECT_FALSE(ring.decision(4).quorate && ring.decision(1).quorate);
}

// Issue 48, bug 2: EVS may deliver a message of the old ring on one side of a split only, in the
// transitional configuration. Node 4's raise to 3 votes (total 7, quorum 4) reaches only 4 and 5
// as {1,2,3} | {4,5} splits: whatever each side makes of it, at most one side is quorate.
TEST(QuorumService, AVoteChangeDeliveredOnOneSideOfASplitLeavesAtMostOneSideQuorate) {
  Ring ring({}, 5);
  const RingId five = ring.form({1, 2, 3, 4, 5}, 4);
  ASSERT_TRUE(ring.decision(1).quorate);
  ASSERT_EQ(ring.at(4).set_votes(4, 3), 0);
  const Queued set_votes = ring.take(4);
  const RingId minority = ring.split({1, 2, 3}, 8);
  const RingId pair = ring.split({4, 5}, 8, set_votes.in(five, true));
  ring.order(minority, {1, 2, 3});
  ring.order(pair, {4, 5});
  for (NodeId node : {1, 2, 3, 4, 5}) EXPECT_TRUE(ring.at(node).state().synced) << node;
  const bool three_quorate = ring.decision(1).quorate;
  const bool two_quorate = ring.decision(4).quorate;
  EXPECT_FALSE(three_quorate && two_quorate)
      << "{1,2,3}: " << ring.decision(1).total_votes << " votes, quorum " << ring.decision(1).quorum
      << "; {4,5}: " << ring.decision(4).total_votes << " votes, quorum " << ring.decision(4).quorum;
  // Not delivered safe in the ring of five: the raise counts nowhere, its expected votes count
  // where it was seen.
  EXPECT_TRUE(three_quorate);
  for (NodeId node : {4, 5}) {
    EXPECT_EQ(ring.at(node).state().votes, (std::vector<std::uint32_t>{1, 1})) << node;
    EXPECT_EQ(ring.decision(node).expected_votes, 7U) << node;
    EXPECT_EQ(ring.at(node).changes_dropped(), 1U) << node;
  }
}

// The same raise, delivered safe in the ring of five at 4 and 5 before the split cuts them off:
// every member holds it then, and {1,2,3} deliver it in their transitional configuration.
TEST(QuorumService, ARaiseDeliveredSafeOnOneSideRaisesTheExpectedVotesOfTheOther) {
  Ring ring({}, 5);
  const RingId five = ring.form({1, 2, 3, 4, 5}, 4);
  ASSERT_EQ(ring.at(4).set_votes(4, 3), 0);
  const Queued set_votes = ring.take(4);
  ASSERT_EQ(set_votes.delivery, membership::Delivery::kSafe);
  ring.deliver(set_votes.in(five), {4, 5});
  for (NodeId node : {4, 5}) {
    EXPECT_EQ(ring.decision(node).total_votes, 7U) << node;
    EXPECT_EQ(ring.decision(node).quorum, 4U) << node;
  }
  const RingId minority = ring.split({1, 2, 3}, 8, set_votes.in(five, true));
  const RingId pair = ring.split({4, 5}, 8);
  ring.order(minority, {1, 2, 3});
  ring.order(pair, {4, 5});
  EXPECT_TRUE(ring.decision(4).quorate) << "4 votes of 7";
  EXPECT_EQ(ring.decision(1).expected_votes, 7U);
  EXPECT_FALSE(ring.decision(1).quorate) << "3 votes of 7";
  for (NodeId node : {1, 2, 3}) EXPECT_EQ(ring.at(node).changes_dropped(), 1U) << node;
}

// What a peer could send that rtotemd does not: a raise in agreed order counts nowhere, since a
// member need not hold it where another delivers it.
TEST(QuorumService, ARaiseNotDeliveredSafeDoesNotCount) {
  Ring ring({}, 3);
  const RingId id = ring.form({1, 2, 3}, 4);
  ASSERT_EQ(ring.at(1).set_votes(1, 2), 0);
  Queued set_votes = ring.take(1);
  set_votes.delivery = membership::Delivery::kAgreed;
  ring.deliver(set_votes.in(id), {1, 2, 3});
  EXPECT_EQ(ring.decision(2).total_votes, 3U);
  EXPECT_EQ(ring.at(2).changes_dropped(), 1U);
}

// A change stands for the state it was checked against: made in one ring and ordered by the next
// (the Node keeps what it queued across a ring change), or overtaken by another raise in its
// ring, it is dropped at every member alike.
TEST(QuorumService, AChangeActsOnlyOnTheStateItWasCheckedAgainst) {
  Ring ring({}, 5);
  ring.form({1, 2, 3, 4, 5}, 4);
  ASSERT_EQ(ring.at(1).set_votes(1, 3), 0);
  ASSERT_EQ(ring.at(2).set_expected(6), 0);
  const RingId next = ring.install({1, 2, 3, 4, 5}, 8);
  ring.order(next, {1, 2, 3, 4, 5});
  for (NodeId node : {1, 2, 3, 4, 5}) {
    EXPECT_EQ(ring.decision(node).total_votes, 5U) << node;
    EXPECT_EQ(ring.decision(node).expected_votes, 5U) << node;
    EXPECT_EQ(ring.at(node).changes_dropped(), 2U) << node;
  }
  ASSERT_EQ(ring.at(1).set_votes(2, 2), 0);  // each checked with 5 expected: 6 once it acts
  ASSERT_EQ(ring.at(3).set_votes(4, 2), 0);
  ring.order(next, {1, 2, 3, 4, 5});
  for (NodeId node : {1, 2, 3, 4, 5}) {
    EXPECT_EQ(ring.at(node).state().votes, (std::vector<std::uint32_t>{1, 2, 1, 1, 1})) << node;
    EXPECT_EQ(ring.decision(node).expected_votes, 6U) << node;
    EXPECT_EQ(ring.at(node).changes_dropped(), 3U) << "the second raise would need 7 expected";
  }
}

// In a transitional configuration the ring's decisions are over: expected votes may only rise
// there (and count in the next ring), a lowering is dropped.
TEST(QuorumService, InATransitionalConfigurationExpectedVotesOnlyRise) {
  Ring ring({}, 3);
  const RingId id = ring.form({1, 2, 3}, 4);
  ASSERT_EQ(ring.at(1).set_expected(5), 0);
  const Queued raise = ring.take(1);
  ring.split({1, 2, 3}, 8, raise.in(id, true));
  EXPECT_EQ(ring.host(1).changes.size(), 1U) << "no decision but ring 4's first";
  ring.order(RingId{1, 8}, {1, 2, 3});
  EXPECT_EQ(ring.decision(1).expected_votes, 5U) << "reported in the next ring";
  ASSERT_EQ(ring.at(1).set_expected(3), 0);
  const Queued lower = ring.take(1);
  ring.split({1, 2, 3}, 12, lower.in(RingId{1, 8}, true));
  ring.order(RingId{1, 12}, {1, 2, 3});
  EXPECT_EQ(ring.decision(1).expected_votes, 5U);
  EXPECT_EQ(ring.at(1).changes_dropped(), 1U);
}

// votequorum_getinfo's view: members with the votes and expected votes they reported; nodelist
// nodes out of the ring as not members; a node nobody knows is not there.
TEST(QuorumService, ANodesViewIsWhatItReportedOrWhatTheNodelistSays) {
  Ring ring({}, 3);
  const RingId id = ring.form({1, 2, 3}, 4);
  ASSERT_EQ(ring.at(2).set_expected(4), 0);
  ring.order(id, {1, 2, 3});
  ring.form({1, 2}, 8);
  for (NodeId viewer : {1, 2}) {
    const auto two = ring.at(viewer).node(2);
    ASSERT_TRUE(two.has_value());
    EXPECT_TRUE(two->member);
    EXPECT_EQ(two->votes, 1U);
    EXPECT_EQ(two->expected_votes, 4U) << "as node 2 reported it in ring 8";
    const auto three = ring.at(viewer).node(3);
    ASSERT_TRUE(three.has_value()) << "in the nodelist";
    EXPECT_FALSE(three->member);
    EXPECT_EQ(three->votes, 1U);
  }
  EXPECT_FALSE(ring.at(1).node(9).has_value());
}

TEST(QuorumService, PacketsTheRingRefusesAreSentAgainAndBadOnesAreCounted) {
  Ring ring({}, 2);
  ring.refuse(true);
  const RingId id = ring.install({1, 2}, 4);
  EXPECT_EQ(ring.queued(), 0U);
  EXPECT_EQ(ring.at(1).submit_refusals(), 1U);
  ring.refuse(false);
  ring.at(1).retry_pending();
  ring.at(2).retry_pending();
  ring.order(id, {1, 2});
  EXPECT_TRUE(ring.decision(1).quorate);
  const Bytes bad{std::byte{2}, std::byte{99}};
  ring.at(1).on_deliver(Delivered{.ring_id = id, .sender = 2, .payload = bad});
  EXPECT_EQ(ring.at(1).packets_malformed(), 1U);
  EXPECT_TRUE(ring.decision(1).quorate);
}

// A member that never reports (its config lacks quorum { }) would keep the ring out of sync for
// ever: after the sync timeout the first SYNC_EXPIRED delivered decides at every member alike,
// without its votes, and a report that comes after counts from then on.
TEST(QuorumService, AMemberSilentPastTheSyncTimeoutIsCountedWithoutVotes) {
  Ring ring({}, 3, 1000);
  const RingId id = ring.install({1, 2, 3}, 4, 0);
  Queued late = ring.take(3);
  ring.order(id, {1, 2, 3});
  EXPECT_FALSE(ring.at(1).state().synced);
  ASSERT_EQ(ring.at(1).next_deadline(), Time{1'000'000});
  ring.at(2).on_time(999'999);
  EXPECT_EQ(ring.queued(), 0U) << "not before the deadline";
  ring.at(1).on_time(1'000'000);
  ring.at(2).on_time(1'000'000);
  EXPECT_EQ(ring.queued(), 2U);
  ring.order(id, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) {
    const QuorumState& state = ring.at(node).state();
    EXPECT_TRUE(state.synced) << node;
    EXPECT_EQ(state.silent, std::vector<NodeId>{3}) << node;
    EXPECT_EQ(state.votes, (std::vector<std::uint32_t>{1, 1, 0})) << node;
    EXPECT_TRUE(state.decision.quorate) << "2 votes of 3 expected";
    EXPECT_EQ(ring.host(node).changes.size(), 1U) << "the second SYNC_EXPIRED changes nothing";
  }
  ring.put_back(std::move(late));
  ring.order(id, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) {
    EXPECT_TRUE(ring.at(node).state().silent.empty());
    EXPECT_EQ(ring.at(node).state().decision.total_votes, 3U);
  }
  EXPECT_FALSE(ring.at(1).next_deadline());
}

// Expected votes go down only by a change or by last_man_standing: a report that comes after the
// sync timeout counts with the expected votes it holds if they are above those a change set since,
// and the silent node itself keeps them meanwhile.
TEST(QuorumService, ALateReportKeepsTheExpectedVotesItHolds) {
  Ring ring({}, 3, 1000);
  ring.form({1, 2, 3}, 4, 0);
  const RingId alone = ring.form({3}, 8, 0);
  ASSERT_EQ(ring.at(3).set_expected(5), 0) << "alone and inquorate: any expected votes from its one";
  ring.order(alone, {3});
  ASSERT_EQ(ring.decision(3).expected_votes, 5U);
  const RingId id = ring.install({1, 2, 3}, 12, 0);
  Queued late = ring.take(3);
  ring.order(id, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) ring.at(node).on_time(1'000'000);
  ring.order(id, {1, 2, 3});
  ASSERT_EQ(ring.at(1).state().silent, std::vector<NodeId>{3});
  EXPECT_EQ(ring.at(3).node(3)->expected_votes, 5U) << "decided without its report, node 3 keeps its own";
  ASSERT_EQ(ring.at(1).set_votes(1, 2), 0);  // node 3 silent: as many expected votes more, 4
  ring.order(id, {1, 2, 3});
  EXPECT_EQ(ring.decision(2).expected_votes, 4U);
  ring.put_back(std::move(late));
  ring.order(id, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) {
    EXPECT_EQ(ring.decision(node).expected_votes, 5U) << node;
    EXPECT_EQ(ring.decision(node).total_votes, 4U) << node;
  }
}

TEST(QuorumService, TheSyncTimeoutIsDisarmedOnceAllReport) {
  Ring ring({}, 2, 1000);
  ring.form({1, 2}, 4, 0);
  EXPECT_FALSE(ring.at(1).next_deadline());
  ring.at(1).on_time(5'000'000);
  EXPECT_EQ(ring.queued(), 0U);
}

// Two nodes and a quorum device of one vote (corosync-qdevice with qnetd): the device's vote is
// for one ring, so after a cut neither side holds it until qnetd gives it to one of them.
TEST(QuorumService, AQuorumDeviceVotesForOneRingAndACutSideHoldsItOnlyOnceItVotesThere) {
  QuorumOptions options;
  options.device_model = "net";
  options.device_votes = 1;
  options.device_timeout_ms = 4000;
  options.device_sync_timeout_ms = 9000;
  Ring ring(options, 2);
  const RingId whole = ring.form({1, 2}, 4);
  for (NodeId node : {1, 2}) {
    EXPECT_EQ(ring.decision(node).expected_votes, 3U) << "the nodes' two and the device's one";
    EXPECT_EQ(ring.at(node).device_register("Qdevice"), 0);
    EXPECT_EQ(ring.at(node).device_register("Qdevice"), 0) << "again, the same name";
    EXPECT_EQ(ring.at(node).device_poll("Qdevice", true, whole, 0), 0);
  }
  ring.order(whole, {1, 2});
  for (NodeId node : {1, 2}) {
    EXPECT_EQ(ring.decision(node).total_votes, 3U) << node;
    EXPECT_TRUE(ring.decision(node).device_vote);
    const auto view = ring.at(node).node(3 - node);
    EXPECT_EQ(view->device, (DeviceFlags{.registered = true, .alive = true, .cast_vote = true}));
  }

  const RingId one = ring.install({1}, 8);
  const RingId two = ring.install({2}, 8);
  for (NodeId node : {1, 2}) EXPECT_FALSE(ring.decision(node).quorate) << "the device voted for the ring before";
  ring.order(one, {1});
  ring.order(two, {2});
  EXPECT_EQ(ring.at(1).device_poll("Qdevice", true, whole, 10), -ESTALE) << "a poll for the ring before";
  EXPECT_FALSE(ring.at(1).node(1)->device.cast_vote);
  EXPECT_TRUE(ring.at(1).node(1)->device.alive);
  EXPECT_EQ(ring.at(1).device_poll("Qdevice", true, one, 10), 0);
  EXPECT_EQ(ring.at(2).device_poll("Qdevice", false, two, 10), 0);
  ring.order(one, {1});
  ring.order(two, {2});
  EXPECT_TRUE(ring.decision(1).quorate);
  EXPECT_EQ(ring.decision(1).total_votes, 2U);
  EXPECT_FALSE(ring.decision(2).quorate) << "qnetd gave its vote to one side only";
  EXPECT_EQ(ring.at(2).node(2)->device, (DeviceFlags{.registered = true, .alive = true}));

  // A device that stops polling loses its vote once its timeout passes.
  EXPECT_EQ(ring.at(1).next_deadline(), Time{10 + 4'000'000});
  ring.at(1).on_time(10 + 4'000'000);
  ring.order(one, {1});
  EXPECT_FALSE(ring.decision(1).quorate);
  EXPECT_EQ(ring.at(1).node(1)->device, (DeviceFlags{.registered = true}));
}

TEST(QuorumService, TheDeviceCallsAnswerAsVotequorumsDo) {
  Ring plain({}, 2);
  EXPECT_EQ(plain.at(1).device_register("Qdevice"), -EACCES) << "no quorum.device configured";
  QuorumOptions options;
  options.device_model = "net";
  options.device_votes = 1;
  Ring ring(options, 3);
  const RingId id = ring.form({1, 2, 3}, 4);
  QuorumService& q = ring.at(1);
  EXPECT_EQ(q.device_poll("Qdevice", true, id, 0), -ENOENT) << "none registered";
  EXPECT_EQ(q.device_register("Qdevice"), 0);
  EXPECT_EQ(q.device_register("Other"), -EEXIST);
  EXPECT_EQ(q.device_poll("Other", true, id, 0), -EINVAL);
  EXPECT_EQ(q.device_update("Qdevice", "Renamed"), 0);
  EXPECT_EQ(q.device_name(), "Renamed");
  EXPECT_EQ(q.device_master_wins("Renamed", true), 0);
  EXPECT_EQ(q.device_poll("Renamed", true, id, 0), 0);
  ring.order(id, {1, 2, 3});
  for (NodeId node : {1, 2, 3}) {
    EXPECT_EQ(ring.decision(node).total_votes, 4U);
    EXPECT_EQ(ring.at(node).node(1)->device.master_wins, true);
  }
  // master_wins: the side with the device's vote is quorate, whatever its votes (two of four here).
  const RingId alone = ring.install({1}, 8);
  ring.install({2, 3}, 8);
  ring.order(alone, {1});
  EXPECT_EQ(q.device_poll("Renamed", true, alone, 0), 0);
  ring.order(alone, {1});
  EXPECT_TRUE(ring.decision(1).quorate);
  EXPECT_TRUE(ring.decision(1).master_wins);
  // A ring's first reports carry the devices' flags: node 2 sees node 1's, all but the vote.
  const RingId again = ring.form({1, 2, 3}, 12);
  EXPECT_EQ(ring.at(2).node(1)->device, (DeviceFlags{.registered = true, .alive = true, .master_wins = true}));
  EXPECT_FALSE(ring.decision(2).device_vote) << "no vote for ring 12 yet";
  EXPECT_EQ(q.device_poll("Renamed", true, again, 0), 0);
  ring.order(again, {1, 2, 3});
  EXPECT_TRUE(ring.decision(3).device_vote);
  EXPECT_EQ(q.device_unregister("Qdevice"), -EINVAL);
  EXPECT_EQ(q.device_unregister("Renamed"), 0);
  ring.order(again, {1, 2, 3});
  EXPECT_FALSE(ring.decision(2).device_vote);
  EXPECT_EQ(ring.at(3).node(1)->device, DeviceFlags{});
  EXPECT_EQ(q.node(1)->device, DeviceFlags{});
}

}  // namespace
}  // namespace rtotem::quorum
