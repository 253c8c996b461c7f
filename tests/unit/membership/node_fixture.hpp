// What the tests that feed one Node hand-built packets share: the backends' sizes, the protocol
// configuration, the sink that hands a backend's batch to the Node, and sending a packet as
// another member would.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <span>

#include "membership/node.hpp"
#include "transport/sim/sim_network.hpp"

namespace rtotem::membership::fixture {

inline transport::BackendParams params(NodeId id) {
  transport::BackendParams p;
  p.local_node = id;
  p.cluster_id = 77;
  p.mtu = 1024;
  p.send_buffers = 2048;  // above the send queue: the queue, not the pool, pushes back first
  p.recv_buffers = 512;
  return p;
}

// Messages up to 64 KiB: 69 packets at this mtu, within the pools above.
inline TotemConfig test_config() {
  TotemConfig config;
  config.max_message_size = 64 << 10;
  return config.resolved().value();
}

// Hands each batch a backend polls to `node` at `now`.
struct Feed final : transport::PacketSink {
  Feed(Node& n, Time& t) : node(n), now(t) {}
  Node& node;
  Time& now;
  void on_packets(std::span<transport::InboundPacket> batch) override { node.on_packets(batch, now); }
};

// `packet` from `from`, to `to` (kNoNode: multicast), flushed.
inline void send_packet(transport::Backend& from, NodeId to, std::span<const std::byte> packet) {
  transport::SendBufferRef buffer;
  ASSERT_EQ(from.acquire(buffer), Status::kOk);
  std::memcpy(buffer->writable_payload().data(), packet.data(), packet.size());
  buffer->set_payload_size(static_cast<std::uint32_t>(packet.size()));
  ASSERT_EQ(to == kNoNode ? from.multicast(buffer) : from.unicast(to, buffer), Status::kOk);
  ASSERT_EQ(from.flush(), Status::kOk);
}

}  // namespace rtotem::membership::fixture
