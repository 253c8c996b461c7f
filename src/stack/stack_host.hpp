// What the node stack asks of whoever runs it: rtotemd (its ring host on libqb's loop, the
// config file, the log, the process) or the simulator (a simulated Node, virtual time). The stack
// calls these only from inside its own calls.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "membership/node.hpp"
#include "src/daemon/config/daemon_config.hpp"
#include "transport/backend.hpp"

namespace rtotem::stack {

// rtotemd's exit status when another node killed this one (rtotemctl kill): the unit's
// RestartPreventExitStatus, so systemd does not bring back a node the cluster put out.
inline constexpr int kExitKilled = 3;

// What the host alone knows, for rtotemctl stats: its IPC admission and its process.
struct HostStats {
  std::uint64_t clients_refused = 0;  // ipc.max_clients reached, or buffers too large
  std::uint64_t unauthenticated = 0;  // connections waiting to authenticate
  std::uint64_t auth_timeouts = 0;
  std::uint64_t connections_shed = 0;             // refused for want of a descriptor
  std::optional<std::uint64_t> heap_allocations;  // a build with the allocation counter
  std::uint64_t rss_bytes = 0;
  std::uint64_t rss_anon_bytes = 0;
  std::uint64_t rss_shmem_bytes = 0;
  std::uint64_t rss_peak_bytes = 0;
};

class StackHost {
 public:
  // The ring below: the stack's submissions, and what status and the key store read of it.
  virtual Status submit(const membership::Gather& message, membership::Delivery delivery) = 0;
  virtual const membership::Node& node() const = 0;
  // New protocol timing for the Node (Node::set_timing), from a reload of every node.
  virtual void set_timing(const membership::TotemConfig& timing) = 0;
  // Whether the transport can take the nodelist of `file` while it runs (UDP on one link can), and
  // taking it: from then on the node sends to and hears from exactly those nodes.
  virtual Result<void> can_change_nodes(const config::DaemonConfig& file) const = 0;
  virtual void change_nodes(const config::DaemonConfig& file) = 0;
  // A key change with no ring change (Backend::rekey), from a reload of every node.
  virtual void rekey(std::shared_ptr<const transport::ClusterKey> seal_with,
                     std::shared_ptr<const transport::ClusterKey> also_open) = 0;
  virtual const transport::Backend& backend() const = 0;
  virtual membership::Time now() const = 0;  // the Node's clock, in microseconds
  // The stack's next deadline (its quorum window, a shutdown vote), replacing any before;
  // nullopt: none. The host then calls NodeStack::on_time.
  virtual void arm_timer(std::optional<membership::Time> deadline) = 0;
  // NodeStack::retry_clients() a few ms from now: a client's channel was full.
  virtual void arm_client_retry() = 0;
  // Runs `job` on a later turn, after the answer or event under way has gone out.
  virtual void post(std::function<void()> job) = 0;
  // Who may connect besides root and the host's own user, from now on (sorted, unique).
  virtual void set_access(std::vector<std::uint32_t> uids, std::vector<std::uint32_t> gids) = 0;
  // A reload's file, read again off the ring's thread: `done` gets it on a later turn. loading():
  // one is under way. An error when none can start (then `done` is not called).
  virtual bool loading() const = 0;
  virtual Result<void> load_config(std::function<void(Result<config::DaemonConfig>)> done) = 0;
  // The logging section a reload brings (and, with the one in force, a reopened log file).
  virtual Result<void> apply_logging(const config::LoggingConfig& logging) = 0;
  // The flight recorder's recent log lines to its file (runtime.blackbox.dump_flight_data, as
  // corosync-blackbox asks): the file's path, or why not.
  virtual Result<std::string> dump_flight_data() = 0;
  // The node must go: an agreed shutdown (0) or killed by another node (kExitKilled). After the
  // turn under way.
  virtual void exit(int code) = 0;
  virtual HostStats host_stats() const = 0;

 protected:
  ~StackHost() = default;
};

}  // namespace rtotem::stack
