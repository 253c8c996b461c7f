// rtotem_mcast without a round trip (ipc_protocol.hpp's credit): what a return of 0 promises (the
// message goes on the ring, in order, even if the sender disconnects at once, and when not),
// back-pressure
// answered by the library alone, what the library checks itself, and a client that ignores its
// window or sends to a group it is not in.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <qb/qbipc_common.h>
#include <qb/qbipcc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "src/ipc/ipc_protocol.hpp"
#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

using namespace std::chrono_literals;

// Deliveries and group changes in the one order the client saw them.
struct Timeline {
  std::vector<std::string> entries;  // "m <pid> <text>" or "left <pid>"
  static void deliver(rtotem_t*, const rtotem_message* m, void* ctx) {
    static_cast<Timeline*>(ctx)->entries.push_back(
        fmt::format("m {} {}", m->pid, std::string(static_cast<const char*>(m->data), m->len)));
  }
  static void change(rtotem_t*, const rtotem_group_change* c, void* ctx) {
    for (std::size_t i = 0; i < c->n_left; ++i)
      static_cast<Timeline*>(ctx)->entries.push_back(fmt::format("left {}", c->left[i].pid));
  }
};

// Sends `count` messages "0".."count-1" as fast as the window allows, dispatching only when it is
// used up; 0 on success.
int send_flat_out(rtotem_t* h, const std::string& group, int count) {
  for (int i = 0; i < count;) {
    const std::string text = std::to_string(i);
    const int rc = rtotem_mcast(h, group.c_str(), text.data(), text.size(), RTOTEM_AGREED);
    if (rc == 0) {
      ++i;
      continue;
    }
    if (rc != -EAGAIN) return rc;
    pollfd fd{rtotem_fd(h), POLLIN, 0};
    (void)poll(&fd, 1, 100);
    if (const int d = rtotem_dispatch(h, RTOTEM_DISPATCH_ALL); d < 0) return d;
  }
  return 0;
}

// A process of its own joins "g" at `ipc_name`, sends `count` messages flat out (0: for ever),
// disconnects and exits (1: no connection or join, 2: a send failed). Returns its pid.
pid_t fork_sender(const std::string& ipc_name, int count) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  static const rtotem_callbacks none{};
  rtotem_t* h = nullptr;
  if (rtotem_connect(&h, ipc_name.c_str(), &none, nullptr) != 0 || rtotem_join(h, "g") != 0) _exit(1);
  do {
    if (send_flat_out(h, "g", count != 0 ? count : 1 << 30) != 0) _exit(2);
  } while (count == 0);
  rtotem_disconnect(h);
  _exit(0);
}

// A process sends 5,000 messages without waiting and disconnects at once: every one is delivered,
// in its order, and before the change that reports it gone.
TEST(AsyncMcast, ASenderThatDisconnectsAtOnceHasEveryMessageDeliveredBeforeItsLeave) {
  DaemonCluster cluster(2);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  Timeline seen;
  const rtotem_callbacks callbacks{Timeline::deliver, Timeline::change, nullptr};
  rtotem_t* reader = nullptr;
  ASSERT_EQ(rtotem_connect(&reader, cluster.ipc_name(2).c_str(), &callbacks, &seen), 0);
  ASSERT_EQ(rtotem_join(reader, "g"), 0);
  constexpr int kCount = 5000;
  const pid_t sender = fork_sender(cluster.ipc_name(1), kCount);
  ASSERT_GE(sender, 0);
  int status = 0;
  ASSERT_EQ(waitpid(sender, &status, 0), sender);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  const std::string gone = fmt::format("left {}", sender);
  const auto done = [&] { return std::find(seen.entries.begin(), seen.entries.end(), gone) != seen.entries.end(); };
  for (const auto deadline = std::chrono::steady_clock::now() + 30s;
       !done() && std::chrono::steady_clock::now() < deadline;) {
    pollfd fd{rtotem_fd(reader), POLLIN, 0};
    (void)poll(&fd, 1, 20);
    ASSERT_GE(rtotem_dispatch(reader, RTOTEM_DISPATCH_ALL), 0);
  }
  rtotem_disconnect(reader);
  std::vector<std::string> want;
  for (int i = 0; i < kCount; ++i) want.push_back(fmt::format("m {} {}", sender, i));
  want.push_back(gone);
  std::vector<std::string> got;
  for (const std::string& e : seen.entries)
    if (e.find(fmt::format(" {}", sender)) != std::string::npos) got.push_back(e);
  ASSERT_EQ(got.size(), want.size()) << "of " << kCount << " messages and the leave";
  EXPECT_EQ(got, want);
  // Every one went without an answer (the join brought the window): the path under test.
  EXPECT_GE(json_counter(cluster.ctl_json(1, "stats"), "requests_async"), static_cast<std::uint64_t>(kCount));
}

// A clean disconnect hands the daemon every multicast sent (rtotem_flush); what the ring cannot
// take yet waits for it after the client is gone, up to 16 MiB for all departed clients together.
// A departed client whose waiting multicasts would pass that loses them all (a warning, and
// ipc.orphans_dropped), as if it had died before sending them; the others lose none. Here 280
// clients each leave a full window (four multicasts) while the ring is stopped.
TEST(AsyncMcast, ACleanDisconnectLosesWaitingMulticastsOnlyPast16MiBOfDepartedClients) {
  constexpr int kSenders = 280;
  constexpr std::size_t kData = 16000;  // four fill a window, each alone below 16 KiB: unanswered
  constexpr std::size_t kOrphanedMax = 16u << 20;
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_max < 4 * kSenders) GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << files.rlim_max << " is too low";
  struct statvfs shm {};
  if (statvfs("/dev/shm", &shm) != 0 || shm.f_bavail * shm.f_frsize < kSenders * 3 * (160u << 10))
    GTEST_SKIP() << "/dev/shm has too little room for " << kSenders << " connections";
  // A 60 s token: the stopped node stays a member, and the ring stays stopped, until it goes on.
  DaemonCluster cluster(2, 60000, "  max_message_size: 65536\n  send_queue_max: 64\n",
                        fmt::format("ipc {{\n  max_clients: {}\n}}\n", kSenders + 20));
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  files.rlim_cur = files.rlim_max;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);  // this process holds every sender's connection
  TestClient& filler = *clients[0];
  TestClient& receiver = *clients[1];
  ASSERT_EQ(filler.join("fill"), 0);
  const std::uint64_t connected_before = json_counter(cluster.ctl_json(1, "status"), "clients");
  std::vector<std::unique_ptr<TestClient>> senders;
  for (int i = 0; i < kSenders; ++i) {
    ASSERT_EQ(receiver.join(fmt::format("o{:03}", i)), 0) << "sender " << i;
    senders.push_back(std::make_unique<TestClient>());
    ASSERT_EQ(senders.back()->connect(cluster.ipc_name(1)), 0) << "sender " << i;
    ASSERT_EQ(senders.back()->join(fmt::format("o{:03}", i)), 0) << "sender " << i;
  }
  // Groups whose members the receiver last saw with node 1's sender in them; its leaves.
  const auto with_sender = [&] {
    std::map<std::string, bool> in;
    for (const GroupEvent& e : receiver.changes)
      in[e.group] = std::ranges::any_of(e.members, [](const rtotem_member& m) { return m.nodeid == 1; });
    return std::ranges::count_if(in, [](const auto& g) { return g.first != "fill" && g.second; });
  };
  const auto leaves = [&] {
    return std::ranges::count_if(receiver.changes, [](const GroupEvent& e) {
      return std::ranges::any_of(e.left, [](const auto& l) { return l.first.nodeid == 1; });
    });
  };
  ASSERT_TRUE(pump_until(
      {&receiver}, [&] { return with_sender() == kSenders; }, 60s))
      << with_sender();

  cluster.signal(2, SIGSTOP);
  int rc = 0;
  for (const auto deadline = std::chrono::steady_clock::now() + 20s;
       rc == 0 && std::chrono::steady_clock::now() < deadline;)
    rc = rtotem_mcast_sync(filler.handle(), "fill", "f", 1, RTOTEM_AGREED);
  ASSERT_EQ(rc, -EAGAIN) << "node 1's send queue never filled: " << rtotem_strerror(rc);
  const auto data = [&](int sender) { return fmt::format("{:03}", sender) + std::string(kData - 3, 'd'); };
  for (int i = 0; i < kSenders; ++i) {
    const std::string group = fmt::format("o{:03}", i), text = data(i);
    for (int k = 0; k < 4; ++k)
      ASSERT_EQ(rtotem_mcast(senders[i]->handle(), group.c_str(), text.data(), text.size(), RTOTEM_AGREED), 0) << i;
  }
  senders.clear();  // each rtotem_disconnect waits until the daemon has taken its four
  ASSERT_TRUE(
      eventually([&] { return json_counter(cluster.ctl_json(1, "status"), "clients") == connected_before; }, 30s))
      << "the daemon still has some of the senders";
  const std::string stats = cluster.ctl_json(1, "stats");
  cluster.signal(2, SIGCONT);

  // Each sender's leave comes after whatever of its multicasts went on the ring.
  ASSERT_TRUE(pump_until(
      {&receiver, &filler}, [&] { return leaves() == kSenders; }, 120s))
      << leaves() << " of " << kSenders << " leaves";
  std::map<int, int> delivered;  // by sender
  for (const Received& m : receiver.messages) {
    const int sender = std::stoi(m.text.substr(0, 3));
    EXPECT_EQ(m.text, data(sender));
    ++delivered[sender];
  }
  int whole = 0;
  int none = 0;
  for (int i = 0; i < kSenders; ++i) {
    const int n = delivered.contains(i) ? delivered[i] : 0;
    if (n == 4)
      ++whole;
    else if (n == 0)
      ++none;
    else
      ADD_FAILURE() << "sender " << i << ": " << n << " of its 4 multicasts delivered";
  }
  EXPECT_GE(none, 1) << "no departed client's multicasts passed 16 MiB: the bound was not tested";
  EXPECT_EQ(json_counter(stats, "orphans_dropped"), 4u * static_cast<std::uint64_t>(none)) << stats;
  // As many kept as fit: the requests (header, mode, group, data), each with the sender's pid.
  const std::size_t request = sizeof(qb_ipc_request_header) + 1 + 4 + 4 + kData;
  EXPECT_LE(static_cast<std::size_t>(whole) * 4 * request, kOrphanedMax);
  EXPECT_GT(static_cast<std::size_t>(whole + 1) * 4 * (request + 4), kOrphanedMax) << "fewer kept than fit";
  EXPECT_NE(cluster.log(1).find("dropped 4 multicasts of departed client"), std::string::npos);
}

// The join's answer brings the credit window and the largest multicast: a client's very first
// multicast already goes without an answer, where it used to cost two round trips (one to ask the
// size, one answered multicast to learn the window).
TEST(AsyncMcast, TheFirstMulticastAfterAJoinGoesWithoutAnAnswer) {
  DaemonCluster cluster(2);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  TestClient& client = *clients[0];
  ASSERT_EQ(client.join("g"), 0);
  // What asking for the stats costs itself, between two askings with nothing else.
  const std::string s0 = cluster.ctl_json(1, "stats"), s1 = cluster.ctl_json(1, "stats");
  const std::uint64_t stats_cost = json_counter(s1, "requests_sync") - json_counter(s0, "requests_sync");
  ASSERT_GT(stats_cost, 0u) << "no requests_sync in the stats";
  ASSERT_EQ(client.send("g", "first"), 0);
  ASSERT_TRUE(pump_until({&client}, [&] { return client.messages.size() == 1; }));
  const std::string s2 = cluster.ctl_json(1, "stats");
  EXPECT_EQ(json_counter(s2, "requests_async"), json_counter(s1, "requests_async") + 1);
  EXPECT_EQ(json_counter(s2, "requests_sync"), json_counter(s1, "requests_sync") + stats_cost)
      << "the first multicast asked the daemon something";
}

// Two nodes whose send queues hold 64 packets; node 1's client in "g", its credit window known
// (the join brings it) and used once.
class AsyncMcastSmallQueue : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
    ASSERT_EQ(client().join("g"), 0);
    ASSERT_EQ(client().send("g", "first"), 0);
    ASSERT_TRUE(pump_until({&client()}, [&] { return client().messages.size() == 1; }));
  }
  TestClient& client() { return *clients[0]; }

  DaemonCluster cluster{2, 1000, "  send_queue_max: 64\n  max_message_size: 65536\n"};
  std::vector<std::unique_ptr<TestClient>> clients;
};

// The ring cannot order (its other node is stopped): the sender's window fills, the rest is
// refused by the library without a word to the daemon, and once the ring moves again every
// message taken is delivered, in order.
TEST_F(AsyncMcastSmallQueue, AFullWindowIsRefusedLocallyAndLosesNothing) {
  TestClient& sender = client();
  cluster.signal(2, SIGSTOP);
  const std::string filler(100, 'x');
  int taken = 0;
  int rc = 0;
  for (; taken < 100000; ++taken) {
    const std::string text = fmt::format("{:06} {}", taken, filler);
    if ((rc = rtotem_mcast(sender.handle(), "g", text.data(), text.size(), RTOTEM_AGREED)) != 0) break;
  }
  ASSERT_EQ(rc, -EAGAIN) << rtotem_strerror(rc) << " after " << taken;
  // The credit comes back (as events) while the daemon can still queue; once it cannot, it keeps
  // a window's worth staged, and the library refuses the rest. Sent on until the daemon stages.
  int dispatched = 0;
  ASSERT_TRUE(eventually(
      [&] {
        pollfd fd{rtotem_fd(sender.handle()), POLLIN, 0};
        (void)poll(&fd, 1, 20);
        if ((dispatched = sender.dispatch()) < 0) return true;
        for (;; ++taken) {
          const std::string text = fmt::format("{:06} {}", taken, filler);
          if ((rc = rtotem_mcast(sender.handle(), "g", text.data(), text.size(), RTOTEM_AGREED)) != 0) break;
        }
        return rc != -EAGAIN || json_counter(cluster.ctl_json(1, "stats"), "mcasts_staged") > 0;
      },
      20s, 0ms))
      << "the ring never refused one: the window was not tested";
  ASSERT_GE(dispatched, 0);
  ASSERT_EQ(rc, -EAGAIN) << rtotem_strerror(rc) << " after " << taken;
  const std::uint64_t requests = json_counter(cluster.ctl_json(1, "stats"), "requests_async");
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(rtotem_mcast(sender.handle(), "g", "y", 1, RTOTEM_AGREED), -EAGAIN);
  EXPECT_EQ(json_counter(cluster.ctl_json(1, "stats"), "requests_async"), requests)
      << "a refused multicast reached the daemon";
  cluster.signal(2, SIGCONT);
  ASSERT_TRUE(pump_until(
      {&sender}, [&] { return sender.messages.size() == static_cast<std::size_t>(taken) + 1; }, 60s))
      << sender.messages.size() - 1 << " of " << taken;
  for (int i = 0; i < taken; ++i) ASSERT_EQ(sender.messages[i + 1].text, fmt::format("{:06} {}", i, filler));
  // The credit came back with the deliveries: the window is open again.
  EXPECT_EQ(rtotem_mcast(sender.handle(), "g", "z", 1, RTOTEM_AGREED), 0);
}

// Not joined, or too large: the library answers at once. A raw client that sends to a group it
// is not in hears why as an event; one that ignores its window is disconnected, and says why.
TEST_F(AsyncMcastSmallQueue, WhatFailsLaterIsAnEventAndAWindowIgnoredIsACutOff) {
  TestClient& client = this->client();
  EXPECT_EQ(rtotem_mcast(client.handle(), "elsewhere", "x", 1, RTOTEM_AGREED), -ENOTCONN);
  EXPECT_EQ(rtotem_mcast(client.handle(), "g", "x", RTOTEM_MESSAGE_MAX + 1, RTOTEM_AGREED), -EMSGSIZE);
  // Another handle of this process: refused the group `client` is in, and so not in it.
  TestClient other;
  ASSERT_EQ(other.connect(cluster.ipc_name(1)), 0);
  EXPECT_EQ(other.join("g"), -EEXIST);
  EXPECT_EQ(rtotem_mcast(other.handle(), "g", "x", 1, RTOTEM_AGREED), -ENOTCONN);

  qb_ipcc_connection_t* raw = qb_ipcc_connect(cluster.ipc_name(1).c_str(), 1 << 16);
  ASSERT_NE(raw, nullptr);
  const auto send_async = [&](const std::string& group, std::size_t size) {
    ipc::BodyWriter body;
    body.u8(0);
    body.string(group);
    const std::string data(size, 'r');
    body.bytes(std::as_bytes(std::span(data)));
    qb_ipc_request_header h{};
    h.id = static_cast<std::int32_t>(ipc::RequestId::kMcastAsync);
    h.size = static_cast<std::int32_t>(sizeof h + body.data().size());
    iovec iov[2] = {{&h, sizeof h}, {body.data().data(), body.data().size()}};
    return qb_ipcc_sendv(raw, iov, 2);
  };
  ASSERT_GT(send_async("not-joined", 10), 0);
  std::vector<char> event(1 << 17);
  bool failed_event = false;
  for (int i = 0; i < 50 && !failed_event; ++i) {
    const ssize_t n = qb_ipcc_event_recv(raw, event.data(), event.size(), 100);
    if (n < static_cast<ssize_t>(sizeof(qb_ipc_response_header))) continue;
    qb_ipc_response_header h{};
    std::memcpy(&h, event.data(), sizeof h);
    if (h.id != static_cast<std::int32_t>(ipc::EventId::kMcastFailed)) continue;
    WireReader in(std::as_bytes(std::span(event.data() + sizeof h, static_cast<std::size_t>(n) - sizeof h)));
    EXPECT_EQ(static_cast<std::int32_t>(in.get_u32()), -ENOTCONN);
    EXPECT_EQ(ipc::read_string(in, 128).value_or(""), "not-joined");
    failed_event = true;
  }
  EXPECT_TRUE(failed_event) << "no kMcastFailed event for a group the client is not in";

  // A malformed one is dropped unanswered: the next answer the client reads is its own request's.
  {
    qb_ipc_request_header h{};
    h.id = static_cast<std::int32_t>(ipc::RequestId::kMcastAsync);
    h.size = static_cast<std::int32_t>(sizeof h + 1);
    char bad = 7;  // an order that does not exist, and no group
    iovec iov[2] = {{&h, sizeof h}, {&bad, 1}};
    ASSERT_GT(qb_ipcc_sendv(raw, iov, 2), 0);
  }
  // Joined, with the ring stopped: the queue fills, then the daemon keeps a window's worth, then
  // the client is past it.
  std::vector<char> answer(1 << 16);
  {
    ipc::BodyWriter body;
    body.string("raw");  // its own group: this process is in "g" through `client` already
    qb_ipc_request_header h{};
    h.id = static_cast<std::int32_t>(ipc::RequestId::kJoin);
    h.size = static_cast<std::int32_t>(sizeof h + body.data().size());
    iovec iov[2] = {{&h, sizeof h}, {body.data().data(), body.data().size()}};
    ASSERT_GT(qb_ipcc_sendv_recv(raw, iov, 2, answer.data(), answer.size(), 5000), 0);
    qb_ipc_response_header r{};
    std::memcpy(&r, answer.data(), sizeof r);
    ASSERT_EQ(r.id, static_cast<std::int32_t>(ipc::RequestId::kJoin));
    ASSERT_EQ(r.error, 0) << "join";
    // The join's answer brings the credit, as kMcast's does.
    ASSERT_EQ(r.size, static_cast<std::int32_t>(sizeof r + ipc::kMcastReplySize));
    WireReader in(std::span(reinterpret_cast<const std::byte*>(answer.data()) + sizeof r, ipc::kMcastReplySize));
    EXPECT_EQ(in.get_u32(), ipc::kMcastWindow);
    (void)in.get_u64();  // taken: this connection's refused async multicasts were given back
    std::size_t data_max = 0;
    ASSERT_EQ(rtotem_max_message_size(client.handle(), &data_max), 0);
    EXPECT_EQ(in.get_u32(), data_max);
  }
  cluster.signal(2, SIGSTOP);
  int sent = 0;
  for (int i = 0; i < 400; ++i) {
    const ssize_t rc = send_async("raw", 8000);
    if (rc == -EAGAIN) {  // its request ring is full: the daemon reads on
      std::this_thread::sleep_for(10ms);
      continue;
    }
    if (rc < 0) break;  // the daemon hung up
    ++sent;
  }
  EXPECT_LT(sent, 400) << "the daemon took 400 messages past the window";
  EXPECT_TRUE(eventually([&] { return cluster.log(1).find("past its credit window") != std::string::npos; }, 5s))
      << cluster.log(1);
  qb_ipcc_disconnect(raw);
  cluster.signal(2, SIGCONT);
  // The well-behaved client is unaffected.
  ASSERT_EQ(client.send("g", "after"), 0);
  EXPECT_TRUE(pump_until(
      {&client}, [&] { return !client.messages.empty() && client.messages.back().text == "after"; }, 30s));
}

// Whether process `pid` has stopped (SIGSTOP took effect: its state in /proc is T).
bool stopped(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(in, line);
  const std::size_t name_end = line.rfind(')');  // "pid (comm) state ..."
  return name_end != std::string::npos && line.size() > name_end + 2 && line[name_end + 2] == 'T';
}

// A sender with many multicasts in flight is stopped and continued at random moments, over and
// over: the daemon never waits for it (libqb's dispatch would wait for the notification byte of a
// request the sender had put in its ring but not announced yet), so another client's requests are
// answered throughout.
TEST(AsyncMcast, AStoppedSenderNeverStopsTheDaemon) {
  DaemonCluster cluster(2);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  const pid_t sender = fork_sender(cluster.ipc_name(1), 0);
  ASSERT_GE(sender, 0);
  const ChildReaper reaper{sender};
  const auto taken = [&] { return json_counter(cluster.ctl_json(1, "stats"), "requests_async"); };
  ASSERT_TRUE(eventually([&] { return taken() > 0; })) << "the sender never got under way";
  const std::uint64_t taken_before = taken();
  // The probe: a request with a time limit (the library's would wait for ever).
  qb_ipcc_connection_t* probe = qb_ipcc_connect(cluster.ipc_name(1).c_str(), 1 << 16);
  ASSERT_NE(probe, nullptr);
  std::vector<char> answer(1 << 16);
  std::mt19937 rng(11);
  int unanswered = 0;
  for (int i = 0; i < 150 && unanswered == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));  // a random moment of its sending
    ASSERT_EQ(::kill(sender, SIGSTOP), 0);
    ASSERT_TRUE(eventually([&] { return stopped(sender); }, 5s, 1ms));
    qb_ipc_request_header h{};
    h.id = static_cast<std::int32_t>(ipc::RequestId::kLocalNodeId);
    h.size = sizeof h;
    iovec iov{&h, sizeof h};
    // Generous for a daemon under ASan beside a flat-out sender: the bug it finds waits for ever.
    if (qb_ipcc_sendv_recv(probe, &iov, 1, answer.data(), answer.size(), 10000) <= 0) ++unanswered;
    ASSERT_EQ(::kill(sender, SIGCONT), 0);
  }
  qb_ipcc_disconnect(probe);
  EXPECT_EQ(unanswered, 0) << "the daemon waited for a stopped client";
  EXPECT_GT(taken(), taken_before) << "the sender was not under way between the stops";
}

}  // namespace
}  // namespace rtotem::testing
