// The merge vote's evidence: who outside the ring was heard lately, and who is backing off.
#include "membership/strangers.hpp"

#include <gtest/gtest.h>

namespace rtotem::membership {
namespace {

NodeList list_of(std::initializer_list<NodeId> ids) {
  NodeList list;
  for (NodeId id : ids) insert(list, id);
  return list;
}

TEST(StrangerLog, AStrangerHeardLatelyIsProposedOncePerPeriodAndGetsVotes) {
  StrangerLog log;
  const NodeList ring = list_of({1, 2});
  log.heard(7, 1000);
  EXPECT_TRUE(log.votes_for(7, 500, ring, 1000));
  EXPECT_FALSE(log.votes_for(7, 1500, ring, 1600));  // not heard since 1500
  EXPECT_FALSE(log.votes_for(8, 0, ring, 1000));     // never heard
  EXPECT_EQ(log.propose(500, 0, ring, 1000), 7u);
  EXPECT_EQ(log.propose(500, 900, ring, 1100), kNoNode);  // proposed after 900
  EXPECT_EQ(log.propose(500, 1000, ring, 1300), 7u);
  log.heard(2, 1300);  // a member is never proposed
  EXPECT_EQ(log.propose(0, 2000, ring, 2000), 7u);
  EXPECT_EQ(log.propose(0, 1999, ring, 2001), kNoNode);  // proposed at 2000, after 1999
}

// A stranger the ring gathered for but that never came (it does not hear us) is not proposed or
// voted for, at any member, for a backoff that doubles; once it comes, it starts afresh.
TEST(StrangerLog, AStrangerThatDidNotComeBacksOffDoublingAndOneThatCameStartsAfresh) {
  StrangerLog log;
  const NodeList ring = list_of({1, 2}), attempted = list_of({1, 2, 7});
  constexpr StrangerLog::Time kBackoff = 100;
  log.heard(7, 0);
  log.installed(attempted, ring, 1000, kBackoff);
  log.heard(7, 1050);
  EXPECT_FALSE(log.votes_for(7, 0, ring, 1099));
  EXPECT_EQ(log.propose(0, 2000, ring, 1099), kNoNode);
  EXPECT_TRUE(log.votes_for(7, 0, ring, 1100));
  log.installed(attempted, ring, 2000, kBackoff);  // again: twice as long
  EXPECT_FALSE(log.votes_for(7, 0, ring, 2199));
  EXPECT_TRUE(log.votes_for(7, 0, ring, 2200));
  for (int i = 0; i < 10; ++i) log.installed(attempted, ring, 3000, kBackoff);
  EXPECT_FALSE(log.votes_for(7, 0, ring, 3000 + 64 * kBackoff - 1));  // at most 64 periods
  EXPECT_TRUE(log.votes_for(7, 0, ring, 3000 + 64 * kBackoff));
  log.installed(attempted, attempted, 4000, kBackoff);   // it came
  log.installed(list_of({1, 2}), ring, 4000, kBackoff);  // not attempted: nothing changes
  EXPECT_TRUE(log.votes_for(7, 0, ring, 4000));
}

// A stranger that says it does not hear one of our members is neither proposed nor voted for by
// a ring holding that member, until it says otherwise, its join lists that member live, or its
// word runs out.
TEST(StrangerLog, AStrangerThatSaysItDoesNotHearAMemberIsNoCandidateUntilItHearsIt) {
  StrangerLog log;
  const NodeList ring = list_of({1, 2}), other = list_of({1, 5});
  log.heard(7, 1000);
  log.says_unheard(7, list_of({2}), 1500);
  EXPECT_FALSE(log.votes_for(7, 0, ring, 1000));
  EXPECT_EQ(log.propose(0, 2000, ring, 1000), kNoNode);
  EXPECT_TRUE(log.votes_for(7, 0, ring, 1500));   // not said again: no longer believed
  EXPECT_TRUE(log.votes_for(7, 0, other, 1000));  // a ring without 2 may take it
  log.says_live(7, list_of({1, 7}));              // a join that still leaves 2 out
  EXPECT_FALSE(log.votes_for(7, 0, ring, 1000));
  log.says_live(7, list_of({1, 2, 7}));  // it hears 2 now
  EXPECT_TRUE(log.votes_for(7, 0, ring, 1000));
  log.says_unheard(7, list_of({2}), 1500);
  log.says_unheard(7, NodeList{}, 1500);  // its next merge detection names nobody
  EXPECT_EQ(log.propose(0, 2000, ring, 1000), 7u);
  log.says_unheard(8, list_of({2}), 1500);  // kept before it is heard (our ring may still be forming)
  log.heard(8, 1000);
  EXPECT_FALSE(log.votes_for(8, 0, ring, 1000));
}

TEST(StrangerLog, AForgottenStrangerIsNoCandidate) {
  const NodeList ring = list_of({1});
  StrangerLog log;
  log.heard(7, 10);
  log.forget(7);
  EXPECT_FALSE(log.votes_for(7, 0, ring, 10));
  EXPECT_EQ(log.propose(0, 100, list_of({1}), 100), kNoNode);
}

}  // namespace
}  // namespace rtotem::membership
