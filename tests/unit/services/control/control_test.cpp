// Node control's pure parts: the shutdown vote (corosync cfg's rules), the kill message's wire
// form, and what a reload may change.
#include <gtest/gtest.h>

#include "src/services/control/kill_wire.hpp"
#include "src/services/control/reload_plan.hpp"
#include "src/services/control/shutdown_vote.hpp"

namespace rtotem::control {
namespace {

using ipc::KeyValue;

TEST(ShutdownVote, NoOneAskedStopsAtOnce) {
  const ShutdownVote vote({}, false);
  ASSERT_TRUE(vote.outcome());
  EXPECT_TRUE(vote.outcome()->stop);
}

TEST(ShutdownVote, OneVetoStopsItUnlessRegardless) {
  ShutdownVote vote({1, 2}, false);
  EXPECT_TRUE(vote.answer(1, 100, true));
  EXPECT_FALSE(vote.answer(1, 100, true));  // once
  EXPECT_FALSE(vote.outcome());
  EXPECT_TRUE(vote.answer(2, 200, false));
  ASSERT_TRUE(vote.outcome());
  EXPECT_FALSE(vote.outcome()->stop);
  EXPECT_EQ(vote.outcome()->why, "vetoed by pid 200");

  ShutdownVote regardless({1, 2}, true);
  EXPECT_TRUE(regardless.answer(1, 100, false));
  EXPECT_FALSE(regardless.outcome());  // still asks the other
  regardless.gone(2);
  ASSERT_TRUE(regardless.outcome());
  EXPECT_TRUE(regardless.outcome()->stop);
}

TEST(ShutdownVote, SilenceIsAVetoAndAClientGoneIsNotWaitedFor) {
  ShutdownVote vote({1, 2}, false);
  EXPECT_TRUE(vote.answer(1, 100, true));
  EXPECT_FALSE(vote.timed_out().stop);
  vote.gone(2);
  ASSERT_TRUE(vote.outcome());
  EXPECT_TRUE(vote.outcome()->stop);
  EXPECT_TRUE(ShutdownVote({1}, true).timed_out().stop);
}

TEST(KillWire, ReadsBackAndRefusesAnythingElse) {
  const KillNode kill{3, 1, 4242, "fenced"};
  const std::vector<std::byte> packet = encode_kill(kill);
  const auto back = decode_kill(packet);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target, 3u);
  EXPECT_EQ(back->pid, 4242u);
  EXPECT_EQ(back->reason, "fenced");
  for (std::size_t n = 0; n < packet.size(); ++n) EXPECT_FALSE(decode_kill(std::span(packet).first(n))) << n;
  std::vector<std::byte> longer = packet;
  longer.push_back(std::byte{0});
  EXPECT_FALSE(decode_kill(longer));
  std::vector<std::byte> other = packet;
  other[1] = std::byte{2};  // not a kill
  EXPECT_FALSE(decode_kill(other));
}

KeyList config(std::uint32_t token, const char* debug, std::uint32_t votes1, std::uint32_t votes2) {
  return {{"totem.token", KeyValue::u32(token)},        {"logging.debug", KeyValue::string(debug)},
          {"nodelist.node.0.nodeid", KeyValue::u32(1)}, {"nodelist.node.0.quorum_votes", KeyValue::u32(votes1)},
          {"nodelist.node.1.nodeid", KeyValue::u32(2)}, {"nodelist.node.1.quorum_votes", KeyValue::u32(votes2)}};
}

TEST(ReloadPlan, LoggingAndVotesApplyAndAnythingElseRefusesTheWhole) {
  const ReloadPlan same = plan_reload(config(1000, "off", 1, 1), config(1000, "off", 1, 1), 1);
  EXPECT_TRUE(same.changed.empty());

  const ReloadPlan ok = plan_reload(config(1000, "off", 1, 1), config(1000, "on", 2, 3), 1);
  EXPECT_TRUE(ok.refused.empty());
  EXPECT_TRUE(ok.logging);
  EXPECT_EQ(ok.own_votes, 2u);  // node 2's are node 2's to apply
  EXPECT_EQ(ok.changed.size(), 3u);

  const ReloadPlan refused = plan_reload(config(1000, "off", 1, 1), config(2000, "on", 1, 1), 1);
  EXPECT_EQ(refused.refused, std::vector<std::string>{"totem.token"});

  KeyList with_expected = config(1000, "off", 1, 1);
  with_expected.emplace_back("quorum.expected_votes", KeyValue::u32(5));
  with_expected.emplace_back("uidgid.config.gid.189", KeyValue::u8(1));
  const ReloadPlan expected = plan_reload(config(1000, "off", 1, 1), with_expected, 2);
  EXPECT_TRUE(expected.refused.empty());
  EXPECT_EQ(expected.expected_votes, 5u);
  EXPECT_TRUE(expected.access);
  EXPECT_FALSE(expected.own_votes);
  // expected_votes taken out of the file: what is in force then comes from a restart.
  EXPECT_EQ(plan_reload(with_expected, config(1000, "off", 1, 1), 2).refused,
            std::vector<std::string>{"quorum.expected_votes"});

  KeyList fewer = config(1000, "off", 1, 1);
  fewer.resize(4);  // node 2 gone from the nodelist: a membership change needs a restart
  const ReloadPlan gone = plan_reload(config(1000, "off", 1, 1), fewer, 1);
  EXPECT_EQ(gone.refused.size(), 2u);
}

// A key rtotem only keeps (a Corosync key it does not use, or one nobody knows) takes the file's
// value at a reload; it is never a reason to restart.
TEST(ReloadPlan, KeysRtotemOnlyKeepsChangeWithoutARestart) {
  KeyList before = config(1000, "off", 1, 1);
  before.emplace_back("totem.cluster_uuid", KeyValue::string("a"));
  KeyList after = config(1000, "off", 1, 1);
  after.emplace_back("totem.cluster_uuid", KeyValue::string("b"));
  after.emplace_back("myapp.colour", KeyValue::string("red"));
  const std::set<std::string, std::less<>> kept = {"totem.cluster_uuid", "myapp.colour"};
  const ReloadPlan plan = plan_reload(before, after, 1, kept);
  EXPECT_TRUE(plan.refused.empty());
  EXPECT_EQ(plan.changed, (std::vector<std::string>{"myapp.colour", "totem.cluster_uuid"}));
  EXPECT_FALSE(plan.logging);
  // Not kept: the same change is a key of rtotem's own that it cannot take at run time.
  EXPECT_EQ(plan_reload(before, after, 1).refused, (std::vector<std::string>{"myapp.colour", "totem.cluster_uuid"}));
}

}  // namespace
}  // namespace rtotem::control
