// Node control's pure parts: the shutdown vote (corosync cfg's rules), the kill message's wire
// form, and what a reload may change.
#include <gtest/gtest.h>

#include "src/services/control/kill_wire.hpp"
#include "src/services/control/reload_round.hpp"
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

TEST(ReloadWire, EachMessageReadsBackAndAnythingElseIsRefused) {
  const ReloadId id{2, 7};
  const std::vector<ReloadMessage> messages = {
      ReloadStart{id}, ReloadReportMessage{id, {3, -ENOTSUP, "totem.netmtu needs a restart", "nodelist.x=1\n"}},
      ReloadAbort{id, "not every member reported"}, ReloadKeyStep{id, 3, 2}};
  for (const ReloadMessage& message : messages) {
    const std::vector<std::byte> packet = encode_reload(message);
    const auto back = decode_reload(packet);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->index(), message.index());
    for (std::size_t n = 0; n < packet.size(); ++n) EXPECT_FALSE(decode_reload(std::span(packet).first(n))) << n;
    std::vector<std::byte> longer = packet;
    longer.push_back(std::byte{0});
    EXPECT_FALSE(decode_reload(longer));
  }
  const auto report = std::get<ReloadReportMessage>(*decode_reload(encode_reload(messages[1])));
  EXPECT_EQ(report.id, id);
  EXPECT_EQ(report.report.node, 3u);
  EXPECT_EQ(report.report.error, -ENOTSUP);
  EXPECT_EQ(report.report.summary, "totem.netmtu needs a restart");
  EXPECT_EQ(report.report.cluster, "nodelist.x=1\n");
  const auto step = std::get<ReloadKeyStep>(*decode_reload(encode_reload(messages[3])));
  EXPECT_EQ(step.node, 3u);
  EXPECT_EQ(step.step, 2u);
  std::vector<std::byte> third = encode_reload(messages[3]);
  third.back() = std::byte{3};  // steps 1 and 2 only
  EXPECT_FALSE(decode_reload(third));
  EXPECT_FALSE(decode_kill(encode_reload(messages[0])));  // the two kinds never mix
  EXPECT_FALSE(decode_reload(encode_kill({3, 1, 4242, "fenced"})));
  std::vector<std::byte> positive = encode_reload(messages[1]);
  const std::size_t error_at = 1 + 1 + 4 + 8 + 4;
  for (std::size_t i = 0; i < 4; ++i)
    positive[error_at + i] = i == 3 ? std::byte{1} : std::byte{0};  // +1: only 0 or -errno
  EXPECT_FALSE(decode_reload(positive));
}

TEST(ReloadRound, AppliesOnceEveryMemberReportedAndAllAgree) {
  ReloadRound round({1, 1}, {3, 1, 2});
  EXPECT_FALSE(round.report({1, 0, "logging.debug", "a=1\n"}));
  EXPECT_FALSE(round.report({1, 0, "again", "a=1\n"}));     // a second report changes nothing
  EXPECT_FALSE(round.report({9, 0, "stranger", "a=1\n"}));  // nor one from a node that is no member
  EXPECT_FALSE(round.report({3, 0, "no change", "a=1\n"}));
  const auto decided = round.report({2, 0, "logging.debug", "a=1\n"});
  ASSERT_TRUE(decided);
  EXPECT_TRUE(decided->apply);
  EXPECT_EQ(decided->error, 0);
  EXPECT_EQ(decided->text, "node 1: logging.debug\nnode 2: logging.debug\nnode 3: no change\n");
}

TEST(ReloadRound, OneMemberThatCannotOrFilesThatDisagreeApplyNothing) {
  ReloadRound failing({1, 1}, {1, 2});
  EXPECT_FALSE(failing.report({1, 0, "logging.debug", "a=1\n"}));
  const auto refused = failing.report({2, -EBADMSG, "nothing changed: t.conf:3: bad", ""});
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->apply);
  EXPECT_EQ(refused->error, -EBADMSG);
  EXPECT_EQ(refused->text, "nothing changed on any node:\nnode 2: nothing changed: t.conf:3: bad\n");

  ReloadRound disagreeing({2, 5}, {1, 2, 3});
  EXPECT_FALSE(disagreeing.report({1, 0, "x", "nodelist.node.0.nodeid=1\nruntime.config.totem.token=1000\n"}));
  EXPECT_FALSE(disagreeing.report({2, 0, "x", "nodelist.node.0.nodeid=1\nruntime.config.totem.token=1000\n"}));
  const auto split = disagreeing.report({3, 0, "x", "nodelist.node.0.nodeid=1\nruntime.config.totem.token=2000\n"});
  ASSERT_TRUE(split);
  EXPECT_FALSE(split->apply);
  EXPECT_EQ(split->error, -EINVAL);
  EXPECT_NE(split->text.find("disagree about runtime.config.totem.token: node 1 reads runtime.config.totem.token=1000; "
                             "node 3 reads runtime.config.totem.token=2000"),
            std::string::npos)
      << split->text;

  ReloadRound cut({1, 2}, {1, 2, 3});
  EXPECT_FALSE(cut.report({2, 0, "x", ""}));
  const ReloadDecision ended = cut.ended("the ring changed");
  EXPECT_FALSE(ended.apply);
  EXPECT_EQ(ended.text, "nothing changed on any node: the ring changed (no report yet from node(s) 1 3)\n");
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

  KeyList other_port = config(1000, "off", 1, 1);
  other_port.emplace_back("totem.interface.0.mcastport", KeyValue::u32(5405));
  KeyList port = config(1000, "on", 1, 1);
  port.emplace_back("totem.interface.0.mcastport", KeyValue::u32(5409));
  const ReloadPlan refused = plan_reload(other_port, port, 1);
  EXPECT_EQ(refused.refused, std::vector<std::string>{"totem.interface.0.mcastport"});

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
  fewer.resize(4);  // node 2 gone from the nodelist: only in a reload of every node
  const ReloadPlan gone = plan_reload(config(1000, "off", 1, 1), fewer, 1);
  EXPECT_TRUE(gone.refused.empty());
  EXPECT_EQ(gone.cluster_only, std::vector<std::string>{"nodelist: node 2 removed"});
  const ReloadPlan gone_everywhere = plan_reload(config(1000, "off", 1, 1), fewer, 1, {}, true);
  EXPECT_TRUE(gone_everywhere.refused.empty() && gone_everywhere.cluster_only.empty());
  EXPECT_EQ(gone_everywhere.nodes_removed, std::vector<membership::NodeId>{2});
  // This node itself cannot go by a reload.
  EXPECT_EQ(plan_reload(config(1000, "off", 1, 1), fewer, 2, {}, true).refused,
            std::vector<std::string>{"nodelist: node 2 removed (this node: stop it instead)"});
}

// Nodes compare by node id, whatever their place: node 2 added ahead of node 3 moves node 3's keys
// to nodelist.node.2, which is no change of node 3; an address that changes needs a restart.
TEST(ReloadPlan, TheNodelistComparesByNodeId) {
  const KeyList before = {{"nodelist.node.0.nodeid", KeyValue::u32(1)},
                          {"nodelist.node.0.ring0_addr", KeyValue::string("10.0.0.1")},
                          {"nodelist.node.1.nodeid", KeyValue::u32(3)},
                          {"nodelist.node.1.ring0_addr", KeyValue::string("10.0.0.3")}};
  KeyList after = {
      {"nodelist.node.0.nodeid", KeyValue::u32(1)}, {"nodelist.node.0.ring0_addr", KeyValue::string("10.0.0.1")},
      {"nodelist.node.1.nodeid", KeyValue::u32(2)}, {"nodelist.node.1.ring0_addr", KeyValue::string("10.0.0.2")},
      {"nodelist.node.2.nodeid", KeyValue::u32(3)}, {"nodelist.node.2.ring0_addr", KeyValue::string("10.0.0.3")}};
  const ReloadPlan added = plan_reload(before, after, 1, {}, true);
  EXPECT_TRUE(added.refused.empty());
  EXPECT_EQ(added.nodes_added, std::vector<membership::NodeId>{2});
  EXPECT_EQ(added.changed, std::vector<std::string>{"nodelist: node 2 added"});
  after.back().second = KeyValue::string("10.0.0.33");
  EXPECT_EQ(plan_reload(before, after, 1, {}, true).refused, std::vector<std::string>{"nodelist.node.2.ring0_addr"});
}

// The totem timing changes in a reload of every node, never in one node's alone.
TEST(ReloadPlan, TimingChangesOnlyInAReloadOfEveryNode) {
  KeyList before = config(1000, "off", 1, 1);
  before.emplace_back("runtime.config.totem.token", KeyValue::u32(1000));
  KeyList after = config(2000, "off", 1, 1);
  after.emplace_back("runtime.config.totem.token", KeyValue::u32(2000));
  after.emplace_back("totem.token_coefficient", KeyValue::u32(0));
  const ReloadPlan alone = plan_reload(before, after, 1);
  EXPECT_TRUE(alone.refused.empty());
  EXPECT_EQ(alone.cluster_only,
            (std::vector<std::string>{"runtime.config.totem.token", "totem.token", "totem.token_coefficient"}));
  EXPECT_FALSE(alone.timing);
  const ReloadPlan everywhere = plan_reload(before, after, 1, {}, true);
  EXPECT_TRUE(everywhere.refused.empty());
  EXPECT_TRUE(everywhere.cluster_only.empty());
  EXPECT_TRUE(everywhere.timing);
  // What every member must read alike: the nodelist and the timing in force, not the rest.
  EXPECT_EQ(cluster_part(after),
            "nodelist.node.0.nodeid=1\nnodelist.node.0.quorum_votes=1\nnodelist.node.1.nodeid=2\n"
            "nodelist.node.1.quorum_votes=1\nruntime.config.totem.token=2000\n");
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
