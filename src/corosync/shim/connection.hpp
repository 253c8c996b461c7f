// What every drop-in library does the same way over librtotem: a connection to the local rtotemd,
// errors as cs_error_t, dispatch with Corosync's four modes, and finalize from anywhere.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include <corosync/corotypes.h>

#include "rtotem/rtotem.h"

namespace rtotem::corosync {

// librtotem's -errno as Corosync reports it (0: CS_OK). Corosync's own mapping (qb_to_cs_error),
// plus what rtotem says that corosync does not: -EPERM is a refusal, -ECONNREFUSED no daemon.
cs_error_t cs_error(int rc) noexcept;

// Corosync's service numbers (corodefs.h's enum corosync_service_types).
enum class Service : unsigned { kCmap = 0, kCfg = 1, kCpg = 2, kQuorum = 3, kVotequorum = 5 };

class Connection {
 public:
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Connects to rtotemd ($RTOTEM_IPC, else "rtotem"), with librtotem's callbacks bound to ctx, as
  // Corosync's `service` (what the statistics map shows it as).
  cs_error_t open(Service service, const rtotem_callbacks* callbacks, void* ctx);
  rtotem_t* handle() const noexcept { return handle_; }

  // Serialises calls on the connection (librtotem's handle is for one thread at a time).
  std::recursive_mutex& mutex() noexcept { return mutex_; }

  // What librtotem's callbacks (inside dispatch, under the mutex) hand on: the application's
  // callback, with copies of what it is given. dispatch calls it once the mutex is released, so
  // an application may hold its own locks across calls from other threads (pmxcfs does), as
  // Corosync's libraries, which take no lock, let it.
  void defer(std::function<void()> call) {
    deferred_.push_back(std::move(call));
    ++deferred_count_;
  }

  // The pollable socket to rtotemd (a Unix stream socket whose peer is the daemon).
  cs_error_t fd(int* out);
  // CS_DISPATCH_ONE / ALL / BLOCKING / ONE_NONBLOCKING as Corosync's libraries do them. Waiting
  // happens without the mutex, so another thread may send meanwhile. A callback may dispatch
  // again: it gets what comes after it, in order.
  cs_error_t dispatch(int flags);

  // Finalize: the handle is gone from its table; dispatch stops after the current callback, and
  // the connection closes when the last call holding it returns.
  void mark_finalized() noexcept { finalized_ = true; }
  bool finalized() const noexcept { return finalized_; }

 private:
  rtotem_t* handle_ = nullptr;  // owned: rtotem_disconnect in the destructor
  std::recursive_mutex mutex_;
  bool run_deferred();  // the deferred calls, in order, until none is left or the handle is finalized

  std::deque<std::function<void()>> deferred_;  // guarded by mutex_
  // Its size, read without the mutex: a dispatch with nothing left to run does not wait behind
  // a send that holds the mutex (a message in pieces may, for up to 30 s).
  std::atomic<std::size_t> deferred_count_{0};
  std::atomic<bool> finalized_{false};
};

}  // namespace rtotem::corosync
