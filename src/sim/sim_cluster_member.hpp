// One incarnation of a simulated node: its backend, its Node, and the host side the Node talks to
// (timers, deliveries, configurations, the ring seq store, received packets), plus its
// application's queue of messages not yet accepted. Private to the SimCluster's files.
#pragma once

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "src/sim/sim_cluster.hpp"

namespace rtotem::sim {

// An application message made but not yet accepted by its Node.
struct Submission {
  MessageId id;
  std::uint32_t size = 0;
  Delivery delivery = Delivery::kAgreed;
};

class SimCluster::Member final : public membership::NodeEvents, public transport::PacketSink {
 public:
  Member(SimCluster& cluster, std::unique_ptr<transport::SimBackend> backend_in,
         const membership::TotemConfig& totem, Seq stored_ring_seq, Time now)
      : owner(cluster),
        id(backend_in->local_node()),
        started_us(now),
        backend(std::move(backend_in)),
        node(std::make_unique<membership::Node>(id, totem, *backend, *this, stored_ring_seq)),
        scratch(node->max_message_size()) {}

  void arm_timer(membership::TimerId timer, Time deadline) override { timers[index(timer)] = deadline; }
  void cancel_timer(membership::TimerId timer) override { timers[index(timer)].reset(); }
  void deliver(const Delivered& message) override { owner.on_deliver(id, message); }
  void configuration(const membership::ConfigChange& change) override {
    owner.checker_.record_configuration(owner.network_.now_us(), id, change);
  }
  // The store survives this Member: a crash keeps it, as a file on disk would.
  void persist_ring_seq(Seq seq) override { owner.slots_[id - 1].stored_ring_seq = seq; }

  void on_packets(std::span<transport::InboundPacket> batch) override {
    node->on_packets(batch, owner.network_.now_us());
    owner.after_node_call(*this);
  }

  std::optional<Time> next_traffic_us(bool generating) const {
    std::optional<Time> next;
    if (generating) next = generate_at;
    if (!pending.empty()) next = std::min(next.value_or(retry_at), retry_at);
    return next;
  }

  static std::size_t index(membership::TimerId timer) { return static_cast<std::size_t>(timer); }

  SimCluster& owner;
  const NodeId id;
  const Time started_us;
  std::unique_ptr<transport::SimBackend> backend;
  std::array<std::optional<Time>, membership::kTimerCount> timers{};  // absolute deadlines
  std::unique_ptr<membership::Node> node;  // after backend: goes first, dropping its buffer Refs
  // The application: messages made but not yet accepted, oldest first (retried in order).
  std::deque<Submission> pending;
  Time generate_at = 0;
  Time retry_at = 0;
  std::vector<std::byte> scratch;  // one payload, rebuilt at each attempt
  RingId ring_seen;                // the ring it was last seen operational in
  std::optional<Time> operational_since;  // operational since then, as last seen
};

}  // namespace rtotem::sim
