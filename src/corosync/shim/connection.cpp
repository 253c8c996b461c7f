#include "src/corosync/shim/connection.hpp"

#include <poll.h>

#include <cerrno>

namespace rtotem::corosync {

cs_error_t cs_error(int rc) noexcept {
  switch (rc) {
    case 0: return CS_OK;
    case -EPERM: return CS_ERR_ACCESS;
    case -ECONNREFUSED:
    case -ENOTCONN: return CS_ERR_LIBRARY;
    case -ENOMEM: return CS_ERR_NO_MEMORY;
    default: return qb_to_cs_error(rc);
  }
}

Connection::~Connection() {
  if (handle_ != nullptr) rtotem_disconnect(handle_);
}

cs_error_t Connection::open(Service service, const rtotem_callbacks* callbacks, void* ctx) {
  if (const int rc = rtotem_connect(&handle_, nullptr, callbacks, ctx); rc != 0) return cs_error(rc);
  // A daemon older than the call answers -EINVAL; the connection serves all the same.
  if (const int rc = rtotem_client_service(handle_, static_cast<unsigned>(service)); rc != 0 && rc != -EINVAL)
    return cs_error(rc);
  return CS_OK;
}

cs_error_t Connection::fd(int* out) {
  if (out == nullptr) return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(mutex_);
  const int fd = rtotem_fd(handle_);
  if (fd < 0) return cs_error(fd);
  *out = fd;
  return CS_OK;
}

cs_error_t Connection::dispatch(int flags) {
  if (flags < CS_DISPATCH_ONE || flags > CS_DISPATCH_ONE_NONBLOCKING) return CS_ERR_INVALID_PARAM;
  const bool wait = flags == CS_DISPATCH_ONE || flags == CS_DISPATCH_BLOCKING;
  int fd_now = -1;
  if (cs_error_t rc = fd(&fd_now); rc != CS_OK) return rc;
  // ONE handles one event of Corosync's. An event of rtotem's own (credit, a ring change a handle
  // does not report) makes no callback: ONE then takes the next event that is ready, without
  // waiting for one (dlm dispatches its quorum handle once, expecting the notification).
  bool only_rtotems = false;
  for (;;) {
    if (finalized_) return CS_ERR_BAD_HANDLE;
    int rc = 0;
    // What a dispatch further out (one whose callback called this one) has not run yet goes
    // first: then the next event.
    if (deferred_count_ == 0) {
      pollfd p{fd_now, POLLIN, 0};
      const int ready = poll(&p, 1, wait && !only_rtotems ? -1 : 0);
      if (ready < 0) {
        if (errno == EINTR) continue;
        return CS_ERR_LIBRARY;
      }
      if (ready == 0) return flags == CS_DISPATCH_ONE_NONBLOCKING && !only_rtotems ? CS_ERR_TRY_AGAIN : CS_OK;
      std::lock_guard lock(mutex_);
      rc = rtotem_dispatch(handle_, RTOTEM_DISPATCH_ONE);  // a batch of deliveries counts as one
    }
    const bool called = run_deferred();
    if (finalized_) return CS_ERR_BAD_HANDLE;
    if (rc < 0) return cs_error(rc);
    if (flags == CS_DISPATCH_ONE || flags == CS_DISPATCH_ONE_NONBLOCKING) {
      if (called) return CS_OK;
      only_rtotems = true;
    }
  }
}

// One at a time, each taken off the queue before it runs, so that a callback that dispatches
// goes on where this left off.
bool Connection::run_deferred() {
  bool called = false;
  while (!finalized_) {  // by an earlier callback
    std::function<void()> call;
    {
      std::lock_guard lock(mutex_);
      if (deferred_.empty()) break;
      call = std::move(deferred_.front());
      deferred_.pop_front();
      --deferred_count_;
    }
    call();
    called = true;
  }
  return called;
}

}  // namespace rtotem::corosync
