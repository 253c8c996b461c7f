#include "src/daemon/ring_host.hpp"

#include <poll.h>
#include <qb/qblog.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <utility>

#include "membership/ring_seq_floor.hpp"
#include "src/common/seal_epoch.hpp"

namespace rtotem::daemon {

using membership::TimerId;

Time monotonic_now() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Time>(ts.tv_sec) * 1'000'000 + static_cast<Time>(ts.tv_nsec) / 1000;
}

RingHost::RingHost(EventLoop& loop, std::unique_ptr<transport::Backend> backend, RingSeqFile seq_file,
                   RingListener& listener)
    : loop_(loop), backend_(std::move(backend)), seq_file_(std::move(seq_file)), listener_(listener) {
  for (std::size_t t = 0; t < timers_.size(); ++t) {
    timers_[t] = std::make_unique<LoopTimer>(loop_, [this, t] {
      node_->on_timer(static_cast<TimerId>(t), monotonic_now());
      pump();
    });
  }
  backend_timer_ = std::make_unique<LoopTimer>(loop_, [this] {
    run_backend_timer();
    pump();
  });
}

void RingHost::run_backend_timer() {
  const Time now = monotonic_now();
  const std::uint64_t next = backend_->on_timer(now);
  if (next == transport::Backend::kNoTimer) {
    backend_timer_->cancel();
    return;
  }
  backend_timer_->arm((next > now ? next - now : 0) * 1000);
}

Result<std::unique_ptr<RingHost>> RingHost::start(EventLoop& loop, std::unique_ptr<transport::Backend> backend,
                                                  const membership::TotemConfig& config, RingSeqFile seq_file,
                                                  RingListener& listener) {
  auto stored = seq_file.load();
  if (!stored) return stored.error();
  // A missing file reads as 0: the clock's floor keeps ring ids unique without it.
  const membership::Seq ring_seq = std::max(*stored, membership::ring_seq_floor(wall_clock_ns()));
  std::unique_ptr<RingHost> host(new RingHost(loop, std::move(backend), std::move(seq_file), listener));
  const membership::NodeId self = host->backend_->local_node();
  host->node_ = std::make_unique<membership::Node>(self, config, *host->backend_,
                                                   static_cast<membership::NodeEvents&>(*host), ring_seq);
  if (auto watched = host->watch_descriptors(); !watched) return watched.error();
  auto pump_job = LoopJob::create(loop, [h = host.get()] { h->pump(); });
  if (!pump_job) return pump_job.error();
  host->pump_job_ = std::move(*pump_job);
  host->node_->start(monotonic_now());
  host->run_backend_timer();
  host->pump();
  return host;
}

RingHost::~RingHost() {
  if (watched_tx_fd_ >= 0) watch_tx(false);
  unwatch_descriptors();
}

Result<void> RingHost::watch_descriptors() {
  for (int fd : backend_->poll_fds()) {
    if (auto watched = loop_.watch(fd, POLLIN, [this](int) { pump(); }); !watched) return watched.error();
    watched_fds_.push_back(fd);
  }
  return {};
}

void RingHost::unwatch_descriptors() {
  for (int fd : watched_fds_) loop_.unwatch(fd);
  watched_fds_.clear();
}

// The backend's descriptors changed during a turn (a LinkSet retired a broken link, whose
// descriptors are closed now): watch the ones it has.
void RingHost::follow_descriptors() {
  const auto now = backend_->poll_fds();
  if (std::ranges::equal(now, watched_fds_)) return;
  if (watched_tx_fd_ >= 0) watch_tx(false);
  unwatch_descriptors();
  if (auto watched = watch_descriptors(); !watched)
    qb_log(LOG_ERR, "after a link left the transport: %s", watched.error().message().c_str());
}

// Never a turn here: a delivery inside submit would reach the group service and its host in the
// middle of their own request (a join delivered before the client is in the group, a list walked
// while it changes, a refused retry that submits again from inside the turn it triggers). The
// turn that sends what was queued runs as the loop's next job.
Status RingHost::submit(const membership::Gather& message, membership::Delivery delivery) {
  const Status status = node_->submit(message, delivery, monotonic_now());
  if (status == Status::kOk) pump_job_->post();
  return status;
}

void RingHost::close() {
  if (closed_) return;  // a second stop signal
  closed_ = true;
  node_->leave();  // the others form their ring now, not after a token timeout
  (void)backend_->flush();
  backend_->close();
}

Result<void> RingHost::switch_backend(std::unique_ptr<transport::Backend> next) {
  // Own multicasts still on the old local path reach the Node first: it delivers its own messages.
  while (backend_->has_pending_rx()) (void)backend_->poll(*this);
  if (auto rebound = node_->rebind(*next, monotonic_now()); !rebound) return rebound.error();
  if (watched_tx_fd_ >= 0) watch_tx(false);
  unwatch_descriptors();
  backend_->retire();
  retired_.push_back(std::exchange(backend_, std::move(next)));
  link_failure_reported_ = false;
  if (auto watched = watch_descriptors(); !watched) return watched.error();
  run_backend_timer();
  pump_job_->post();  // the join the Node queued goes out (this may run inside a turn)
  return {};
}

// One turn: everything received is handed to the Node, what it sends is flushed, then the
// listener retries what the ring refused earlier (its submissions post the next turn).
void RingHost::pump() {
  if (pumping_) return;  // re-entered from a listener's callback: the outer loop finishes the job
  pumping_ = true;
  do {
    // Own multicasts wait on the local path (no descriptor wakes us for them): delivered first.
    for (std::size_t n = backend_->poll(*this); n == transport::kRxBatchMax || (n > 0 && backend_->has_pending_rx());
         n = backend_->poll(*this)) {}
    listener_.deliveries_done();
    (void)backend_->flush();
  } while (backend_->has_pending_rx());
  follow_descriptors();
  watch_tx(backend_->has_pending_tx());
  listener_.after_turn();
  if (!backend_->link_failure().empty() && !link_failure_reported_) {
    link_failure_reported_ = true;
    listener_.link_failed(backend_->link_failure());
  }
  pumping_ = false;
}

// Writability is watched only while packets wait in the backend's queue; the descriptor may be
// one we read from too (UDP sends from its unicast socket). It may change while watched (a
// LinkSet's is the socket of whichever link is blocked): the one watched is the one let go.
void RingHost::watch_tx(bool wanted) {
  const int tx_fd = wanted ? backend_->tx_fd() : watched_tx_fd_;
  if (tx_fd < 0 || tx_fd == (wanted ? watched_tx_fd_ : -1)) return;
  if (wanted && watched_tx_fd_ >= 0) watch_tx(false);
  const auto polled = backend_->poll_fds();
  const bool also_read = std::find(polled.begin(), polled.end(), tx_fd) != polled.end();
  Result<void> changed{};
  if (also_read) {
    changed = loop_.modify(tx_fd, wanted ? POLLIN | POLLOUT : POLLIN);
  } else if (wanted) {
    changed = loop_.watch(tx_fd, POLLOUT, [this](int) { pump(); });
  } else {
    loop_.unwatch(tx_fd);
  }
  if (!changed) {
    qb_log(LOG_ERR, "%s", changed.error().message().c_str());
    return;
  }
  watched_tx_fd_ = wanted ? tx_fd : -1;
}

void RingHost::on_packets(std::span<transport::InboundPacket> batch) { node_->on_packets(batch, monotonic_now()); }

void RingHost::arm_timer(TimerId timer, Time deadline) {
  const Time now = monotonic_now();
  timers_[static_cast<std::size_t>(timer)]->arm(deadline > now ? (deadline - now) * 1000 : 0);
}

void RingHost::cancel_timer(TimerId timer) { timers_[static_cast<std::size_t>(timer)]->cancel(); }

// The Node waits for this before it uses `seq`: a ring id must never be reused after a restart.
// A state directory that cannot be written is fatal, as corosync's is.
void RingHost::persist_ring_seq(membership::Seq seq) {
  auto stored = spare_descriptor_.while_released([&] { return seq_file_.store(seq); });
  if (!stored) {
    qb_log(LOG_CRIT, "cannot persist ring sequence number %llu: %s", static_cast<unsigned long long>(seq),
           stored.error().message().c_str());
    std::abort();
  }
}

}  // namespace rtotem::daemon
