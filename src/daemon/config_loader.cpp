#include "src/daemon/config_loader.hpp"

#include <poll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>
#include <thread>

#include "base/assert.hpp"

namespace rtotem::daemon {

Result<std::unique_ptr<ConfigLoader>> ConfigLoader::create(EventLoop& loop) {
  auto wake = std::make_shared<const Fd>(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!*wake) return Error::sys(errno, "eventfd for loading the configuration");
  std::unique_ptr<ConfigLoader> loader(new ConfigLoader(loop, wake));
  if (auto watched = loop.watch(wake->get(), POLLIN, [l = loader.get()](int) { l->finished(); }); !watched)
    return watched.error();
  return loader;
}

ConfigLoader::~ConfigLoader() { loop_.unwatch(wake_->get()); }

// The thread owns what it uses: the path, the promise, and a share of the eventfd (open until
// the thread has written to it, whether or not the loader is still there to read it).
Result<void> ConfigLoader::load(const std::string& path, Done done) {
  RTOTEM_ASSERT(!busy());
  std::promise<Result<config::DaemonConfig>> promise;
  std::future<Result<config::DaemonConfig>> result = promise.get_future();
  try {
    std::thread([path, promise = std::move(promise), wake = wake_]() mutable {
      promise.set_value(config::load_config(path));
      const std::uint64_t one = 1;
      (void)::write(wake->get(), &one, sizeof one);  // a counter: cannot be full with one load at a time
    }).detach();
  } catch (const std::system_error& e) {
    return Error::sys(e.code().value(), "a thread to load {}", path);
  }
  result_ = std::move(result);
  done_ = std::move(done);
  return {};
}

void ConfigLoader::finished() {
  std::uint64_t count = 0;
  if (::read(wake_->get(), &count, sizeof count) != sizeof count || !busy()) return;  // spurious
  Done done = std::move(done_);
  done_ = nullptr;
  done(result_.get());  // ready: set before the write that woke the loop
}

}  // namespace rtotem::daemon
