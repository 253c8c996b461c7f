// Votequorum on real daemons: a majority keeps quorum through a kill and the last node alone has
// none; two_node waits for its peer once, then keeps quorum alone; rtotemctl quorum's text and exit
// codes are corosync-quorumtool's.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

using namespace std::chrono_literals;

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return condition();
}

// `rtotemctl --json quorum` at `node` says `quorate` with `votes` total votes, in sync.
bool holds(const DaemonCluster& cluster, int node, bool quorate, std::uint64_t votes) {
  const std::string json = cluster.ctl_json(node, "quorum");
  return json.find(fmt::format("\"quorate\": {}", quorate ? "true" : "false")) != std::string::npos &&
         json.find("\"synced\": true") != std::string::npos && json_counter(json, "total_votes") == votes;
}

// rtotemctl quorum (text) at `node`: its exit status, and what it printed.
int ctl_quorum(const DaemonCluster& cluster, int node, std::string& out) {
  const char* ctl = std::getenv("RTOTEMCTL");
  if (ctl == nullptr) return -1;
  FILE* p = popen(fmt::format("{} --ipc-name {} quorum", ctl, cluster.ipc_name(node)).c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

constexpr const char* kVotequorum = "quorum {\n  provider: corosync_votequorum\n}\n";

TEST(DaemonQuorum, AMajorityStaysQuorateAndTheLastNodeAloneIsNot) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  for (int node = 1; node <= 3; ++node) cluster.start(node);
  for (int node = 1; node <= 3; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 3); })) << cluster.ctl_json(node, "quorum");
  std::string text;
  EXPECT_EQ(ctl_quorum(cluster, 1, text), 0) << text;
  EXPECT_NE(text.find("Quorate:          Yes"), std::string::npos) << text;
  EXPECT_NE(text.find("Expected votes:   3\nHighest expected: 3\nTotal votes:      3\nQuorum:           2\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("         1          1 node1 (local)"), std::string::npos) << text;

  cluster.kill(3, SIGKILL);
  for (int node = 1; node <= 2; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 2); })) << cluster.ctl_json(node, "quorum");
  cluster.kill(2, SIGKILL);
  ASSERT_TRUE(eventually([&] { return holds(cluster, 1, false, 1); })) << cluster.ctl_json(1, "quorum");
  text.clear();
  EXPECT_EQ(ctl_quorum(cluster, 1, text), 2) << text;
  EXPECT_NE(text.find("Quorate:          No"), std::string::npos) << text;
  EXPECT_NE(cluster.log(1).find("quorum: NOT quorate"), std::string::npos) << cluster.log(1);
}

// rtotemctl quorum votes/expected: checked as votequorum checks them, effective at every node.
int ctl_set(const DaemonCluster& cluster, int node, const std::string& args) {
  const char* ctl = std::getenv("RTOTEMCTL");
  if (ctl == nullptr) return -1;
  const int status = std::system(fmt::format("{} --ipc-name {} quorum {}", ctl, cluster.ipc_name(node), args).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DaemonQuorum, VotesAndExpectedVotesChangeAtRuntimeEverywhere) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  for (int node = 1; node <= 3; ++node) cluster.start(node);
  for (int node = 1; node <= 3; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 3); })) << cluster.ctl_json(node, "quorum");
  EXPECT_EQ(ctl_set(cluster, 1, "expected 2"), 1) << "below the votes present";
  EXPECT_EQ(ctl_set(cluster, 1, "votes 9 1"), 1) << "no node 9";
  EXPECT_EQ(ctl_set(cluster, 1, "votes 2 x"), 2);
  EXPECT_EQ(ctl_set(cluster, 1, "expected 5"), 0);
  EXPECT_EQ(ctl_set(cluster, 3, "votes 2 3"), 0);
  for (int node = 1; node <= 3; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 5); })) << cluster.ctl_json(node, "quorum");
  EXPECT_EQ(json_counter(cluster.ctl_json(1, "quorum"), "highest_expected"), 5u);
  EXPECT_EQ(json_counter(cluster.ctl_json(3, "quorum"), "quorum"), 3u);
  EXPECT_NE(cluster.log(1).find("sets expected votes to 5"), std::string::npos);
  cluster.kill(2, SIGKILL);  // its three votes go: two of five left
  for (int node : {1, 3})
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, false, 2); })) << cluster.ctl_json(node, "quorum");
}

TEST(DaemonQuorum, TwoNodeWaitsForItsPeerOnceThenKeepsQuorumAlone) {
  DaemonCluster cluster(2, 1000, "", "quorum {\n  provider: corosync_votequorum\n  two_node: 1\n}\n");
  cluster.start(1);
  ASSERT_TRUE(eventually([&] { return holds(cluster, 1, false, 1); })) << cluster.ctl_json(1, "quorum");
  std::this_thread::sleep_for(2s);  // several token timeouts alone: still waiting for its peer
  EXPECT_TRUE(holds(cluster, 1, false, 1)) << cluster.ctl_json(1, "quorum");
  EXPECT_NE(cluster.ctl_json(1, "quorum").find("\"waiting_for_all\": true"), std::string::npos);
  cluster.start(2);
  for (int node = 1; node <= 2; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 2); })) << cluster.ctl_json(node, "quorum");
  EXPECT_NE(cluster.ctl_json(1, "quorum").find("\"2Node\""), std::string::npos);
  cluster.kill(2, SIGKILL);
  ASSERT_TRUE(eventually([&] { return holds(cluster, 1, true, 1); })) << cluster.ctl_json(1, "quorum");
}

TEST(DaemonQuorum, WithoutAQuorumSectionRtotemctlSaysSoAndFails) {
  DaemonCluster cluster(1);
  cluster.start(1);
  ASSERT_TRUE(eventually([&] { return cluster.ctl_json(1, "quorum").find("configured") != std::string::npos; }));
  EXPECT_NE(cluster.ctl_json(1, "quorum").find("\"configured\": false"), std::string::npos);
  std::string text;
  EXPECT_EQ(ctl_quorum(cluster, 1, text), 1) << text;
  EXPECT_NE(text.find("not configured"), std::string::npos) << text;
}

}  // namespace
}  // namespace rtotem::testing
