// rtotemd with totem.crypto on, on loopback: a sealed cluster forms and delivers; a daemon with
// another key cannot join and is counted as auth failures; a captured datagram sent again is
// counted as a replay and changes nothing; a Corosync authkey serves as the key. Keys come from the
// rtotem-keygen binary ($RTOTEM_KEYGEN).
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/daemon_cluster.hpp"
#include "tests/tools/spoofed_udp.hpp"

namespace rtotem::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kTokenMs = 1000;

// Runs rtotem-keygen; its exit status.
int keygen(const std::string& path) {
  const char* binary = std::getenv("RTOTEM_KEYGEN");
  EXPECT_NE(binary, nullptr) << "set RTOTEM_KEYGEN to rtotem-keygen's path";
  if (binary == nullptr) return -1;
  return std::system(fmt::format("{} -k '{}' > /dev/null", binary, path).c_str());
}

// A private directory for the keys, made before the cluster (whose config names the key file).
std::string key_dir() {
  char templ[] = "/tmp/rtotem-keys-XXXXXX";
  const char* made = mkdtemp(templ);
  EXPECT_NE(made, nullptr);
  return made != nullptr ? made : "";
}

// Four nodes in the nodelist (127.0.0.1-4), crypto on with `dir`/authkey; node 4 is what each
// test makes of it.
class CryptoClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(keys.empty());
    ASSERT_EQ(keygen(keys + "/authkey"), 0);
    struct stat st {};
    ASSERT_EQ(::stat((keys + "/authkey").c_str(), &st), 0);
    ASSERT_EQ(st.st_mode & 07777, 0400u);
  }
  void TearDown() override { std::system(fmt::format("rm -rf '{}'", keys).c_str()); }

  void start_three() { start_ring(cluster, 3, clients); }
  void join_all(const std::string& group) { join_group(clients, group); }
  std::vector<TestClient*> all() { return raw(clients); }
  std::uint64_t link_counter(int node, const std::string& name) {
    return json_counter(cluster.ctl_json(node, "stats"), name);
  }

  std::string keys = key_dir();
  DaemonCluster cluster{4, kTokenMs, fmt::format("  crypto: on\n  keyfile: {}/authkey\n", keys)};
  std::vector<std::unique_ptr<TestClient>> clients;
};

TEST_F(CryptoClusterTest, ASealedClusterFormsAndDeliversInOneOrder) {
  ASSERT_NO_FATAL_FAILURE(start_three());
  ASSERT_NO_FATAL_FAILURE(join_all("sealed"));
  constexpr int kPerNode = 100;
  for (int i = 0; i < kPerNode; ++i)
    for (std::size_t n = 0; n < clients.size(); ++n)
      ASSERT_EQ(clients[n]->send("sealed", fmt::format("{}:{}", n + 1, i)), 0);
  const std::size_t total = kPerNode * clients.size();
  ASSERT_TRUE(pump_until(all(),
                         [&] {
                           return std::all_of(clients.begin(), clients.end(),
                                              [&](const auto& c) { return c->messages.size() >= total; });
                         }))
      << clients[0]->messages.size() << " " << clients[1]->messages.size() << " " << clients[2]->messages.size();
  for (auto& c : clients) EXPECT_EQ(c->messages, clients[0]->messages);
  for (int n = 1; n <= 3; ++n) {
    EXPECT_NE(cluster.ctl_json(n, "status").find("\"crypto\": \"on\""), std::string::npos);
    const std::string stats = cluster.ctl_json(n, "stats");
    EXPECT_GT(json_counter(stats, "rx_packets"), 0u) << stats;
    EXPECT_EQ(json_counter(stats, "drop_auth"), 0u) << stats;
    EXPECT_EQ(json_counter(stats, "drop_replay"), 0u) << stats;
  }
}

// The others' replay windows remember node 3's epoch: its next start must come back above it
// (the state directory's sealepoch file, the clock), or it would never be heard again.
TEST_F(CryptoClusterTest, AKilledSealedDaemonRestartsWithANewerEpochAndRejoins) {
  ASSERT_NO_FATAL_FAILURE(start_three());
  cluster.kill(3, SIGKILL);
  clients.pop_back();
  ASSERT_TRUE(pump_until(
      all(),
      [&] {
        return std::all_of(clients.begin(), clients.end(), [](const auto& c) {
          return c->rings.back() == std::vector<std::uint32_t>{1, 2};
        });
      },
      30s))
      << "no ring of the two survivors";
  const std::uint64_t replay_before = link_counter(1, "drop_replay");
  cluster.start(3);
  clients.push_back(std::make_unique<TestClient>());
  ASSERT_EQ(clients.back()->connect(cluster.ipc_name(3)), 0);
  ASSERT_TRUE(pump_until(
      all(),
      [&] {
        return std::all_of(clients.begin(), clients.end(),
                           [](const auto& c) { return !c->rings.empty() && c->rings.back().size() == 3; });
      },
      30s))
      << "the restarted node did not rejoin";
  EXPECT_EQ(link_counter(1, "drop_replay"), replay_before);  // nothing of its new start looked old
}

// An existing Corosync cluster's /etc/corosync/authkey, as corosync-keygen makes it (256 bytes;
// 256 random bytes where Debian's corosync is absent), is the cluster key as it is: every node
// derives the same key from it and the sealed ring forms.
TEST_F(CryptoClusterTest, ACorosyncAuthkeyServesAsTheClusterKey) {
  const std::string path = keys + "/authkey";
  std::filesystem::remove(path);
  const std::string make = ::access("/usr/sbin/corosync-keygen", X_OK) == 0
                               ? fmt::format("/usr/sbin/corosync-keygen -k '{}' > /dev/null", path)
                               : fmt::format("head -c 256 /dev/urandom > '{0}' && chmod 0400 '{0}'", path);
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  ASSERT_EQ(std::filesystem::file_size(path), 256u);
  ASSERT_NO_FATAL_FAILURE(start_three());
  ASSERT_NO_FATAL_FAILURE(join_all("sealed"));
  ASSERT_EQ(clients[2]->send("sealed", "from node 3"), 0);
  ASSERT_TRUE(pump_until(all(), [&] {
    return std::all_of(clients.begin(), clients.end(), [](const auto& c) { return !c->messages.empty(); });
  }));
  for (int n = 1; n <= 3; ++n) {
    EXPECT_NE(cluster.ctl_json(n, "status").find("\"crypto\": \"on\""), std::string::npos);
    EXPECT_EQ(link_counter(n, "drop_auth"), 0u) << cluster.ctl_json(n, "stats");
  }
}

TEST_F(CryptoClusterTest, ADaemonWithAnotherKeyCannotJoinAndIsCountedAsAuthFailures) {
  ASSERT_NO_FATAL_FAILURE(start_three());
  // Node 4: the same file but for its key.
  ASSERT_EQ(keygen(keys + "/otherkey"), 0);
  std::ifstream in(cluster.config_path());
  std::stringstream text;
  text << in.rdbuf();
  std::string config = text.str();
  const std::string key_line = fmt::format("keyfile: {}/authkey", keys);
  ASSERT_NE(config.find(key_line), std::string::npos);
  config.replace(config.find(key_line), key_line.size(), fmt::format("keyfile: {}/otherkey", keys));
  const std::string other = cluster.dir() + "/node4.conf";
  std::ofstream(other) << config;
  cluster.use_config(4, other);
  const std::uint64_t auth_before = link_counter(1, "drop_auth");
  std::vector<std::size_t> rings_before;  // per client: one that came up late saw fewer rings
  for (const auto& c : clients) rings_before.push_back(c->rings.size());
  cluster.start(4);
  // Idle on purpose, the wait is the check: a node that got in would have made the three re-form
  // within a token timeout, and five pass.
  const auto until = std::chrono::steady_clock::now() + 5 * std::chrono::milliseconds(kTokenMs);
  (void)pump_until(
      all(), [&] { return std::chrono::steady_clock::now() >= until; }, 10s);
  for (std::size_t i = 0; i < clients.size(); ++i) {
    EXPECT_EQ(clients[i]->rings.size(), rings_before[i]) << "the ring re-formed (client " << i + 1 << ")";
    EXPECT_EQ(clients[i]->rings.back(), (std::vector<std::uint32_t>{1, 2, 3}));
  }
  const std::uint64_t auth_mid = link_counter(1, "drop_auth");
  EXPECT_GT(auth_mid, auth_before) << cluster.ctl_json(1, "stats");
  EXPECT_TRUE(eventually([&] { return link_counter(1, "drop_auth") > auth_mid; }))
      << "node 4 keeps trying, and keeps failing";
  EXPECT_GT(link_counter(4, "drop_auth"), 0u) << cluster.ctl_json(4, "stats");  // the three are noise to it
  EXPECT_EQ(link_counter(4, "drop_replay"), 0u);
}

// A key change with no ring change: node 1's client sends about 1,000 messages a second while
// rtotemctl reload takes every node to a new key file. Every message reaches every node, in one
// order; no ring forms; no packet fails to open. Afterwards a node with the old key is refused,
// and one with the new key, which missed the change, joins.
TEST_F(CryptoClusterTest, AKeyChangesWithNoRingChangeWhileMessagesFlowThenTheOldKeyIsRefused) {
  ASSERT_NO_FATAL_FAILURE(start_three());
  ASSERT_NO_FATAL_FAILURE(join_all("flow"));
  ASSERT_EQ(keygen(keys + "/newkey"), 0);
  const std::string old_config = cluster.dir() + "/old-key.conf";
  std::ofstream(old_config) << read_file(cluster.config_path());
  std::vector<std::size_t> rings_before;
  for (const auto& c : clients) rings_before.push_back(c->rings.size());
  std::string config = read_file(cluster.config_path());
  const std::string key_line = fmt::format("keyfile: {}/authkey", keys);
  ASSERT_NE(config.find(key_line), std::string::npos);
  config.replace(config.find(key_line), key_line.size(), fmt::format("keyfile: {}/newkey", keys));
  std::ofstream(cluster.config_path()) << config;

  std::string reload_out;
  int reload_rc = -1;
  std::thread reload;
  int sent = 0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 3s) {
    if (reload.get_id() == std::thread::id{} && std::chrono::steady_clock::now() - start > 1s)
      reload = std::thread([&] { reload_rc = cluster.ctl(2, "reload", reload_out); });
    ASSERT_EQ(clients[0]->send("flow", std::to_string(sent)), 0);
    ++sent;
    for (auto& c : clients) c->dispatch();
    std::this_thread::sleep_for(1ms);
  }
  reload.join();
  EXPECT_EQ(reload_rc, 0) << reload_out;
  EXPECT_NE(reload_out.find("key changed on every node; the old key is refused"), std::string::npos) << reload_out;
  for (int n = 1; n <= 3; ++n)
    EXPECT_NE(reload_out.find(fmt::format("node {}: totem.keyfile, the cluster key", n)), std::string::npos)
        << reload_out;
  ASSERT_TRUE(pump_until(all(),
                         [&] {
                           return std::all_of(clients.begin(), clients.end(), [&](const auto& c) {
                             return c->messages.size() >= static_cast<std::size_t>(sent);
                           });
                         }))
      << clients[0]->messages.size() << " " << clients[1]->messages.size() << " " << clients[2]->messages.size();
  for (auto& c : clients) {
    ASSERT_EQ(c->messages.size(), static_cast<std::size_t>(sent));
    for (int i = 0; i < sent; ++i) ASSERT_EQ(c->messages[i].text, std::to_string(i)) << i;
  }
  for (std::size_t i = 0; i < clients.size(); ++i)
    EXPECT_EQ(clients[i]->rings.size(), rings_before[i]) << "the ring changed (client " << i + 1 << ")";
  for (int n = 1; n <= 3; ++n) EXPECT_EQ(link_counter(n, "drop_auth"), 0u) << cluster.ctl_json(n, "stats");

  // Node 4 with the old key: every packet it sends fails to open, and the three stay three.
  cluster.use_config(4, old_config);
  cluster.start(4);
  EXPECT_TRUE(eventually([&] { return link_counter(1, "drop_auth") > 0; })) << cluster.ctl_json(1, "stats");
  EXPECT_EQ(clients[0]->rings.back(), (std::vector<std::uint32_t>{1, 2, 3}));
  cluster.kill(4, SIGTERM);
  // Node 4 with the new key, as its file says after the change: it joins.
  cluster.use_config(4, cluster.config_path());
  cluster.start(4);
  EXPECT_TRUE(pump_until(
      all(),
      [&] {
        return std::all_of(clients.begin(), clients.end(), [](const auto& c) {
          return c->rings.back() == std::vector<std::uint32_t>{1, 2, 3, 4};
        });
      },
      30s))
      << cluster.log(4);
}

// A socket on node 4's address (no daemon there) hears the three's multicasts, as anyone on the
// path could; sent again to node 1 from node 2's own address (a forged source: from anywhere
// else it would not get past the source check), a captured datagram is a replay; with a new
// counter, it does not open.
TEST_F(CryptoClusterTest, ACapturedDatagramSentAgainIsARejectedReplay) {
  auto forger = SpoofedUdp::open();
  if (!forger) GTEST_SKIP() << forger.error().message();
  ASSERT_NO_FATAL_FAILURE(start_three());
  const int tap = socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(tap, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(static_cast<std::uint16_t>(cluster.port()));
  inet_pton(AF_INET, "127.0.0.4", &at.sin_addr);
  ASSERT_EQ(bind(tap, reinterpret_cast<sockaddr*>(&at), sizeof at), 0) << strerror(errno);
  ASSERT_NO_FATAL_FAILURE(join_all("g"));
  ASSERT_EQ(clients[1]->send("g", "captured"), 0);
  // Node 2's multicast carrying it: one datagram, the same bytes to every node of the nodelist.
  std::vector<char> datagram;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (datagram.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto& c : clients) (void)c->dispatch();
    pollfd p{tap, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    std::vector<char> buf(70000);
    const ssize_t n = recv(tap, buf.data(), buf.size(), 0);
    // Sender (bytes 8..11) node 2, and sealed (flags, byte 3).
    if (n > 16 && buf[11] == 2 && (buf[3] & 1) != 0) datagram.assign(buf.begin(), buf.begin() + n);
  }
  ASSERT_FALSE(datagram.empty()) << "nothing of node 2's reached 127.0.0.4";
  ASSERT_TRUE(pump_until(all(), [&] {
    return std::all_of(clients.begin(), clients.end(), [](const auto& c) { return !c->messages.empty(); });
  }));
  const std::size_t rings_before = clients[0]->rings.size();
  const std::size_t messages_before = clients[0]->messages.size();
  const std::uint64_t replay_before = link_counter(1, "drop_replay");
  const std::uint64_t auth_before = link_counter(1, "drop_auth");
  sockaddr_in node1 = at, node2 = at;
  inet_pton(AF_INET, "127.0.0.1", &node1.sin_addr);
  inet_pton(AF_INET, "127.0.0.2", &node2.sin_addr);
  const auto bytes = [](const std::vector<char>& d) { return std::as_bytes(std::span(d)); };
  constexpr int kReplays = 5;
  for (int i = 0; i < kReplays; ++i) ASSERT_TRUE(forger->send(node2, node1, bytes(datagram)).ok());
  // Altered: a counter far right of the window (its top byte; nonce = epoch, counter, salt, then
  // the tag) gets past the replay check, and then does not open: the tag covers the nonce.
  std::vector<char> altered = datagram;
  altered[altered.size() - 40 + 8] ^= 0x40;
  ASSERT_TRUE(forger->send(node2, node1, bytes(altered)).ok());
  close(tap);
  // Counted, and nothing else: no delivery, no new ring. A message sent after them is the next
  // delivery at every node.
  EXPECT_TRUE(eventually([&] { return link_counter(1, "drop_replay") >= replay_before + kReplays; }, 5s));
  EXPECT_EQ(link_counter(1, "drop_replay"), replay_before + kReplays) << cluster.ctl_json(1, "stats");
  EXPECT_EQ(link_counter(1, "drop_auth"), auth_before + 1) << cluster.ctl_json(1, "stats");
  ASSERT_EQ(clients[0]->send("g", "after"), 0);
  ASSERT_TRUE(pump_until(all(), [&] {
    return std::all_of(clients.begin(), clients.end(),
                       [](const auto& c) { return !c->messages.empty() && c->messages.back().text == "after"; });
  }));
  for (const auto& c : clients) EXPECT_EQ(c->messages, clients[0]->messages);
  EXPECT_EQ(clients[0]->messages.size(), messages_before + 1) << "a replay was delivered";
  EXPECT_EQ(clients[0]->rings.size(), rings_before);
}

// Without -f rtotemd detaches (daemon(): a fork), and a child does not inherit memory locks: the
// key's page must be locked again in the process that keeps running, or it may go to swap.
TEST_F(CryptoClusterTest, ADetachedDaemonKeepsTheKeyLockedInMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer makes mlock a no-op";
#endif
  rlimit memlock{};
  if (getrlimit(RLIMIT_MEMLOCK, &memlock) != 0 || memlock.rlim_cur < static_cast<rlim_t>(sysconf(_SC_PAGESIZE)))
    GTEST_SKIP() << "RLIMIT_MEMLOCK is below a page: nothing can be locked here";
  const char* rtotemd = std::getenv("RTOTEMD");
  ASSERT_NE(rtotemd, nullptr) << "set RTOTEMD to rtotemd's path";
  const std::string ipc = cluster.ipc_name(1) + "-detached";
  const std::string state = cluster.dir() + "/state-detached";
  ASSERT_EQ(std::system(fmt::format("{} -c {} --nodeid 1 --ipc-name {} --state-dir {} 2>/dev/null", rtotemd,
                                    cluster.config_path(), ipc, state)
                            .c_str()),
            0);
  TestClient client;  // in once the detached daemon has its key and its first ring
  ASSERT_EQ(client.connect(ipc), 0);
  // Not a child of ours: its pid is the peer of the client's socket; stopped at the end.
  ucred peer{};
  socklen_t length = sizeof peer;
  ASSERT_EQ(getsockopt(rtotem_fd(client.handle()), SOL_SOCKET, SO_PEERCRED, &peer, &length), 0) << strerror(errno);
  struct Stop {
    pid_t pid;
    ~Stop() {
      ::kill(pid, SIGTERM);
      (void)eventually([&] { return ::kill(pid, 0) != 0; }, 5s, 50ms);
      ::kill(pid, SIGKILL);
    }
  } stop{peer.pid};
  std::ifstream status(fmt::format("/proc/{}/status", peer.pid));
  std::string line;
  std::uint64_t locked_kib = 0;
  while (std::getline(status, line))
    if (line.rfind("VmLck:", 0) == 0) locked_kib = std::stoull(line.substr(6));
  EXPECT_GT(locked_kib, 0u) << "the key's memory is not locked in the detached daemon (pid " << peer.pid << ")";
}

}  // namespace
}  // namespace rtotem::testing
