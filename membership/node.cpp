// Node: construction, ring installation, where packets enter, timers and submissions.
#include "membership/node.hpp"

#include <algorithm>
#include <cstring>

namespace rtotem::membership {

using transport::InboundPacket;
using transport::SendBufferRef;

Node::Node(NodeId self, const TotemConfig& config, transport::Backend& backend, NodeEvents& events)
    : self_(self),
      config_(config),
      backend_(backend),
      events_(events),
      window_limit_(std::min<Seq>(config.sort_queue_capacity, backend.recv_buffers() / 2)),
      submit_reserve_(static_cast<std::uint32_t>(config.window_size + kRtrMax)),
      rtr_max_(static_cast<std::uint16_t>(rtr_max_for_mtu(backend.mtu()))),
      queue_(config.sort_queue_capacity),
      send_queue_(std::make_unique<Pending[]>(config.send_queue_max)) {
  RTOTEM_ASSERT(self != kNoNode);
  // Sizing, checked where the configuration is read; here it would be a bug.
  RTOTEM_ASSERT(window_limit_ >= 2 * config.window_size);
  RTOTEM_ASSERT(backend.send_pool().capacity() > submit_reserve_ + 2);
  RTOTEM_ASSERT(backend.local_node() == self);
  RTOTEM_ASSERT(config.token_retransmit_ms > 0 && config.token_hold_ms > 0);  // resolved()
  RTOTEM_ASSERT(backend.mtu() > mcast_header_size());
  RTOTEM_ASSERT(rtr_max_ >= 1);
}

Node::~Node() = default;

void Node::install_ring(const RingId& ring, std::span<const NodeId> members, Time now) {
  RTOTEM_ASSERT(!members.empty() && members.size() <= kMembersMax);
  RTOTEM_ASSERT(std::adjacent_find(members.begin(), members.end(), std::greater_equal<>()) == members.end());
  RTOTEM_ASSERT(ring.rep == members.front());
  RTOTEM_ASSERT(std::binary_search(members.begin(), members.end(), self_));
  ring_id_ = ring;
  members_.count = static_cast<std::uint16_t>(members.size());
  std::copy(members.begin(), members.end(), members_.ids.begin());
  queue_.reset(0);
  delivered_through_ = safe_through_ = last_token_aru_ = 0;
  last_token_seq_ = 0;
  my_trc_ = my_pbl_ = 0;
  token_buffer_.reset();
  holding_token_ = false;
  operational_ = true;
  events_.cancel_timer(TimerId::kTokenRetransmit);
  events_.cancel_timer(TimerId::kTokenHold);
  events_.arm_timer(TimerId::kTokenLoss, now + ms_to_time(config_.token_timeout_ms));
  if (self_ == ring.rep) {  // the representative originates the ring's first token
    token_ = Token{};
    token_.ring_id = ring;
    if (backend_.acquire(next_token_buffer_) == Status::kOk) handle_token(now);
  }
}

// Where every packet enters. Multicasts first, so the token that follows them in a batch sees
// them (tocssrp95 §3: drain received multicasts before the token).
void Node::on_packets(std::span<InboundPacket> batch, Time now) {
  PacketType type{};
  DecodeError error{};
  for (InboundPacket& packet : batch) {
    if (!peek_type(packet.payload, type, error)) {
      ++counters_.packets_malformed;
    } else if (type == PacketType::kMcast) {
      on_mcast(packet);
    } else if (type != PacketType::kToken) {
      ++counters_.packets_unhandled;  // membership packets: Gather, Commit, merge detection
    }
  }
  for (InboundPacket& packet : batch)
    if (peek_type(packet.payload, type, error) && type == PacketType::kToken) on_token(packet, now);
  deliver_ready();
}

void Node::on_mcast(InboundPacket& packet) {
  McastHeader header;
  std::span<const std::byte> payload;
  if (decode_mcast(packet.payload, header, payload) != DecodeError::kNone) {
    ++counters_.packets_malformed;
    return;
  }
  if (!operational_ || !(header.ring_id == ring_id_)) {
    ++counters_.mcasts_foreign_ring;
    return;
  }
  if (packet.from == self_) return;  // our own, through the local path: stored when sent
  // A new message from the successor proves it holds the token we sent: no need to resend it.
  if (token_buffer_ && packet.from == successor() && header.seq > seq_forwarded_) {
    token_buffer_.reset();
    events_.cancel_timer(TimerId::kTokenRetransmit);
  }
  if (header.seq > queue_.base() + window_limit_) {
    ++counters_.mcasts_out_of_window;  // retransmission brings it back once the window moves
    return;
  }
  StoredMessage message{std::move(packet.hold), packet.payload, payload, header.sender, header.delivery};
  switch (queue_.insert(header.seq, std::move(message))) {
    case SortQueue::Insert::kStored: ++counters_.mcasts_received; break;
    case SortQueue::Insert::kDuplicate: ++counters_.mcasts_duplicate; break;
    case SortQueue::Insert::kOutOfWindow: ++counters_.mcasts_out_of_window; break;
  }
}

NodeId Node::successor() const noexcept {
  const auto members = members_.view();
  auto it = std::upper_bound(members.begin(), members.end(), self_);
  return it == members.end() ? members.front() : *it;
}

void Node::on_timer(TimerId timer, Time now) {
  switch (timer) {
    case TimerId::kTokenLoss:
      // The membership protocol starts Gather here; until it exists the loss is counted and the
      // node keeps waiting for its predecessor's token retransmissions.
      ++counters_.token_losses;
      events_.arm_timer(TimerId::kTokenLoss, now + ms_to_time(config_.token_timeout_ms));
      break;
    case TimerId::kTokenRetransmit:
      if (!token_buffer_) break;
      if (backend_.unicast(successor(), token_buffer_) == Status::kOk)
        ++counters_.tokens_retransmitted;
      else
        ++counters_.send_refused;
      events_.arm_timer(TimerId::kTokenRetransmit, now + ms_to_time(config_.token_retransmit_ms));
      break;
    case TimerId::kTokenHold:
      if (holding_token_) pass_token(now);
      break;
  }
}

std::size_t Node::max_message_size() const noexcept { return backend_.mtu() - mcast_header_size(); }

Status Node::submit(std::span<const std::byte> message, Delivery delivery, Time now) {
  if (message.size() > max_message_size()) return Status::kTooLarge;
  if (send_count_ == config_.send_queue_max) {
    ++counters_.submit_backpressure;
    return Status::kQueueFull;
  }
  // The last buffers are the protocol's own: copies of others' messages to retransmit.
  SendBufferRef buffer;
  if (backend_.send_pool().available() <= submit_reserve_ || backend_.acquire(buffer) != Status::kOk) {
    ++counters_.submit_backpressure;
    return Status::kPoolExhausted;
  }
  // The mcast header is written when the token assigns the sequence number.
  std::memcpy(buffer->writable_payload().data() + mcast_header_size(), message.data(), message.size());
  buffer->set_payload_size(static_cast<std::uint32_t>(mcast_header_size() + message.size()));
  send_queue_[(send_head_ + send_count_) % config_.send_queue_max] = Pending{std::move(buffer), delivery};
  ++send_count_;
  // A held token goes on at once with the new message; through the timer, not from in here, as
  // submit() may be called from inside deliver().
  if (holding_token_) events_.arm_timer(TimerId::kTokenHold, now);
  return Status::kOk;
}

}  // namespace rtotem::membership
