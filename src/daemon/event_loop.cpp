#include "src/daemon/event_loop.hpp"

#include <poll.h>
#include <qb/qblog.h>
#include <qb/qbutil.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>

namespace rtotem::daemon {

Result<std::unique_ptr<EventLoop>> EventLoop::create() {
  qb_loop_t* loop = qb_loop_create();
  if (loop == nullptr) return Error::sys(errno, "qb_loop_create");
  return std::unique_ptr<EventLoop>(new EventLoop(loop));
}

EventLoop::~EventLoop() {
  for (const auto& [fd, callback] : watches_) qb_loop_poll_del(loop_, fd);
  qb_loop_destroy(loop_);
}

Result<void> EventLoop::watch(int fd, int events, FdCallback callback) {
  auto owned = std::make_unique<FdCallback>(std::move(callback));
  const int rc = qb_loop_poll_add(loop_, QB_LOOP_HIGH, fd, events, owned.get(), dispatch_fd);
  if (rc != 0) return Error::sys(-rc, "watching descriptor {}", fd);
  watches_[fd] = std::move(owned);
  return {};
}

Result<void> EventLoop::modify(int fd, int events) {
  const auto found = watches_.find(fd);
  RTOTEM_ASSERT(found != watches_.end());
  const int rc = qb_loop_poll_mod(loop_, QB_LOOP_HIGH, fd, events, found->second.get(), dispatch_fd);
  if (rc != 0) return Error::sys(-rc, "changing the watch of descriptor {}", fd);
  return {};
}

void EventLoop::unwatch(int fd) {
  if (watches_.erase(fd) > 0) qb_loop_poll_del(loop_, fd);
}

bool EventLoop::post(Callback callback) {
  auto owned = std::make_unique<Callback>(std::move(callback));
  if (const int rc = qb_loop_job_add(loop_, QB_LOOP_HIGH, owned.get(), dispatch_job); rc != 0) {
    qb_log(LOG_ERR, "cannot queue a job on the event loop: %s", std::strerror(-rc));
    return false;
  }
  (void)owned.release();  // dispatch_job owns it
  return true;
}

Result<void> EventLoop::on_signal(int signal, Callback callback) {
  auto owned = std::make_unique<Callback>(std::move(callback));
  qb_loop_signal_handle handle = nullptr;
  const int rc = qb_loop_signal_add(loop_, QB_LOOP_HIGH, signal, owned.get(), dispatch_signal, &handle);
  if (rc != 0) return Error::sys(-rc, "handling signal {}", signal);
  signals_[signal] = std::move(owned);
  return {};
}

std::int32_t EventLoop::dispatch_fd(std::int32_t, std::int32_t revents, void* data) {
  (*static_cast<FdCallback*>(data))(revents);
  return 0;  // keep watching
}

void EventLoop::dispatch_job(void* data) {
  const std::unique_ptr<Callback> job(static_cast<Callback*>(data));
  (*job)();
}

std::int32_t EventLoop::dispatch_signal(std::int32_t, void* data) {
  (*static_cast<Callback*>(data))();
  return 0;
}

LoopTimer::~LoopTimer() {
  if (scheduled_) qb_loop_timer_del(loop_.raw(), handle_);
}

void LoopTimer::arm(std::uint64_t after_ns) {
  const std::uint64_t now = qb_util_nano_current_get();  // libqb's timers' clock (monotonic)
  deadline_ns_ = now + after_ns;
  armed_ = true;
  if (scheduled_ && scheduled_ns_ <= deadline_ns_) return;  // it fires first, then re-arms
  if (scheduled_) qb_loop_timer_del(loop_.raw(), handle_);
  schedule(now);
}

void LoopTimer::schedule(std::uint64_t now_ns) {
  const std::uint64_t after_ns = deadline_ns_ > now_ns ? deadline_ns_ - now_ns : 0;
  // Fails only when the loop cannot grow its timer list: a protocol timer must never be lost.
  const int rc = qb_loop_timer_add(loop_.raw(), QB_LOOP_HIGH, after_ns, this, dispatch, &handle_);
  RTOTEM_ASSERT(rc == 0);
  scheduled_ = true;
  scheduled_ns_ = deadline_ns_;
}

void LoopTimer::dispatch(void* data) {
  auto* timer = static_cast<LoopTimer*>(data);
  timer->scheduled_ = false;
  if (!timer->armed_) return;  // cancelled since
  const std::uint64_t now = qb_util_nano_current_get();
  if (now < timer->deadline_ns_) {  // moved later since
    timer->schedule(now);
    return;
  }
  timer->armed_ = false;
  timer->fire_();
}

Result<std::unique_ptr<LoopJob>> LoopJob::create(EventLoop& loop, EventLoop::Callback run) {
  Fd fd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!fd) return Error::sys(errno, "eventfd for a loop job");
  const int raw = fd.get();
  std::unique_ptr<LoopJob> job(new LoopJob(loop, std::move(fd), std::move(run)));
  if (auto watched = loop.watch(raw, POLLIN, [j = job.get()](int) { j->dispatch(); }); !watched) return watched.error();
  return job;
}

LoopJob::~LoopJob() { loop_.unwatch(fd_.get()); }

void LoopJob::post() noexcept {
  if (posted_) return;
  posted_ = true;
  const std::uint64_t one = 1;
  // Cannot fail: the counter is read back to 0 before the next write.
  const ssize_t written = ::write(fd_.get(), &one, sizeof one);
  RTOTEM_ASSERT(written == sizeof one);
}

void LoopJob::dispatch() noexcept {
  std::uint64_t count = 0;
  if (::read(fd_.get(), &count, sizeof count) != sizeof count) return;  // spurious wake-up
  posted_ = false;
  run_();
}

}  // namespace rtotem::daemon
