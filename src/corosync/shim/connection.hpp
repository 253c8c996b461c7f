// What every drop-in library does the same way over librtotem: a connection to the local rtotemd,
// errors as cs_error_t, dispatch with Corosync's four modes, and finalize from anywhere.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include <corosync/corotypes.h>

#include "rtotem/rtotem.h"

namespace rtotem::corosync {

// librtotem's -errno as Corosync reports it (0: CS_OK). Corosync's own mapping (qb_to_cs_error),
// plus what rtotem says that corosync does not: -EPERM is a refusal, -ECONNREFUSED no daemon.
cs_error_t cs_error(int rc) noexcept;

class Connection {
 public:
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Connects to rtotemd ($RTOTEM_IPC, else "rtotem"), with librtotem's callbacks bound to ctx.
  cs_error_t open(const rtotem_callbacks* callbacks, void* ctx);
  rtotem_t* handle() const noexcept { return handle_; }

  // Serialises calls on the connection (librtotem's handle is for one thread at a time). It is
  // recursive because callbacks, which run inside dispatch, may call the library again.
  std::recursive_mutex& mutex() noexcept { return mutex_; }

  // The pollable socket to rtotemd (a Unix stream socket whose peer is the daemon).
  cs_error_t fd(int* out);
  // CS_DISPATCH_ONE / ALL / BLOCKING / ONE_NONBLOCKING as Corosync's libraries do them. Waiting
  // happens without the mutex, so another thread may send meanwhile.
  cs_error_t dispatch(int flags);

  // Finalize: the handle is gone from its table; dispatch stops after the current callback, and
  // the connection closes when the last call holding it returns.
  void mark_finalized() noexcept { finalized_ = true; }
  bool finalized() const noexcept { return finalized_; }

 private:
  rtotem_t* handle_ = nullptr;  // owned: rtotem_disconnect in the destructor
  std::recursive_mutex mutex_;
  std::atomic<bool> finalized_{false};
};

}  // namespace rtotem::corosync
