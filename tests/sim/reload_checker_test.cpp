// The ReloadChecker on hand-made histories (a change at one place must be everywhere it is
// delivered), and the simulator's reloads of every node under faults (--reloads).
#include "src/sim/reload_checker.hpp"

#include <gtest/gtest.h>

#include <string>

#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_options.hpp"

namespace rtotem::sim {
namespace {

membership::TotemConfig with_token(std::uint32_t ms) {
  membership::TotemConfig totem;
  totem.token_timeout_ms = ms;
  return totem.resolved().value();
}

constexpr NodeId kBoth[] = {1, 2};
constexpr control::ReloadId kReload{1, 77};

// Node `from`'s report of kReload as ring 1/8 delivers it at `seq` (its bytes in `bytes`).
Delivered report(NodeId from, Seq seq, std::vector<std::byte>& bytes) {
  bytes = control::encode_reload(control::ReloadReportMessage{kReload, {from, 0, "token", "totem.token=750\n"}});
  Delivered message;
  message.ring_id = {1, 8};
  message.seq = seq;
  message.sender = from;
  message.payload = bytes;
  return message;
}

TEST(ReloadChecker, AChangeOneMemberMissedAtTheLastReportIsAViolation) {
  ReloadChecker checker;
  std::vector<std::byte> first, last;
  for (NodeId node : kBoth)
    checker.record_control(10, node, kBoth, report(1, 4, first), with_token(1000), with_token(1000));
  checker.record_control(11, 1, kBoth, report(2, 5, last), with_token(1000), with_token(750));
  checker.record_control(11, 2, kBoth, report(2, 5, last), with_token(1000), with_token(1000));
  checker.finish();
  ASSERT_EQ(checker.violation_count(), 1u);
  EXPECT_EQ(checker.violations()[0].property, Property::kReloadOrder);
  EXPECT_EQ(checker.violations()[0].nodes, (std::vector<NodeId>{2, 1}));
  EXPECT_NE(describe(checker.violations()[0]).find("node 1 took token 750 ms, node 2 runs token 1000 ms"),
            std::string::npos)
      << describe(checker.violations()[0]);
}

TEST(ReloadChecker, AChangeBeforeEveryMemberReportedIsAViolation) {
  ReloadChecker checker;
  std::vector<std::byte> first;
  checker.record_control(10, 1, kBoth, report(1, 4, first), with_token(1000), with_token(750));
  ASSERT_EQ(checker.violation_count(), 1u);
  EXPECT_NE(describe(checker.violations()[0]).find("node 2's report of that reload was not delivered yet"),
            std::string::npos)
      << describe(checker.violations()[0]);
}

TEST(ReloadChecker, ReportsBeforeAConfigurationDoNotCount) {
  ReloadChecker checker;
  std::vector<std::byte> first, last;
  checker.record_control(10, 1, kBoth, report(1, 4, first), with_token(1000), with_token(1000));
  checker.record_configuration(1);
  checker.record_control(11, 1, kBoth, report(2, 5, last), with_token(1000), with_token(750));
  EXPECT_EQ(checker.violation_count(), 1u);
}

TEST(ReloadChecker, AChangeOutsideTheDeliveryOfAControlMessageIsAViolation) {
  ReloadChecker checker;
  checker.record_turn(10, 3, with_token(1000), with_token(1000));
  EXPECT_EQ(checker.violation_count(), 0u);
  checker.record_turn(11, 3, with_token(1000), with_token(1250));
  ASSERT_EQ(checker.violation_count(), 1u);
  EXPECT_NE(describe(checker.violations()[0]).find("node 3 went from token 1000 ms to 1250 ms outside"),
            std::string::npos)
      << describe(checker.violations()[0]);
}

// Node 2 ran the new timing already (restarted from the new file): it changes nothing, and agrees.
TEST(ReloadChecker, AChangeAtTheLastReportToOneTimingEverywhereIsOneApplied) {
  ReloadChecker checker;
  std::vector<std::byte> first, last;
  checker.record_control(10, 1, kBoth, report(1, 4, first), with_token(1000), with_token(1000));
  checker.record_control(10, 2, kBoth, report(1, 4, first), with_token(750), with_token(750));
  checker.record_control(11, 1, kBoth, report(2, 5, last), with_token(1000), with_token(750));
  checker.record_control(11, 2, kBoth, report(2, 5, last), with_token(750), with_token(750));
  checker.finish();
  EXPECT_EQ(checker.violation_count(), 0u);
  EXPECT_EQ(checker.applied(), 1u);
}

// Partitions, crashes and restarts while operators reload every node, with files that sometimes
// disagree: every change took effect at one place on every member, and some were applied.
TEST(ReloadsInTheSimulator, ATimingChangeTakesEffectAtOnePlaceOnEveryMember) {
  SimOptions options;
  options.clients = 1;
  options.reloads = 1;
  std::uint64_t places = 0, done = 0, refused = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const RunParams params = resolve(options, seed);
    auto cluster = SimCluster::create(to_spec(params));
    ASSERT_TRUE(cluster) << cluster.error().message();
    const SimResult r = (*cluster)->run();
    ASSERT_TRUE(r.ok()) << command_line(params) << "\n" << describe(r.violations.front());
    EXPECT_NE(command_line(params).find(" --reloads 1"), std::string::npos);
    places += r.reload_places;
    for (const auto& [error, count] : r.reload_answers) (error == 0 ? done : refused) += count;
  }
  EXPECT_GT(places, 0u) << "no reload changed a node's timing";
  EXPECT_GT(done, 0u);
  EXPECT_GT(refused, 0u) << "files that disagree, or a ring change under way, refuse some";
}

TEST(ReloadsInTheSimulator, NeedTheNodeStack) {
  SimOptions options;
  options.reloads = 1;
  auto cluster = SimCluster::create(to_spec(resolve(options, 1)));
  ASSERT_FALSE(cluster);
  EXPECT_NE(cluster.error().message().find("needs clients"), std::string::npos);
}

}  // namespace
}  // namespace rtotem::sim
