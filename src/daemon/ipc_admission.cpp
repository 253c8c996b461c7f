#include "src/daemon/ipc_admission.hpp"

#include <poll.h>
#include <qb/qblog.h>
#include <qb/qbutil.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <vector>

#include "base/assert.hpp"

namespace rtotem::daemon {
namespace {

IpcAdmission* g_admission = nullptr;  // libqb's poll hooks take no context

bool is_listener(int fd) {
  int listening = 0;
  socklen_t size = sizeof listening;
  return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 && listening != 0;
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

}  // namespace

std::unique_ptr<IpcAdmission> IpcAdmission::create(EventLoop& loop) {
  RTOTEM_ASSERT(g_admission == nullptr);
  std::unique_ptr<IpcAdmission> admission(new IpcAdmission(loop));
  g_admission = admission.get();
  return admission;
}

IpcAdmission::IpcAdmission(EventLoop& loop) : loop_(loop), expiry_(loop, [this] { expire(); }) {}

IpcAdmission::~IpcAdmission() { g_admission = nullptr; }

qb_ipcs_poll_handlers IpcAdmission::handlers() const noexcept {
  return {job_add, dispatch_add, dispatch_mod, dispatch_del};
}

std::int32_t IpcAdmission::job_add(enum qb_loop_priority /*service's*/, void* data, qb_loop_job_dispatch_fn fn) {
  return qb_loop_job_add(g_admission->loop_.raw(), kIpcLevel, data, fn);
}

// libqb passes its service's priority, which IpcServer sets for how many requests a dispatch
// takes: the loop runs IPC at kIpcLevel whatever it is, below the ring's own descriptors and timers.
std::int32_t IpcAdmission::dispatch_add(enum qb_loop_priority /*service's*/, std::int32_t fd, std::int32_t events,
                                        void* data, qb_ipcs_dispatch_fn_t fn) {
  IpcAdmission& self = *g_admission;
  const qb_loop_priority p = kIpcLevel;
  qb_loop_t* loop = self.loop_.raw();
  if (self.accepting_) {  // the connection libqb just accepted, waiting for its authentication
    const std::int32_t rc = qb_loop_poll_add(loop, p, fd, events, data, fn);
    if (rc != 0) return rc;
    if (self.waiting_.size() >= kWaitingMax) self.close_oldest_waiting();
    self.waiting_[fd] = Waiting{{fn, data}, qb_util_nano_current_get() + kAuthDeadlineNs};
    self.arm_expiry();
    return 0;
  }
  if (!is_listener(fd)) {
    auto [hook, added] = self.connections_.insert_or_assign(fd, Hook{fn, data});
    return qb_loop_poll_add(loop, p, fd, events, &hook->second, dispatch_connection);
  }
  auto [hook, added] = self.listeners_.insert_or_assign(fd, Hook{fn, data});
  return qb_loop_poll_add(loop, p, fd, events, &hook->second, accept_then_check);
}

std::int32_t IpcAdmission::dispatch_mod(enum qb_loop_priority /*service's*/, std::int32_t fd, std::int32_t events,
                                        void* data, qb_ipcs_dispatch_fn_t fn) {
  IpcAdmission& self = *g_admission;
  const qb_loop_priority p = kIpcLevel;
  if (auto listener = self.listeners_.find(fd); listener != self.listeners_.end()) {
    listener->second = Hook{fn, data};
    return qb_loop_poll_mod(self.loop_.raw(), p, fd, events, &listener->second, accept_then_check);
  }
  if (auto connection = self.connections_.find(fd); connection != self.connections_.end()) {
    connection->second = Hook{fn, data};
    return qb_loop_poll_mod(self.loop_.raw(), p, fd, events, &connection->second, dispatch_connection);
  }
  if (auto waiting = self.waiting_.find(fd); waiting != self.waiting_.end()) waiting->second.hook = Hook{fn, data};
  return qb_loop_poll_mod(self.loop_.raw(), p, fd, events, data, fn);
}

std::int32_t IpcAdmission::dispatch_connection(std::int32_t fd, std::int32_t revents, void* data) {
  IpcAdmission& self = *g_admission;
  const Hook hook = *static_cast<const Hook*>(data);  // a copy: libqb may take the descriptor out
  int waiting = 0;
  if (::ioctl(fd, FIONREAD, &waiting) != 0) waiting = 0;
  self.requests_left_ = std::max(waiting, 1);
  const std::int32_t rc = hook.fn(fd, revents, hook.data);
  self.requests_left_ = 1;
  return rc;
}

// libqb takes a descriptor out before it closes it (authenticated, refused or gone alike).
std::int32_t IpcAdmission::dispatch_del(std::int32_t fd) {
  IpcAdmission& self = *g_admission;
  self.waiting_.erase(fd);
  self.listeners_.erase(fd);
  self.connections_.erase(fd);
  return qb_loop_poll_del(self.loop_.raw(), fd);
}

std::int32_t IpcAdmission::accept_then_check(std::int32_t fd, std::int32_t revents, void* data) {
  IpcAdmission& self = *g_admission;
  const Hook hook = *static_cast<const Hook*>(data);
  self.accepting_ = true;
  const std::int32_t rc = hook.fn(fd, revents, hook.data);
  self.accepting_ = false;
  if (rc < 0) {  // the listener is closing: the loop drops it, and so do we
    self.listeners_.erase(fd);
    return rc;
  }
  // libqb accepts one connection a turn: one still waiting is either the next (fine) or one it
  // could not accept for want of a descriptor (it logged that, and would again every turn).
  if (readable(fd) && self.spare_.process_out_of_descriptors()) self.admit_when_out_of_descriptors(fd);
  return rc;
}

void IpcAdmission::admit_when_out_of_descriptors(int listener) {
  if (!waiting_.empty()) {  // an unauthenticated connection makes room: libqb accepts next turn
    close_oldest_waiting();
    return;
  }
  spare_.while_released([listener] {
    if (const int refused = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC); refused >= 0) ::close(refused);
  });
  ++shed_;
  if (std::has_single_bit(shed_))
    qb_log(LOG_ERR,
           "IPC: no descriptor left for a new connection: closed it (%llu so far; every descriptor is "
           "held by a connection: see ipc.max_clients and LimitNOFILE)",
           static_cast<unsigned long long>(shed_));
}

void IpcAdmission::close_waiting(int fd, const char* why) {
  ++auth_timeouts_;
  if (std::has_single_bit(auth_timeouts_))
    qb_log(LOG_WARNING, "IPC: closed a connection that %s (%llu so far)", why,
           static_cast<unsigned long long>(auth_timeouts_));
  hang_up(fd);
}

void IpcAdmission::hang_up(int fd) {
  const auto waiting = waiting_.find(fd);
  if (waiting == waiting_.end()) return;
  const Hook hook = waiting->second.hook;
  waiting_.erase(waiting);
  (void)hook.fn(fd, POLLHUP, hook.data);  // libqb's handler takes it out and closes it
}

void IpcAdmission::close_unauthenticated() {
  while (!waiting_.empty()) hang_up(waiting_.begin()->first);
}

void IpcAdmission::close_oldest_waiting() {
  const auto oldest = std::ranges::min_element(waiting_, {}, [](const auto& w) { return w.second.deadline_ns; });
  if (oldest != waiting_.end()) close_waiting(oldest->first, "had not authenticated when a newer one needed room");
}

void IpcAdmission::expire() {
  const std::uint64_t now = qb_util_nano_current_get();
  std::vector<int> late;
  for (const auto& [fd, waiting] : waiting_)
    if (waiting.deadline_ns <= now) late.push_back(fd);
  for (int fd : late) close_waiting(fd, "did not authenticate in time");
  arm_expiry();
}

void IpcAdmission::arm_expiry() {
  if (waiting_.empty() || expiry_.armed()) return;
  const std::uint64_t now = qb_util_nano_current_get();
  const auto oldest = std::ranges::min_element(waiting_, {}, [](const auto& w) { return w.second.deadline_ns; });
  expiry_.arm(oldest->second.deadline_ns > now ? oldest->second.deadline_ns - now : 0);
}

}  // namespace rtotem::daemon
