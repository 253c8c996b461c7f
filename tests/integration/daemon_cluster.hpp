// A cluster of real rtotemd processes on loopback (127.0.0.1..N, UDP unicast) for integration
// tests, and a librtotem client that records what it receives. Processes are stopped by pid when
// the fixture goes, even when a test fails (SIGTERM, then SIGKILL), and their shared memory goes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rtotem/rtotem.h"
#include "tests/integration/wait.hpp"

namespace rtotem::testing {

class DaemonCluster {
 public:
  // `totem_extra`: more lines for the totem section; `sections`: more sections.
  explicit DaemonCluster(int nodes, int token_ms = 1000, const std::string& totem_extra = "",
                         const std::string& sections = "");
  ~DaemonCluster();

  void start(int node);
  // Node `node` starts with the config file at `path` instead of config_path() (another key...).
  void use_config(int node, const std::string& path) { configs_[node] = path; }
  // Signals node `node` and reaps it (SIGKILL after 5 s); its wait status, or -1 if it was not running.
  int kill(int node, int signal);
  void signal(int node, int signal);  // and leaves it running
  pid_t pid(int node) const { return pids_.contains(node) ? pids_.at(node) : -1; }
  const std::string& config_path() const noexcept { return config_; }
  std::string cluster_name() const;
  std::string ipc_name(int node) const;
  int port() const noexcept { return port_; }
  const std::string& dir() const noexcept { return dir_; }
  std::string log(int node) const;
  // `rtotemctl ARGS` at node `node` (RTOTEMCTL names the binary): its exit status, and what it
  // printed (stdout and stderr) appended to `out`.
  int ctl(int node, const std::string& args, std::string& out) const;
  // The shell command `command` as a client of node `node` (RTOTEM_IPC names its daemon): its
  // exit status, and what it printed on stdout and stderr (as they reached the pipe)
  // appended to `out`.
  int run(int node, const std::string& command, std::string& out) const;
  // `rtotemctl --json COMMAND` (status, stats) at node `node`.
  std::string ctl_json(int node, const std::string& command) const;

 private:
  int nodes_;
  pid_t owner_;  // the test process: names stay the same in a forked child
  int port_;
  std::string dir_;
  std::string config_;
  std::map<int, pid_t> pids_;
  std::map<int, std::string> configs_;
};

// Kills (SIGKILL) and reaps a forked child when it goes out of scope: a test that fails midway
// leaves none behind. A test that reaps the child itself sets pid to 0.
struct ChildReaper {
  explicit ChildReaper(pid_t child) : pid(child) {}
  pid_t pid;
  ChildReaper(const ChildReaper&) = delete;
  ChildReaper& operator=(const ChildReaper&) = delete;
  ~ChildReaper();
};

// The whole file at `path` (empty if it cannot be read).
std::string read_file(const std::string& path);

// The first number after "name": in a JSON document; 0 if there is none.
std::uint64_t json_counter(const std::string& json, const std::string& name);

// rtotem-flood (RTOTEM_FLOOD names the binary) with `args`, in the background until wait().
class Flood {
 public:
  explicit Flood(const std::string& args);
  ~Flood() { (void)wait(); }
  Flood(const Flood&) = delete;
  Flood& operator=(const Flood&) = delete;
  // Waits for it to end; the packets it sent (0 if it failed, with a test failure).
  std::uint64_t wait();

 private:
  FILE* pipe_ = nullptr;
  std::uint64_t sent_ = 0;
};

struct Received {
  std::uint32_t nodeid = 0;
  std::uint32_t pid = 0;
  std::string text;
  bool operator==(const Received&) const = default;
};

struct GroupEvent {
  std::string group;
  std::vector<rtotem_member> members;
  std::vector<std::pair<rtotem_member, rtotem_reason>> left;
  std::vector<rtotem_member> joined;
  std::vector<rtotem_reason> joined_reason;  // one per joined
};

class TestClient {
 public:
  TestClient() = default;
  ~TestClient();
  // Retries -EAGAIN (the daemon forming its first ring) and -ECONNREFUSED (not up yet) until `within`.
  int connect(const std::string& ipc_name, std::chrono::milliseconds within = std::chrono::seconds(20));
  int join(const std::string& group);
  // Retries back-pressure for up to `within`.
  int send(const std::string& group, const std::string& text,
           std::chrono::milliseconds within = std::chrono::seconds(10));
  int dispatch() { return rtotem_dispatch(h_, RTOTEM_DISPATCH_ALL); }
  rtotem_t* handle() const noexcept { return h_; }

  std::vector<Received> messages;
  std::vector<GroupEvent> changes;
  std::vector<std::vector<std::uint32_t>> rings;  // regular configurations' members

 private:
  rtotem_t* h_ = nullptr;
};

// Dispatches every client until `done` or the time runs out; returns done().
bool pump_until(std::vector<TestClient*> clients, const std::function<bool()>& done,
                std::chrono::milliseconds within = std::chrono::seconds(20));

// Dispatches every client until the last ring each saw is exactly `members` (30 s at most).
bool all_on_ring(const std::vector<std::unique_ptr<TestClient>>& clients, const std::vector<std::uint32_t>& members);

// Starts nodes 1..`nodes`, connects a client to each (appended to `clients`) and waits until
// every one of them is on one ring of all the nodes (the first ring may form before all are up).
void start_ring(DaemonCluster& cluster, int nodes, std::vector<std::unique_ptr<TestClient>>& clients);
// Every client joins `group`; waits until each sees the group with all of them in it.
void join_group(const std::vector<std::unique_ptr<TestClient>>& clients, const std::string& group);
std::vector<TestClient*> raw(const std::vector<std::unique_ptr<TestClient>>& clients);

}  // namespace rtotem::testing
