// Corosync's own command-line tools (Debian's corosync package, unmodified) on an rtotem cluster,
// through the drop-in libraries (COROSYNC_LIBS, as LD_LIBRARY_PATH): corosync-quorumtool,
// corosync-cmapctl and corosync-cfgtool print what rtotemd's quorum, key store and node control
// hold. Corosync's daemon is never started. The tests check the tools' output, not only their
// exit codes. Then libquorum, libvotequorum, libcmap and libcfg called as an application calls
// them: quorum tracking as dlm dispatches it and across a trackstop, and answers Corosync's
// libraries give.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <corosync/cfg.h>
#include <corosync/cmap.h>
#include <corosync/quorum.h>
#include <corosync/votequorum.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/corosync_tool.hpp"
#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

constexpr const char* kVotequorum = "quorum {\n  provider: corosync_votequorum\n}\n";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class CorosyncTools : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/sbin/corosync-quorumtool", X_OK) != 0)
      GTEST_SKIP() << "Debian's corosync package is not installed (scripts/test installs it)";
  }
  // Starts nodes 1..n and waits until node 1's quorum counts them all.
  void start(DaemonCluster& cluster, int nodes) {
    for (int n = 1; n <= nodes; ++n) cluster.start(n);
    for (int n = 1; n <= nodes; ++n)
      ASSERT_TRUE(eventually([&] {
        const std::string json = cluster.ctl_json(n, "quorum");
        return contains(json, "\"synced\": true") && json_counter(json, "total_votes") == static_cast<unsigned>(nodes);
      })) << cluster.ctl_json(n, "quorum");
  }
};

// Whether node `node`'s rtotemd counts `votes` within the bound. It sends its clients a change in
// the turn that makes it, before it answers rtotemctl: once rtotemctl shows the change, whatever
// the daemon sends a handle for it waits there, and a dispatch finds it.
bool counts_votes(const DaemonCluster& cluster, int node, unsigned votes) {
  return eventually([&] { return json_counter(cluster.ctl_json(node, "quorum"), "total_votes") == votes; });
}

// Runs `corosync-cmapctl ARGS` on node `node` as a tracker (-t or -T: its stdin a fifo it waits on),
// makes the changes, and stops it with "q" once its output holds `until`: its output in `out`.
void track_with_cmapctl(DaemonCluster& cluster, int node, const std::string& args, const std::function<void()>& changes,
                        const std::string& until, std::string& out) {
  static int trackers = 0;
  const std::string fifo = fmt::format("{}/track-stdin-{}", cluster.dir(), ++trackers);
  const std::string track_out = fmt::format("{}/track-out-{}", cluster.dir(), trackers);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const pid_t tracker = fork();
  ASSERT_GE(tracker, 0);
  if (tracker == 0) {
    std::string ignored;
    _exit(corosync_tool(cluster, node, fmt::format("stdbuf -oL corosync-cmapctl {} < {} > {}", args, fifo, track_out),
                        ignored));
  }
  ChildReaper reaper(tracker);
  FILE* stdin_of_tracker = std::fopen(fifo.c_str(), "w");
  ASSERT_NE(stdin_of_tracker, nullptr);
  ASSERT_TRUE(eventually([&] { return contains(read_file(track_out), "Type \"q\" to finish"); }))
      << read_file(track_out);
  changes();
  const bool seen = eventually([&] { return contains(read_file(track_out), until); });
  std::fputs("q\n", stdin_of_tracker);
  std::fclose(stdin_of_tracker);
  out = read_file(track_out);
  ASSERT_TRUE(seen) << until << " not in\n" << out;
  int status = 0;
  ASSERT_TRUE(eventually([&] { return waitpid(tracker, &status, WNOHANG) == tracker; }));
  reaper.pid = 0;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  out = read_file(track_out);
}

// The ring id rtotemctl reports for node `node`'s quorum state, as corosync prints ring ids.
std::string ring_id(const DaemonCluster& cluster, int node) {
  const std::string json = cluster.ctl_json(node, "quorum");
  const auto ring = json.find("\"ring\"");
  return fmt::format("{:x}.{:x}", json_counter(json.substr(ring), "rep"), json_counter(json.substr(ring), "seq"));
}

TEST_F(CorosyncTools, QuorumtoolShowsTheVotesQuorumAndMembersOfTheRing) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  start(cluster, 3);
  std::string out;
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-quorumtool -s -i", out), 0) << out;
  EXPECT_TRUE(contains(out, "Quorum provider:  corosync_votequorum\nNodes:            3\nNode ID:          1\n"))
      << out;
  EXPECT_TRUE(contains(out, fmt::format("Ring ID:          {}\nQuorate:          Yes\n", ring_id(cluster, 1)))) << out;
  EXPECT_TRUE(contains(out,
                       "Expected votes:   3\nHighest expected: 3\nTotal votes:      3\nQuorum:           2  \n"
                       "Flags:            Quorate \n"))
      << out;
  EXPECT_TRUE(contains(out,
                       "    Nodeid      Votes Name\n         1          1 127.0.0.1 (local)\n"
                       "         2          1 127.0.0.2\n         3          1 127.0.0.3\n"))
      << out;

  // Votes changed through votequorum at node 2 show at node 1.
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 2, "corosync-quorumtool -v 2 -n 3", out), 0) << out;
  ASSERT_TRUE(eventually([&] {
    out.clear();
    return corosync_tool(cluster, 1, "corosync-quorumtool -l -i", out) == 0 &&
           contains(out, "         3          2 127.0.0.3\n");
  })) << out;

  // Back to one vote, and the expected votes (raised to 4 with them) back to 3.
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-quorumtool -v 1 -n 3", out), 0) << out;
  ASSERT_TRUE(eventually([&] {
    out.clear();
    return corosync_tool(cluster, 1, "corosync-quorumtool -s -i", out) == 0 && contains(out, "Total votes:      3\n");
  })) << out;
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-quorumtool -e 3", out), 0) << out;
  ASSERT_TRUE(eventually([&] {
    out.clear();
    return corosync_tool(cluster, 1, "corosync-quorumtool -s -i", out) == 0 && contains(out, "Expected votes:   3\n");
  })) << out;

  // A lost node: the other two stay quorate; alone, a node is not (exit 2).
  cluster.kill(3, SIGKILL);
  ASSERT_TRUE(eventually([&] {
    out.clear();
    return corosync_tool(cluster, 1, "corosync-quorumtool -s -i", out) == 0 && contains(out, "Nodes:            2\n");
  })) << out;
  EXPECT_TRUE(contains(out, "Total votes:      2\n")) << out;
  cluster.kill(2, SIGKILL);
  ASSERT_TRUE(eventually([&] {
    out.clear();
    return corosync_tool(cluster, 1, "corosync-quorumtool -s -i", out) == 2 && contains(out, "Nodes:            1\n");
  })) << out;
  EXPECT_TRUE(contains(out, "Quorate:          No\n")) << out;
  EXPECT_TRUE(contains(out, "Activity blocked")) << out;
}

// Issue 48, bug 3: a user Corosync would let connect but rtotemd does not let change quorum gets
// the answer Corosync gives a caller it does not admit, CS_ERR_ACCESS, from votequorum_setvotes
// and votequorum_setexpected; it still reads the state.
TEST_F(CorosyncTools, QuorumtoolAsAnUnprivilegedUserMayReadButNotChangeVotes) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run corosync-quorumtool as another user";
  DaemonCluster cluster(2, 1000, "", std::string(kVotequorum) + "ipc {\n  allow_uid: 65534\n}\n");
  start(cluster, 2);
  const std::string nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  std::string out;
  EXPECT_EQ(corosync_tool(cluster, 1, nobody + "corosync-quorumtool -v 2 -n 1", out), 1) << out;
  EXPECT_TRUE(contains(out, "Unable to set votes 2 for nodeid: 1: CS_ERR_ACCESS")) << out;
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, nobody + "corosync-quorumtool -e 3", out), 1) << out;
  EXPECT_TRUE(contains(out, "Unable to set expected votes: CS_ERR_ACCESS")) << out;
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, nobody + "corosync-quorumtool -s -i", out), 0) << out;
  EXPECT_TRUE(contains(out, "Expected votes:   2\nHighest expected: 2\nTotal votes:      2\n")) << out;
}

TEST_F(CorosyncTools, CmapctlGetsSetsDeletesAndTracksKeys) {
  DaemonCluster cluster(2, 1000, "", kVotequorum);
  start(cluster, 2);
  std::string out;
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl totem.cluster_name runtime.votequorum.this_node_id", out), 0)
      << out;
  EXPECT_TRUE(contains(out, fmt::format("totem.cluster_name (str) = {}\n", cluster.cluster_name()))) << out;
  EXPECT_TRUE(contains(out, "runtime.votequorum.this_node_id (u32) = 1\n")) << out;
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl nodelist.node.", out), 0) << out;
  EXPECT_TRUE(contains(out,
                       "nodelist.node.0.nodeid (u32) = 1\nnodelist.node.0.quorum_votes (u32) = 1\n"
                       "nodelist.node.0.ring0_addr (str) = 127.0.0.1\nnodelist.node.1.nodeid (u32) = 2\n"))
      << out;

  // Every type, set by the tool and read back by it; a delete; an absent key.
  for (const char* set :
       {"test.i8 i8 -- -7", "test.u64 u64 18446744073709551615", "test.d dbl 2.5", "test.s str hello"}) {
    out.clear();
    EXPECT_EQ(corosync_tool(cluster, 1, fmt::format("corosync-cmapctl -s {}", set), out), 0) << set << ": " << out;
  }
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl test.", out), 0) << out;
  EXPECT_EQ(out,
            "test.d (dbl) = 2.500000\ntest.i8 (i8) = -7\ntest.s (str) = hello\n"
            "test.u64 (u64) = 18446744073709551615\n");
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -d test.s", out), 0) << out;
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -g test.s", out), 1) << out;
  EXPECT_TRUE(contains(out, "Can't get key test.s. Error CS_ERR_NOT_EXIST")) << out;
  // The config's keys are read-only, as Corosync's.
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -s totem.token u32 5", out), 1) << out;
  EXPECT_TRUE(contains(out, "Failed to set key totem.token. Error CS_ERR_ACCESS")) << out;
  // A prefix that matches nothing prints nothing and exits 1, as Corosync's.
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl no.such.prefix", out), 1) << out;
  EXPECT_EQ(out, "");

  // Tracking: -T waits on the library's fd.
  std::string tracked;
  ASSERT_NO_FATAL_FAILURE(track_with_cmapctl(
      cluster, 1, "-T test.",
      [&] {
        for (const char* change : {"-s test.new u32 42", "-s test.new u32 43", "-d test.new"}) {
          out.clear();
          EXPECT_EQ(corosync_tool(cluster, 1, fmt::format("corosync-cmapctl {}", change), out), 0) << out;
        }
      },
      "delete>", tracked));
  EXPECT_TRUE(contains(tracked,
                       "create> test.new (u32) = 42\nmodify> test.new (u32) = 43\n"
                       "delete> test.new (u32) = 43\n"))
      << tracked;
}

// Two links on UDP and a client: corosync-cmapctl -m stats shows Corosync's statistics keys where
// rtotem has the fact (docs/corosync-api.md lists them), refuses writes as Corosync's does, and
// tells a tracker of a counter that moved; the default map holds none of them.
TEST_F(CorosyncTools, CmapctlShowsTheStatisticsMapAndTracksACounter) {
  DaemonCluster cluster(2, 1000, "", kVotequorum);
  std::string links = fmt::format(
      "totem {{\n  cluster_name: {}\n  transport: udpu\n  token: 1000\n"
      "  interface {{\n    linknumber: 0\n    mcastport: {}\n  }}\n"
      "  interface {{\n    linknumber: 1\n    mcastport: {}\n  }}\n}}\n"
      "logging {{\n  to_stderr: yes\n}}\n{}nodelist {{\n",
      cluster.cluster_name(), cluster.port(), cluster.port() + 1, kVotequorum);
  for (int n = 1; n <= 2; ++n)
    links += fmt::format("  node {{\n    nodeid: {}\n    ring0_addr: 127.0.0.{}\n    ring1_addr: 127.0.1.{}\n  }}\n", n,
                         n, n);
  const std::string path = cluster.dir() + "/links.conf";
  std::ofstream(path) << links + "}\n";
  for (int n = 1; n <= 2; ++n) cluster.use_config(n, path);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  ASSERT_NO_FATAL_FAILURE(join_group(clients, "g"));
  ASSERT_EQ(clients[0]->send("g", "one"), 0);
  ASSERT_TRUE(pump_until(raw(clients), [&] { return clients[1]->messages.size() == 1; }));
  // Each link's pings say whether it is up: both are, once the first pongs came back.
  ASSERT_TRUE(eventually([&] {
    std::string stats;
    return corosync_tool(cluster, 1, "corosync-cmapctl -m stats stats.knet.node2.", stats) == 0 &&
           contains(stats, "stats.knet.node2.link0.connected (u8) = 1") &&
           contains(stats, "stats.knet.node2.link1.connected (u8) = 1");
  }));

  std::string out;
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -m stats", out), 0) << out;
  for (const char* key :
       {"stats.srp.mcast_tx (u64) = ", "stats.srp.mcast_rx (u64) = ", "stats.srp.orf_token_rx (u64) = ",
        "stats.srp.operational_entered (u64) = ", "stats.knet.node1.link0.connected (u8) = 1\n",
        "stats.knet.node2.link1.enabled (u8) = 1\n", "stats.knet.node2.link0.connected (u8) = 1\n",
        "stats.knet.node2.link0.latency_ave (u32) = ", "stats.knet.node2.link1.mtu (u32) = ",
        // cmapctl's own connection and node 1's client
        "stats.ipcs.global.active (u64) = 2\n", "stats.ipcs.global.closed (u64) = "})
    EXPECT_TRUE(contains(out, key)) << key << " in\n" << out;
  EXPECT_FALSE(contains(out, "runtime.")) << out;
  EXPECT_FALSE(contains(out, "stats.knet.node1.link1.")) << out;  // this node: link 0, as knet's loopback
  EXPECT_GT(json_counter(cluster.ctl_json(1, "stats"), "messages_sent"), 0u);
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl stats.", out), 1) << out;  // not in the default map
  EXPECT_EQ(out, "");
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -m stats -s stats.srp.mcast_tx u64 0", out), 1) << out;
  EXPECT_TRUE(contains(out, "Failed to set key stats.srp.mcast_tx. Error CS_ERR_ACCESS")) << out;
  // -C: Corosync's clear; the count starts again from 0, rtotem's own counter under runtime. goes on.
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -m stats -C totem", out), 0) << out;
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -m stats -g stats.srp.mcast_tx", out), 0) << out;
  EXPECT_EQ(out, "stats.srp.mcast_tx (u64) = 0\n");
  EXPECT_GT(json_counter(cluster.ctl_json(1, "stats"), "messages_sent"), 0u);

  // -t: polled every 1.5 s, as Corosync's; node 1's client sends, and its count moves.
  std::string tracked;
  ASSERT_NO_FATAL_FAILURE(track_with_cmapctl(
      cluster, 1, "-m stats -t stats.srp.mcast_tx",
      [&] {
        ASSERT_EQ(clients[0]->send("g", "two"), 0);
        ASSERT_TRUE(pump_until(raw(clients), [&] { return clients[1]->messages.size() == 2; }));
      },
      "modify> stats.srp.mcast_tx (u64) = 1\n", tracked));
}

// Each connection's stats.ipcs.serviceN.PID.HANDLE.* keys, under Corosync's names and types: a
// drop-in library's under its Corosync service (cmapctl's own: service 0), a librtotem client's
// under service 64. A client that does not read has its events queued, and -C ipc zeroes the counts.
TEST_F(CorosyncTools, CmapctlShowsEachConnectionsIpcCounts) {
  DaemonCluster cluster(2, 1000, "", kVotequorum);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  ASSERT_NO_FATAL_FAILURE(join_group(clients, "g"));
  const std::string native = fmt::format("stats.ipcs.service64.{}.", getpid());
  const auto ipcs = [&] {
    std::string out;
    EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -m stats stats.ipcs.", out), 0) << out;
    return out;
  };
  // The one key of node 1's client named `name`, with its type and value ("(u64) = 5"), from the
  // line "<native>0x<handle>.<name> (u64) = 5". (No std::regex: g++ 12 warns inside it under ASan.)
  const auto value_of = [&](const std::string& out, const std::string& name) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with(native + "0x")) continue;
      const std::size_t dot = line.find('.', native.size());
      if (dot != std::string::npos && line.compare(dot + 1, name.size() + 2, name + " (") == 0)
        return line.substr(dot + 1 + name.size() + 1);
    }
    return std::string("(none)");
  };
  // A count of at least `least` in a value of `type` ("(u64) = 5").
  const auto counts_at_least = [](const std::string& value, const std::string& type, std::uint64_t least) {
    const std::string lead = "(" + type + ") = ";
    if (!value.starts_with(lead) || value.size() == lead.size()) return false;
    const std::string digits = value.substr(lead.size());
    return digits.find_first_not_of("0123456789") == std::string::npos && std::stoull(digits) >= least;
  };

  std::string out = ipcs();
  // corosync-cmapctl, as /proc/PID/comm names it (15 bytes of "corosync-cmapctl").
  {
    std::istringstream lines(out);
    bool cmapctl = false;
    for (std::string line; std::getline(lines, line);)
      cmapctl |= line.starts_with("stats.ipcs.service0.") && line.ends_with(".procname (str) = corosync-cmapct");
    EXPECT_TRUE(cmapctl) << out;
  }
  EXPECT_EQ(value_of(out, "procname"), "(str) = corosync_tools");
  EXPECT_EQ(value_of(out, "queueing"), "(i32) = 0");
  EXPECT_EQ(value_of(out, "queued"), "(u32) = 0");
  EXPECT_EQ(value_of(out, "invalid_request"), "(u64) = 0");
  EXPECT_EQ(value_of(out, "overload"), "(u64) = 0");
  EXPECT_EQ(value_of(out, "flow_control"), "(u32) = 0");
  EXPECT_EQ(value_of(out, "flow_control_count"), "(u64) = 0");
  EXPECT_TRUE(counts_at_least(value_of(out, "sent"), "u32", 0)) << out;
  for (const char* name : {"send_retries", "recv_retries"})
    EXPECT_TRUE(counts_at_least(value_of(out, name), "u64", 0)) << name << "\n" << out;
  // It connected, asked for its ring, joined and was told of the group: requests, answers, events.
  for (const char* name : {"requests", "responses", "dispatched"})
    EXPECT_TRUE(counts_at_least(value_of(out, name), "u64", 1)) << name << "\n" << out;
  EXPECT_FALSE(contains(out, "stats.ipcs.service64." + std::to_string(getpid()) + ".0x0.")) << out;

  // Node 1's client stops reading; node 2's sends more than its event ring holds.
  const std::string big(64 * 1024, 'x');
  constexpr int kBig = 48;  // 3 MiB, past the ring's 1 MiB
  for (int i = 0; i < kBig; ++i) ASSERT_EQ(clients[1]->send("g", big), 0) << i;
  ASSERT_TRUE(eventually([&] { return value_of(ipcs(), "queueing") == "(i32) = 1"; })) << ipcs();
  out = ipcs();
  EXPECT_TRUE(counts_at_least(value_of(out, "queued"), "u32", 1)) << out;
  ASSERT_TRUE(pump_until(raw(clients), [&] { return clients[0]->messages.size() == kBig; }));
  ASSERT_TRUE(eventually([&] { return value_of(ipcs(), "queueing") == "(i32) = 0"; })) << ipcs();
  EXPECT_EQ(value_of(ipcs(), "queued"), "(u32) = 0");

  // -C ipc: each connection counts again from 0 (cmapctl's next one asks after the clear).
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl -m stats -C ipc", out), 0) << out;
  out = ipcs();
  EXPECT_EQ(value_of(out, "requests"), "(u64) = 0") << out;
  EXPECT_EQ(value_of(out, "dispatched"), "(u64) = 0") << out;
  EXPECT_EQ(value_of(out, "sent"), "(u32) = 0") << out;
  // The clear's own connection may have closed since.
  EXPECT_TRUE(contains(out, "stats.ipcs.global.closed (u64) = 0\n") ||
              contains(out, "stats.ipcs.global.closed (u64) = 1\n"))
      << out;

  // A client that goes takes its keys with it.
  clients[0].reset();
  ASSERT_TRUE(eventually([&] { return !contains(ipcs(), native); })) << ipcs();
}

// Debian's corosync-blackbox, unmodified: it asks for a state dump and the flight data through cmap,
// then reads /var/lib/corosync/fdata with qb-blackbox. Here that directory is the node's state dir
// (a mount namespace of the tool's own), where rtotemd writes it. The flight data holds the
// daemon's recent lines, the state dump among them, debug ones too (not in its log).
TEST_F(CorosyncTools, CorosyncBlackboxPrintsTheDaemonsRecentLog) {
  if (access("/usr/sbin/qb-blackbox", X_OK) != 0 && access("/usr/bin/qb-blackbox", X_OK) != 0)
    GTEST_SKIP() << "qb-blackbox is not installed (libqb-tools; scripts/test installs it)";
  if (access("/var/lib/corosync", F_OK) != 0) GTEST_SKIP() << "no /var/lib/corosync to mount the state dir on";
  DaemonCluster cluster(2, 1000, "", kVotequorum);
  start(cluster, 2);
  std::string out;
  ASSERT_EQ(
      corosync_tool(cluster, 1,
                    fmt::format("unshare -m sh -c 'mount --bind {}/state-1 /var/lib/corosync && corosync-blackbox'",
                                cluster.dir()),
                    out),
      0)
      << out;
  EXPECT_TRUE(contains(out, "forming the ring")) << out;
  EXPECT_TRUE(contains(out, "state: status 1/")) << out;  // dump_state's lines
  EXPECT_TRUE(contains(out, "{\"nodeid\": 1, ")) << out;
  EXPECT_TRUE(contains(out, "quorum: quorate in ring")) << out;
  // A debug line (libqb's, of each connection): in the flight data, not in the log.
  EXPECT_TRUE(contains(out, "IPC credentials authenticated")) << out;
  EXPECT_FALSE(contains(cluster.log(1), "IPC credentials authenticated")) << cluster.log(1);
  EXPECT_TRUE(contains(cluster.log(1), "flight data written to " + cluster.dir() + "/state-1/fdata")) << cluster.log(1);
}

// A daemon that dies of a fatal signal (an assertion's abort, say) writes its flight data first:
// after a fence or a crash it is the one record of what the node did.
TEST_F(CorosyncTools, AFatalSignalLeavesTheFlightDataForQbBlackbox) {
  if (access("/usr/sbin/qb-blackbox", X_OK) != 0 && access("/usr/bin/qb-blackbox", X_OK) != 0)
    GTEST_SKIP() << "qb-blackbox is not installed (libqb-tools; scripts/test installs it)";
  DaemonCluster cluster(1, 1000, "", kVotequorum);
  start(cluster, 1);
  const std::string fdata = cluster.dir() + "/state-1/fdata";
  ASSERT_NE(access(fdata.c_str(), F_OK), 0) << "no flight data before the signal";
  const int status = cluster.kill(1, SIGABRT);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << "ended as the signal ends it: " << status;
  std::string out;
  ASSERT_EQ(corosync_tool(cluster, 1, "qb-blackbox " + fdata, out), 0) << out;
  EXPECT_TRUE(contains(out, "forming the ring")) << out;
  EXPECT_TRUE(contains(out, "quorum: quorate in ring")) << out;
}

TEST_F(CorosyncTools, CfgtoolShowsNodesLinksAndAddressesAndKillsANode) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  start(cluster, 3);
  std::string out;
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cfgtool -s", out), 0) << out;
  EXPECT_TRUE(contains(out,
                       "Local node ID 1, transport udpu\nLINK ID 0 \n\taddr\t= 127.0.0.1\n\tstatus:\n"
                       "\t\tnodeid:          1:\tlocalhost\n\t\tnodeid:          2:\tconnected\n"
                       "\t\tnodeid:          3:\tconnected\n"))
      << out;
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cfgtool -a 2", out), 0) << out;
  EXPECT_EQ(out, "127.0.0.2\n");

  // Node 3 is killed through the ring: it exits 3 (its unit does not restart it), and the others
  // show it disconnected.
  out.clear();
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cfgtool -k 3", out), 0) << out;
  EXPECT_TRUE(contains(out, "Killing node 3")) << out;
  int status = 0;
  ASSERT_TRUE(eventually([&] { return waitpid(cluster.pid(3), &status, WNOHANG) == cluster.pid(3); }));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  ASSERT_TRUE(eventually([&] {
    out.clear();
    return corosync_tool(cluster, 1, "corosync-cfgtool -s -b", out) == 0 && contains(out, "\tstatus\t= n31\n");
  })) << out;
  // A node that is not in the ring cannot be killed.
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cfgtool -k 3", out), 1) << out;
  EXPECT_TRUE(contains(out, "Could not kill node (error = CS_ERR_NOT_EXIST)")) << out;

  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cfgtool -R", out), 0) << out;
  EXPECT_TRUE(contains(out, "Reloading corosync.conf...\nDone\n")) << out;
}

std::vector<std::vector<uint32_t>> nodelists, quorums;  // what the callbacks below saw: members
int null_lists = 0;  // lists handed over as NULL, empty ones included: Corosync's never are

void record_nodelist(quorum_handle_t, quorum_ring_id, uint32_t n, const uint32_t* members, uint32_t,
                     const uint32_t* joined, uint32_t, const uint32_t* left) {
  null_lists += (members == nullptr) + (joined == nullptr) + (left == nullptr);
  nodelists.emplace_back(members, members + n);
}
void record_quorum(quorum_handle_t, uint32_t, quorum_ring_id, uint32_t n, const uint32_t* members) {
  quorums.emplace_back(members, members + n);
}

// A libquorum V1 handle on node 1's rtotemd whose callbacks record into the lists above, cleared
// first; 0 if it could not be made.
quorum_handle_t open_quorum(const DaemonCluster& cluster, uint32_t& type) {
  quorums.clear();
  nodelists.clear();
  null_lists = 0;
  setenv("RTOTEM_IPC", cluster.ipc_name(1).c_str(), 1);
  quorum_model_v1_data_t model{QUORUM_MODEL_V1, record_quorum, record_nodelist};
  quorum_handle_t handle = 0;
  const cs_error_t rc =
      quorum_model_initialize(&handle, QUORUM_MODEL_V1, reinterpret_cast<quorum_model_data_t*>(&model), &type, nullptr);
  unsetenv("RTOTEM_IPC");
  EXPECT_EQ(rc, CS_OK);
  return rc == CS_OK ? handle : 0;
}

// dlm dispatches its quorum handle once (CS_DISPATCH_ONE) to pick up a ring's notification: the
// ring changes rtotemd sends to every connection must not use that one dispatch up.
TEST_F(CorosyncTools, OneQuorumDispatchAfterARingChangeBringsItsNotifications) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  start(cluster, 3);
  uint32_t type = 0;
  const quorum_handle_t handle = open_quorum(cluster, type);
  ASSERT_NE(handle, 0U);
  EXPECT_EQ(type, static_cast<uint32_t>(QUORUM_SET));
  ASSERT_EQ(quorum_trackstart(handle, CS_TRACK_CHANGES), CS_OK);
  ASSERT_TRUE(eventually([&] { return quorum_dispatch(handle, CS_DISPATCH_ALL) == CS_OK && quorums.size() == 1; }));
  EXPECT_EQ(nodelists.size(), 1U) << "the nodelist notification first";
  cluster.kill(3, SIGKILL);
  ASSERT_TRUE(counts_votes(cluster, 1, 2));  // the events of the new ring wait at the handle
  ASSERT_EQ(quorum_dispatch(handle, CS_DISPATCH_ONE), CS_OK);
  ASSERT_EQ(quorums.size(), 2U) << "one dispatch: the new ring's quorum notification";
  EXPECT_EQ(quorums.back(), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(nodelists.back(), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(null_lists, 0) << "the first notification's empty joined and left lists come as pointers";
  EXPECT_EQ(quorum_finalize(handle), CS_OK);
}

// quorum_trackstart(CS_TRACK_CURRENT) tells the state at that call: not a change of an earlier
// tracking still unread at the handle. And, as Corosync, CURRENT alone tells no change after it.
TEST_F(CorosyncTools, TrackingTheCurrentQuorumTellsTheStateAtTrackstartAndNoChangeAfter) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  start(cluster, 3);
  uint32_t type = 0;
  const quorum_handle_t handle = open_quorum(cluster, type);
  ASSERT_NE(handle, 0U);
  ASSERT_EQ(quorum_trackstart(handle, CS_TRACK_CHANGES), CS_OK);
  ASSERT_TRUE(eventually([&] { return quorum_dispatch(handle, CS_DISPATCH_ALL) == CS_OK && quorums.size() == 1; }));
  cluster.kill(3, SIGKILL);
  ASSERT_TRUE(counts_votes(cluster, 1, 2));  // the change ({1,2}) waits at the handle, unread
  ASSERT_EQ(quorum_trackstop(handle), CS_OK);
  cluster.start(3);
  ASSERT_TRUE(counts_votes(cluster, 1, 3));
  ASSERT_EQ(quorum_trackstart(handle, CS_TRACK_CURRENT), CS_OK);
  ASSERT_TRUE(eventually([&] { return quorum_dispatch(handle, CS_DISPATCH_ALL) == CS_OK && quorums.size() == 2; }));
  EXPECT_EQ(quorums.back(), (std::vector<uint32_t>{1, 2, 3})) << "the state at trackstart";
  EXPECT_EQ(nodelists.back(), (std::vector<uint32_t>{1, 2, 3}));

  cluster.kill(3, SIGKILL);
  ASSERT_TRUE(counts_votes(cluster, 1, 2));
  ASSERT_EQ(quorum_dispatch(handle, CS_DISPATCH_ALL), CS_OK);
  EXPECT_EQ(quorums.size(), 2U);

  // CURRENT again: the state again, its nodelist notification first, though the ring is the same.
  const std::size_t lists = nodelists.size();
  ASSERT_EQ(quorum_trackstart(handle, CS_TRACK_CURRENT), CS_OK);
  ASSERT_TRUE(eventually([&] { return quorum_dispatch(handle, CS_DISPATCH_ALL) == CS_OK && quorums.size() == 3; }));
  EXPECT_EQ(nodelists.size(), lists + 1);
  EXPECT_EQ(quorum_finalize(handle), CS_OK);
}

std::vector<uint64_t> votequorum_contexts;  // each votequorum quorum notification's context
void record_votequorum(votequorum_handle_t, uint64_t context, uint32_t, uint32_t, votequorum_node_t[]) {
  votequorum_contexts.push_back(context);
}
std::vector<uint64_t> votequorum_nodelists;  // each votequorum nodelist notification's context
void record_votequorum_nodelist(votequorum_handle_t, uint64_t context, votequorum_ring_id_t, uint32_t, uint32_t[]) {
  votequorum_nodelists.push_back(context);
}

std::vector<uint32_t> expected_told;      // each votequorum expected-votes notification's value
std::vector<uint64_t> expected_contexts;  // and its context
void record_expected(votequorum_handle_t, uint64_t context, uint32_t expected) {
  expected_told.push_back(expected);
  expected_contexts.push_back(context);
}

// As Corosync's services: a quorum notification comes once per ring and when quorate flips, not
// when only the votes or expected votes change (the expected-votes notification tells that).
// corosync-quorumtool -m waits for one votequorum nodelist notification, which comes once per
// ring, after each libquorum notification: one more of those left it a ring behind.
TEST_F(CorosyncTools, AQuorumNotificationComesPerRingNotWhenOnlyTheVotesChange) {
  DaemonCluster cluster(3, 1000, "", kVotequorum);
  start(cluster, 3);
  const std::string monitor = cluster.dir() + "/quorumtool-m.out", monitor_pid = cluster.dir() + "/quorumtool-m.pid";
  struct Stop {  // the monitor, however the test ends
    const DaemonCluster& cluster;
    std::string pid;
    ~Stop() {
      std::string out;
      (void)cluster.run(1, fmt::format("kill $(cat {}) 2>/dev/null", pid), out);
    }
  } stop{cluster, monitor_pid};
  std::string out;
  ASSERT_EQ(corosync_tool(cluster, 1,
                          fmt::format("timeout 60 stdbuf -oL corosync-quorumtool -m > {} 2>&1 & echo $! > {}", monitor,
                                      monitor_pid),
                          out),
            0)
      << out;
  uint32_t type = 0;
  const quorum_handle_t q = open_quorum(cluster, type);
  ASSERT_NE(q, 0U);
  setenv("RTOTEM_IPC", cluster.ipc_name(1).c_str(), 1);
  votequorum_callbacks_t callbacks{record_votequorum, record_expected, nullptr};
  votequorum_handle_t vq = 0;
  ASSERT_EQ(votequorum_initialize(&vq, &callbacks), CS_OK);
  unsetenv("RTOTEM_IPC");
  votequorum_contexts.clear();
  expected_told.clear();
  const auto dispatch_both = [&] {
    return quorum_dispatch(q, CS_DISPATCH_ALL) == CS_OK && votequorum_dispatch(vq, CS_DISPATCH_ALL) == CS_OK;
  };
  ASSERT_EQ(quorum_trackstart(q, CS_TRACK_CHANGES), CS_OK);
  ASSERT_EQ(votequorum_trackstart(vq, 1, CS_TRACK_CHANGES), CS_OK);
  ASSERT_TRUE(eventually([&] { return dispatch_both() && quorums.size() == 1 && votequorum_contexts.size() == 1; }));
  ASSERT_TRUE(eventually([&] { return contains(read_file(monitor), "Nodes:            3"); })) << read_file(monitor);

  ASSERT_EQ(votequorum_setvotes(vq, 1, 2), CS_OK);  // 4 votes, 4 expected: quorate throughout
  ASSERT_TRUE(eventually([&] { return dispatch_both() && expected_told == std::vector<uint32_t>{4}; }));
  ASSERT_TRUE(counts_votes(cluster, 1, 4));  // and whatever else the change makes waits at the handles
  ASSERT_TRUE(dispatch_both());
  EXPECT_EQ(quorums.size(), 1U) << "a libquorum notification for the votes";
  EXPECT_EQ(votequorum_contexts.size(), 1U) << "a votequorum quorum notification for the votes";

  cluster.kill(3, SIGKILL);
  ASSERT_TRUE(eventually([&] { return dispatch_both() && quorums.size() == 2 && votequorum_contexts.size() == 2; }));
  EXPECT_EQ(quorums.back(), (std::vector<uint32_t>{1, 2}));
  EXPECT_TRUE(eventually([&] {
    const std::string shown = read_file(monitor);
    const auto last = shown.rfind("Nodes:");
    return last != std::string::npos && shown.compare(last, 19, "Nodes:            2") == 0;
  })) << "corosync-quorumtool -m shows the ring of two:\n"
      << read_file(monitor);
  EXPECT_EQ(votequorum_finalize(vq), CS_OK);
  EXPECT_EQ(quorum_finalize(q), CS_OK);
}

// Tracking answers as Corosync's quorum and votequorum services give them: a trackstart with no
// track flag is accepted and tracks nothing; a second one while changes are tracked is refused
// (CS_ERR_EXIST) and the first flags and context stay; CURRENT alone tracks no change. A trackstop
// with no change tracked is CS_ERR_NOT_EXIST from votequorum and CS_OK from quorum (whose service
// sends CS_OK either way).
TEST_F(CorosyncTools, TrackstartAndTrackstopAnswerAsCorosyncsQuorumServices) {
  DaemonCluster cluster(1, 1000, "", kVotequorum);
  start(cluster, 1);
  setenv("RTOTEM_IPC", cluster.ipc_name(1).c_str(), 1);
  votequorum_callbacks_t callbacks{record_votequorum, record_expected, record_votequorum_nodelist};
  votequorum_handle_t vq = 0;
  ASSERT_EQ(votequorum_initialize(&vq, &callbacks), CS_OK);
  uint32_t type = 0;
  quorum_callbacks_t quorum_callbacks{};
  quorum_handle_t q = 0;
  ASSERT_EQ(quorum_initialize(&q, &quorum_callbacks, &type), CS_OK);
  unsetenv("RTOTEM_IPC");
  votequorum_contexts.clear();
  expected_contexts.clear();
  votequorum_nodelists.clear();
  const auto set_votes = [&](unsigned votes) {  // and what the daemon sends for it waits at the handle
    return votequorum_setvotes(vq, 0, votes) == CS_OK && counts_votes(cluster, 1, votes);
  };
  const auto told = [&](std::size_t n) {
    return eventually(
        [&] { return votequorum_dispatch(vq, CS_DISPATCH_ALL) == CS_OK && votequorum_contexts.size() == n; });
  };

  EXPECT_EQ(votequorum_trackstart(vq, 5, 0), CS_OK) << "no track flag";
  EXPECT_EQ(votequorum_trackstop(vq), CS_ERR_NOT_EXIST) << "nothing tracked";
  ASSERT_TRUE(set_votes(2));
  ASSERT_EQ(votequorum_dispatch(vq, CS_DISPATCH_ALL), CS_OK);
  EXPECT_TRUE(votequorum_contexts.empty() && expected_contexts.empty()) << "no track flag tracked the change";
  ASSERT_EQ(votequorum_trackstart(vq, 6, CS_TRACK_CURRENT), CS_OK);
  ASSERT_TRUE(told(1));
  EXPECT_EQ(votequorum_trackstop(vq), CS_ERR_NOT_EXIST) << "CURRENT alone tracks no change";
  ASSERT_EQ(votequorum_trackstart(vq, 7, CS_TRACK_CHANGES), CS_OK);
  ASSERT_TRUE(told(2));
  EXPECT_EQ(votequorum_trackstart(vq, 8, CS_TRACK_CHANGES_ONLY), CS_ERR_EXIST);
  ASSERT_TRUE(set_votes(3));  // expected votes 3: an expected-votes notification
  ASSERT_TRUE(
      eventually([&] { return votequorum_dispatch(vq, CS_DISPATCH_ALL) == CS_OK && !expected_contexts.empty(); }));
  EXPECT_EQ(expected_contexts, (std::vector<uint64_t>{7})) << "the change, told with the first context";
  EXPECT_EQ(votequorum_contexts, (std::vector<uint64_t>{6, 7}));
  // The state at a trackstart starts with a nodelist notification, though a change of the same
  // ring from the tracking before (the expected votes, 4) is still unread before it.
  ASSERT_TRUE(set_votes(4));  // the change waits at the handle, unread
  EXPECT_EQ(votequorum_trackstop(vq), CS_OK);
  ASSERT_EQ(votequorum_trackstart(vq, 9, CS_TRACK_CURRENT), CS_OK);
  ASSERT_TRUE(told(3));
  EXPECT_EQ(votequorum_nodelists, (std::vector<uint64_t>{6, 7, 9}));
  EXPECT_EQ(expected_contexts, (std::vector<uint64_t>{7})) << "the change of the tracking before, told";
  EXPECT_EQ(votequorum_trackstop(vq), CS_ERR_NOT_EXIST);

  EXPECT_EQ(quorum_trackstart(q, 0), CS_OK) << "no track flag";
  EXPECT_EQ(quorum_trackstop(q), CS_OK);
  EXPECT_EQ(quorum_trackstart(q, CS_TRACK_CHANGES), CS_OK);
  EXPECT_EQ(quorum_trackstart(q, CS_TRACK_CHANGES), CS_ERR_EXIST);
  EXPECT_EQ(quorum_trackstop(q), CS_OK);
  EXPECT_EQ(votequorum_finalize(vq), CS_OK);
  EXPECT_EQ(quorum_finalize(q), CS_OK);
}

struct Notified {
  int32_t event = 0;
  std::string key;
  bool new_value_null = false, old_value_null = false;
  size_t new_len = 1, old_len = 1;
};

void notified(cmap_handle_t, cmap_track_handle_t, int32_t event, const char* key, cmap_notify_value new_value,
              cmap_notify_value old_value, void* user) {
  *static_cast<Notified*>(user) = {event,         key,          new_value.data == nullptr, old_value.data == nullptr,
                                   new_value.len, old_value.len};
}

// Answers an application may branch on, as Corosync's libraries give them: a key's missing old
// value (an added key), or an empty value, is empty but not NULL, as Corosync's points into its
// message; a tracker deleted is a bad handle, even once another has been added; a node status
// version it does not know is an invalid parameter, checked before the handle; a tracker of no
// event is made, but not one of a flag cmap does not know or a key name too long.
TEST_F(CorosyncTools, EdgesOfCmapAndCfgAsCorosyncsLibrariesAnswerThem) {
  DaemonCluster cluster(1);
  cluster.start(1);
  setenv("RTOTEM_IPC", cluster.ipc_name(1).c_str(), 1);
  cmap_handle_t cmap = 0;
  ASSERT_TRUE(eventually([&] { return cmap_initialize(&cmap) == CS_OK; }));
  corosync_cfg_handle_t cfg = 0;
  ASSERT_EQ(corosync_cfg_initialize(&cfg, nullptr), CS_OK);
  unsetenv("RTOTEM_IPC");

  Notified seen;
  cmap_track_handle_t track = 0;
  ASSERT_EQ(cmap_track_add(cmap, "edges.", CMAP_TRACK_ADD | CMAP_TRACK_PREFIX, notified, &seen, &track), CS_OK);
  ASSERT_EQ(cmap_set_uint32(cmap, "edges.added", 7), CS_OK);
  ASSERT_TRUE(eventually([&] { return cmap_dispatch(cmap, CS_DISPATCH_ALL) == CS_OK && seen.event != 0; }));
  EXPECT_EQ(seen.event, CMAP_TRACK_ADD);
  EXPECT_EQ(seen.key, "edges.added");
  EXPECT_EQ(seen.old_len, 0U);
  EXPECT_FALSE(seen.old_value_null) << "an added key's old value";
  seen = {};
  ASSERT_EQ(cmap_set(cmap, "edges.empty", "", 0, CMAP_VALUETYPE_BINARY), CS_OK);
  ASSERT_TRUE(eventually([&] { return cmap_dispatch(cmap, CS_DISPATCH_ALL) == CS_OK && seen.event != 0; }));
  EXPECT_EQ(seen.new_len, 0U);
  EXPECT_FALSE(seen.new_value_null) << "an empty value";
  EXPECT_EQ(cmap_track_delete(cmap, track), CS_OK);
  cmap_track_handle_t next = 0;
  ASSERT_EQ(cmap_track_add(cmap, "edges.", CMAP_TRACK_ADD | CMAP_TRACK_PREFIX, notified, &seen, &next), CS_OK);
  EXPECT_EQ(cmap_track_delete(cmap, track), CS_ERR_BAD_HANDLE) << "a tracker deleted";
  EXPECT_EQ(cmap_track_delete(cmap, next), CS_OK);
  Notified none, added;
  ASSERT_EQ(cmap_track_add(cmap, "edges.", CMAP_TRACK_PREFIX, notified, &none, &next), CS_OK) << "no event";
  cmap_track_handle_t witness = 0;  // told of the same change, after the tracker of no event would be
  ASSERT_EQ(cmap_track_add(cmap, "edges.", CMAP_TRACK_ADD | CMAP_TRACK_PREFIX, notified, &added, &witness), CS_OK);
  ASSERT_EQ(cmap_set_uint32(cmap, "edges.later", 8), CS_OK);
  ASSERT_TRUE(eventually([&] { return cmap_dispatch(cmap, CS_DISPATCH_ALL) == CS_OK && added.event != 0; }));
  EXPECT_EQ(none.event, 0) << "a tracker of no event, called";
  EXPECT_EQ(cmap_track_delete(cmap, next), CS_OK);
  EXPECT_EQ(cmap_track_delete(cmap, next), CS_ERR_BAD_HANDLE);
  EXPECT_EQ(cmap_track_delete(cmap, witness), CS_OK);
  EXPECT_EQ(cmap_track_add(cmap, "edges.", CMAP_TRACK_ADD | 0x100, notified, &none, &next), CS_ERR_INVALID_PARAM)
      << "a flag cmap does not know";
  EXPECT_EQ(cmap_track_add(cmap, std::string(256, 'k').c_str(), CMAP_TRACK_PREFIX, notified, &none, &next),
            CS_ERR_NAME_TOO_LONG);
  EXPECT_EQ(cmap_track_add(0, "edges.", CMAP_TRACK_ADD, notified, &none, nullptr), CS_ERR_INVALID_PARAM)
      << "no place for the handle, checked before the handle";

  corosync_cfg_node_status_v1 status{};
  EXPECT_EQ(corosync_cfg_node_status_get(cfg, 1, static_cast<corosync_cfg_node_status_version_t>(99), &status),
            CS_ERR_INVALID_PARAM);
  EXPECT_EQ(corosync_cfg_node_status_get(0, 1, static_cast<corosync_cfg_node_status_version_t>(99), &status),
            CS_ERR_INVALID_PARAM);
  EXPECT_EQ(corosync_cfg_finalize(cfg), CS_OK);
  EXPECT_EQ(cmap_finalize(cmap), CS_OK);
}

TEST_F(CorosyncTools, WithoutADaemonTheToolsSayTheLibraryFailed) {
  DaemonCluster cluster(1);  // never started
  std::string out;
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-cmapctl", out), 1) << out;
  EXPECT_TRUE(contains(out, "Failed to initialize the cmap API. Error CS_ERR_LIBRARY")) << out;
  out.clear();
  EXPECT_EQ(corosync_tool(cluster, 1, "corosync-quorumtool -s", out), 1) << out;
  EXPECT_TRUE(contains(out, "Cannot initialize CMAP service")) << out;
}

}  // namespace
}  // namespace rtotem::testing
