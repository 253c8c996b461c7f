// Votequorum on real daemons: a majority keeps quorum through a kill and the last node alone has
// none; two_node waits for its peer once, then keeps quorum alone; rtotemctl quorum's text and exit
// codes are corosync-quorumtool's.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rtotem/rtotem.h"

#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

using namespace std::chrono_literals;

// `rtotemctl --json quorum` at `node` says `quorate` with `votes` total votes, in sync.
bool holds(const DaemonCluster& cluster, int node, bool quorate, std::uint64_t votes) {
  const std::string json = cluster.ctl_json(node, "quorum");
  return json.find(fmt::format("\"quorate\": {}", quorate ? "true" : "false")) != std::string::npos &&
         json.find("\"synced\": true") != std::string::npos && json_counter(json, "total_votes") == votes;
}

constexpr const char* kVotequorum = "quorum {\n  provider: corosync_votequorum\n}\n";

TEST(DaemonQuorum, AMajorityStaysQuorateAndTheLastNodeAloneIsNot) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  for (int node = 1; node <= 3; ++node) cluster.start(node);
  for (int node = 1; node <= 3; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 3); })) << cluster.ctl_json(node, "quorum");
  std::string text;
  EXPECT_EQ(cluster.ctl(1, "quorum", text), 0) << text;
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
  EXPECT_EQ(cluster.ctl(1, "quorum", text), 2) << text;
  EXPECT_NE(text.find("Quorate:          No"), std::string::npos) << text;
  EXPECT_NE(cluster.log(1).find("quorum: NOT quorate"), std::string::npos) << cluster.log(1);
}

// rtotemctl quorum votes/expected: checked as votequorum checks them, effective at every node.
int ctl_set(const DaemonCluster& cluster, int node, const std::string& args) {
  std::string out;
  return cluster.ctl(node, "quorum " + args, out);
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

// A librtotem client tracking quorum, and the regular rings it was told of.
struct QuorumClient {
  struct Seen {
    std::uint32_t rep = 0;
    std::uint64_t seq = 0;
    bool quorate = false;
    std::uint32_t total_votes = 0;
    std::size_t nodes = 0;
    bool at_track_start = false;  // RTOTEM_QUORUM_TRACK_START
  };
  std::vector<Seen> quorum;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> rings;
  rtotem_t* handle = nullptr;

  ~QuorumClient() {
    if (handle != nullptr) rtotem_disconnect(handle);
  }
  int connect(const std::string& ipc_name) {
    static const rtotem_callbacks callbacks{
        nullptr, nullptr, [](rtotem_t*, const rtotem_ring_change* c, void* ctx) {
          if (!c->transitional) static_cast<QuorumClient*>(ctx)->rings.emplace_back(c->rep_nodeid, c->ring_seq);
        }};
    return rtotem_connect(&handle, ipc_name.c_str(), &callbacks, this);
  }
  int track() {
    return rtotem_quorum_track(handle, [](rtotem_t*, const rtotem_quorum* q, void* ctx) {
      static_cast<QuorumClient*>(ctx)->quorum.push_back(
          Seen{q->rep_nodeid, q->ring_seq, q->quorate != 0, q->total_votes, q->n_nodes,
               (q->flags & RTOTEM_QUORUM_TRACK_START) != 0});
    });
  }
  bool dispatch_until(const std::function<bool()>& done) {
    return eventually([&] {
      (void)rtotem_dispatch(handle, RTOTEM_DISPATCH_ALL);
      return done();
    });
  }
};

TEST(DaemonQuorum, AClientTracksQuorumWithTheRingIdOfItsRingEvents) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  for (int node = 1; node <= 3; ++node) cluster.start(node);
  for (int node = 1; node <= 3; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 3); })) << cluster.ctl_json(node, "quorum");
  QuorumClient client;
  ASSERT_TRUE(eventually([&] { return client.connect(cluster.ipc_name(1)) == 0; }));
  ASSERT_EQ(client.track(), 0);
  ASSERT_TRUE(client.dispatch_until([&] { return !client.quorum.empty() && !client.rings.empty(); }));
  EXPECT_TRUE(client.quorum.front().quorate) << "the state now, at once";
  EXPECT_EQ(client.quorum.front().total_votes, 3u);
  EXPECT_EQ(client.quorum.front().nodes, 3u);
  EXPECT_TRUE(client.quorum.front().at_track_start);
  cluster.kill(3, SIGKILL);
  ASSERT_TRUE(client.dispatch_until([&] { return client.quorum.back().nodes == 2; }));
  const QuorumClient::Seen& after = client.quorum.back();
  EXPECT_TRUE(after.quorate);
  EXPECT_EQ(after.total_votes, 2u);
  EXPECT_FALSE(after.at_track_start) << "a change";
  ASSERT_FALSE(client.rings.empty());
  EXPECT_EQ(std::make_pair(after.rep, after.seq), client.rings.back()) << "one ring id for quorum and ring events";
  EXPECT_EQ(rtotem_quorum_set_expected(client.handle, 1), -EINVAL) << "below the votes present";
  EXPECT_EQ(rtotem_quorum_set_votes(client.handle, 7, 1), -ENOENT);
  EXPECT_EQ(rtotem_quorum_track(client.handle, nullptr), 0);
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
  EXPECT_EQ(cluster.ctl(1, "quorum", text), 1) << text;
  EXPECT_NE(text.find("not configured"), std::string::npos) << text;
  QuorumClient client;
  ASSERT_EQ(client.connect(cluster.ipc_name(1)), 0);
  EXPECT_EQ(client.track(), -ENOTSUP);
}

// A node whose config lacks quorum { } never reports: the others do not wait for it for ever (their
// clients would hear -EAGAIN for ever), but decide after the sync timeout without its votes, and
// say loudly what is wrong.
TEST(DaemonQuorum, ANodeWithoutQuorumIsCountedWithoutVotesAndNamed) {
  DaemonCluster cluster(2, 1000, "", kVotequorum);
  std::string text = read_file(cluster.config_path());
  text.erase(text.find(kVotequorum), std::string(kVotequorum).size());
  const std::string without = cluster.dir() + "/no-quorum.conf";
  std::ofstream(without) << text;
  cluster.use_config(2, without);
  std::vector<std::unique_ptr<TestClient>> clients;
  start_ring(cluster, 2, clients);
  ASSERT_TRUE(eventually([&] {
    const std::string json = cluster.ctl_json(1, "quorum");
    return json.find("\"synced\": true") != std::string::npos && json.find("\"silent\": [2]") != std::string::npos;
  })) << cluster.ctl_json(1, "quorum");
  EXPECT_NE(cluster.ctl_json(1, "quorum").find("\"quorate\": false"), std::string::npos) << "1 vote of 2 expected";
  EXPECT_NE(cluster.log(1).find("node(s) 2 of ring"), std::string::npos) << cluster.log(1);
  EXPECT_NE(cluster.log(1).find("Does their config lack quorum"), std::string::npos);
  ASSERT_EQ(clients[0]->join("g"), 0);
  EXPECT_EQ(clients[0]->send("g", "not held back"), 0);
}

}  // namespace
}  // namespace rtotem::testing
