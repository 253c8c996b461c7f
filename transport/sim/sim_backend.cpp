// The simulated backend's datapath: transmit into the network, receive from the inbox the
// network filled, and the crash path (detach on destruction).
#include "transport/sim/sim_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "transport/sim/sim_network.hpp"

namespace rtotem::transport {

SimBackend::SimBackend(SimNetwork& network, const BackendParams& params, BufferArena arena, const BufferLayout& layout)
    : Backend(params, std::move(arena), layout),
      network_(network),
      ring_(recv_region(), params.recv_buffers, layout.recv_slot),
      inbox_(params.recv_buffers) {}

SimBackend::~SimBackend() {
  // Before the send pool goes: the network still holds Refs to our packets in flight.
  network_.detach(*this);
}

std::string SimBackend::local_address() const { return fmt::format("sim:{}", local_node()); }

Result<void> SimBackend::check_peers(std::span<const std::vector<PeerAddress>> by_link) const {
  if (by_link.size() != 1) return Error::make("sim: one link's peers, not {}", by_link.size());
  return {};
}

void SimBackend::set_peers(std::span<const std::vector<PeerAddress>> by_link) {
  RTOTEM_ASSERT(check_peers(by_link).ok());
  peers_.clear();
  for (const PeerAddress& peer : by_link[0]) peers_.push_back(peer.node);
  peers_.push_back(local_node());
  std::ranges::sort(peers_);
  any_peer_ = false;
}

bool SimBackend::knows(NodeId node) const noexcept { return any_peer_ || std::ranges::binary_search(peers_, node); }

SimBackend::Delivery SimBackend::deliver(std::span<const std::byte> wire) noexcept {
  if (closed() || !link_failure().empty()) return Delivery::kClosed;
  RecvBuffer* slot = nullptr;
  if (ring_.peek_posted(std::span(&slot, 1)) == 0) return Delivery::kRingFull;  // an RNR drop
  RTOTEM_ASSERT(inbox_count_ < inbox_.size());
  // Like recvmmsg with MSG_TRUNC: keep what fits, report the rest, let accept() count it.
  // Cut where a UDP receive is cut: one MTU's worth of packet, not the (aligned) slot.
  const std::size_t size = std::min<std::size_t>(wire.size(), wire_max());
  std::memcpy(slot->data(), wire.data(), size);
  Arrival& arrival = inbox_[(inbox_head_ + inbox_count_) % inbox_.size()];
  arrival.buffer = ring_.take(*slot);
  arrival.size = static_cast<std::uint32_t>(size);
  arrival.truncated = wire.size() > size;
  ++inbox_count_;
  return Delivery::kDelivered;
}

std::size_t SimBackend::transmit(std::span<TxItem> items) noexcept {
  if (!link_failure().empty()) {  // a broken device: what is queued is lost
    counters_.tx_errors += items.size();
    return items.size();
  }
  ++counters_.tx_calls;
  if (stalled_) return 0;  // Backend::flush counts it as tx_would_block and keeps the queue
  for (const TxItem& item : items) {
    if (item.dest != kNoNode && !knows(item.dest)) {  // queued before set_peers() dropped it
      ++counters_.tx_unknown_node;
      continue;
    }
    network_.send(local_node(), item.dest, item.buffer, item.wire);
    ++counters_.tx_packets;
    counters_.tx_bytes += item.wire.size();
  }
  return items.size();
}

std::size_t SimBackend::receive(std::span<InboundPacket> out) noexcept {
  if (inbox_count_ == 0 || !link_failure().empty()) return 0;
  ++counters_.rx_calls;
  // Rejected packets do not use up the batch: a short batch means the inbox is empty, which is
  // what the simulator's "poll until short" loop relies on.
  std::size_t n = 0;
  while (n < out.size() && inbox_count_ > 0) {
    Arrival arrival = pop_arrival();
    if (accept(std::move(arrival.buffer), arrival.size, arrival.truncated, out[n])) ++n;
  }
  return n;
}

void SimBackend::on_close() noexcept {
  while (inbox_count_ > 0) (void)pop_arrival();  // the buffers go back to the ring
}

SimBackend::Arrival SimBackend::pop_arrival() noexcept {
  RTOTEM_ASSERT(inbox_count_ > 0);
  Arrival arrival = std::move(inbox_[inbox_head_]);
  inbox_head_ = (inbox_head_ + 1) % inbox_.size();
  --inbox_count_;
  return arrival;
}

}  // namespace rtotem::transport
