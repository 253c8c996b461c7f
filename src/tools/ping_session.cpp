// rtotem-ping's loop and phases: what goes out, when, and how long to wait for what comes in.
#include "src/tools/ping_session.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace rtotem::tools {
namespace {

using transport::kNoNode;

constexpr std::byte kFiller{0xa5};
constexpr int kDrainTxMs = 200;  // at exit, for the last pongs and done to leave

}  // namespace

std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

PingSession::PingSession(const PingOptions& options, transport::Backend& backend)
    : options_(options), backend_(backend), slots_(kWindowMax) {
  for (const transport::UdpPeer& peer : options.peers) {
    if (peer.node == options.node) continue;
    peers_.push_back(Peer{PeerTally{.node = peer.node, .address = peer.address.to_string()}});
  }
  std::sort(peers_.begin(), peers_.end(), [](const Peer& a, const Peer& b) { return a.tally.node < b.tally.node; });
  answered_by_.assign(std::size_t{kWindowMax} * peers_.size(), 0);
  owed_.resize(std::size_t{kWindowMax} * peers_.size() * 2);
  report_.rtt_ns.reserve(std::size_t{options.count} * peers_.size());
}

void PingSession::run(const volatile std::sig_atomic_t& stop) {
  const std::int64_t start = steady_ns();
  deadline_ns_ = start + std::int64_t{options_.timeout_s} * 1'000'000'000;
  next_control_ns_ = start;
  while (phase_ != PingPhase::kFinished) {
    if (stop != 0) {
      end_ = PingEnd::kInterrupted;
      break;
    }
    receive();
    const std::int64_t now = steady_ns();
    if (now >= deadline_ns_) {
      end_ = PingEnd::kTimedOut;
      break;
    }
    turn(now);
  }
  if (phase_ == PingPhase::kPing) ping_end_ns_ = steady_ns();
  drain_tx();
}

// Reads until the sockets are empty (a short batch), at most kRxRoundsMax batches so the send
// side gets its turn.
void PingSession::receive() {
  for (int round = 0; round < kRxRoundsMax; ++round)
    if (backend_.poll(*this) < transport::kRxBatchMax) return;
}

// One turn of the loop: the phase's work, what we owe the peers, then out and wait. A phase that
// ends hands over to the next within the same turn, without a wait in between.
void PingSession::turn(std::int64_t now) {
  blocked_ = false;
  for (PingPhase before = phase_;; before = phase_) {
    switch (phase_) {
      case PingPhase::kHello: step_hello(now); break;
      case PingPhase::kPing: step_ping(now); break;
      case PingPhase::kLinger: step_linger(now); break;
      case PingPhase::kFinished: return;
    }
    if (phase_ == before) break;
  }
  send_owed();
  if (!accepted(backend_.flush())) blocked_ = true;
  if (phase_ != PingPhase::kFinished) wait(now);
}

// Leaves once every peer was heard and said it heard everyone, and we said so too.
void PingSession::step_hello(std::int64_t now) {
  const bool heard_all = all_peers([](const Peer& p) { return p.tally.heard; });
  if (now >= next_control_ns_ || (heard_all && !announced_)) {
    if (send_control(PingType::kHello, heard_all ? kHeardAll : 0, kNoNode)) {
      ++report_.hellos_sent;
      next_control_ns_ = now + kHelloEveryNs;
      announced_ = announced_ || heard_all;
    }
  }
  if (!announced_ || !all_peers([](const Peer& p) { return p.tally.heard_all; })) return;
  phase_ = PingPhase::kPing;
  ping_start_ns_ = now;
}

void PingSession::step_ping(std::int64_t now) {
  expire_pings(now);
  send_pings();
  if (next_ < options_.count || front_ < next_) return;
  phase_ = PingPhase::kLinger;
  ping_end_ns_ = now;
  announced_ = false;
  next_control_ns_ = now;
}

// Serves the peers' pings until each said done; leaves when each also said it heard every done,
// or after a grace period for our last done to reach them.
void PingSession::step_linger(std::int64_t now) {
  const bool all_done = all_peers([](const Peer& p) { return p.tally.done; });
  if (all_done && all_done_ns_ == 0) all_done_ns_ = now;
  if (now >= next_control_ns_ || (all_done && !announced_)) {
    if (send_control(PingType::kDone, all_done ? kHeardAll : 0, kNoNode)) {
      ++report_.dones_sent;
      next_control_ns_ = now + kHelloEveryNs;
      announced_ = announced_ || all_done;
    }
  }
  if (!announced_) return;
  if (all_peers([](const Peer& p) { return p.done_all; }) || now >= all_done_ns_ + kDoneGraceNs)
    phase_ = PingPhase::kFinished;
}

void PingSession::send_pings() {
  const std::uint32_t size = options_.size;
  while (next_ < options_.count && next_ - front_ < kWindowMax) {
    transport::SendBufferRef buffer;
    if (!accepted(backend_.acquire(buffer))) return;
    const std::int64_t sent = steady_ns();
    auto payload = buffer->writable_payload();
    encode_ping(PingMessage{PingType::kPing, 0, next_, static_cast<std::uint64_t>(sent)}, payload);
    std::memset(payload.data() + kPingHeaderSize, std::to_integer<int>(kFiller), size);
    buffer->set_payload_size(static_cast<std::uint32_t>(kPingHeaderSize) + size);
    if (!accepted(backend_.multicast(buffer))) return;
    const std::size_t slot = next_ % kWindowMax;
    slots_[slot] = PingSlot{next_, sent, 0, false};
    std::fill_n(answered_by_.begin() + static_cast<std::ptrdiff_t>(slot * peers_.size()), peers_.size(), 0);
    ++next_;
    ++report_.pings_sent;
  }
}

// A ping some peer left unanswered for kPingLossNs is lost to that peer; its slot is freed.
void PingSession::expire_pings(std::int64_t now) {
  for (std::uint32_t seq = front_; seq < next_; ++seq) {
    PingSlot& slot = slots_[seq % kWindowMax];
    if (slot.settled) continue;
    if (now - slot.sent_ns < kPingLossNs) break;  // sent in order: the rest are younger
    const std::size_t base = (seq % kWindowMax) * peers_.size();
    for (std::size_t i = 0; i < peers_.size(); ++i)
      if (answered_by_[base + i] == 0) ++peers_[i].tally.lost;
    slot.settled = true;
  }
  settle_front();
}

// Hello answers and pongs, oldest first, until back-pressure.
void PingSession::send_owed() {
  for (Peer& peer : peers_) {
    if (!peer.owe_hello) continue;
    if (!send_control(PingType::kHello, kHeardAll, peer.tally.node)) return;
    peer.owe_hello = false;
    ++report_.hellos_sent;
  }
  while (owed_count_ > 0) {
    const OwedPong& pong = owed_[owed_head_];
    transport::SendBufferRef buffer;
    if (!accepted(backend_.acquire(buffer))) return;
    encode_ping(PingMessage{PingType::kPong, 0, pong.seq, pong.sent_ns}, buffer->writable_payload());
    buffer->set_payload_size(kPingHeaderSize);
    Peer& peer = peers_[pong.peer];
    if (!accepted(backend_.unicast(peer.tally.node, buffer))) return;
    owed_head_ = (owed_head_ + 1) % owed_.size();
    --owed_count_;
    ++peer.tally.pings_answered;
    ++report_.pongs_sent;
  }
}

// A header-only message, multicast (dest kNoNode) or to one peer. False: back-pressure.
bool PingSession::send_control(PingType type, std::uint8_t flags, transport::NodeId dest) {
  transport::SendBufferRef buffer;
  if (!accepted(backend_.acquire(buffer))) return false;
  encode_ping(PingMessage{type, flags, 0, 0}, buffer->writable_payload());
  buffer->set_payload_size(kPingHeaderSize);
  return accepted(dest == kNoNode ? backend_.multicast(buffer) : backend_.unicast(dest, buffer));
}

// kOk goes on; back-pressure marks the turn blocked. Anything else is a bug of ours: the options
// bound the size and every destination is a listed peer.
bool PingSession::accepted(Status status) {
  if (status == Status::kOk) return true;
  RTOTEM_ASSERT(status == Status::kPoolExhausted || status == Status::kQueueFull || status == Status::kWouldBlock);
  blocked_ = true;
  return false;
}

void PingSession::wait(std::int64_t now) {
  const auto fds = backend_.poll_fds();
  std::array<pollfd, 4> polled{};
  RTOTEM_ASSERT(fds.size() < polled.size());
  std::size_t n = 0;
  for (int fd : fds) polled[n++] = pollfd{fd, POLLIN, 0};
  if (backend_.has_pending_tx() && backend_.tx_fd() >= 0) polled[n++] = pollfd{backend_.tx_fd(), POLLOUT, 0};
  if (::poll(polled.data(), n, wait_ms(now)) < 0 && errno != EINTR) blocked_ = true;
}

// Until the next timer of this phase, at most kWaitMaxMs; 1 ms under back-pressure, so buffers
// come home and the retry never spins.
int PingSession::wait_ms(std::int64_t now) const {
  if (blocked_) return 1;
  if (owed_count_ > 0) return 0;
  std::int64_t next = deadline_ns_;
  if (phase_ == PingPhase::kHello || phase_ == PingPhase::kLinger) next = std::min(next, next_control_ns_);
  if (phase_ == PingPhase::kLinger && all_done_ns_ != 0) next = std::min(next, all_done_ns_ + kDoneGraceNs);
  if (phase_ == PingPhase::kPing && front_ < next_) {
    for (std::uint32_t seq = front_; seq < next_; ++seq) {
      const PingSlot& slot = slots_[seq % kWindowMax];
      if (slot.settled) continue;
      next = std::min(next, slot.sent_ns + kPingLossNs);
      break;
    }
  }
  const std::int64_t ms = (next - now + 999'999) / 1'000'000;
  return static_cast<int>(std::clamp<std::int64_t>(ms, 0, kWaitMaxMs));
}

void PingSession::drain_tx() {
  const std::int64_t until = steady_ns() + std::int64_t{kDrainTxMs} * 1'000'000;
  while (backend_.flush() == Status::kWouldBlock && steady_ns() < until) {
    if (backend_.tx_fd() < 0) return;
    pollfd out{backend_.tx_fd(), POLLOUT, 0};
    (void)::poll(&out, 1, 10);
  }
}

PingReport PingSession::take_report() {
  PingReport report = std::move(report_);
  report.node = options_.node;
  report.address = options_.self().address.to_string();
  report.mode = options_.mode_name();
  report.count = options_.count;
  report.ping_bytes = static_cast<std::uint32_t>(kPingHeaderSize) + options_.size;
  report.phase = phase_;
  report.end = end_;
  report.unsettled = next_ - front_;
  for (const Peer& peer : peers_) report.peers.push_back(peer.tally);
  report.ping_phase_ns = ping_end_ns_ > ping_start_ns_ ? ping_end_ns_ - ping_start_ns_ : 0;
  report.counters = backend_.counters();
  return report;
}

}  // namespace rtotem::tools
