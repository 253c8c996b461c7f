// RAII over libqb's main loop (qb_loop): descriptors, one-shot timers, deferred jobs and signals,
// each with a callback the loop owns. The daemon is single-threaded: everything runs from run().
#pragma once

#include <qb/qbloop.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "base/result.hpp"
#include "base/fd.hpp"

namespace rtotem::daemon {

class EventLoop {
 public:
  using FdCallback = std::function<void(int revents)>;
  using Callback = std::function<void()>;

  static Result<std::unique_ptr<EventLoop>> create();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  qb_loop_t* raw() const noexcept { return loop_; }
  void run() { qb_loop_run(loop_); }
  void stop() { qb_loop_stop(loop_); }

  // `events`: POLLIN / POLLOUT. One watch per descriptor.
  Result<void> watch(int fd, int events, FdCallback callback);
  Result<void> modify(int fd, int events);
  void unwatch(int fd);
  // Runs `callback` on the loop's next turn, once. False (logged): libqb could not queue it.
  bool post(Callback callback);
  Result<void> on_signal(int signal, Callback callback);

 private:
  explicit EventLoop(qb_loop_t* loop) : loop_(loop) {}
  static std::int32_t dispatch_fd(std::int32_t fd, std::int32_t revents, void* data);
  static void dispatch_job(void* data);
  static std::int32_t dispatch_signal(std::int32_t signal, void* data);

  qb_loop_t* loop_;
  std::map<int, std::unique_ptr<FdCallback>> watches_;
  std::map<int, std::unique_ptr<Callback>> signals_;
};

// A one-shot timer on a loop, re-armed or cancelled at will; cancelled when destroyed.
// Re-arming is the hot path (the token timers move on with every token) and libqb allocates a
// list entry per timer it adds: so a later deadline than the one libqb holds is only recorded,
// and the timer that fires early re-arms for the rest; a cancel only forgets the deadline. libqb
// is then called about once per timeout period instead of once per token.
class LoopTimer {
 public:
  LoopTimer(EventLoop& loop, std::function<void()> fire) : loop_(loop), fire_(std::move(fire)) {}
  ~LoopTimer();
  LoopTimer(const LoopTimer&) = delete;
  LoopTimer& operator=(const LoopTimer&) = delete;

  // Fires once `after_ns` from now, replacing an armed deadline.
  void arm(std::uint64_t after_ns);
  void cancel() noexcept { armed_ = false; }
  bool armed() const noexcept { return armed_; }

 private:
  static void dispatch(void* data);
  void schedule(std::uint64_t now_ns);  // libqb's timer at deadline_ns_

  EventLoop& loop_;
  std::function<void()> fire_;
  std::uint64_t deadline_ns_ = 0;   // what the owner asked for (while armed_)
  std::uint64_t scheduled_ns_ = 0;  // when libqb's timer fires (while scheduled_)
  qb_loop_timer_handle handle_ = 0;
  bool armed_ = false;
  bool scheduled_ = false;
};

// A job run on the loop's next turn, however often it is posted before then. An eventfd the loop
// watches: posting allocates nothing (libqb's qb_loop_job_add allocates per job), at the cost of
// a write and a read per turn.
class LoopJob {
 public:
  static Result<std::unique_ptr<LoopJob>> create(EventLoop& loop, EventLoop::Callback run);
  ~LoopJob();
  LoopJob(const LoopJob&) = delete;
  LoopJob& operator=(const LoopJob&) = delete;

  void post() noexcept;

 private:
  LoopJob(EventLoop& loop, Fd fd, EventLoop::Callback run) : loop_(loop), fd_(std::move(fd)), run_(std::move(run)) {}
  void dispatch() noexcept;

  EventLoop& loop_;
  Fd fd_;
  EventLoop::Callback run_;
  bool posted_ = false;
};

}  // namespace rtotem::daemon
