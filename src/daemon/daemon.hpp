// rtotemd's core: the node stack (src/stack/) hosted on libqb's loop. Its ring is a RingHost
// over a real transport, its clients come through the IpcServer (libqb), its timers are loop
// timers on the monotonic clock, and a reload's file is read by the ConfigLoader, off the loop.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "src/daemon/config/daemon_config.hpp"
#include "src/daemon/config_loader.hpp"
#include "src/daemon/event_loop.hpp"
#include "src/daemon/ipc_server.hpp"
#include "src/daemon/logging.hpp"
#include "src/daemon/ring_host.hpp"
#include "src/stack/node_stack.hpp"

namespace rtotem::daemon {

using control::ReloadOutcome;
using stack::kExitKilled;

struct DaemonSetup {
  config::DaemonConfig config;
  membership::TotemConfig totem;  // resolved and checked against the backend
  config::NodeEntry self;
  std::string ipc_name;
  std::string state_dir;
  std::shared_ptr<const transport::ClusterKey> key;  // the cluster key; null: crypto off
};

class Daemon final : private RingListener, private stack::StackHost {
 public:
  static Result<std::unique_ptr<Daemon>> start(EventLoop& loop, DaemonSetup setup,
                                               std::unique_ptr<transport::Backend> backend);
  ~Daemon();
  // Leaves the ring (the others form theirs without this node at once) and closes the transport.
  void stop();
  // Called once, when the first ring is installed (for sd_notify READY).
  void on_first_ring(std::function<void()> ready) { ready_ = std::move(ready); }
  // Called once if the transport's link breaks for good (an RDMA device or port failed): this
  // node can no longer reach the ring over it.
  // A failure found before this is set (in the first turn) is handed on at the loop's next turn.
  void on_link_failure(std::function<void(std::string_view)> failed);
  // Called when the daemon must exit: an agreed shutdown (0) or this node killed (kExitKilled).
  void on_exit_request(std::function<void(int code)> exit) { exit_ = std::move(exit); }
  // How a reload applies the logging section (rtotemd's logging_apply knows stderr from syslog).
  void on_logging(std::function<Result<void>(const config::LoggingConfig&)> apply) {
    apply_logging_ = std::move(apply);
  }
  // Re-reads the configuration file and applies what may change at run time (reload_plan.hpp),
  // for rtotemctl reload and SIGHUP. The file is read off the loop (ConfigLoader), the ring goes
  // on meanwhile: `done` gets what changed, or why nothing did, on a later turn. An outcome
  // instead when the reload cannot start (-EBUSY: another is under way); `done` is not called.
  std::optional<ReloadOutcome> reload(std::function<void(const ReloadOutcome&)> done) {
    return stack_->reload(std::move(done));
  }
  // Reopens the log file with the settings in force (SIGHUP after logrotate).
  void reopen_logging() { stack_->reopen_logging(); }
  // Goes on over `backend` instead (after a link failure): the ring re-forms over it, local
  // clients stay connected and see it as any membership change.
  Result<void> switch_transport(std::unique_ptr<transport::Backend> backend, config::TransportKind kind);

 private:
  Daemon(EventLoop& loop, DaemonSetup setup);
  // Each running link's peers in `file` (a reload's nodelist), as Backend::set_peers takes them.
  Result<std::vector<std::vector<transport::PeerAddress>>> peers_in(const config::DaemonConfig& file) const;

  // RingListener: the ring's deliveries and turns, to the stack.
  void deliver(const membership::Delivered& message) override { stack_->deliver(message); }
  void configuration(const membership::ConfigChange& change) override;
  void deliveries_done() override { stack_->deliveries_done(); }
  void after_turn() override { stack_->after_turn(); }
  void link_failed(std::string_view reason) override;
  // StackHost
  Status submit(const membership::Gather& message, membership::Delivery delivery) override;
  const membership::Node& node() const override { return ring_->node(); }
  void set_timing(const membership::TotemConfig& timing) override { ring_->set_timing(timing); }
  Result<void> can_change_nodes(const config::DaemonConfig& file) const override;
  void change_nodes(const config::DaemonConfig& file) override;
  void rekey(std::shared_ptr<const transport::ClusterKey> seal_with,
             std::shared_ptr<const transport::ClusterKey> also_open) override {
    ring_->rekey(std::move(seal_with), std::move(also_open));
  }
  const transport::Backend& backend() const override { return ring_->backend(); }
  membership::Time now() const override { return monotonic_now(); }
  void arm_timer(std::optional<membership::Time> deadline) override;
  void arm_client_retry() override;
  void post(std::function<void()> job) override { (void)loop_.post(std::move(job)); }
  void set_access(std::vector<std::uint32_t> uids, std::vector<std::uint32_t> gids) override;
  bool loading() const override { return loader_->busy(); }
  Result<void> load_config(std::function<void(Result<config::DaemonConfig>)> done) override;
  Result<void> apply_logging(const config::LoggingConfig& logging) override;
  Result<std::string> dump_flight_data() override { return logging_dump_flight_data(); }
  void exit(int code) override;
  stack::HostStats host_stats() const override;

  EventLoop& loop_;
  DaemonSetup setup_;
  std::unique_ptr<ConfigLoader> loader_;  // a reload's file
  std::unique_ptr<stack::NodeStack> stack_;
  std::unique_ptr<LoopTimer> stack_timer_;    // the stack's deadline
  std::unique_ptr<LoopTimer> clients_retry_;  // a client's full event channel is tried again
  std::unique_ptr<RingHost> ring_;
  std::unique_ptr<IpcServer> ipc_;  // before the stack goes: its clients are the stack's
  std::function<void(int)> exit_;
  std::function<Result<void>(const config::LoggingConfig&)> apply_logging_;
  std::function<void()> ready_;
  std::function<void(std::string_view)> link_failed_;
  std::string early_link_failure_;  // reported before link_failed_ was set
  bool ring_formed_ = false;
};

}  // namespace rtotem::daemon
