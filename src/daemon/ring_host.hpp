// Runs one totem Node on a real backend inside the event loop: the backend's descriptors wake it,
// the Node's timers become loop timers on the monotonic clock, its ring sequence numbers go to
// the state directory before use, and what it delivers goes to a RingListener.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "membership/node.hpp"
#include "src/common/ring_seq_file.hpp"
#include "src/daemon/event_loop.hpp"
#include "src/daemon/spare_descriptor.hpp"
#include "transport/backend.hpp"

namespace rtotem::daemon {

using membership::Time;

Time monotonic_now() noexcept;  // microseconds

class RingListener {
 public:
  virtual void deliver(const membership::Delivered& message) = 0;
  virtual void configuration(const membership::ConfigChange& change) = 0;
  // What was delivered so far this turn, before the turn's packets leave: local clients hear of
  // their own messages without waiting for the sends to the other nodes (on loopback and veth the
  // sender's system call also does the receivers' work).
  virtual void deliveries_done() = 0;
  // After each batch of work: a moment to retry what back-pressure refused.
  virtual void after_turn() = 0;
  // The backend's link broke for good (Backend::link_failure says why); called once.
  virtual void link_failed(std::string_view reason) = 0;

 protected:
  ~RingListener() = default;
};

class RingHost final : private membership::NodeEvents, private transport::PacketSink {
 public:
  // Opens nothing itself: `backend` is open, `seq_file` is the state directory's.
  static Result<std::unique_ptr<RingHost>> start(EventLoop& loop, std::unique_ptr<transport::Backend> backend,
                                                 const membership::TotemConfig& config, RingSeqFile seq_file,
                                                 RingListener& listener);
  ~RingHost();

  // A submission from the service above; the packets it causes go out at once.
  Status submit(const membership::Gather& message, membership::Delivery delivery);
  const membership::Node& node() const noexcept { return *node_; }
  void set_timing(const membership::TotemConfig& timing) { node_->set_timing(timing); }
  void rekey(std::shared_ptr<const transport::ClusterKey> seal_with,
             std::shared_ptr<const transport::ClusterKey> also_open) {
    backend_->rekey(std::move(seal_with), std::move(also_open));
  }
  const transport::Backend& backend() const noexcept { return *backend_; }
  transport::Backend& backend() noexcept { return *backend_; }
  // Sends what is queued and closes the backend (at shutdown).
  void close();
  // Goes on over `next` (the backend's link failed for good): the Node moves to it and gathers a
  // new ring there; the old backend gives its device back and stays only for the buffers the Node
  // still holds. Refused, with nothing changed, if `next` carries less than the Node needs.
  Result<void> switch_backend(std::unique_ptr<transport::Backend> next);

 private:
  RingHost(EventLoop& loop, std::unique_ptr<transport::Backend> backend, RingSeqFile seq_file, RingListener& listener);
  Result<void> watch_descriptors();
  void unwatch_descriptors();
  void follow_descriptors();
  // Polls until the backend is drained (the local path too), flushes, and watches for
  // writability while packets wait.
  void pump();
  void watch_tx(bool wanted);
  // The backend's own timers (a LinkSet's pings): their work now, and the loop timer re-armed.
  void run_backend_timer();

  // NodeEvents
  void arm_timer(membership::TimerId timer, Time deadline) override;
  void cancel_timer(membership::TimerId timer) override;
  void deliver(const membership::Delivered& message) override { listener_.deliver(message); }
  void configuration(const membership::ConfigChange& change) override { listener_.configuration(change); }
  void persist_ring_seq(membership::Seq seq) override;
  // PacketSink
  void on_packets(std::span<transport::InboundPacket> batch) override;

  EventLoop& loop_;
  // Backends whose link failed, retired: the Node and the backend now in use (its queues) may
  // still hold their buffers, so they go last.
  std::vector<std::unique_ptr<transport::Backend>> retired_;
  std::unique_ptr<transport::Backend> backend_;
  RingSeqFile seq_file_;
  // Held open, let go only while the ring sequence number is stored: when connections have taken
  // every other descriptor, storing it must still work (it cannot, and the daemon would stop).
  SpareDescriptor spare_descriptor_;
  RingListener& listener_;
  std::unique_ptr<membership::Node> node_;  // after backend_: destroyed first
  std::array<std::unique_ptr<LoopTimer>, membership::kTimerCount> timers_;
  std::unique_ptr<LoopJob> pump_job_;  // the turn after submissions
  std::unique_ptr<LoopTimer> backend_timer_;
  int watched_tx_fd_ = -1;  // watched for writability; -1: none
  // Watched for readability: the backend's poll_fds() as last seen (a LinkSet's shrink when a link
  // breaks and is retired).
  std::vector<int> watched_fds_;
  bool pumping_ = false;
  bool closed_ = false;
  bool link_failure_reported_ = false;
};

}  // namespace rtotem::daemon
