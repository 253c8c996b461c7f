#include "tests/integration/daemon_cluster.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace rtotem::testing {
namespace {

std::string rtotemd_path() {
  const char* path = std::getenv("RTOTEMD");
  return path != nullptr ? path : "rtotemd";
}

}  // namespace

DaemonCluster::DaemonCluster(int nodes, int token_ms, const std::string& totem_extra, const std::string& sections)
    : nodes_(nodes), owner_(getpid()), port_(20000 + owner_ % 20000) {
  char templ[] = "/tmp/rtotem-cluster-XXXXXX";
  dir_ = mkdtemp(templ);
  std::string text = fmt::format(
      "totem {{\n  version: 2\n  cluster_name: {}\n  transport: udpu\n  token: {}\n{}{}"
      "  interface {{\n    mcastport: {}\n  }}\n}}\nlogging {{\n  to_stderr: yes\n  debug: off\n}}\nnodelist {{\n",
      cluster_name(), token_ms,
      // The token as the test gives it, unless the test is about the coefficient.
      totem_extra.find("token_coefficient") == std::string::npos ? "  token_coefficient: 0\n" : "", totem_extra, port_);
  for (int n = 1; n <= nodes; ++n)
    text += fmt::format("  node {{\n    nodeid: {}\n    ring0_addr: 127.0.0.{}\n  }}\n", n, n);
  text += "}\n" + sections;
  config_ = dir_ + "/rtotem.conf";
  std::ofstream(config_) << text;
}

std::string DaemonCluster::cluster_name() const { return fmt::format("itest{}", owner_); }

DaemonCluster::~DaemonCluster() {
  for (auto& [node, pid] : std::map<int, pid_t>(pids_)) kill(node, SIGTERM);
  if (::testing::Test::HasFailure())
    for (int n = 1; n <= nodes_; ++n) fmt::print(stderr, "--- node {} log (tail) ---\n{}\n", n, log(n));
  std::system(fmt::format("rm -rf '{}'", dir_).c_str());
}

ChildReaper::~ChildReaper() {
  if (pid <= 0) return;  // reaped already (kill(0 or -1) would hit the group, or every process)
  ::kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

std::string DaemonCluster::ipc_name(int node) const { return fmt::format("rtotem-itest-{}-{}", owner_, node); }

std::string DaemonCluster::log(int node) const {
  std::ifstream in(fmt::format("{}/node-{}.log", dir_, node));
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
}

void DaemonCluster::start(int node) {
  const std::string state = fmt::format("{}/state-{}", dir_, node);
  const std::string logfile = fmt::format("{}/node-{}.log", dir_, node);
  const std::string nodeid = std::to_string(node);
  const std::string ipc = ipc_name(node);
  const std::string binary = rtotemd_path();
  const std::string config = configs_.contains(node) ? configs_.at(node) : config_;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A test process that dies (a crash, a timeout's kill) takes its daemons with it.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(127);
    FILE* out = std::freopen(logfile.c_str(), "a", stderr);
    if (out == nullptr) _exit(127);
    dup2(fileno(stderr), STDOUT_FILENO);
    execl(binary.c_str(), binary.c_str(), "-f", "-c", config.c_str(), "--nodeid", nodeid.c_str(), "--ipc-name",
          ipc.c_str(), "--state-dir", state.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pids_[node] = pid;
}

int DaemonCluster::ctl(int node, const std::string& args, std::string& out) const {
  const char* ctl = std::getenv("RTOTEMCTL");
  EXPECT_NE(ctl, nullptr) << "set RTOTEMCTL to rtotemctl's path";
  if (ctl == nullptr) return -1;
  return run(node, fmt::format("{} {}", ctl, args), out);
}

int DaemonCluster::run(int node, const std::string& command, std::string& out) const {
  FILE* p = popen(fmt::format("RTOTEM_IPC={} {} 2>&1", ipc_name(node), command).c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string DaemonCluster::ctl_json(int node, const std::string& command) const {
  std::string out;
  (void)ctl(node, "--json " + command, out);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::uint64_t json_counter(const std::string& json, const std::string& name) {
  const std::string key = fmt::format("\"{}\": ", name);
  for (std::size_t at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
    const std::size_t number = at + key.size();
    if (number < json.size() && std::isdigit(static_cast<unsigned char>(json[number])) != 0)
      return std::stoull(json.substr(number));
  }
  return 0;
}

Flood::Flood(const std::string& args) {
  const char* tool = std::getenv("RTOTEM_FLOOD");
  EXPECT_NE(tool, nullptr) << "set RTOTEM_FLOOD to rtotem-flood's path";
  if (tool != nullptr) pipe_ = popen(fmt::format("{} {}", tool, args).c_str(), "r");
  EXPECT_NE(pipe_, nullptr) << "cannot start rtotem-flood";
}

std::uint64_t Flood::wait() {
  if (pipe_ == nullptr) return sent_;
  std::string out;
  char buf[512];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe_)) > 0;) out.append(buf, n);
  const int status = pclose(std::exchange(pipe_, nullptr));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rtotem-flood failed: " << out;
  sent_ = json_counter(out, "sent");
  return sent_;
}

void DaemonCluster::signal(int node, int signal) {
  if (const auto found = pids_.find(node); found != pids_.end()) ::kill(found->second, signal);
}

int DaemonCluster::kill(int node, int signal) {
  const auto found = pids_.find(node);
  if (found == pids_.end()) return -1;
  const pid_t pid = found->second;
  ::kill(pid, signal);
  int status = 0;
  // Gone: reaped here, or already by the test (waitpid then fails).
  if (!eventually([&] { return waitpid(pid, &status, WNOHANG) != 0; }, std::chrono::seconds(5),
                  std::chrono::milliseconds(50))) {
    ::kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  // A daemon that did not exit cleanly leaves its clients' shared memory behind (libqb names it
  // after the server's pid).
  std::system(fmt::format("rm -rf /dev/shm/qb-{}-*", pid).c_str());
  pids_.erase(found);
  return status;
}

namespace {

void on_deliver(rtotem_t*, const rtotem_message* m, void* ctx) {
  static_cast<TestClient*>(ctx)->messages.push_back(
      {m->nodeid, m->pid, std::string(static_cast<const char*>(m->data), m->len)});
}

void on_group_change(rtotem_t*, const rtotem_group_change* c, void* ctx) {
  GroupEvent e;
  e.group = c->group;
  e.members.assign(c->members, c->members + c->n_members);
  e.joined.assign(c->joined, c->joined + c->n_joined);
  e.joined_reason.assign(c->joined_reason, c->joined_reason + c->n_joined);
  for (std::size_t i = 0; i < c->n_left; ++i) e.left.emplace_back(c->left[i], c->left_reason[i]);
  static_cast<TestClient*>(ctx)->changes.push_back(std::move(e));
}

void on_ring_change(rtotem_t*, const rtotem_ring_change* c, void* ctx) {
  if (!c->transitional) static_cast<TestClient*>(ctx)->rings.emplace_back(c->nodeids, c->nodeids + c->n_nodes);
}

}  // namespace

TestClient::~TestClient() {
  if (h_ != nullptr) rtotem_disconnect(h_);
}

int TestClient::connect(const std::string& ipc_name, std::chrono::milliseconds within) {
  static const rtotem_callbacks cb{on_deliver, on_group_change, on_ring_change};
  const auto deadline = std::chrono::steady_clock::now() + within;
  int rc = 0;
  do {
    rc = rtotem_connect(&h_, ipc_name.c_str(), &cb, this);
    if (rc != -EAGAIN && rc != -ECONNREFUSED && rc != -ENOENT) return rc;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  return rc;
}

int TestClient::join(const std::string& group) { return rtotem_join(h_, group.c_str()); }

int TestClient::send(const std::string& group, const std::string& text, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  int rc = 0;
  do {
    rc = rtotem_mcast(h_, group.c_str(), text.data(), text.size(), RTOTEM_AGREED);
    if (rc != -EAGAIN) return rc;
    (void)dispatch();  // keep reading our events while the ring is busy
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  } while (std::chrono::steady_clock::now() < deadline);
  return rc;
}

bool pump_until(std::vector<TestClient*> clients, const std::function<bool()>& done, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::vector<pollfd> fds;
    for (TestClient* c : clients) fds.push_back({rtotem_fd(c->handle()), POLLIN, 0});
    (void)poll(fds.data(), fds.size(), 20);
    for (TestClient* c : clients) (void)c->dispatch();
  }
  return true;
}

void start_ring(DaemonCluster& cluster, int nodes, std::vector<std::unique_ptr<TestClient>>& clients) {
  for (int n = 1; n <= nodes; ++n) cluster.start(n);
  for (int n = 1; n <= nodes; ++n) {
    clients.push_back(std::make_unique<TestClient>());
    ASSERT_EQ(clients.back()->connect(cluster.ipc_name(n)), 0) << "node " << n;
  }
  ASSERT_TRUE(pump_until(
      raw(clients),
      [&] {
        return std::all_of(clients.begin(), clients.end(), [&](const auto& c) {
          return !c->rings.empty() && c->rings.back().size() == static_cast<std::size_t>(nodes);
        });
      },
      std::chrono::seconds(30)))
      << "no ring of " << nodes;
}

bool all_on_ring(const std::vector<std::unique_ptr<TestClient>>& clients, const std::vector<std::uint32_t>& members) {
  return pump_until(
      raw(clients),
      [&] {
        return std::all_of(clients.begin(), clients.end(),
                           [&](const auto& c) { return !c->rings.empty() && c->rings.back() == members; });
      },
      std::chrono::seconds(30));
}

void join_group(const std::vector<std::unique_ptr<TestClient>>& clients, const std::string& group) {
  for (const auto& c : clients) ASSERT_EQ(c->join(group), 0);
  ASSERT_TRUE(pump_until(raw(clients), [&] {
    return std::all_of(clients.begin(), clients.end(), [&](const auto& c) {
      return !c->changes.empty() && c->changes.back().members.size() == clients.size();
    });
  })) << "not every client saw the whole group";
}

std::vector<TestClient*> raw(const std::vector<std::unique_ptr<TestClient>>& clients) {
  std::vector<TestClient*> out;
  for (const auto& c : clients) out.push_back(c.get());
  return out;
}

}  // namespace rtotem::testing
