// The votequorum arithmetic for each option of votequorum.5 and their combinations.
#include <gtest/gtest.h>

#include <vector>

#include "src/services/quorum/quorum_decision.hpp"

namespace rtotem::quorum {
namespace {

QuorumConfig config_of(QuorumOptions options, std::vector<NodeVotes> nodelist) {
  Result<QuorumConfig> config = resolve_quorum(options, nodelist);
  RTOTEM_ASSERT(config.ok());
  return std::move(config.value());
}

std::vector<NodeVotes> one_vote_each(NodeId count) {
  std::vector<NodeVotes> list;
  for (NodeId id = 1; id <= count; ++id) list.push_back({id, 1});
  return list;
}

// Members as fresh nodes report themselves: configured votes and expected votes, never quorate.
std::vector<MemberReport> fresh(const QuorumConfig& config, std::vector<NodeId> members) {
  std::vector<MemberReport> reports;
  for (NodeId id : members)
    reports.push_back({.node = id,
                       .votes = config.votes_of(id),
                       .expected_votes = config.expected_votes,
                       .waiting_for_all = config.wait_for_all});
  return reports;
}

// Members that were quorate together in `ring` (seq 10, members `was`), split off into `members`.
std::vector<MemberReport> split_from(const QuorumConfig& config, std::vector<NodeId> was, std::vector<NodeId> members) {
  std::vector<MemberReport> reports = fresh(config, members);
  for (MemberReport& r : reports) {
    r.quorate = true;
    r.waiting_for_all = false;
    r.last_quorate = QuorateRing{RingId{was.front(), 10}, was};
  }
  return reports;
}

TEST(QuorumDecision, AMajorityOfExpectedVotesIsQuorate) {
  const QuorumConfig config = config_of({}, one_vote_each(3));
  const Decision three = decide(config, fresh(config, {1, 2, 3}));
  EXPECT_TRUE(three.quorate);
  EXPECT_EQ(three.total_votes, 3U);
  EXPECT_EQ(three.expected_votes, 3U);
  EXPECT_EQ(three.quorum, 2U);
  EXPECT_TRUE(decide(config, fresh(config, {1, 3})).quorate);
  const Decision one = decide(config, fresh(config, {2}));
  EXPECT_FALSE(one.quorate);
  EXPECT_EQ(one.quorum, 2U);

  const QuorumConfig four = config_of({}, one_vote_each(4));
  EXPECT_FALSE(decide(four, fresh(four, {1, 2})).quorate) << "half is not a majority";
  EXPECT_TRUE(decide(four, fresh(four, {1, 2, 4})).quorate);
}

TEST(QuorumDecision, VotesAreWeighted) {
  const QuorumConfig config = config_of({}, {{1, 3}, {2, 1}, {3, 1}});
  EXPECT_EQ(decide(config, fresh(config, {1})).quorum, 3U);
  EXPECT_TRUE(decide(config, fresh(config, {1})).quorate);
  EXPECT_FALSE(decide(config, fresh(config, {2, 3})).quorate);
}

TEST(QuorumDecision, TheHighestExpectedVotesHeldWinAndVotesPresentRaiseThem) {
  const QuorumConfig config = config_of({.expected_votes = 2}, one_vote_each(5));
  std::vector<MemberReport> reports = fresh(config, {1, 2, 3});
  EXPECT_EQ(decide(config, reports).expected_votes, 3U) << "three votes present raise two";
  reports[1].expected_votes = 5;
  const Decision d = decide(config, reports);
  EXPECT_EQ(d.expected_votes, 5U);
  EXPECT_EQ(d.quorum, 3U);
  EXPECT_TRUE(d.quorate);
}

TEST(QuorumDecision, TwoNodeKeepsTheSurvivorQuorateOnceBothWereSeen) {
  const QuorumConfig config = config_of({.two_node = true}, one_vote_each(2));
  const Decision alone = decide(config, fresh(config, {1}));
  EXPECT_FALSE(alone.quorate) << "wait_for_all: a node started alone waits for its peer";
  EXPECT_TRUE(alone.waiting_for_all);
  EXPECT_TRUE(alone.two_node);
  const Decision both = decide(config, fresh(config, {1, 2}));
  EXPECT_TRUE(both.quorate);
  EXPECT_EQ(both.quorum, 1U);
  const Decision survivor = decide(config, split_from(config, {1, 2}, {2}));
  EXPECT_TRUE(survivor.quorate);
  EXPECT_EQ(survivor.quorum, 1U);

  const QuorumConfig no_wait = config_of({.two_node = true, .wait_for_all = false}, one_vote_each(2));
  EXPECT_TRUE(decide(no_wait, fresh(no_wait, {1})).quorate);
}

TEST(QuorumDecision, TwoNodeSwitchesItselfOffAboveTwoMembers) {
  const QuorumConfig config = config_of({.expected_votes = 2, .two_node = true, .wait_for_all = false}, {});
  const Decision three = decide(config, fresh(config, {1, 2, 3}));
  EXPECT_FALSE(three.two_node);
  EXPECT_EQ(three.quorum, 2U);
  EXPECT_TRUE(three.quorate);

  const QuorumConfig five = config_of({.two_node = true, .wait_for_all = false}, one_vote_each(5));
  const Decision pair = decide(five, fresh(five, {4, 5}));
  EXPECT_FALSE(pair.two_node) << "a pair of five nodes is no two-node cluster";
  EXPECT_FALSE(pair.quorate);
}

TEST(QuorumDecision, WaitForAllHoldsTheFirstQuorumUntilEveryVoteIsSeen) {
  const QuorumConfig config = config_of({.wait_for_all = true}, one_vote_each(3));
  const Decision two = decide(config, fresh(config, {1, 2}));
  EXPECT_FALSE(two.quorate);
  EXPECT_TRUE(two.waiting_for_all);
  EXPECT_TRUE(decide(config, fresh(config, {1, 2, 3})).quorate);
  EXPECT_TRUE(decide(config, split_from(config, {1, 2, 3}, {1, 2})).quorate) << "seen once: a majority will do";

  // A restarted node joins a quorate member: it needs not wait. Inquorate members wait again.
  std::vector<MemberReport> joining = split_from(config, {1, 2, 3}, {1, 2});
  joining[1] = fresh(config, {2})[0];
  EXPECT_TRUE(decide(config, joining).quorate);
  for (MemberReport& r : joining) {
    r.quorate = false;
    r.waiting_for_all = true;
  }
  EXPECT_FALSE(decide(config, joining).quorate);
}

TEST(QuorumDecision, TheTieBreakerKeepsTheHalfWithTheLowestNodeOfTheRingItSplitFrom) {
  const QuorumConfig config = config_of({.auto_tie_breaker = true}, one_vote_each(4));
  const Decision with_lowest = decide(config, split_from(config, {1, 2, 3, 4}, {1, 2}));
  EXPECT_TRUE(with_lowest.quorate);
  EXPECT_TRUE(with_lowest.tie_broken);
  EXPECT_FALSE(decide(config, split_from(config, {1, 2, 3, 4}, {3, 4})).quorate);
  EXPECT_FALSE(decide(config, fresh(config, {1, 2})).quorate) << "no ring split: nothing to break a tie of";
  EXPECT_FALSE(decide(config, split_from(config, {1, 2, 3, 4}, {1})).quorate) << "less than half";

  // Nodes that were apart since (3 and 4 each alone, never quorate) still name the ring they left.
  std::vector<MemberReport> regrouped = split_from(config, {1, 2, 3, 4}, {3, 4});
  EXPECT_FALSE(decide(config, regrouped).quorate);

  const QuorumConfig odd = config_of({.auto_tie_breaker = true}, one_vote_each(5));
  EXPECT_FALSE(decide(odd, split_from(odd, {1, 2, 3, 4, 5}, {1, 2})).quorate) << "an odd count has no tie";
}

TEST(QuorumDecision, TheTieBreakerCanBeTheHighestNode) {
  const QuorumConfig config =
      config_of({.auto_tie_breaker = true, .auto_tie_breaker_node = "highest"}, one_vote_each(4));
  EXPECT_FALSE(decide(config, split_from(config, {1, 2, 3, 4}, {1, 2})).quorate);
  EXPECT_TRUE(decide(config, split_from(config, {1, 2, 3, 4}, {3, 4})).quorate);
}

TEST(QuorumDecision, AListedTieBreakerDecidesOnlyWhenNoNodeListedBeforeItWasInTheRing) {
  const QuorumConfig config = config_of({.auto_tie_breaker = true, .auto_tie_breaker_node = "3 1"}, one_vote_each(4));
  EXPECT_TRUE(decide(config, split_from(config, {1, 2, 3, 4}, {3, 4})).quorate);
  EXPECT_FALSE(decide(config, split_from(config, {1, 2, 3, 4}, {1, 2})).quorate) << "3 may be on the other side";
  // 3 was not in the ring that split (it was down): 1 decides.
  const QuorumConfig six = config_of({.auto_tie_breaker = true, .auto_tie_breaker_node = "3 1"}, one_vote_each(6));
  EXPECT_TRUE(decide(six, split_from(six, {1, 2, 4, 5, 6}, {1, 2, 4})).quorate);
  EXPECT_FALSE(decide(six, split_from(six, {1, 2, 4, 5, 6}, {2, 4, 5})).quorate);
}

TEST(QuorumDecision, TheLatestQuorateRingIsTheOneWithTheHighestSeq) {
  std::vector<MemberReport> reports(3);
  reports[0].last_quorate = QuorateRing{RingId{1, 8}, {1, 2, 3}};
  reports[1].last_quorate = QuorateRing{RingId{2, 12}, {2, 3}};
  EXPECT_EQ(latest_quorate_ring(reports), &reports[1].last_quorate);
  EXPECT_EQ(latest_quorate_ring(std::span(reports).subspan(2)), nullptr);
}

}  // namespace
}  // namespace rtotem::quorum
