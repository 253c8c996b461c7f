// Node: construction, where packets enter, timers and submissions.
#include "membership/node.hpp"

#include <algorithm>
#include <cstring>

#include "membership/node_set.hpp"

namespace rtotem::membership {

using transport::InboundPacket;
using transport::SendBufferRef;

const char* describe(MemberState state) noexcept {
  switch (state) {
    case MemberState::kGather: return "gather";
    case MemberState::kCommit: return "commit";
    case MemberState::kRecovery: return "recovery";
    case MemberState::kOperational: return "operational";
    case MemberState::kLeft: return "left";
  }
  return "unknown";
}

void Node::RingState::reset(const RingId& ring, std::span<const NodeId> member_ids) {
  id = ring;
  members = from_span(member_ids);
  queue.reset(0);
  delivered_through = safe_through = last_token_aru = 0;
  last_sender = kNoNode;
}

namespace {

// What depends on the backend filled in: a derived send_queue_max sized for its MTU.
TotemConfig sized_for(const TotemConfig& config, const transport::Backend& backend) {
  TotemConfig sized = config;
  sized.send_queue_max = config.send_queue_for(backend.mtu());
  return sized;
}

}  // namespace

Node::Node(NodeId self, const TotemConfig& config, transport::Backend& backend, NodeEvents& events, Seq ring_seq)
    : self_(self),
      config_(sized_for(config, backend)),
      backend_(&backend),
      events_(events),
      window_limit_(std::min<Seq>(config.sort_queue_capacity / 2, backend.recv_buffers() / 4)),
      submit_reserve_(static_cast<std::uint32_t>(config.window_size + kRtrMax)),
      rtr_max_(static_cast<std::uint16_t>(rtr_max_for_mtu(backend.mtu()))),
      ring_seq_(ring_seq),
      ring_(config.sort_queue_capacity),
      old_ring_(config.sort_queue_capacity),
      join_rng_((std::uint64_t{self} << 32) ^ ring_seq),
      members_max_(members_max_for_mtu(backend.mtu())),
      send_queue_(std::make_unique<Pending[]>(config_.send_queue_max)),
      assembler_(members_max_, config.max_message_size) {
  RTOTEM_ASSERT(self != kNoNode);
  // Sizing, checked where the configuration is read; here it would be a bug.
  RTOTEM_ASSERT(window_limit_ >= 2 * config.window_size);
  RTOTEM_ASSERT(backend.send_pool().capacity() >
                submit_reserve_ + 2 + pieces_for(config.max_message_size, backend.mtu()));
  RTOTEM_ASSERT(pieces_for(config.max_message_size, backend.mtu()) <= config_.send_queue_max);
  RTOTEM_ASSERT(backend.local_node() == self);
  RTOTEM_ASSERT(config.token_retransmit_ms > 0 && config.token_hold_ms > 0 && config.consensus_ms > 0);  // resolved()
  RTOTEM_ASSERT(backend.mtu() > 2 * mcast_header_size() + kPieceHeaderSize);
  RTOTEM_ASSERT(rtr_max_ >= 1 && members_max_ >= 1);
  // Before its first ring a node is alone on a ring of its own that no other node can name.
  const NodeId alone[] = {self};
  ring_.reset(RingId{self, 0}, alone);
}

Node::~Node() = default;

Result<void> Node::rebind(transport::Backend& backend, Time now) {
  if (backend.local_node() != self_)
    return Error::make("the new transport is for node {}, not {}", backend.local_node(), self_);
  // Sized for the old one: its mtu (rtr_max_, members_max_, the send queue, queued packets) and its
  // receive buffers (window_limit_); the pool must hold the reserve and the largest message.
  if (backend.mtu() < backend_->mtu())
    return Error::make("the new transport's mtu {} is below the {} this node was sized for", backend.mtu(),
                       backend_->mtu());
  if (backend.recv_buffers() < backend_->recv_buffers())
    return Error::make("the new transport has {} receive buffers, below the {} this node was sized for",
                       backend.recv_buffers(), backend_->recv_buffers());
  if (backend.send_pool().capacity() <= submit_reserve_ + 2 + pieces_for(config_.max_message_size, backend.mtu()))
    return Error::make("the new transport's {} send buffers are too few", backend.send_pool().capacity());
  backend_ = &backend;
  if (state_ != MemberState::kGather && state_ != MemberState::kLeft) gather_enter(now);
  return {};
}

void Node::set_timing(const TotemConfig& timing) {
  RTOTEM_ASSERT(timing.token_retransmit_ms > 0 && timing.token_retransmit_ms < timing.token_timeout_ms);  // resolved()
  RTOTEM_ASSERT(timing.token_hold_ms > 0 && timing.token_hold_ms < timing.token_retransmit_ms);
  RTOTEM_ASSERT(timing.join_ms > 0 && timing.consensus_ms > 2 * (timing.join_ms + timing.send_join_ms));
  RTOTEM_ASSERT(timing.fail_recv_ms > 0);
  config_.token_timeout_ms = timing.token_timeout_ms;
  config_.token_retransmits_before_loss = timing.token_retransmits_before_loss;
  config_.token_retransmit_ms = timing.token_retransmit_ms;
  config_.token_hold_ms = timing.token_hold_ms;
  config_.join_ms = timing.join_ms;
  config_.send_join_ms = timing.send_join_ms;
  config_.consensus_ms = timing.consensus_ms;
  config_.merge_ms = timing.merge_ms;
  config_.fail_recv_const = timing.fail_recv_const;
  config_.fail_recv_ms = timing.fail_recv_ms;
}

void Node::start(Time now) {
  RTOTEM_ASSERT(!started_);
  started_ = true;
  gather_enter(now);
}

void Node::install_ring(const RingId& ring, std::span<const NodeId> members, Time now) {
  RTOTEM_ASSERT(!members.empty() && members.size() <= kMembersMax);
  RTOTEM_ASSERT(std::adjacent_find(members.begin(), members.end(), std::greater_equal<>()) == members.end());
  RTOTEM_ASSERT(ring.rep == members.front());
  RTOTEM_ASSERT(std::binary_search(members.begin(), members.end(), self_));
  started_ = true;
  ring_.reset(ring, members);
  ring_seq_ = std::max(ring_seq_, ring.seq);
  proc_set_ = ring_.members;
  failed_set_ = NodeList{};
  last_token_seq_ = 0;
  my_trc_ = my_pbl_ = 0;
  cancel_token_timers();
  state_ = MemberState::kOperational;
  events_.arm_timer(TimerId::kTokenLoss, now + ms_to_time(config_.token_timeout_ms));
  if (self_ == ring.rep) originate_token(now);
}

std::optional<bool> Node::holds(const RingId& ring, Seq seq) const noexcept {
  auto held = [seq](const RingState& r) { return seq <= r.queue.base() || r.queue.holds(seq); };
  if (ring == ring_.id) return held(ring_);
  if (state_ == MemberState::kRecovery && ring == old_ring_.id) return held(old_ring_);
  return std::nullopt;
}

// Where every packet enters. Multicasts (and joins) first, so the token that follows them in a
// batch sees them (tocssrp95 §3: drain received multicasts before the token).
void Node::on_packets(std::span<InboundPacket> batch, Time now) {
  if (state_ == MemberState::kLeft) return;
  PacketType type{};
  DecodeError error{};
  for (InboundPacket& packet : batch) {
    if (!peek_type(packet.payload, type, error)) {
      ++counters_.packets_malformed;
      continue;
    }
    switch (type) {
      case PacketType::kMcast: on_mcast(packet, now); break;
      case PacketType::kJoin: on_join(packet, now); break;
      case PacketType::kMergeDetect: on_merge_detect(packet, now); break;
      case PacketType::kToken:
      case PacketType::kCommit:
      case PacketType::kHoldCancel: break;  // below, after the multicasts the token should see
    }
  }
  for (InboundPacket& packet : batch) {
    if (!peek_type(packet.payload, type, error)) continue;
    if (type == PacketType::kToken) on_token(packet, now);
    if (type == PacketType::kCommit) on_commit(packet, now);
    if (type == PacketType::kHoldCancel) on_hold_cancel(packet, now);
  }
  // After the packets' effects, so that a Gather they began counts them as heard in it.
  for (const InboundPacket& packet : batch) note_sender(packet.from);
  deliver_ready();
}

void Node::on_mcast(InboundPacket& packet, Time now) {
  McastHeader header;
  std::span<const std::byte> payload;
  if (decode_mcast(packet.payload, header, payload) != DecodeError::kNone) {
    ++counters_.packets_malformed;
    return;
  }
  if (packet.from == self_) return;  // our own, through the local path: stored when sent
  // In Recovery a late one of the ring being closed is dropped too: the old ring's messages are
  // what the members re-send each other, and one only I held would not be re-sent.
  if (!(header.ring_id == ring_.id)) {
    ++counters_.mcasts_foreign_ring;
    heard_foreign(packet.from, header.ring_id, now);
    return;
  }
  RingState* ring = &ring_;
  // A new message from the successor on the token's ring proves it holds the token we sent: no
  // need to resend it. In Commit we are still on the ring being left, and a late message of that
  // ring proves nothing about the commit token.
  if (token_buffer_ && packet.from == token_sent_to_ && header.ring_id == token_ring_ && header.seq > seq_forwarded_) {
    token_buffer_.reset();
    events_.cancel_timer(TimerId::kTokenRetransmit);
  }
  if (header.seq > ring->queue.base() + window_limit_) {
    ++counters_.mcasts_out_of_window;  // retransmission brings it back once the window moves
    return;
  }
  if (header.recovery && state_ == MemberState::kRecovery && !ring->queue.holds(header.seq))
    store_recovered(packet.hold, payload);
  StoredMessage message{std::move(packet.hold), packet.payload,  payload,
                        header.sender,          header.delivery, header.recovery};
  switch (ring->queue.insert(header.seq, std::move(message))) {
    case SortQueue::Insert::kStored: ++counters_.mcasts_received; break;
    case SortQueue::Insert::kDuplicate: ++counters_.mcasts_duplicate; break;
    case SortQueue::Insert::kOutOfWindow: ++counters_.mcasts_out_of_window; break;
  }
}

// A Recovery packet carries an old ring's packet whole; if that ring is the one I am closing,
// the inner message joins it (sharing the buffer: no copy).
void Node::store_recovered(const transport::BufferRef& hold, std::span<const std::byte> inner_packet) {
  McastHeader inner;
  std::span<const std::byte> payload;
  if (decode_mcast(inner_packet, inner, payload) != DecodeError::kNone || inner.recovery) {
    ++counters_.packets_malformed;
    return;
  }
  if (!(inner.ring_id == old_ring_.id)) return;  // another old ring's: for other members
  StoredMessage message{hold, inner_packet, payload, inner.sender, inner.delivery, false, true};
  if (old_ring_.queue.insert(inner.seq, std::move(message)) == SortQueue::Insert::kStored)
    ++counters_.recovery_received;
}

NodeId Node::successor() const noexcept {
  const auto members = ring_.members.view();
  auto it = std::upper_bound(members.begin(), members.end(), self_);
  return it == members.end() ? members.front() : *it;
}

void Node::cancel_token_timers() {
  token_buffer_.reset();
  holding_token_ = token_may_rest_ = hold_cancelled_ = false;
  events_.cancel_timer(TimerId::kTokenRetransmit);
  events_.cancel_timer(TimerId::kTokenHold);
}

void Node::on_timer(TimerId timer, Time now) {
  if (state_ == MemberState::kLeft) return;
  switch (timer) {
    case TimerId::kTokenLoss:
      ++counters_.token_losses;
      if (state_ != MemberState::kGather) gather_enter(now);
      break;
    case TimerId::kTokenRetransmit:
      if (!token_buffer_) break;
      if (backend_->unicast(token_sent_to_, token_buffer_) == Status::kOk)
        ++counters_.tokens_retransmitted;
      else
        ++counters_.send_refused;
      events_.arm_timer(TimerId::kTokenRetransmit, now + ms_to_time(config_.token_retransmit_ms));
      break;
    case TimerId::kTokenHold:
      if (holding_token_) pass_token(now);
      break;
    case TimerId::kJoin:
      if (state_ != MemberState::kGather) break;
      send_join();
      events_.arm_timer(TimerId::kJoin, now + ms_to_time(config_.join_ms) + join_delay());
      check_consensus(now);  // a node alone agrees with itself
      break;
    case TimerId::kConsensus: on_consensus_timeout(now); break;
    case TimerId::kMergeDetect: send_merge_detect(now); break;
  }
}

}  // namespace rtotem::membership
