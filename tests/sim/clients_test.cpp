// The simulator's processes on the real librtotem over each node's NodeStack (--clients).
#include <gtest/gtest.h>

#include <string>

#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_options.hpp"

namespace rtotem::sim {
namespace {

// Issue 48, bug 1: processes that leave and join again without dispatching, fall behind and
// disconnect, with messages of several pieces. Seed 214 is one the planted bug fails
// (tests/sim/planted/pieces-end-at-the-join-call.patch): there a handle joined the first pieces
// of one message to the last of the next.
TEST(ClientsInTheSimulator, EveryMessageAProcessIsHandedIsOneSentWholeInItsSendersOrder) {
  SimOptions options;
  options.clients = 3;
  options.rate = 50;
  const RunParams params = resolve(options, 214);
  auto cluster = SimCluster::create(to_spec(params));
  ASSERT_TRUE(cluster) << cluster.error().message();
  const SimResult r = (*cluster)->run();
  EXPECT_TRUE(r.ok()) << command_line(params) << "\n" << describe(r.violations.front());
  EXPECT_GT(r.client_offers, 50U);
  EXPECT_GT(r.client_deliveries, r.client_offers);
  EXPECT_GT(r.client_pieced, 10U) << "messages of several pieces were delivered";
  EXPECT_GT(r.group_views_compared, 100U);
  EXPECT_NE(command_line(params).find(" --clients 3"), std::string::npos);
}

TEST(ClientsInTheSimulator, TheNodeStacksGroupsAreNotRunBesideTheBareServices) {
  SimOptions options;
  options.clients = 2;
  options.groups = true;
  auto cluster = SimCluster::create(to_spec(resolve(options, 1)));
  ASSERT_FALSE(cluster);
  EXPECT_NE(cluster.error().message().find("not with groups or quorum"), std::string::npos);
}

}  // namespace
}  // namespace rtotem::sim
