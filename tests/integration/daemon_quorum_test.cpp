// Votequorum on real daemons: a majority keeps quorum through a kill and the last node alone has
// none; two_node waits for its peer once, then keeps quorum alone; rtotemctl quorum's text and exit
// codes are corosync-quorumtool's; a client is sent only the ring and quorum changes it asked for.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Starts nodes 1..3 and waits until each holds quorum with all three votes.
void start_three(DaemonCluster& cluster) {
  for (int node = 1; node <= 3; ++node) cluster.start(node);
  for (int node = 1; node <= 3; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 3); })) << cluster.ctl_json(node, "quorum");
}

TEST(DaemonQuorum, AMajorityStaysQuorateAndTheLastNodeAloneIsNot) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  ASSERT_NO_FATAL_FAILURE(start_three(cluster));
  std::string text;
  EXPECT_EQ(cluster.ctl(1, "quorum", text), 0) << text;
  EXPECT_NE(text.find("Quorate:          Yes"), std::string::npos) << text;
  EXPECT_NE(text.find("Expected votes:   3\nHighest expected: 3\nTotal votes:      3\nQuorum:           2\n"),
            std::string::npos)
      << text;
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
  ASSERT_NO_FATAL_FAILURE(start_three(cluster));
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

// Issue 48, bug 3: votes and expected votes are root's (or rtotemd's user's) to change, as shutdown,
// kill and reload are: a user ipc.allow_uid lets in (Pacemaker's haclient group, say) could
// otherwise make a minority side quorate. It may still read them.
TEST(DaemonQuorum, OnlyRootMayChangeVotesOrExpectedVotes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run rtotemctl as another user";
  DaemonCluster cluster(3, 1000, "", std::string(kVotequorum) + "ipc {\n  allow_uid: 65534\n}\n");
  ASSERT_NO_FATAL_FAILURE(start_three(cluster));
  const std::string nobody =
      fmt::format("setpriv --reuid=65534 --regid=65534 --clear-groups {} ", std::getenv("RTOTEMCTL"));
  std::string out;
  EXPECT_EQ(cluster.run(1, nobody + "quorum votes 1 3", out), 1) << out;
  EXPECT_NE(out.find("rtotemctl: quorum: only root or rtotemd's user may change votes or expected votes"),
            std::string::npos)
      << out;
  out.clear();
  EXPECT_EQ(cluster.run(1, nobody + "quorum expected 5", out), 1) << out;
  EXPECT_NE(out.find("only root or rtotemd's user may"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(cluster.run(1, nobody + "quorum", out), 0) << out;
  EXPECT_NE(out.find("Total votes:      3"), std::string::npos) << out;

  // Root's change comes after the refused ones: once it shows, they would have too.
  EXPECT_EQ(ctl_set(cluster, 1, "votes 2 2"), 0);
  for (int node = 1; node <= 3; ++node)
    ASSERT_TRUE(eventually([&] { return holds(cluster, node, true, 4); })) << cluster.ctl_json(node, "quorum");
  EXPECT_EQ(json_counter(cluster.ctl_json(1, "quorum"), "highest_expected"), 4u) << "node 1 kept 1 vote, 5 not set";
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
    static const rtotem_callbacks callbacks{nullptr, nullptr, [](rtotem_t*, const rtotem_ring_change* c, void* ctx) {
                                              if (!c->transitional)
                                                static_cast<QuorumClient*>(ctx)->rings.emplace_back(c->rep_nodeid,
                                                                                                    c->ring_seq);
                                            }};
    return rtotem_connect(&handle, ipc_name.c_str(), &callbacks, this);
  }
  int track() {
    return rtotem_quorum_track(handle, [](rtotem_t*, const rtotem_quorum* q, void* ctx) {
      static_cast<QuorumClient*>(ctx)->quorum.push_back(Seen{q->rep_nodeid, q->ring_seq, q->quorate != 0,
                                                             q->total_votes, q->n_nodes,
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
  ASSERT_NO_FATAL_FAILURE(start_three(cluster));
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
  // A change is refused with -EAGAIN until the new ring's reports are all in (its first quorum
  // event may come before them); then judged by votequorum's rule.
  int rc = -EAGAIN;
  EXPECT_TRUE(eventually([&] { return (rc = rtotem_quorum_set_expected(client.handle, 1)) != -EAGAIN; }));
  EXPECT_EQ(rc, -EINVAL) << "below the votes present";
  EXPECT_EQ(rtotem_quorum_set_votes(client.handle, 7, 1), -ENOENT);
  EXPECT_EQ(rtotem_quorum_track(client.handle, nullptr), 0);
}

// Whether a connection's descriptor is readable now.
bool readable(rtotem_t* h) {
  pollfd p{rtotem_fd(h), POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

using Handle = std::unique_ptr<rtotem_t, decltype(&rtotem_disconnect)>;

// A connection without callbacks (no ring_change), tracking with `which` unless it is 0; the
// total votes of each quorum event it is told go to `seen`.
Handle quiet_client(const DaemonCluster& cluster, int which, std::vector<std::uint32_t>& seen) {
  rtotem_t* h = nullptr;
  EXPECT_EQ(rtotem_connect(&h, cluster.ipc_name(1).c_str(), nullptr, &seen), 0);
  Handle handle(h, rtotem_disconnect);
  if (h != nullptr && which != 0) {
    EXPECT_EQ(rtotem_quorum_track_changes(
                  h,
                  [](rtotem_t*, const rtotem_quorum* q, void* ctx) {
                    static_cast<std::vector<std::uint32_t>*>(ctx)->push_back(q->total_votes);
                  },
                  which),
              0);
  }
  return handle;
}

// A connection is sent only what it asked for, so that its descriptor wakes for nothing else (a
// Corosync library's turns readable only for what it reports): ring changes only with a
// ring_change callback, quorum changes as rtotem_quorum_track_changes' mode names them.
TEST(DaemonQuorum, AConnectionIsSentOnlyTheChangesItAskedFor) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  ASSERT_NO_FATAL_FAILURE(start_three(cluster));
  QuorumClient every;
  ASSERT_EQ(every.connect(cluster.ipc_name(1)), 0);
  ASSERT_EQ(every.track(), 0);
  std::vector<std::uint32_t> rings_seen, state_seen, none_seen;
  const Handle rings = quiet_client(cluster, RTOTEM_QUORUM_CHANGES_RING, rings_seen);
  const Handle state = quiet_client(cluster, RTOTEM_QUORUM_CHANGES_NONE, state_seen);
  const Handle silent = quiet_client(cluster, 0, none_seen);
  ASSERT_TRUE(rings && state && silent);
  EXPECT_EQ(rtotem_quorum_track_changes(silent.get(), nullptr, 9), -EINVAL);
  ASSERT_TRUE(every.dispatch_until([&] { return every.quorum.size() == 1 && every.rings.size() == 1; }));
  for (rtotem_t* h : {rings.get(), state.get(), silent.get()})  // the current ring, sent to all at once
    ASSERT_TRUE(eventually([&] { return rtotem_dispatch(h, RTOTEM_DISPATCH_ALL) >= 0 && !readable(h); }));
  EXPECT_EQ(rings_seen, std::vector<std::uint32_t>{3}) << "the state at once";
  EXPECT_EQ(state_seen, std::vector<std::uint32_t>{3});

  ASSERT_EQ(rtotem_quorum_set_votes(every.handle, 1, 2), 0);  // the numbers change, not the ring
  ASSERT_TRUE(every.dispatch_until([&] { return every.quorum.back().total_votes == 4; }));
  // rtotemd sends a change to all its clients in the turn that makes it, before it answers
  // rtotemctl: once rtotemctl shows it, what the others are sent for it waits at their descriptors.
  ASSERT_TRUE(holds(cluster, 1, true, 4));
  EXPECT_FALSE(readable(rings.get())) << "the votes changed: neither a ring nor quorate";
  EXPECT_FALSE(readable(state.get()));

  cluster.kill(3, SIGKILL);
  ASSERT_TRUE(every.dispatch_until([&] { return every.quorum.back().nodes == 2 && every.rings.size() >= 2; }));
  ASSERT_TRUE(holds(cluster, 1, true, 3));  // node 1's two votes and node 2's one
  EXPECT_TRUE(readable(rings.get())) << "a new ring";
  ASSERT_EQ(rtotem_dispatch(rings.get(), RTOTEM_DISPATCH_ALL), 0);
  ASSERT_GE(rings_seen.size(), 2U);
  EXPECT_EQ(rings_seen.back(), 3U);  // node 1's two votes and node 2's one
  EXPECT_FALSE(readable(state.get())) << "the state only";
  EXPECT_FALSE(readable(silent.get())) << "no ring change without a ring_change callback";
  EXPECT_TRUE(state_seen.size() == 1 && none_seen.empty());
}

TEST(DaemonQuorum, TwoNodeWaitsForItsPeerOnceThenKeepsQuorumAlone) {
  DaemonCluster cluster(2, 1000, "", "quorum {\n  provider: corosync_votequorum\n  two_node: 1\n}\n");
  cluster.start(1);
  ASSERT_TRUE(eventually([&] { return holds(cluster, 1, false, 1); })) << cluster.ctl_json(1, "quorum");
  // Idle on purpose: the wait is the check. Several token timeouts alone, and still waiting.
  std::this_thread::sleep_for(2s);
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
