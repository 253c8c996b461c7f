// quorum { } as corosync.conf writes it: defaults, what resolves, and what votequorum.5 forbids.
#include <gtest/gtest.h>

#include <vector>

#include "src/services/quorum/quorum_config.hpp"

namespace rtotem::quorum {
namespace {

std::vector<NodeVotes> nodes(std::initializer_list<NodeVotes> list) { return list; }

TEST(QuorumConfig, ExpectedVotesAreTheNodelistsSumUnlessGiven) {
  const auto list = nodes({{1, 1}, {2, 2}, {3, 1}});
  Result<QuorumConfig> config = resolve_quorum({}, list);
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_EQ(config->expected_votes, 4U);
  EXPECT_EQ(config->votes_of(2), 2U);
  EXPECT_EQ(config->votes_of(9), 1U);
  EXPECT_FALSE(config->wait_for_all);

  Result<QuorumConfig> given = resolve_quorum({.expected_votes = 8}, list);
  ASSERT_TRUE(given);
  EXPECT_EQ(given->expected_votes, 8U);
}

TEST(QuorumConfig, WithoutExpectedVotesOrANodelistThereIsNothingToCount) {
  Result<QuorumConfig> config = resolve_quorum({}, {});
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message().find("expected_votes or a nodelist"), std::string::npos);
  EXPECT_TRUE(resolve_quorum({.expected_votes = 3}, {}));
  EXPECT_FALSE(resolve_quorum({.expected_votes = 0}, {}));
}

TEST(QuorumConfig, TwoNodeImpliesWaitForAllUnlessItIsTurnedOff) {
  const auto list = nodes({{1, 1}, {2, 1}});
  EXPECT_TRUE(resolve_quorum({.two_node = true}, list)->wait_for_all);
  EXPECT_FALSE(resolve_quorum({.two_node = true, .wait_for_all = false}, list)->wait_for_all);
  EXPECT_TRUE(resolve_quorum({.wait_for_all = true}, list)->wait_for_all);
}

TEST(QuorumConfig, TwoNodeAndTheTieBreakerAreRefusedTogether) {
  Result<QuorumConfig> config = resolve_quorum({.two_node = true, .auto_tie_breaker = true}, nodes({{1, 1}, {2, 1}}));
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message().find("two_node and quorum.auto_tie_breaker"), std::string::npos);
}

TEST(QuorumConfig, LastManStandingNeedsOneVoteAtEveryNodeAndAWindow) {
  Result<QuorumConfig> config = resolve_quorum({.last_man_standing = true}, nodes({{1, 1}, {2, 3}, {3, 1}}));
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message().find("node 2 has quorum_votes 3"), std::string::npos);
  EXPECT_FALSE(resolve_quorum({.last_man_standing = true, .last_man_standing_window_ms = 0}, nodes({{1, 1}})));
  Result<QuorumConfig> ok = resolve_quorum({.last_man_standing = true, .last_man_standing_window_ms = 20000},
                                           nodes({{1, 1}, {2, 1}, {3, 1}}));
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->last_man_standing);
  EXPECT_EQ(ok->last_man_standing_window_ms, 20000U);
}

TEST(QuorumConfig, TheTieBreakerIsLowestHighestOrAListOfNodelistNodes) {
  const auto list = nodes({{1, 1}, {3, 1}, {5, 1}, {7, 1}});
  EXPECT_EQ(resolve_quorum({.auto_tie_breaker = true}, list)->tie_breaker, TieBreaker::kLowest);
  EXPECT_EQ(resolve_quorum({.auto_tie_breaker = true, .auto_tie_breaker_node = "highest"}, list)->tie_breaker,
            TieBreaker::kHighest);
  Result<QuorumConfig> listed = resolve_quorum({.auto_tie_breaker = true, .auto_tie_breaker_node = " 5 1  3"}, list);
  ASSERT_TRUE(listed) << listed.error().message();
  EXPECT_EQ(listed->tie_breaker, TieBreaker::kList);
  EXPECT_EQ(listed->tie_breaker_nodes, (std::vector<NodeId>{5, 1, 3}));
  EXPECT_EQ(resolve_quorum({.auto_tie_breaker_node = "5"}, list)->tie_breaker, TieBreaker::kNone);

  for (const char* bad : {"first", "1 x", "2", "1 1", " ", "0"}) {
    Result<QuorumConfig> config = resolve_quorum({.auto_tie_breaker = true, .auto_tie_breaker_node = bad}, list);
    ASSERT_FALSE(config) << bad;
    EXPECT_NE(config.error().message().find("auto_tie_breaker_node"), std::string::npos) << bad;
  }
}

TEST(QuorumConfig, VotesOutOfRangeAreRefused) {
  EXPECT_FALSE(resolve_quorum({}, nodes({{1, 2'000'000}})));
  EXPECT_FALSE(resolve_quorum({.expected_votes = 2'000'000}, nodes({{1, 1}})));
}

}  // namespace
}  // namespace rtotem::quorum
