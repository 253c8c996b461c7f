// Between libqb's IPC service and the event loop (it is libqb's poll hooks), for the part of a
// connection's life libqb leaves unbounded: before it has authenticated, when it is not a client
// yet and the daemon's checks (uid, max_clients) have not run.
// - A connection must authenticate within kAuthDeadlineNs, and at most kWaitingMax wait at once
//   (the oldest goes first): libqb holds one that never does forever, a descriptor apiece, so any
//   local process could take every descriptor. librtotem authenticates at once.
// - With no descriptor left and a connection waiting on the listener, the oldest unauthenticated
//   connection is closed to make room, or, if there is none, the new connection is accepted on a
//   spare descriptor and closed: libqb's acceptor would find the listener readable on every turn
//   and spin.
#pragma once

#include <qb/qbipcs.h>

#include <cstdint>
#include <map>
#include <memory>

#include "src/daemon/event_loop.hpp"
#include "src/daemon/spare_descriptor.hpp"

namespace rtotem::daemon {

class IpcAdmission {
 public:
  static constexpr std::uint64_t kAuthDeadlineNs = 5'000'000'000;
  static constexpr std::size_t kWaitingMax = 256;
  // The loop level of every IPC descriptor: libqb's default, below the ring's (QB_LOOP_HIGH).
  static constexpr qb_loop_priority kIpcLevel = QB_LOOP_MED;

  // One per process (libqb's hooks carry no context): the loop's, for every IPC service.
  static std::unique_ptr<IpcAdmission> create(EventLoop& loop);
  ~IpcAdmission();
  IpcAdmission(const IpcAdmission&) = delete;
  IpcAdmission& operator=(const IpcAdmission&) = delete;

  qb_ipcs_poll_handlers handlers() const noexcept;
  // Connections closed before they authenticated: too slow, or pushed out by newer ones.
  std::uint64_t auth_timeouts() const noexcept { return auth_timeouts_; }
  // Connections refused for want of a descriptor (accepted on the spare and closed).
  std::uint64_t connections_shed() const noexcept { return shed_; }
  std::size_t unauthenticated() const noexcept { return waiting_.size(); }
  // At shutdown: libqb would keep them, and what it holds for them, past the service's end.
  void close_unauthenticated();
  // Called by the service for each request libqb takes: whether it may take another in the same
  // dispatch. After taking N requests libqb reads N notification bytes from the client's socket,
  // waiting without a timeout until they are there; but a client writes a request into its ring
  // before its byte, so a client stopped (or preempted) between the two, with asynchronous
  // requests in flight, would stop the daemon. A dispatch therefore takes no more requests than
  // there are bytes waiting when it starts (at least one: a dispatch starts on one).
  bool take_request() noexcept { return --requests_left_ > 0; }

 private:
  struct Hook {
    qb_ipcs_dispatch_fn_t fn = nullptr;
    void* data = nullptr;
  };
  struct Waiting {
    Hook hook;
    std::uint64_t deadline_ns = 0;
  };

  explicit IpcAdmission(EventLoop& loop);
  static std::int32_t job_add(enum qb_loop_priority p, void* data, qb_loop_job_dispatch_fn fn);
  static std::int32_t dispatch_add(enum qb_loop_priority p, std::int32_t fd, std::int32_t events, void* data,
                                   qb_ipcs_dispatch_fn_t fn);
  static std::int32_t dispatch_mod(enum qb_loop_priority p, std::int32_t fd, std::int32_t events, void* data,
                                   qb_ipcs_dispatch_fn_t fn);
  static std::int32_t dispatch_del(std::int32_t fd);
  // libqb's acceptor for the listener `data` points at, then the checks above.
  static std::int32_t accept_then_check(std::int32_t fd, std::int32_t revents, void* data);
  // libqb's dispatch of a connection's requests, with take_request()'s budget.
  static std::int32_t dispatch_connection(std::int32_t fd, std::int32_t revents, void* data);
  void admit_when_out_of_descriptors(int listener);
  // Counted and logged (why: "did not authenticate in time"), then hang_up.
  void close_waiting(int fd, const char* why);
  // libqb lets go of the connection itself: its authentication handler is told the peer hung up.
  void hang_up(int fd);
  void close_oldest_waiting();
  void expire();
  void arm_expiry();

  EventLoop& loop_;
  SpareDescriptor spare_;  // given up for a moment to accept and close a connection
  std::map<int, Hook> listeners_;
  std::map<int, Waiting> waiting_;   // by descriptor: accepted, not authenticated
  std::map<int, Hook> connections_;  // by descriptor: authenticated, libqb's request dispatch
  int requests_left_ = 1;            // in the dispatch under way (take_request)
  LoopTimer expiry_;
  bool accepting_ = false;  // inside libqb's acceptor: what it adds is a new connection
  std::uint64_t auth_timeouts_ = 0;
  std::uint64_t shed_ = 0;
};

}  // namespace rtotem::daemon
