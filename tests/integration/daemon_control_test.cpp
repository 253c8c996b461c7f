// The key store and node control on real daemons: the configuration and runtime state as keys,
// application keys with tracking, uidgid written at run time letting a user connect, the store's
// and the trackers' bounds by user, a shutdown vetoed and one agreed, a node killed through the
// ring, a reload that applies logging and votes and names the keys it refuses, and one that waits
// on a resolver that does not answer while the ring goes on.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rtotem/rtotem.h"

#include "tests/integration/daemon_cluster.hpp"
#include "base/fd.hpp"

namespace rtotem::testing {
namespace {

using namespace std::chrono_literals;

std::string ctl_out(const DaemonCluster& cluster, int node, const std::string& args) {
  std::string out;
  (void)cluster.ctl(node, args, out);
  return out;
}

void replace_in_file(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = read_file(path);
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in\n" << text;
  text.replace(at, from.size(), to);
  std::ofstream(path) << text;
}

struct Change {
  int event;
  std::string key;
  std::string value;  // a string value, or a u32's decimal
};

void record(rtotem_t*, std::uint64_t, int event, const char* key, const rtotem_key_value* now, const rtotem_key_value*,
            void* user) {
  std::string value;
  if (now != nullptr && now->type == RTOTEM_KEY_STRING) value.assign(static_cast<const char*>(now->data), now->len);
  if (now != nullptr && now->type == RTOTEM_KEY_UINT32)
    value = std::to_string(*static_cast<const std::uint32_t*>(now->data));
  static_cast<std::vector<Change>*>(user)->push_back({event, key, value});
}

TEST(DaemonKeys, TheTokenInForceGrowsWithTheNodelistAsCorosyncsDoes) {
  DaemonCluster cluster(3, 1000, "  token_coefficient: 200\n");
  std::vector<std::unique_ptr<TestClient>> clients;
  start_ring(cluster, 3, clients);
  EXPECT_EQ(ctl_out(cluster, 2, "get totem.token"), "totem.token (u32) = 1000\n");
  EXPECT_EQ(ctl_out(cluster, 2, "get totem.token_coefficient"), "totem.token_coefficient (u32) = 200\n");
  EXPECT_EQ(ctl_out(cluster, 2, "get runtime.config.totem.token"), "runtime.config.totem.token (u32) = 1200\n");
  EXPECT_EQ(ctl_out(cluster, 2, "get runtime.config.totem.consensus"), "runtime.config.totem.consensus (u32) = 1440\n");
  const std::string status = cluster.ctl_json(2, "status");
  EXPECT_NE(status.find("\"totem\": {\"token\": 1200, "), std::string::npos) << status;
  EXPECT_NE(status.find("\"consensus\": 1440"), std::string::npos) << status;
}

TEST(DaemonKeys, TheConfigurationAndTheRingAreKeysAndApplicationKeysAreTracked) {
  DaemonCluster cluster(2);
  std::vector<std::unique_ptr<TestClient>> clients;
  start_ring(cluster, 2, clients);
  std::string out;
  ASSERT_EQ(cluster.ctl(1, "get totem.cluster_name", out), 0) << out;
  EXPECT_EQ(out, fmt::format("totem.cluster_name (str) = {}\n", cluster.cluster_name()));
  out = ctl_out(cluster, 1, "list nodelist.");
  EXPECT_NE(out.find("nodelist.node.1.nodeid (u32) = 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("nodelist.node.0.ring0_addr (str) = 127.0.0.1\n"), std::string::npos) << out;
  EXPECT_NE(ctl_out(cluster, 1, "list runtime.config.totem.token").find("runtime.config.totem.token (u32) = 1000\n"),
            std::string::npos);
  out = ctl_out(cluster, 1, "list runtime.members.");
  EXPECT_NE(out.find("runtime.members.1.status (str) = joined\n"), std::string::npos) << out;  // itself too
  EXPECT_NE(out.find("runtime.members.2.status (str) = joined\n"), std::string::npos) << out;
  EXPECT_NE(out.find("runtime.members.2.ip (str) = r(0) ip(127.0.0.2) \n"), std::string::npos) << out;
  EXPECT_NE(ctl_out(cluster, 1, "list runtime.totem.srp.").find("(u64)"), std::string::npos);

  // What the file says is refused, with the reason.
  out.clear();
  EXPECT_EQ(cluster.ctl(1, "set totem.token u32 5000", out), 1);
  EXPECT_NE(out.find("not writable"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(cluster.ctl(1, "set app.x u8 300", out), 1);
  EXPECT_NE(out.find("is not a u8 value"), std::string::npos) << out;

  // An application's key, tracked by prefix: add, change (the same value again tells no one), delete.
  TestClient& tracker = *clients[0];
  std::vector<Change> seen;
  std::uint64_t track = 0;
  ASSERT_EQ(rtotem_key_track(tracker.handle(), "app.",
                             RTOTEM_TRACK_ADD | RTOTEM_TRACK_MODIFY | RTOTEM_TRACK_DELETE | RTOTEM_TRACK_PREFIX, record,
                             &seen, &track),
            0);
  for (const char* args : {"set app.state str one", "set app.state str one", "set app.state str two",
                           "set app.count u32 7", "delete app.state"}) {
    out.clear();
    ASSERT_EQ(cluster.ctl(1, args, out), 0) << args << ": " << out;
  }
  ASSERT_TRUE(pump_until({&tracker}, [&] { return seen.size() >= 4; })) << seen.size();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].event, RTOTEM_TRACK_ADD);
  EXPECT_EQ(seen[0].value, "one");
  EXPECT_EQ(seen[1].event, RTOTEM_TRACK_MODIFY);
  EXPECT_EQ(seen[1].value, "two");
  EXPECT_EQ(seen[2].key, "app.count");
  EXPECT_EQ(seen[2].value, "7");
  EXPECT_EQ(seen[3].event, RTOTEM_TRACK_DELETE);
  EXPECT_EQ(ctl_out(cluster, 2, "get app.count"), "rtotemctl: get app.count: no such key\n");  // local to each node
  char buf[64];
  std::size_t len = sizeof buf;
  rtotem_key_type type{};
  ASSERT_EQ(rtotem_key_get(tracker.handle(), "app.count", buf, &len, &type), 0);
  EXPECT_EQ(type, RTOTEM_KEY_UINT32);
  EXPECT_EQ(len, 4u);

  // A ring change shows under runtime.members.
  cluster.kill(2, SIGKILL);
  EXPECT_TRUE(eventually(
      [&] { return ctl_out(cluster, 1, "get runtime.members.2.status").find("= left") != std::string::npos; }));
}

// Pacemaker writes uidgid.gid.N for its haclient group: who may connect changes at once.
TEST(DaemonKeys, UidgidWrittenAtRunTimeLetsAUserConnect) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run a client as another user";
  constexpr uid_t kNobody = 65534;
  // In a child that becomes nobody: connect's -errno; once connected, 100 unless nobody is refused
  // what only root may do (write uidgid.*, shut down, kill, reload).
  auto as_nobody = [](const std::string& ipc) {
    const pid_t child = fork();
    if (child == 0) {
      if (setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(200);
      TestClient c;
      const int rc = c.connect(ipc, 5s);
      if (rc != 0) _exit(-rc);
      const std::uint8_t one = 1;
      const bool refused = rtotem_key_set(c.handle(), "uidgid.uid.65534", RTOTEM_KEY_UINT8, &one, 1) == -EACCES &&
                           rtotem_shutdown(c.handle(), RTOTEM_SHUTDOWN_IMMEDIATE) == -EPERM &&
                           rtotem_kill_node(c.handle(), 1, "by nobody") == -EPERM &&
                           rtotem_reload(c.handle(), nullptr, 0) == -EPERM;
      _exit(refused ? 0 : 100);
    }
    int status = -1;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  DaemonCluster cluster(1);
  cluster.start(1);
  TestClient root;
  ASSERT_EQ(root.connect(cluster.ipc_name(1)), 0);
  EXPECT_EQ(as_nobody(cluster.ipc_name(1)), EACCES);
  std::string out;
  ASSERT_EQ(cluster.ctl(1, "set uidgid.gid.65534 str 1", out), 0) << out;  // only a u8 of 1 grants, as corosync
  EXPECT_EQ(as_nobody(cluster.ipc_name(1)), EACCES);
  ASSERT_EQ(cluster.ctl(1, "set uidgid.gid.65534 u8 1", out), 0) << out;
  EXPECT_EQ(as_nobody(cluster.ipc_name(1)), 0) << cluster.log(1);
  ASSERT_EQ(cluster.ctl(1, "delete uidgid.gid.65534", out), 0) << out;
  EXPECT_EQ(as_nobody(cluster.ipc_name(1)), EACCES);
}

// Each refused write is the writer's error, answered -EACCES; the log tells of the first ones
// and then ever more rarely (the 2nd, 4th, 8th...), with the count: a client that writes in a
// loop does not flood it.
TEST(DaemonKeys, RefusedWritesDoNotFloodTheLog) {
  constexpr int kWrites = 10'000;
  DaemonCluster cluster(1);
  cluster.start(1);
  TestClient c;
  ASSERT_EQ(c.connect(cluster.ipc_name(1)), 0);
  const std::uint32_t value = 1;
  for (int i = 0; i < kWrites; ++i)
    ASSERT_EQ(rtotem_key_set(c.handle(), "totem.token", RTOTEM_KEY_UINT32, &value, sizeof value), -EACCES) << i;
  const std::string log = read_file(cluster.dir() + "/node-1.log");
  std::size_t lines = 0;
  for (std::size_t at = log.find("may not write totem.token"); at != std::string::npos;
       at = log.find("may not write totem.token", at + 1))
    ++lines;
  EXPECT_GE(lines, 1u) << cluster.log(1);
  EXPECT_LE(lines, 14u) << cluster.log(1);  // 1, 2, 4, ... 8192
  EXPECT_NE(log.find("(8192 refused so far)"), std::string::npos) << cluster.log(1);
}

// A child process of user `uid` (root only: setuid) with `connections` connections to `ipc`, each
// adding key trackers until one is refused; it keeps them until killed (by the destructor).
class TrackingUser {
 public:
  TrackingUser(const std::string& ipc, uid_t uid, int connections) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      ::close(fds[0]);
      if (setgid(uid) != 0 || setuid(uid) != 0) _exit(1);
      std::vector<std::unique_ptr<TestClient>> clients;
      std::vector<Change> seen;
      std::size_t added = 0;
      for (int i = 0; i < connections; ++i) {
        clients.push_back(std::make_unique<TestClient>());
        if (clients.back()->connect(ipc, 5s) != 0) _exit(2);
        for (std::uint64_t id = 0; rtotem_key_track(clients.back()->handle(), "app.",
                                                    RTOTEM_TRACK_ADD | RTOTEM_TRACK_PREFIX, record, &seen, &id) == 0;)
          ++added;
      }
      const std::string count = std::to_string(added) + "\n";
      if (::write(fds[1], count.data(), count.size()) != static_cast<ssize_t>(count.size())) _exit(3);
      for (;;) pause();
    }
    ::close(fds[1]);
    std::string out;
    char buf[32];
    for (ssize_t n; out.find('\n') == std::string::npos && (n = ::read(fds[0], buf, sizeof buf)) > 0;)
      out.append(buf, n);
    ::close(fds[0]);
    if (out.find('\n') != std::string::npos) trackers_ = std::stoul(out);
  }
  ~TrackingUser() { ChildReaper reap(pid_); }
  TrackingUser(const TrackingUser&) = delete;
  TrackingUser& operator=(const TrackingUser&) = delete;
  // How many it got; -1 if it failed (could not connect, or become `uid`).
  long trackers() const noexcept { return trackers_; }

 private:
  pid_t pid_ = -1;
  long trackers_ = -1;
};

// Trackers are bounded per connection (1,024), per user but root and the daemon's (4,096 for all
// its connections) and in all (16,384), where users but root and the daemon's share 12,288: a
// user the configuration lets in takes its own share with as many connections as it likes, and
// no more; another such user still gets trackers, and so does root (Pacemaker's cmap_track_add).
TEST(DaemonKeys, AUsersConnectionsTakeTheirShareOfTrackersAndRootStillGetsItsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run clients as other users";
  constexpr uid_t kNobody = 65534;
  constexpr uid_t kOther = 12345;  // needs no entry in the user database: allowed by number
  DaemonCluster cluster(1, 1000, "  max_message_size: 65536\n",
                        fmt::format("ipc {{\n  allow_uid: {} {}\n}}\n", kNobody, kOther));
  cluster.start(1);
  TestClient root;
  ASSERT_EQ(root.connect(cluster.ipc_name(1)), 0);
  const TrackingUser nobody(cluster.ipc_name(1), kNobody, 17);  // 17 x 1,024 is past every tracker there is
  EXPECT_EQ(nobody.trackers(), 4096) << cluster.log(1);
  const TrackingUser other(cluster.ipc_name(1), kOther, 1);
  EXPECT_EQ(other.trackers(), 1024) << cluster.log(1);
  std::vector<Change> seen;
  std::size_t added = 0;
  for (std::uint64_t id = 0;
       added < 1024 &&
       rtotem_key_track(root.handle(), "app.", RTOTEM_TRACK_ADD | RTOTEM_TRACK_PREFIX, record, &seen, &id) == 0;)
    ++added;
  EXPECT_EQ(added, 1024u) << "root's connection got no more";
}

// A user the configuration lets in fills the key store as far as it may: root still writes
// (Pacemaker's uidgid.gid.N for its haclient group, at its start).
TEST(DaemonKeys, AUserThatFillsTheStoreLeavesRoomForRootsKeys) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run a client as another user";
  constexpr uid_t kNobody = 65534;
  DaemonCluster cluster(1, 1000, "", fmt::format("ipc {{\n  allow_uid: {}\n}}\n", kNobody));
  cluster.start(1);
  TestClient root;
  ASSERT_EQ(root.connect(cluster.ipc_name(1)), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // exits 0 once even a value of one byte is refused for want of room
    if (setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(1);
    TestClient c;
    if (c.connect(cluster.ipc_name(1), 5s) != 0) _exit(2);
    int i = 0;
    for (std::size_t size = RTOTEM_KEY_VALUE_MAX; size > 0; size /= 2) {  // the largest values first
      const std::string value(size, 'x');
      for (int rc = 0; rc == 0 && i < 100'000; ++i) {
        rc =
            rtotem_key_set(c.handle(), fmt::format("app.{}", i).c_str(), RTOTEM_KEY_STRING, value.data(), value.size());
        if (rc != 0 && rc != -ENOSPC) _exit(3);
      }
    }
    _exit(i < 100'000 ? 0 : 4);
  }
  ChildReaper reaper(child);
  int status = -1;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  reaper.pid = 0;
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  std::string out;
  EXPECT_EQ(cluster.ctl(1, "set uidgid.gid.189 u8 1", out), 0) << out;
  const std::string value(RTOTEM_KEY_VALUE_MAX, 'r');
  EXPECT_EQ(rtotem_key_set(root.handle(), "app.roots", RTOTEM_KEY_STRING, value.data(), value.size()), 0);
}

struct ShutdownAnswer {
  int agree = 0;
  int asked = 0;
};

TEST(DaemonControl, AVetoedShutdownDoesNotHappenAndAnAgreedOneDoes) {
  DaemonCluster cluster(1);
  cluster.start(1);
  TestClient pacemaker;  // tracks shutdown and answers, as Pacemaker does through libcfg
  ASSERT_EQ(pacemaker.connect(cluster.ipc_name(1)), 0);
  static ShutdownAnswer answer;
  ASSERT_EQ(rtotem_shutdown_track(pacemaker.handle(),
                                  [](rtotem_t* h, int, void*) {
                                    ++answer.asked;
                                    (void)rtotem_shutdown_reply(h, answer.agree);
                                  }),
            0);
  // rtotemctl waits for the decision: the tracker answers meanwhile, on this thread's loop.
  auto shutdown = [&](std::string& out) {
    int status = -1;
    std::thread ask([&] { status = cluster.ctl(1, "shutdown", out); });
    (void)pump_until(
        {&pacemaker}, [&] { return false; }, 2s);
    ask.join();
    return status;
  };
  std::string out;
  answer.agree = 0;
  EXPECT_EQ(shutdown(out), 1) << out;
  EXPECT_EQ(answer.asked, 1);
  EXPECT_NE(cluster.log(1).find("shutdown refused: vetoed by pid"), std::string::npos) << cluster.log(1);
  int status = 0;
  EXPECT_EQ(waitpid(cluster.pid(1), &status, WNOHANG), 0) << "the daemon stopped after a veto";

  answer.agree = 1;
  out.clear();
  EXPECT_EQ(shutdown(out), 0) << out;
  EXPECT_EQ(answer.asked, 2);
  status = cluster.kill(1, 0);  // reaps it: SIGKILL if it has not exited within 5 s
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_NE(cluster.log(1).find("shutdown agreed: no client vetoed"), std::string::npos) << cluster.log(1);
}

// corosync's cfg: the asker is not asked (it waits, it could not answer), silence is a veto, and
// a client that stops tracking is no longer waited for.
TEST(DaemonControl, TheAskerIsNotAskedAndSilenceIsAVeto) {
  DaemonCluster cluster(1);
  cluster.start(1);
  TestClient silent, asker;
  ASSERT_EQ(silent.connect(cluster.ipc_name(1)), 0);
  ASSERT_EQ(asker.connect(cluster.ipc_name(1)), 0);
  static int asked = 0;
  const rtotem_shutdown_fn count = [](rtotem_t*, int, void*) { ++asked; };
  ASSERT_EQ(rtotem_shutdown_track(silent.handle(), count), 0);  // never dispatches: never answers
  ASSERT_EQ(rtotem_shutdown_track(asker.handle(), count), 0);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(rtotem_shutdown(asker.handle(), RTOTEM_SHUTDOWN_REQUEST), -EBUSY);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 4s);
  (void)asker.dispatch();
  EXPECT_EQ(asked, 0);
  EXPECT_NE(cluster.log(1).find("did not answer within 5000 ms"), std::string::npos) << cluster.log(1);
  ASSERT_EQ(rtotem_shutdown_track(silent.handle(), nullptr), 0);
  EXPECT_EQ(rtotem_shutdown(asker.handle(), RTOTEM_SHUTDOWN_REQUEST), 0);  // no one left to ask
  const int status = cluster.kill(1, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(DaemonControl, AKilledNodeLeavesTheRingAndExitsWithItsReason) {
  DaemonCluster cluster(2);
  std::vector<std::unique_ptr<TestClient>> clients;
  start_ring(cluster, 2, clients);
  std::string out;
  EXPECT_EQ(cluster.ctl(1, "kill 9", out), 1);
  EXPECT_NE(out.find("node 9 is not a member of the ring"), std::string::npos) << out;
  out.clear();
  ASSERT_EQ(cluster.ctl(1, "kill 2 fenced-by-test", out), 0) << out;
  const int status = cluster.kill(2, 0);  // reaps it: SIGKILL if it has not exited within 5 s
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  EXPECT_NE(cluster.log(2).find("this node is killed by node 1"), std::string::npos) << cluster.log(2);
  EXPECT_NE(cluster.log(2).find("fenced-by-test"), std::string::npos) << cluster.log(2);
  EXPECT_TRUE(pump_until({clients[0].get()}, [&] { return clients[0]->rings.back().size() == 1; }));
  EXPECT_EQ(ctl_out(cluster, 1, "addresses 2"), "127.0.0.2\n");
}

TEST(DaemonControl, AReloadAppliesLoggingAndVotesAndNamesWhatNeedsARestart) {
  DaemonCluster cluster(1, 1000, "", "quorum {\n  provider: corosync_votequorum\n}\n");
  cluster.start(1);
  ASSERT_TRUE(
      eventually([&] { return ctl_out(cluster, 1, "--json quorum").find("\"quorate\": true") != std::string::npos; }));
  std::string out;
  ASSERT_EQ(cluster.ctl(1, "reload", out), 0) << out;
  EXPECT_EQ(out, "node 1: no change\n");

  replace_in_file(cluster.config_path(), "  debug: off\n", "  debug: on\n");
  replace_in_file(cluster.config_path(), "    nodeid: 1\n", "    nodeid: 1\n    quorum_votes: 3\n");
  out.clear();
  ASSERT_EQ(cluster.ctl(1, "reload", out), 0) << out << cluster.log(1);
  EXPECT_NE(out.find("logging.debug"), std::string::npos) << out;
  EXPECT_NE(out.find("nodelist.node.0.quorum_votes"), std::string::npos) << out;
  EXPECT_TRUE(eventually([&] {
    return ctl_out(cluster, 1, "--json quorum").find("\"total_votes\": 3") != std::string::npos;
  })) << ctl_out(cluster, 1, "--json quorum");
  EXPECT_EQ(ctl_out(cluster, 1, "get logging.debug"), "logging.debug (str) = on\n");
  EXPECT_NE(ctl_out(cluster, 1, "get runtime.votequorum.expected_votes").find("= 3"), std::string::npos);

  // A key that needs a restart refuses the whole reload, and says which.
  replace_in_file(cluster.config_path(), "  debug: on\n", "  debug: off\n");
  replace_in_file(cluster.config_path(), fmt::format("    mcastport: {}\n", cluster.port()),
                  fmt::format("    mcastport: {}\n", cluster.port() + 7));
  out.clear();
  EXPECT_EQ(cluster.ctl(1, "reload", out), 1) << out;
  EXPECT_NE(out.find("node 1: nothing changed: totem.interface.0.mcastport differ(s) from the running configuration "
                     "and need(s) a restart"),
            std::string::npos)
      << out;
  EXPECT_EQ(ctl_out(cluster, 1, "get logging.debug"), "logging.debug (str) = on\n");  // nothing applied

  // SIGHUP reloads this node alone: the timing, which every member must take at once, is refused.
  replace_in_file(cluster.config_path(), fmt::format("    mcastport: {}\n", cluster.port() + 7),
                  fmt::format("    mcastport: {}\n", cluster.port()));
  replace_in_file(cluster.config_path(), "  token: 1000\n", "  token: 2000\n");
  cluster.signal(1, SIGHUP);
  EXPECT_TRUE(eventually([&] {
    return cluster.log(1).find("totem.token change(s) only in a reload of every node") != std::string::npos;
  })) << cluster.log(1);
  EXPECT_EQ(ctl_out(cluster, 1, "get runtime.config.totem.token"), "runtime.config.totem.token (u32) = 1000\n");
}

// rtotemctl reload reloads every member, each from its own file: a new token is in force on all
// three with no ring change; files that disagree about it change nothing anywhere, and say where.
TEST(DaemonControl, AReloadOfEveryNodeChangesTheTokenEverywhereAtOnePlace) {
  DaemonCluster cluster(3);
  const std::string own = cluster.dir() + "/node3.conf";
  std::ofstream(own) << read_file(cluster.config_path());
  cluster.use_config(3, own);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 3, clients));
  ASSERT_NO_FATAL_FAILURE(join_group(clients, "g"));
  const auto rings = [&] {
    std::uint64_t sum = 0;
    for (int n = 1; n <= 3; ++n) sum += json_counter(cluster.ctl_json(n, "stats"), "rings_installed");
    return sum;
  };
  const std::uint64_t rings_before = rings();
  const auto token_everywhere = [&](int ms) {
    for (int n = 1; n <= 3; ++n) {
      if (cluster.ctl_json(n, "status").find(fmt::format("\"totem\": {{\"token\": {}, ", ms)) == std::string::npos)
        return false;
      if (ctl_out(cluster, n, "get runtime.config.totem.token") !=
          fmt::format("runtime.config.totem.token (u32) = {}\n", ms))
        return false;
    }
    return true;
  };

  replace_in_file(cluster.config_path(), "  token: 1000\n", "  token: 2000\n");  // nodes 1 and 2 only
  std::string out;
  EXPECT_EQ(cluster.ctl(2, "reload", out), 1) << out;
  EXPECT_NE(out.find("nothing changed on any node: the nodes' files disagree about runtime.config.totem.consensus, "
                     "runtime.config.totem.fail_recv_ms, runtime.config.totem.hold, runtime.config.totem.token and 1 "
                     "more: node 1 reads runtime.config.totem.consensus=2400, "),
            std::string::npos)
      << out;
  EXPECT_TRUE(token_everywhere(1000));

  replace_in_file(own, "  token: 1000\n", "  token: 2000\n");
  out.clear();
  ASSERT_EQ(cluster.ctl(2, "reload", out), 0) << out;
  for (int n = 1; n <= 3; ++n)
    EXPECT_NE(out.find(fmt::format("node {}: runtime.config.totem.consensus, ", n)), std::string::npos) << out;
  EXPECT_TRUE(token_everywhere(2000));
  EXPECT_EQ(ctl_out(cluster, 3, "get runtime.config.totem.consensus"), "runtime.config.totem.consensus (u32) = 2400\n");
  // What is in force after a change is what the next reload compares with: the same files
  // change nothing, and need no restart.
  out.clear();
  EXPECT_EQ(cluster.ctl(1, "reload", out), 0) << out;
  EXPECT_EQ(out.find("need(s) a restart"), std::string::npos) << out;
  EXPECT_EQ(rings(), rings_before) << "the ring re-formed for a reload";
  ASSERT_EQ(clients[0]->send("g", "after"), 0);
  ASSERT_TRUE(pump_until(raw(clients), [&] { return clients[2]->messages.size() == 1; }));
  for (int n = 1; n <= 3; ++n)
    EXPECT_NE(cluster.log(n).find("reload of every node asked by node 2"), std::string::npos) << cluster.log(n);
}

// Grow and shrink with no restart: the three add node 4 to their files and reload, keeping their
// ring until node 4 joins; votequorum expects its vote from then on. Node 4 stops (its own
// leave), the three take it out of their files and reload: expected votes follow, with no ring
// change; started again, node 4 is no longer heard.
TEST(DaemonControl, ANodeIsAddedAndRemovedWithAReloadOfEveryNode) {
  DaemonCluster cluster(4, 1000, "", "quorum {\n  provider: corosync_votequorum\n}\n");
  const std::string four = read_file(cluster.config_path());
  const std::string node4 = "  node {\n    nodeid: 4\n    ring0_addr: 127.0.0.4\n  }\n";
  ASSERT_NE(four.find(node4), std::string::npos);
  std::string three_text = four;
  three_text.erase(three_text.find(node4), node4.size());
  const std::string three = cluster.dir() + "/three.conf";
  std::ofstream(three) << three_text;
  for (int n = 1; n <= 3; ++n) cluster.use_config(n, three);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 3, clients));
  const auto expected = [&](int n) { return ctl_out(cluster, n, "get runtime.votequorum.expected_votes"); };
  ASSERT_TRUE(eventually([&] { return expected(1) == "runtime.votequorum.expected_votes (u32) = 3\n"; }))
      << expected(1);
  const auto rings = [&] {
    std::uint64_t sum = 0;
    for (int n = 1; n <= 3; ++n) sum += json_counter(cluster.ctl_json(n, "stats"), "rings_installed");
    return sum;
  };
  const std::uint64_t rings_before = rings();

  std::ofstream(three) << four;
  std::string out;
  ASSERT_EQ(cluster.ctl(1, "reload", out), 0) << out;
  for (int n = 1; n <= 3; ++n)
    EXPECT_NE(out.find(fmt::format("node {}: nodelist: node 4 added", n)), std::string::npos) << out;
  for (int n = 1; n <= 3; ++n)
    EXPECT_TRUE(eventually([&] { return expected(n) == "runtime.votequorum.expected_votes (u32) = 4\n"; }))
        << n << ": " << expected(n);
  EXPECT_EQ(ctl_out(cluster, 2, "get nodelist.node.3.nodeid"), "nodelist.node.3.nodeid (u32) = 4\n");
  EXPECT_EQ(rings(), rings_before) << "the three re-formed for a reload";
  EXPECT_NE(ctl_out(cluster, 1, "--json quorum").find("\"quorate\": true"), std::string::npos);

  cluster.use_config(4, cluster.config_path());
  cluster.start(4);
  ASSERT_TRUE(all_on_ring(clients, {1, 2, 3, 4})) << cluster.log(4);

  cluster.kill(4, SIGTERM);
  ASSERT_TRUE(all_on_ring(clients, {1, 2, 3}));
  const std::uint64_t rings_three = rings();
  std::ofstream(three) << three_text;
  out.clear();
  ASSERT_EQ(cluster.ctl(3, "reload", out), 0) << out;
  EXPECT_NE(out.find("node 1: nodelist: node 4 removed"), std::string::npos) << out;
  for (int n = 1; n <= 3; ++n)
    EXPECT_TRUE(eventually([&] { return expected(n) == "runtime.votequorum.expected_votes (u32) = 3\n"; }))
        << n << ": " << expected(n);
  EXPECT_EQ(rings(), rings_three) << "a ring change besides node 4's own leave";

  cluster.start(4);  // with its old file, naming the four: the three no longer hear it
  const auto until = std::chrono::steady_clock::now() + 3s;
  (void)pump_until(
      raw(clients), [&] { return std::chrono::steady_clock::now() >= until; }, 10s);
  EXPECT_EQ(rings(), rings_three) << "node 4 got back in";
  EXPECT_EQ(clients[0]->rings.back(), (std::vector<std::uint32_t>{1, 2, 3}));
}

// Keys rtotem does not use are in the key store under their cmap names, as corosync keeps them;
// a reload takes their new values, and the keys of a section the file no longer has go.
TEST(DaemonControl, KeysRtotemDoesNotUseAreKeptAndReloaded) {
  DaemonCluster cluster(1, 1000, "  cluster_uuid: 6e0f5d2a\n  config_version: 7\n",
                        "resources {\n  watchdog_timeout: 10\n}\nmyapp {\n  colour: blue\n}\n");
  cluster.start(1);
  ASSERT_TRUE(eventually([&] { return ctl_out(cluster, 1, "get myapp.colour") == "myapp.colour (str) = blue\n"; }))
      << cluster.log(1);
  EXPECT_EQ(ctl_out(cluster, 1, "get totem.cluster_uuid"), "totem.cluster_uuid (str) = 6e0f5d2a\n");
  EXPECT_EQ(ctl_out(cluster, 1, "get resources.watchdog_timeout"), "resources.watchdog_timeout (str) = 10\n");
  EXPECT_EQ(ctl_out(cluster, 1, "get totem.config_version"), "totem.config_version (u64) = 7\n");

  replace_in_file(cluster.config_path(), "  colour: blue\n", "  colour: red\n");
  replace_in_file(cluster.config_path(), "resources {\n  watchdog_timeout: 10\n}\n", "");
  std::string out;
  ASSERT_EQ(cluster.ctl(1, "reload", out), 0) << out << cluster.log(1);
  EXPECT_NE(out.find("myapp.colour"), std::string::npos) << out;
  EXPECT_NE(out.find("resources.watchdog_timeout"), std::string::npos) << out;
  EXPECT_EQ(ctl_out(cluster, 1, "get myapp.colour"), "myapp.colour (str) = red\n");
  out.clear();
  EXPECT_NE(cluster.ctl(1, "get resources.watchdog_timeout", out), 0) << out;
}

// corosync-qdevice reads quorum.device from the key store, and a reload carries the keys it
// alone reads (net, heuristics: it tracks them); those votequorum counts with need a restart.
TEST(DaemonControl, AQuorumDevicesKeysAreKeptAndItsVotesNeedARestart) {
  DaemonCluster cluster(1, 1000, "",
                        "quorum {\n  provider: corosync_votequorum\n  device {\n    model: net\n    votes: 1\n"
                        "    timeout: 4000\n    net {\n      host: 10.9.9.9\n      algorithm: ffsplit\n    }\n"
                        "  }\n}\n");
  cluster.start(1);
  ASSERT_TRUE(eventually([&] {
    return ctl_out(cluster, 1, "get quorum.device.votes") == "quorum.device.votes (u32) = 1\n";
  })) << cluster.log(1);
  EXPECT_EQ(ctl_out(cluster, 1, "get quorum.device.timeout"), "quorum.device.timeout (u32) = 4000\n");
  EXPECT_EQ(ctl_out(cluster, 1, "get quorum.device.net.host"), "quorum.device.net.host (str) = 10.9.9.9\n");
  std::string json;
  ASSERT_EQ(cluster.ctl(1, "--json quorum", json), 2) << "1 vote of 2, none from a device: not quorate\n" << json;
  EXPECT_NE(json.find("\"device\": {\"model\": \"net\", \"name\": \"\", \"votes\": 1"), std::string::npos) << json;

  replace_in_file(cluster.config_path(), "host: 10.9.9.9", "host: 10.9.9.8");
  std::string out;
  ASSERT_EQ(cluster.ctl(1, "reload", out), 0) << out << cluster.log(1);
  EXPECT_EQ(ctl_out(cluster, 1, "get quorum.device.net.host"), "quorum.device.net.host (str) = 10.9.9.8\n");
  replace_in_file(cluster.config_path(), "votes: 1", "votes: 2");
  out.clear();
  EXPECT_NE(cluster.ctl(1, "reload", out), 0) << out;
  EXPECT_NE(out.find("quorum.device.votes differ(s) from the running configuration and need(s) a restart"),
            std::string::npos)
      << out;
  EXPECT_EQ(ctl_out(cluster, 1, "get quorum.device.votes"), "quorum.device.votes (u32) = 1\n");
}

// This process and the daemons it starts from now on read `text` at `path` (root only): a file of
// the test's, bind-mounted over it in a mount namespace of this process's own, whose mounts reach
// no other; `path` is itself again once this goes. The text may change meanwhile (write()).
class FileOverlay {
 public:
  FileOverlay(std::string path, const std::string& dir, const std::string& text)
      : path_(std::move(path)), ours_(dir + "/overlay" + std::to_string(++made_)) {
    write(text);
    static const bool private_mounts =
        ::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    mounted_ = private_mounts && ::mount(ours_.c_str(), path_.c_str(), nullptr, MS_BIND, nullptr) == 0;
  }
  ~FileOverlay() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  FileOverlay(const FileOverlay&) = delete;
  FileOverlay& operator=(const FileOverlay&) = delete;
  bool mounted() const noexcept { return mounted_; }
  void write(const std::string& text) const { std::ofstream(ours_, std::ios::trunc) << text; }  // the same inode

 private:
  static inline int made_ = 0;
  std::string path_;
  std::string ours_;
  bool mounted_ = false;
};

// A tmpfs over the directory `dir` in this process's mount namespace of its own (made by the
// first FileOverlay or here), so the test can put files where a host keeps them; gone with this.
class TmpfsOver {
 public:
  explicit TmpfsOver(std::string dir) : dir_(std::move(dir)) {
    static const bool private_mounts =
        ::unshare(CLONE_NEWNS) == 0 && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    mounted_ = private_mounts && ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "mode=0755") == 0;
  }
  ~TmpfsOver() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  TmpfsOver(const TmpfsOver&) = delete;
  TmpfsOver& operator=(const TmpfsOver&) = delete;
  bool mounted() const noexcept { return mounted_; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

std::string command_output(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen((command + " 2>&1").c_str(), "r")) {
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, n);
    ::pclose(p);
  }
  return out;
}

// A node moved from Corosync, with no rtotem.conf and no rtotem key: rtotemd (without -c) reads
// /etc/corosync/corosync.conf, and its authkey, as they are.
TEST(DaemonFiles, WithoutItsOwnFilesRtotemdReadsCorosyncs) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to mount over /etc/corosync";
  const char* env = std::getenv("RTOTEMD");
  const std::string rtotemd = env != nullptr ? env : "rtotemd";
  // rtotemd's own default, from its usage: "-c CONFIG ... (default PATH)".
  const std::string usage = command_output(rtotemd + " --help");
  const auto at = usage.find("(default ", usage.find("-c CONFIG"));
  ASSERT_NE(at, std::string::npos) << usage;
  const std::string own = usage.substr(at + 9, usage.find(')', at) - at - 9);
  std::error_code error;
  std::filesystem::create_directories("/etc/corosync", error);
  const std::string own_dir = std::filesystem::path(own).parent_path().string();
  std::optional<TmpfsOver> own_hidden;
  if (std::filesystem::exists(own_dir)) own_hidden.emplace(own_dir);
  const TmpfsOver corosync("/etc/corosync");
  ASSERT_TRUE(corosync.mounted() && (!own_hidden || own_hidden->mounted()));
  std::ofstream("/etc/corosync/corosync.conf")
      << "totem {\n  version: 2\n  cluster_name: moved\n  cluster_uuid: 5d1c\n  transport: knet\n"
         "  crypto_cipher: aes256\n  crypto_hash: sha256\n}\nnodelist {\n  node {\n    ring0_addr: 127.0.0.1\n"
         "    name: n1\n    nodeid: 1\n  }\n}\nquorum {\n  provider: corosync_votequorum\n}\n";
  ASSERT_EQ(std::system("head -c 256 /dev/urandom > /etc/corosync/authkey && chmod 0400 /etc/corosync/authkey"), 0);
  const std::string checked = command_output(rtotemd + " -t");
  EXPECT_NE(checked.find("/etc/corosync/corosync.conf: ok: cluster moved"), std::string::npos) << checked;
  EXPECT_NE(checked.find("crypto on (key /etc/corosync/authkey)"), std::string::npos) << checked;
}

// A name server that never answers: a UDP socket on port 53 of a loopback address of this
// process's own, that nobody reads. A lookup sent there waits for the resolver's timeout.
struct SilentNameServer {
  SilentNameServer() {
    address = fmt::format("127.53.{}.{}", (getpid() >> 8) & 0xff, getpid() & 0xff);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(53);
    if (::inet_pton(AF_INET, address.c_str(), &at.sin_addr) != 1) return;
    socket = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (socket && ::bind(socket.get(), reinterpret_cast<const sockaddr*>(&at), sizeof at) != 0) socket.reset();
  }
  std::string address;
  Fd socket;
};

// Node 2's ring0_addr is a host name, found in /etc/hosts at start. Then it is taken out of
// /etc/hosts, and the only name server never answers (3 s a lookup, three tokens): a reload, by
// rtotemctl and then by SIGHUP, waits that long to load the file, as the ring goes on meanwhile
// without a token lost; then the reload fails, naming the host, and nothing changes.
TEST(DaemonControl, AReloadWaitingOnASlowResolverKeepsTheRing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, for a mount namespace";
  DaemonCluster cluster(2);
  const SilentNameServer dns;
  ASSERT_TRUE(dns.socket) << dns.address << ": " << strerror(errno);
  constexpr std::string_view kHost = "node2.rtotem.test";
  const std::string hosts = "127.0.0.1 localhost\n";
  const FileOverlay nsswitch("/etc/nsswitch.conf", cluster.dir(), "passwd: files\ngroup: files\nhosts: files dns\n");
  const FileOverlay resolver("/etc/resolv.conf", cluster.dir(),
                             fmt::format("nameserver {}\noptions timeout:3 attempts:1\n", dns.address));
  const FileOverlay known("/etc/hosts", cluster.dir(), fmt::format("{}127.0.0.2 {}\n", hosts, kHost));
  if (!nsswitch.mounted() || !resolver.mounted() || !known.mounted())
    GTEST_SKIP() << "no mount namespace here: " << strerror(errno);
  const std::string config = cluster.dir() + "/named.conf";
  std::ofstream(config) << read_file(cluster.config_path());
  replace_in_file(config, "ring0_addr: 127.0.0.2\n", fmt::format("ring0_addr: {}\n", kHost));
  for (int node : {1, 2}) cluster.use_config(node, config);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  ASSERT_NO_FATAL_FAILURE(join_group(clients, "g"));
  const auto stat_sum = [&](const std::string& name) {
    return json_counter(cluster.ctl_json(1, "stats"), name) + json_counter(cluster.ctl_json(2, "stats"), name);
  };
  const std::uint64_t rings_before = stat_sum("rings_installed");
  const std::uint64_t losses_before = stat_sum("token_losses");
  const std::size_t rings_seen = clients[0]->rings.size();  // node 1 may have formed one alone first
  known.write(hosts);  // from now on only the name server knows it, and it never answers

  std::string out;
  EXPECT_EQ(cluster.ctl(1, "reload", out), 1) << out;
  EXPECT_NE(out.find(kHost), std::string::npos) << out;
  EXPECT_NE(out.find("nothing changed"), std::string::npos) << out;
  EXPECT_EQ(stat_sum("token_losses"), losses_before) << "the ring lost its token during the reload";
  EXPECT_EQ(stat_sum("rings_installed"), rings_before) << "the ring re-formed during the reload";

  cluster.signal(1, SIGHUP);
  EXPECT_TRUE(eventually([&] { return cluster.log(1).find("SIGHUP: nothing changed") != std::string::npos; }, 30s))
      << cluster.log(1);
  EXPECT_EQ(stat_sum("token_losses"), losses_before) << "the ring lost its token during the reload";
  EXPECT_EQ(stat_sum("rings_installed"), rings_before) << "the ring re-formed during the reload";
  ASSERT_EQ(clients[1]->send("g", "after"), 0);
  EXPECT_TRUE(pump_until(raw(clients), [&] { return clients[0]->messages.size() == 1; }));
  EXPECT_EQ(clients[0]->rings.size(), rings_seen) << "node 1's client saw the ring change";
}

}  // namespace
}  // namespace rtotem::testing
