// libcpg, the drop-in, as a CPG application uses it (this test links it as one would), on real
// rtotemd processes: joins and their confchg, the initial totem confchg, multicasts of several
// iovecs in one total order, a burst sent without dispatching, a message sent in pieces,
// membership and iteration, a node's death as NODEDOWN followed by the new ring's totem confchg, a
// leave, and cpg_finalize from inside the callback of the own leave (what dlm_controld does).
// corosync-cpgtool lists the groups. Then the edges where Corosync's libcpg sets what an
// application may rely on: pointers never NULL, the size judged before the bytes are read,
// iterations that end with their handle, one initial totem confchg, and a dispatch from a callback.
#include <corosync/cpg.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rtotem/rtotem.h"
#include "tests/integration/corosync_tool.hpp"
#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

struct Confchg {
  std::vector<cpg_address> members, left, joined;
};

// One CPG handle at one node, and what its callbacks saw.
struct Member {
  cpg_handle_t handle = 0;
  int node = 0;
  std::vector<std::pair<uint32_t, std::string>> messages;  // (node id, text)
  std::vector<Confchg> confchgs;
  std::vector<std::vector<uint32_t>> totem;          // totem confchg members
  std::vector<std::pair<uint32_t, uint64_t>> rings;  // and their ring ids
  bool finalize_on_own_leave = false;
  bool finalized = false;
  int null_pointers = 0;              // a message or list handed over as NULL, which Corosync never does
  std::string order;                  // the callbacks as they came: m(essage), c(onfchg), t(otem confchg)
  bool dispatch_in_callback = false;  // the next callback calls cpg_dispatch itself
};

cpg_name group_name(const char* text) {
  cpg_name name{};
  name.length = static_cast<uint32_t>(std::strlen(text) + 1);  // the NUL counted, as its users do
  std::memcpy(name.value, text, name.length);
  return name;
}

Member* of(cpg_handle_t handle) {
  void* context = nullptr;
  EXPECT_EQ(cpg_context_get(handle, &context), CS_OK);
  return static_cast<Member*>(context);
}

// Every callback ends here.
void seen(cpg_handle_t handle, Member& m, char kind) {
  m.order += kind;
  if (std::exchange(m.dispatch_in_callback, false)) {
    EXPECT_EQ(cpg_dispatch(handle, CS_DISPATCH_ALL), CS_OK);
  }
}

void deliver(cpg_handle_t handle, const cpg_name*, uint32_t nodeid, uint32_t pid, void* msg, size_t len) {
  EXPECT_EQ(pid, static_cast<uint32_t>(getpid()));
  Member* m = of(handle);
  if (msg == nullptr) ++m->null_pointers;
  m->messages.emplace_back(nodeid, std::string(static_cast<const char*>(msg), len));
  seen(handle, *m, 'm');
}

void confchg(cpg_handle_t handle, const cpg_name* group, const cpg_address* members, size_t n_members,
             const cpg_address* left, size_t n_left, const cpg_address* joined, size_t n_joined) {
  EXPECT_EQ(group->length, 8U);
  EXPECT_STREQ(group->value, "cpgtest");
  Member* m = of(handle);
  m->null_pointers += (members == nullptr) + (left == nullptr) + (joined == nullptr);
  m->confchgs.push_back({{members, members + n_members}, {left, left + n_left}, {joined, joined + n_joined}});
  for (size_t i = 0; i < n_left; ++i)
    if (m->finalize_on_own_leave && left[i].nodeid == static_cast<uint32_t>(m->node) &&
        left[i].pid == static_cast<uint32_t>(getpid())) {
      EXPECT_EQ(cpg_finalize(handle), CS_OK);
      m->finalized = true;
      return;
    }
  seen(handle, *m, 'c');
}

void totem_confchg(cpg_handle_t handle, cpg_ring_id ring, uint32_t n, const uint32_t* members) {
  Member* m = of(handle);
  m->totem.emplace_back(members, members + n);
  m->rings.emplace_back(ring.nodeid, ring.seq);
  seen(handle, *m, 't');
}

// Dispatches every live member until `done` or 20 s.
bool pump(std::vector<Member>& members, const std::function<bool()>& done) {
  return eventually(
      [&] {
        for (Member& m : members)
          if (!m.finalized) {
            const cs_error_t rc = cpg_dispatch(m.handle, CS_DISPATCH_ALL);
            EXPECT_TRUE(rc == CS_OK || (rc == CS_ERR_BAD_HANDLE && m.finalized)) << cs_strerror(rc);
          }
        return done();
      },
      std::chrono::seconds(20));
}

bool has(const std::vector<cpg_address>& list, uint32_t nodeid, uint32_t reason) {
  for (const cpg_address& a : list)
    if (a.nodeid == nodeid && a.reason == reason) return true;
  return false;
}

TEST(CorosyncCpg, AGroupOfThreeAsCorosyncsCpgGivesIt) {
  DaemonCluster cluster(3);
  for (int n = 1; n <= 3; ++n) cluster.start(n);
  for (int n = 1; n <= 3; ++n)  // one ring of all three first: the initial totem confchg shows it
    ASSERT_TRUE(eventually([&] {
      return cluster.ctl_json(n, "status").find("\"members\": [1, 2, 3]") != std::string::npos;
    })) << cluster.ctl_json(n, "status");
  std::vector<Member> members(3);
  cpg_model_v1_data_t model{CPG_MODEL_V1, deliver, confchg, totem_confchg, CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF};
  const cpg_name group = group_name("cpgtest");
  for (int n = 1; n <= 3; ++n) {
    Member& m = members[n - 1];
    m.node = n;
    setenv("RTOTEM_IPC", cluster.ipc_name(n).c_str(), 1);
    ASSERT_TRUE(eventually([&] {
      return cpg_model_initialize(&m.handle, CPG_MODEL_V1, reinterpret_cast<cpg_model_data_t*>(&model), &m) == CS_OK;
    })) << "node "
        << n;
    unsigned int local = 0;
    ASSERT_EQ(cpg_local_get(m.handle, &local), CS_OK);
    EXPECT_EQ(local, static_cast<unsigned>(n));
    cs_error_t rc = cpg_join(m.handle, &group);
    ASSERT_EQ(rc, CS_OK) << cs_strerror(rc);
    EXPECT_EQ(cpg_join(m.handle, &group), CS_ERR_EXIST) << "one group per handle";
  }
  unsetenv("RTOTEM_IPC");
  ASSERT_TRUE(pump(members, [&] {
    for (const Member& m : members)
      if (m.confchgs.empty() || m.confchgs.back().members.size() != 3) return false;
    return true;
  }));
  for (const Member& m : members) {
    EXPECT_EQ(m.null_pointers, 0) << "empty lists come as pointers, as Corosync's do";
    ASSERT_FALSE(m.totem.empty()) << "the initial totem confchg, after the own join";
    EXPECT_EQ(m.totem.front(), (std::vector<uint32_t>{1, 2, 3}));
    EXPECT_TRUE(has(m.confchgs.front().joined, m.node, CPG_REASON_JOIN)) << m.node;
  }

  // Messages of two iovecs from every member, one order at all.
  for (int round = 0; round < 5; ++round)
    for (Member& m : members) {
      const std::string head = fmt::format("node{}:", m.node), tail = std::to_string(round);
      const iovec iov[2] = {{const_cast<char*>(head.data()), head.size()},
                            {const_cast<char*>(tail.data()), tail.size()}};
      ASSERT_TRUE(eventually([&] { return cpg_mcast_joined(m.handle, CPG_TYPE_AGREED, iov, 2) == CS_OK; }));
    }
  ASSERT_TRUE(pump(members, [&] {
    for (const Member& m : members)
      if (m.messages.size() < 15) return false;
    return true;
  }));
  EXPECT_EQ(members[0].messages, members[1].messages);
  EXPECT_EQ(members[0].messages, members[2].messages);
  EXPECT_NE(std::ranges::find(members[0].messages, std::pair<uint32_t, std::string>{2, "node2:4"}),
            members[0].messages.end());

  // Corosync's back-pressure clears without the sender dispatching: dlm retries a send from inside
  // its callbacks. Far more messages than librtotem's credit window holds, without a dispatch.
  for (int i = 0; i < 1000; ++i) {
    const std::string text = fmt::format("burst{}", i);
    const iovec iov{const_cast<char*>(text.data()), text.size()};
    ASSERT_TRUE(eventually([&] { return cpg_mcast_joined(members[0].handle, CPG_TYPE_AGREED, &iov, 1) == CS_OK; },
                           std::chrono::seconds(10)))
        << "message " << i << " refused for 10 s";
  }
  ASSERT_TRUE(pump(members, [&] {
    for (const Member& m : members)
      if (m.messages.size() < 1015) return false;
    return true;
  }));
  EXPECT_EQ(members[1].messages.back(), (std::pair<uint32_t, std::string>{1, "burst999"}));

  // Larger than one multicast, of two iovecs: sent in pieces, delivered whole, as libcpg does.
  uint32_t atomic_max = 0;
  ASSERT_EQ(cpg_max_atomic_msgsize_get(members[1].handle, &atomic_max), CS_OK);
  std::string large(2 * std::size_t{atomic_max} + 1000, '\0');
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>('a' + i % 23);
  const iovec halves[2] = {{large.data(), large.size() / 2},
                           {large.data() + large.size() / 2, large.size() - large.size() / 2}};
  ASSERT_TRUE(eventually([&] { return cpg_mcast_joined(members[1].handle, CPG_TYPE_AGREED, halves, 2) == CS_OK; }));
  ASSERT_TRUE(pump(members, [&] {
    for (const Member& m : members)
      if (m.messages.size() < 1016) return false;
    return true;
  }));
  for (const Member& m : members)
    EXPECT_TRUE(m.messages.back() == (std::pair<uint32_t, std::string>{2, large}))
        << "node " << m.node << ": " << m.messages.back().second.size() << " bytes from node "
        << m.messages.back().first;

  cpg_address list[CPG_MEMBERS_MAX];
  int n_list = 0;
  cpg_name asked = group;
  ASSERT_EQ(cpg_membership_get(members[0].handle, &asked, list, &n_list), CS_OK);
  EXPECT_EQ(n_list, 3);
  cpg_iteration_handle_t it = 0;
  ASSERT_EQ(cpg_iteration_initialize(members[0].handle, CPG_ITERATION_ALL, nullptr, &it), CS_OK);
  cpg_iteration_description_t d{};
  int listed = 0;
  cs_error_t rc;
  while ((rc = cpg_iteration_next(it, &d)) == CS_OK) {
    EXPECT_EQ(d.group.length, 8U);
    ++listed;
  }
  EXPECT_EQ(rc, CS_ERR_NO_SECTIONS);
  EXPECT_EQ(listed, 3);
  EXPECT_EQ(cpg_iteration_finalize(it), CS_OK);

  // Corosync's own tool sees the group (its name with the NUL its users count) and its members.
  std::string out;
  ASSERT_EQ(corosync_tool(cluster, 1, "corosync-cpgtool", out), 0) << out;
  EXPECT_NE(out.find(fmt::format(
                "Group Name\t       PID\t   Node ID\ncpgtest\\x00\n\t\t{:10}\t         1 (127.0.0.1)\n", getpid())),
            std::string::npos)
      << out;

  // A node dies: its member leaves with NODEDOWN, then the new ring's totem confchg comes.
  const std::size_t totem_before = members[0].totem.size();
  cluster.kill(3, SIGKILL);
  EXPECT_EQ(cpg_finalize(members[2].handle), CS_OK);
  members.pop_back();
  ASSERT_TRUE(pump(members, [&] {
    for (const Member& m : members)
      if (m.confchgs.back().members.size() != 2 || m.totem.size() == totem_before) return false;
    return true;
  }));
  for (const Member& m : members) {
    EXPECT_TRUE(has(m.confchgs.back().left, 3, CPG_REASON_NODEDOWN)) << m.node;
    EXPECT_EQ(m.totem.back(), (std::vector<uint32_t>{1, 2}));
  }

  // Node 2 leaves and finalizes its handle in the callback of its own leave, as dlm does.
  members[1].finalize_on_own_leave = true;
  ASSERT_EQ(cpg_leave(members[1].handle, &group), CS_OK);
  ASSERT_TRUE(pump(members, [&] { return members[1].finalized && members[0].confchgs.back().members.size() == 1; }));
  EXPECT_TRUE(has(members[0].confchgs.back().left, 2, CPG_REASON_LEAVE));
  EXPECT_EQ(cpg_dispatch(members[1].handle, CS_DISPATCH_ALL), CS_ERR_BAD_HANDLE) << "finalized";
  EXPECT_EQ(cpg_finalize(members[0].handle), CS_OK);
}

// One node's rtotemd and a handle on it joined to "cpgtest", with the model's every callback.
struct OneMember {
  DaemonCluster cluster{1};
  Member member;
  const cpg_name group = group_name("cpgtest");

  explicit OneMember(bool joined = true) {
    cluster.start(1);
    member.node = 1;
    cpg_model_v1_data_t model{CPG_MODEL_V1, deliver, confchg, totem_confchg, CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF};
    setenv("RTOTEM_IPC", cluster.ipc_name(1).c_str(), 1);
    const bool connected = eventually([&] {
      return cpg_model_initialize(&member.handle, CPG_MODEL_V1, reinterpret_cast<cpg_model_data_t*>(&model), &member) ==
             CS_OK;
    });
    unsetenv("RTOTEM_IPC");
    EXPECT_TRUE(connected);
    EXPECT_TRUE(connected && (!joined || join()));
  }
  ~OneMember() {
    if (!member.finalized) cpg_finalize(member.handle);
  }
  // Joins and dispatches until the own join's confchg has come.
  bool join() {
    const std::size_t before = member.confchgs.size();
    return cpg_join(member.handle, &group) == CS_OK && pump_until([&] {
             return member.confchgs.size() > before && has(member.confchgs.back().joined, 1, CPG_REASON_JOIN);
           });
  }
  bool pump_until(const std::function<bool()>& done) {
    return eventually(
        [&] {
          const cs_error_t rc = cpg_dispatch(member.handle, CS_DISPATCH_ALL);
          EXPECT_EQ(rc, CS_OK) << cs_strerror(rc);
          return done();
        },
        std::chrono::seconds(20));
  }
  bool send(const std::string& text) {
    const iovec iov{const_cast<char*>(text.data()), text.size()};
    return eventually([&] { return cpg_mcast_joined(member.handle, CPG_TYPE_AGREED, &iov, 1) == CS_OK; });
  }
};

// A message of no bytes is delivered with a pointer, not NULL: Corosync's points into its dispatch
// buffer, and an application may read its own header before it looks at the length.
TEST(CorosyncCpg, AnEmptyMessageIsDeliveredWithAPointerNotNull) {
  OneMember one;
  ASSERT_EQ(cpg_mcast_joined(one.member.handle, CPG_TYPE_AGREED, nullptr, 0), CS_OK);
  ASSERT_TRUE(one.pump_until([&] { return !one.member.messages.empty(); }));
  EXPECT_EQ(one.member.messages.back(), (std::pair<uint32_t, std::string>{1, ""}));
  EXPECT_EQ(one.member.null_pointers, 0);
}

// The size is judged on the iovecs' lengths before a byte of them is read: these point nowhere.
TEST(CorosyncCpg, AMessageAboveTheLimitIsRefusedBeforeItsBytesAreRead) {
  OneMember one;
  const iovec halves[2] = {{nullptr, RTOTEM_MESSAGE_MAX / 2}, {nullptr, RTOTEM_MESSAGE_MAX / 2 + 1}};
  EXPECT_EQ(cpg_mcast_joined(one.member.handle, CPG_TYPE_AGREED, halves, 2), CS_ERR_TOO_BIG);
  const iovec huge[2] = {{nullptr, SIZE_MAX}, {nullptr, 2}};  // a sum that wraps
  EXPECT_EQ(cpg_mcast_joined(one.member.handle, CPG_TYPE_AGREED, huge, 2), CS_ERR_TOO_BIG);
}

// As Corosync's cpg_finalize, the handle's iterations end with it.
TEST(CorosyncCpg, AnIterationEndsWithItsHandle) {
  OneMember one;
  cpg_iteration_handle_t it = 0;
  ASSERT_EQ(cpg_iteration_initialize(one.member.handle, CPG_ITERATION_ALL, nullptr, &it), CS_OK);
  ASSERT_EQ(cpg_finalize(one.member.handle), CS_OK);
  one.member.finalized = true;
  cpg_iteration_description_t d{};
  EXPECT_EQ(cpg_iteration_next(it, &d), CS_ERR_BAD_HANDLE);
  EXPECT_EQ(cpg_iteration_finalize(it), CS_ERR_BAD_HANDLE);
}

// CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF: one totem confchg after the handle's first join, not
// after each join again (Corosync sends it once a connection).
TEST(CorosyncCpg, TheInitialTotemConfchgComesOnceAHandle) {
  OneMember one;
  ASSERT_TRUE(one.pump_until([&] { return !one.member.totem.empty(); }));
  ASSERT_EQ(cpg_leave(one.member.handle, &one.group), CS_OK);
  ASSERT_TRUE(one.pump_until([&] { return has(one.member.confchgs.back().left, 1, CPG_REASON_LEAVE); }));
  ASSERT_TRUE(one.join());
  ASSERT_TRUE(one.send("after"));  // delivered after any totem confchg the join would bring
  ASSERT_TRUE(one.pump_until([&] { return !one.member.messages.empty(); }));
  // A ring formed meanwhile (a token lost on a busy host) brings a totem confchg of its own.
  EXPECT_EQ(std::ranges::count(one.member.rings, one.member.rings.front()), 1);
}

// A callback that calls cpg_dispatch gets what comes after it, in order, as Corosync's libcpg
// (which reads one event at a time) gives it. Here the own join's confchg and the initial totem
// confchg come together; a message sent meanwhile must not come between them.
TEST(CorosyncCpg, ADispatchFromACallbackKeepsTheOrder) {
  OneMember one(false);
  const auto delivered = [&] { return json_counter(one.cluster.ctl_json(1, "stats"), "messages_delivered"); };
  const std::uint64_t before = delivered();
  ASSERT_EQ(cpg_join(one.member.handle, &one.group), CS_OK);
  ASSERT_TRUE(one.send("first"));
  // The ring has delivered the join and the message: their events wait at the handle, undispatched.
  ASSERT_TRUE(eventually([&] { return delivered() >= before + 2; }));
  one.member.dispatch_in_callback = true;
  ASSERT_TRUE(one.pump_until([&] { return !one.member.messages.empty(); }));
  EXPECT_EQ(one.member.order, "ctm");
}

// pmxcfs holds its own lock across cpg_mcast_joined in worker threads while its deliver callback,
// in the dispatching thread, takes that lock: Corosync's libcpg takes no lock of its own, so this
// must not deadlock. Run in a child process, so that a deadlock fails the test instead of hanging it.
std::mutex application_lock;
std::atomic<int> delivered{0};

void deliver_under_lock(cpg_handle_t, const cpg_name*, uint32_t, uint32_t, void*, size_t) {
  std::lock_guard lock(application_lock);
  ++delivered;
}

TEST(CorosyncCpg, AThreadSendsUnderTheApplicationsLockThatTheDeliverCallbackTakes) {
  DaemonCluster cluster(1);
  cluster.start(1);
  setenv("RTOTEM_IPC", cluster.ipc_name(1).c_str(), 1);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpg_callbacks_t callbacks{deliver_under_lock, nullptr};
    cpg_handle_t handle = 0;
    const cpg_name group = group_name("cpglock");
    for (int tries = 0; cpg_initialize(&handle, &callbacks) != CS_OK; ++tries) {
      if (tries == 200) _exit(2);
      usleep(100'000);
    }
    if (cpg_join(handle, &group) != CS_OK) _exit(3);
    constexpr int kMessages = 300;
    std::thread sender([&] {
      for (int i = 0; i < kMessages; ++i) {
        std::lock_guard lock(application_lock);
        usleep(200);  // work under the lock: a deliver callback comes to wait for it meanwhile
        const iovec iov{const_cast<char*>("x"), 1};
        while (cpg_mcast_joined(handle, CPG_TYPE_AGREED, &iov, 1) == CS_ERR_TRY_AGAIN) usleep(1000);
      }
    });
    while (delivered < kMessages)
      if (cpg_dispatch(handle, CS_DISPATCH_ONE) != CS_OK) _exit(4);
    sender.join();
    _exit(cpg_finalize(handle) == CS_OK ? 0 : 5);
  }
  ChildReaper reaper(child);
  int status = 0;
  const bool ended = eventually([&] { return waitpid(child, &status, WNOHANG) == child; }, std::chrono::seconds(30));
  unsetenv("RTOTEM_IPC");
  ASSERT_TRUE(ended) << "deadlock: the sender and the deliver callback wait for each other";
  reaper.pid = 0;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace rtotem::testing
