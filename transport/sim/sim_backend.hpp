// The simulated backend: a real Backend whose device is a SimNetwork, so the protocol runs on the
// same buffers, queues and validation as on UDP, under virtual time and injected faults.
//
// Made only by SimNetwork::attach. Sending hands each queued item to the network (never blocks);
// the network copies arriving packets into this backend's receive ring, where they wait in a
// bounded inbox until poll().
//
// Lifetime: the SimNetwork must outlive this backend. Destroying it models a crash: it detaches
// from the network, which drops those addressed to it and the packets it still had in flight
// (or lets the latter land: SimNetwork::set_crashed_copies_land).
// As for every Backend, every Ref to its buffers must be dropped before it is destroyed.
// Threading: one thread, the simulator's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transport/backend.hpp"

namespace rtotem::transport {

class SimNetwork;

class SimBackend final : public Backend {
 public:
  ~SimBackend() override;

  std::string_view name() const noexcept override { return "sim"; }
  std::string local_address() const override;
  // The nodelist changed: it hears, and unicasts to, only the nodes of by_link[0] from now on
  // (every attached node until the first change); addresses are not looked at. A multicast
  // still goes to every attached node, as on a shared network, whose own lists decide.
  Result<void> check_peers(std::span<const std::vector<PeerAddress>> by_link) const override;
  void set_peers(std::span<const std::vector<PeerAddress>> by_link) override;

 private:
  friend class SimNetwork;

  // What became of a packet the network brought to this node.
  enum class Delivery : std::uint8_t { kDelivered, kRingFull, kClosed };

  // A packet written into a receive buffer, waiting for poll().
  struct Arrival {
    RecvBufferRef buffer;
    std::uint32_t size = 0;
    bool truncated = false;
  };

  SimBackend(SimNetwork& network, const BackendParams& params, BufferArena arena, const BufferLayout& layout);

  // For the network: copies `wire` into a posted receive buffer, as a NIC's DMA write would.
  Delivery deliver(std::span<const std::byte> wire) noexcept;
  // For the network: the device is gone (SimNetwork::break_device).
  void break_device(std::string reason) noexcept { set_link_failure(std::move(reason)); }

  std::size_t transmit(std::span<TxItem> items) noexcept override;
  std::size_t receive(std::span<InboundPacket> out) noexcept override;
  bool knows(NodeId node) const noexcept override;
  void on_close() noexcept override;

  Arrival pop_arrival() noexcept;

  SimNetwork& network_;
  SocketRecvRing ring_;
  // A circular queue. Each entry holds a buffer taken off ring_, so it never needs more room
  // than the ring has buffers. Declared after ring_: its Refs go home before the ring dies.
  std::vector<Arrival> inbox_;
  std::size_t inbox_head_ = 0;
  std::size_t inbox_count_ = 0;
  bool stalled_ = false;       // SimNetwork::stall_device
  bool any_peer_ = true;       // until set_peers()
  std::vector<NodeId> peers_;  // sorted, this node included
};

}  // namespace rtotem::transport
