// A few SimBackends on one SimNetwork, polled into one log: the fixture of the simulated
// transport's tests (sim_network_test, sealed_backend_test).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transport/sim/sim_network.hpp"

namespace rtotem::transport {
namespace {

constexpr std::uint32_t kCluster = 7;

BackendParams params_of(NodeId node, std::uint32_t cluster_id = kCluster) {
  BackendParams params;
  params.local_node = node;
  params.cluster_id = cluster_id;
  params.mtu = 512;
  params.send_buffers = 256;
  params.recv_buffers = 256;
  return params;
}

std::vector<BackendParams> nodes_1_to(NodeId count) {
  std::vector<BackendParams> nodes;
  for (NodeId node = 1; node <= count; ++node) nodes.push_back(params_of(node));
  return nodes;
}

std::unique_ptr<SimBackend> attach(SimNetwork& network, const BackendParams& params) {
  auto backend = network.attach(params);
  if (!backend) ADD_FAILURE() << backend.error().message();
  return std::move(backend).value();
}

struct Received {
  std::uint64_t time_us;
  NodeId from;
  NodeId to;
  std::string payload;

  bool operator==(const Received&) const = default;
};

class RecordingSink final : public PacketSink {
 public:
  RecordingSink(const SimNetwork& network, NodeId node, std::vector<Received>& log)
      : network_(network), node_(node), log_(log) {}

  void on_packets(std::span<InboundPacket> batch) override {
    for (InboundPacket& packet : batch) {
      const auto* text = reinterpret_cast<const char*>(packet.payload.data());
      log_.push_back({network_.now_us(), packet.from, node_, std::string(text, packet.payload.size())});
      if (keep) held.push_back(std::move(packet.hold));
    }
  }

  bool keep = false;  // hold every buffer, as a protocol that never releases would
  std::vector<BufferRef> held;

 private:
  const SimNetwork& network_;
  NodeId node_;
  std::vector<Received>& log_;
};

// Nodes on one network, each polled into one shared log. Node ids are 1..n, in order.
class SimCluster {
 public:
  SimCluster(std::uint64_t seed, SimFaults faults, const std::vector<BackendParams>& nodes) : network(seed, faults) {
    for (const BackendParams& params : nodes) {
      backends.push_back(attach(network, params));
      sinks.push_back(std::make_unique<RecordingSink>(network, params.local_node, log));
    }
  }
  SimCluster(std::uint64_t seed, SimFaults faults, NodeId count) : SimCluster(seed, faults, nodes_1_to(count)) {}

  SimBackend& node(NodeId id) { return *backends[id - 1]; }
  RecordingSink& sink(NodeId id) { return *sinks[id - 1]; }

  void multicast(NodeId from, std::string_view text) { send(from, kNoNode, text); }
  void unicast(NodeId from, NodeId to, std::string_view text) { send(from, to, text); }

  // A crash: the node's held buffers go first, as they must before any backend is destroyed.
  void crash(NodeId id) {
    sink(id).held.clear();
    backends[id - 1].reset();
  }

  // Everything in flight lands, in time order, every node polled after each step.
  void run() {
    poll_all();
    while (step(std::numeric_limits<std::uint64_t>::max())) {}
  }
  void run_until(std::uint64_t t_us) {
    poll_all();
    while (step(t_us)) {}
    network.advance_to(t_us);
  }

  std::vector<Received> received_by(NodeId to) const {
    std::vector<Received> out;
    std::copy_if(log.begin(), log.end(), std::back_inserter(out), [to](const Received& r) { return r.to == to; });
    return out;
  }

  SimNetwork network;
  std::vector<std::unique_ptr<SimBackend>> backends;  // after network: destroyed before it
  std::vector<Received> log;
  std::vector<std::unique_ptr<RecordingSink>> sinks;  // after backends: held Refs drop first

 private:
  void send(NodeId from, NodeId dest, std::string_view text) {
    SimBackend& backend = node(from);
    SendBufferRef buffer;
    ASSERT_EQ(backend.acquire(buffer), Status::kOk);
    std::memcpy(buffer->writable_payload().data(), text.data(), text.size());
    buffer->set_payload_size(static_cast<std::uint32_t>(text.size()));
    ASSERT_EQ(dest == kNoNode ? backend.multicast(buffer) : backend.unicast(dest, buffer), Status::kOk);
    ASSERT_EQ(backend.flush(), Status::kOk);
  }

  bool step(std::uint64_t limit_us) {
    const auto due = network.next_delivery_us();
    if (!due || *due > limit_us) return false;
    network.advance_to(*due);
    poll_all();
    return true;
  }

  void poll_all() {
    for (std::size_t i = 0; i < backends.size(); ++i)
      if (backends[i])
        while (backends[i]->poll(*sinks[i]) == kRxBatchMax) {}
  }
};

}  // namespace
}  // namespace rtotem::transport
