// Loads the configuration file off the ring's thread, for a reload. Loading resolves every ring
// address (getaddrinfo: host names are allowed) and every user and group name (getpwnam_r,
// getgrnam_r), and each lookup may wait on a name service for seconds: on the loop, past the
// token's timeout. A thread loads; the result comes back on the loop.
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <string>

#include "src/daemon/config/daemon_config.hpp"
#include "src/daemon/event_loop.hpp"
#include "base/fd.hpp"

namespace rtotem::daemon {

class ConfigLoader {
 public:
  using Done = std::function<void(Result<config::DaemonConfig>)>;

  static Result<std::unique_ptr<ConfigLoader>> create(EventLoop& loop);
  // A lookup cannot be interrupted: a load under way is left to end on its own and its result
  // dropped, so that stopping the daemon never waits for a name server.
  ~ConfigLoader();
  ConfigLoader(const ConfigLoader&) = delete;
  ConfigLoader& operator=(const ConfigLoader&) = delete;

  bool busy() const noexcept { return static_cast<bool>(done_); }
  // Loads `path` (config::load_config) on a thread of its own; `done` gets the outcome on the
  // loop, on a later turn. One load at a time: !busy(). An error if no thread could start (then
  // `done` is not called).
  Result<void> load(const std::string& path, Done done);

 private:
  ConfigLoader(EventLoop& loop, std::shared_ptr<const Fd> wake) : loop_(loop), wake_(std::move(wake)) {}
  void finished();  // on the loop: the thread has written to wake_

  EventLoop& loop_;
  std::shared_ptr<const Fd> wake_;  // an eventfd the loop watches, shared with the thread
  std::future<Result<config::DaemonConfig>> result_;
  Done done_;
};

}  // namespace rtotem::daemon
