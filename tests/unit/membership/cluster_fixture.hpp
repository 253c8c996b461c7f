// Small clusters of real Nodes over the simulated network, with a host loop that runs timers and
// packets in virtual time: what the membership and token-hold tests share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "membership/node.hpp"
#include "transport/sim/sim_network.hpp"

namespace rtotem::membership::cluster_fixture {

using transport::BackendParams;
using transport::InboundPacket;
using transport::SimBackend;
using transport::SimNetwork;

struct Config {
  bool transitional = false;
  RingId ring;
  std::vector<NodeId> members, joined, left;
};

struct DeliveredText {
  RingId ring;
  Seq seq = 0;
  bool transitional = false;
  std::string text;
  NodeId sender = kNoNode;
  Time at = 0;  // virtual time of the delivery
};

// One node: backend, Node, and the host side (timers, what it delivered, its durable ring seq).
struct Host final : NodeEvents, transport::PacketSink {
  Host(SimNetwork& network, NodeId node_id, const TotemConfig& config, Seq stored, Time& clock)
      : id(node_id), now(clock), persisted(stored) {
    BackendParams p;
    p.local_node = id;
    p.cluster_id = 9;
    p.mtu = 1024;
    p.send_buffers = 1024;
    p.recv_buffers = 1024;
    backend = network.attach(p).value();
    node = std::make_unique<Node>(id, config, *backend, *this, stored);
  }
  void arm_timer(TimerId timer, Time deadline) override { timers[static_cast<std::size_t>(timer)] = deadline; }
  void cancel_timer(TimerId timer) override { timers[static_cast<std::size_t>(timer)].reset(); }
  void deliver(const Delivered& m) override {
    delivered.push_back({m.ring_id, m.seq, m.transitional,
                         std::string(reinterpret_cast<const char*>(m.payload.data()), m.payload.size()), m.sender,
                         now});
  }
  void configuration(const ConfigChange& c) override {
    configs.push_back({c.transitional,
                       c.ring_id,
                       {c.members.begin(), c.members.end()},
                       {c.joined.begin(), c.joined.end()},
                       {c.left.begin(), c.left.end()}});
  }
  void persist_ring_seq(Seq seq) override {
    EXPECT_GT(seq, persisted) << "node " << id << " persisted a ring seq that is not higher";
    persisted = seq;
  }
  void on_packets(std::span<InboundPacket> batch) override { node->on_packets(batch, now); }
  const Config& last_config() const { return configs.back(); }

  NodeId id;
  Time& now;
  Seq persisted;
  std::unique_ptr<SimBackend> backend;
  std::unique_ptr<Node> node;  // after backend: goes first
  std::array<std::optional<Time>, kTimerCount> timers{};
  std::vector<Config> configs;
  std::vector<DeliveredText> delivered;
};

class Cluster {
 public:
  explicit Cluster(std::uint64_t seed = 1, std::uint32_t send_join_ms = 0)
      : network_(seed, {.delay_min_us = 20, .delay_max_us = 60}) {
    config_.token_timeout_ms = 200;
    config_.send_join_ms = send_join_ms;
    config_.max_message_size = 64 << 10;  // 69 packets: within the pools of a Host
    config_ = config_.resolved().value();
  }

  Host& start(NodeId id) {
    auto& slot = hosts_[id];
    slot = std::make_unique<Host>(network_, id, config_, stored_[id], now_);
    slot->node->start(now_);
    flush(*slot);
    return *slot;
  }
  void crash(NodeId id) {
    stored_[id] = hosts_.at(id)->persisted;
    hosts_.erase(id);
  }
  // A graceful stop (rtotemd's SIGTERM): its leave goes out; the node takes no input from then on
  // (its backend stays, so the leave in flight still lands).
  void leave(NodeId id) {
    host(id).node->leave();
    flush(host(id));
  }
  Host& host(NodeId id) { return *hosts_.at(id); }
  SimNetwork& network() { return network_; }
  Time now() const { return now_; }

  const TotemConfig& config() const { return config_; }

  // Runs the event loop for `ms` (or `us`) of virtual time.
  void run_for(std::uint32_t ms) { run_for_us(ms_to_time(ms)); }
  void run_for_us(Time us) {
    const Time end = now_ + us;
    for (;;) {
      std::optional<Time> next = network_.next_delivery_us();
      for (auto& [id, h] : hosts_) {
        if (h->backend->has_pending_rx()) next = now_;
        for (auto& t : h->timers)
          if (t) next = std::min(next.value_or(*t), *t);
      }
      if (!next || *next > end) break;
      now_ = std::max(now_, *next);
      network_.advance_to(now_);
      for (auto& [id, h] : hosts_) {
        while (h->backend->poll(*h) == transport::kRxBatchMax) {}
        flush(*h);
      }
      for (auto& [id, h] : hosts_)
        for (std::size_t t = 0; t < kTimerCount; ++t)
          if (h->timers[t] && *h->timers[t] <= now_) {
            h->timers[t].reset();
            h->node->on_timer(static_cast<TimerId>(t), now_);
            flush(*h);
          }
    }
    now_ = end;
    network_.advance_to(now_);
  }

  void submit(NodeId id, const std::string& text, membership::Delivery order = membership::Delivery::kAgreed) {
    const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
    ASSERT_EQ(host(id).node->submit(bytes, order, now_), Status::kOk);
    flush(host(id));
  }

  // `packet` as node `from`'s backend sends it to `to`, whatever its Node would send.
  void send_as(NodeId from, NodeId to, std::span<const std::byte> packet) {
    transport::SendBufferRef buffer;
    ASSERT_EQ(host(from).backend->acquire(buffer), Status::kOk);
    std::memcpy(buffer->writable_payload().data(), packet.data(), packet.size());
    buffer->set_payload_size(static_cast<std::uint32_t>(packet.size()));
    ASSERT_EQ(host(from).backend->unicast(to, buffer), Status::kOk);
    flush(host(from));
  }

  // Every started node operational on one ring with exactly `members`.
  void expect_one_ring(const std::vector<NodeId>& members) {
    const RingId ring = host(members.front()).node->ring_id();
    for (NodeId id : members) {
      const Node& node = *host(id).node;
      EXPECT_TRUE(node.operational()) << "node " << id << " is in " << describe(node.state());
      EXPECT_EQ(node.ring_id(), ring) << "node " << id;
      EXPECT_EQ(std::vector<NodeId>(node.members().begin(), node.members().end()), members) << "node " << id;
      ASSERT_FALSE(host(id).configs.empty());
      EXPECT_FALSE(host(id).last_config().transitional);
      EXPECT_EQ(host(id).last_config().ring, ring);
      EXPECT_EQ(host(id).last_config().members, members);
    }
  }

 private:
  static void flush(Host& h) { ASSERT_EQ(h.backend->flush(), Status::kOk); }

  SimNetwork network_;
  TotemConfig config_;
  Time now_ = 0;
  std::map<NodeId, std::unique_ptr<Host>> hosts_;
  std::map<NodeId, Seq> stored_;
};

}  // namespace rtotem::membership::cluster_fixture
