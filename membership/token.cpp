// The token visit (tocssrp95 §3, corosync's message_handler_orf_token): retransmit what others
// miss, multicast new messages with the next sequence numbers under flow control, ask for what
// this node misses, lower aru if needed, pass the token on; an idle ring holds it briefly.
#include <algorithm>
#include <cstring>
#include <utility>

#include "membership/node.hpp"
#include "membership/node_set.hpp"

namespace rtotem::membership {

using transport::InboundPacket;
using transport::SendBufferRef;

void Node::on_token(InboundPacket& packet, Time now) {
  if (decode_token(packet.payload, incoming_) != DecodeError::kNone) {
    ++counters_.packets_malformed;
    return;
  }
  const bool on_ring = state_ == MemberState::kOperational || state_ == MemberState::kRecovery;
  if (!on_ring || !(incoming_.ring_id == ring_.id)) {
    ++counters_.tokens_foreign_ring;
    return;
  }
  if (incoming_.token_seq <= last_token_seq_ || holding_token_) {
    ++counters_.tokens_duplicate;  // a retransmission of one already handled
    return;
  }
  // The buffer to pass it on comes first: a token handled but not passed on would be lost, while
  // one left unhandled comes back with the predecessor's retransmission.
  if (!next_token_buffer_ && backend_->acquire(next_token_buffer_) != Status::kOk) {
    ++counters_.tokens_deferred;
    return;
  }
  std::swap(token_, incoming_);  // incoming_ is scratch: no need to copy ~600 bytes
  last_token_seq_ = token_.token_seq;
  ++counters_.tokens_received;
  token_buffer_.reset();  // a newer token: the one we sent went round
  events_.cancel_timer(TimerId::kTokenRetransmit);
  events_.arm_timer(TimerId::kTokenLoss, now + ms_to_time(config_.token_timeout_ms));
  if (failing_to_receive(now)) {
    leave_ring_deaf(now);
    return;
  }
  handle_token(now);
}

// By time, and by visits as corosync's fail_recv_const (totem_config.hpp says why the time
// decides): the token shows this node set the ring's aru on the last rotation and nobody has
// moved it since, while messages above it exist: what the others multicast does not reach us,
// retransmissions included.
bool Node::failing_to_receive(Time now) noexcept {
  const bool held_back_by_me = token_.aru_addr == self_ && token_.aru < token_.seq;
  if (!held_back_by_me || token_.aru != stuck_aru_) {
    stuck_aru_ = token_.aru;
    stuck_since_ = now;
    stuck_visits_ = 0;
    return false;
  }
  ++stuck_visits_;
  return stuck_visits_ >= config_.fail_recv_const && now - stuck_since_ >= ms_to_time(config_.fail_recv_ms);
}

// The ring goes on without us: we give up on its other members (our joins say so, and each of
// them then gives up on us) and form a ring with whoever we can hear. The token stops here; its
// loss starts the others' Gather.
void Node::leave_ring_deaf(Time now) {
  ++counters_.failed_to_receive;
  stuck_visits_ = 0;
  deaf_ = true;
  for (NodeId member : ring_.members.view())
    if (member != self_) insert(failed_set_, member);
  gather_enter(now);
  RTOTEM_ASSERT(state_ == MemberState::kGather && !contains(failed_set_, self_));
}

void Node::handle_token(Time now) {
  RTOTEM_ASSERT((state_ == MemberState::kOperational || state_ == MemberState::kRecovery) && next_token_buffer_);
  RTOTEM_ASSERT(token_.aru <= token_.seq);
  RTOTEM_ASSERT(!holding_token_ && !token_buffer_);  // one token at a time: the last one went round
  if (state_ == MemberState::kOperational && vote_on_merge(now)) return;  // the token stops: Gather
  retransmitted_this_visit_ = 0;
  retransmit_requested();
  // On an idle ring one member holds the token (rest_holder): one hold per rotation keeps the
  // rotation below the retransmit timeout however many members there are. A node alone on its
  // ring also holds it when it could not send for want of buffers: its token comes straight back
  // through the loopback, and spinning on it would not give the transmissions in flight (which
  // hold those buffers) a moment to finish.
  // A hold cancel that came while the token was on its way here is for this visit: its sender
  // has a message, and the token reaches it before this node decides to hold again.
  const bool alone_and_starved = send_starved_ && successor() == self_;
  const bool cancelled = std::exchange(hold_cancelled_, false);
  if (alone_and_starved || (ring_idle() && !cancelled && rest_holder() == self_)) {
    holding_token_ = true;
    events_.arm_timer(TimerId::kTokenHold, now + ms_to_time(config_.token_hold_ms));
    return;
  }
  if (cancelled && ring_idle() && rest_holder() == self_) ++counters_.token_holds_cancelled;
  pass_token(now);
}

// Idle: nothing queued here, nothing missing anywhere, every message of the ring delivered and
// discarded on the last rotation, and no merge vote under way, so holding the token delays nobody.
bool Node::ring_idle() const noexcept {
  return state_ == MemberState::kOperational && send_count_ == 0 && token_.rtr_count == 0 &&
         retransmitted_this_visit_ == 0 && token_.fcc == 0 && token_.backlog == 0 && token_.aru == token_.seq &&
         ring_.queue.base() == token_.seq && token_.merge_proposer == kNoNode;
}

// Where an idle ring's token rests: with the sender of its last message, which is where the
// next one most often comes from (a node that sends alone then never waits for the token), or
// with the representative before any. Every member that sees the ring idle has delivered that
// message, so all of them name the same node, and exactly one holds.
NodeId Node::rest_holder() const noexcept { return ring_.last_sender != kNoNode ? ring_.last_sender : ring_.id.rep; }

void Node::pass_token(Time now) {
  RTOTEM_ASSERT((state_ == MemberState::kOperational || state_ == MemberState::kRecovery) && next_token_buffer_);
  if (holding_token_) {
    holding_token_ = false;
    events_.cancel_timer(TimerId::kTokenHold);
  }
  const bool recovering = state_ == MemberState::kRecovery;
  send_starved_ = false;
  const std::uint32_t allowed = transmits_allowed();
  const std::uint32_t sent =
      (recovering ? send_recovery_messages(allowed) : send_new_messages(allowed)) + retransmitted_this_visit_;
  // corosync's fcc_token_update: fcc and backlog are sliding sums over one rotation.
  const std::uint32_t backlog = my_backlog();
  token_.fcc = token_.fcc + sent - std::min(token_.fcc, my_trc_);
  token_.backlog = token_.backlog + backlog - std::min(token_.backlog, my_pbl_);
  RTOTEM_ASSERT(sent <= allowed + retransmitted_this_visit_);
  my_trc_ = sent;
  my_pbl_ = backlog;
  if (recovering) track_recovery_end();
  request_missing();
  update_aru();
  const Seq token_aru = token_.aru;
  forward_token(now);
  RTOTEM_ASSERT(!holding_token_ && token_buffer_ && token_sent_to_ == successor());
  token_may_rest_ = !recovering && my_backlog() == 0;
  release_stable(token_aru);
  RTOTEM_INVARIANT(ring_.queue.consistent());
  // Every member holds every recovery message: the old ring can be closed here.
  if (recovering && token_.install_known && ring_.safe_through >= token_.install_seq) operational_enter(now);
}

// A message would wait for the rest of a hold: the member the token rests with passes it at once
// when it holds it, or skips its next hold when the token is still on its way (corosync's
// token_hold_cancel_send). One cancel per visit of ours: the token comes here before the next
// hold could start.
void Node::send_hold_cancel() {
  RTOTEM_ASSERT(token_may_rest_ && state_ == MemberState::kOperational);
  token_may_rest_ = false;
  const NodeId holder = rest_holder();
  if (holder == self_) return;  // it rests here: the token comes back to us, or we hold it
  SendBufferRef buffer;
  if (backend_->acquire(buffer) != Status::kOk) return;  // the hold runs out instead
  buffer->set_payload_size(static_cast<std::uint32_t>(encode_hold_cancel({ring_.id}, buffer->writable_payload())));
  if (backend_->unicast(holder, buffer) != Status::kOk) {
    ++counters_.send_refused;
    return;
  }
  ++counters_.hold_cancels_sent;
}

// Only a hint, and only from a member of this ring: anything else is counted and changes nothing.
void Node::on_hold_cancel(InboundPacket& packet, Time now) {
  HoldCancel cancel;
  if (decode_hold_cancel(packet.payload, cancel) != DecodeError::kNone) {
    ++counters_.packets_malformed;
    return;
  }
  if (state_ != MemberState::kOperational || !(cancel.ring_id == ring_.id) || packet.from == self_ ||
      !contains(ring_.members, packet.from)) {
    ++counters_.hold_cancels_foreign_ring;
    return;
  }
  if (!holding_token_) {
    hold_cancelled_ = true;
    return;
  }
  ++counters_.token_holds_cancelled;
  pass_token(now);
}

// What this node still has to send: the application's messages, or in Recovery the old ring's.
std::uint32_t Node::my_backlog() const noexcept {
  if (state_ != MemberState::kRecovery) return static_cast<std::uint32_t>(send_count_ - kept_);
  RTOTEM_ASSERT(recovery_.next_resend <= recovery_.old_high + 1);
  return recovery_.next_resend > recovery_.old_high
             ? 0
             : static_cast<std::uint32_t>(recovery_.old_high - recovery_.next_resend + 1);
}

// Retransmissions come out of the same window as new messages, ahead of them (corosync's
// orf_token_rtr): a lossy ring slows down instead of flooding itself. The first holder on the
// token's way answers a request and takes it off the token. Asked again for one it answered last
// time, it lets it pass to the holders after it, once: its copies may not reach the node asking
// (a link cut one way between them while the token still goes round), and then only another
// holder's can, or that node fails to receive for good. So the holders take turns, one copy a
// rotation as before.
void Node::retransmit_requested() {
  const std::uint32_t budget = token_.fcc >= config_.window_size ? 0 : config_.window_size - token_.fcc;
  std::uint16_t kept = 0;
  for (std::uint16_t i = 0; i < token_.rtr_count; ++i) {
    const Seq seq = token_.rtr[i];
    if (seq <= ring_.queue.base()) continue;  // every member had it: a stale request
    StoredMessage* message = ring_.queue.find(seq);
    if (message && message->answered) {
      message->answered = false;  // the next holder's turn; ours again next time
      token_.rtr[kept++] = seq;
    } else if (message && retransmitted_this_visit_ < budget && retransmit(*message)) {
      message->answered = true;
      ++retransmitted_this_visit_;
      ++counters_.retransmits_sent;
    } else {
      token_.rtr[kept++] = seq;  // someone further on may hold it
    }
  }
  RTOTEM_ASSERT(retransmitted_this_visit_ <= budget);
  token_.rtr_count = kept;
}

// Our own message goes out again as the same buffer; someone else's is copied into one of ours.
bool Node::retransmit(const StoredMessage& message) {
  SendBufferRef buffer = transport::as_send_buffer(message.hold);
  if (!buffer) {
    if (backend_->acquire(buffer) != Status::kOk) return false;
    RTOTEM_ASSERT(message.packet.size() <= buffer->payload_capacity());
    std::memcpy(buffer->writable_payload().data(), message.packet.data(), message.packet.size());
    buffer->set_payload_size(static_cast<std::uint32_t>(message.packet.size()));
  }
  // On every link: the node that asked has missed it, perhaps on a link that failed before the
  // pings found out (passive mode sends the rest on one link).
  if (backend_->multicast(buffer, transport::Spread::kEveryLink) != Status::kOk) {
    ++counters_.send_refused;
    return false;
  }
  return true;
}

// corosync's fcc_calculate: at most max_messages a visit, the window over a rotation, and a share
// of the window in proportion to this node's part of the ring's backlog.
std::uint32_t Node::transmits_allowed() const noexcept {
  const std::uint32_t used = token_.fcc + retransmitted_this_visit_;
  if (used >= config_.window_size) return 0;
  std::uint32_t allowed = std::min(config_.max_messages, config_.window_size - used);
  const std::uint64_t mine = my_backlog();
  const std::uint64_t total = std::uint64_t{token_.backlog} + mine - std::min<std::uint64_t>(token_.backlog, my_pbl_);
  if (total > 0) {
    const std::uint64_t share = config_.window_size * mine / total;
    if (share > 0 && allowed > share) allowed = static_cast<std::uint32_t>(share);
  }
  RTOTEM_ASSERT(allowed <= config_.max_messages && used + allowed <= config_.window_size);
  return allowed;
}

// Our next message may take token.seq + 1 if the window has room to keep it and no forged or
// stray packet already holds that number.
bool Node::next_seq_free() noexcept {
  if (token_.seq + 1 - ring_.queue.base() > window_limit_) return false;
  if (ring_.queue.holds(token_.seq + 1)) {
    ++counters_.seq_collisions;
    return false;
  }
  return true;
}

// Stamps token.seq + 1 into `buffer`'s mcast header (the payload already follows it), multicasts
// it and keeps it in the sort queue: the transport and the queue share the buffer, no copy.
bool Node::multicast_next(const SendBufferRef& buffer, Delivery delivery, bool recovery) {
  RTOTEM_ASSERT(buffer->payload().size() >= mcast_header_size() && !ring_.queue.holds(token_.seq + 1));
  RTOTEM_ASSERT(recovery == (state_ == MemberState::kRecovery));
  const McastHeader header{ring_.id, token_.seq + 1, self_, delivery, recovery};
  encode_mcast_header(header, buffer->writable_payload());
  if (backend_->multicast(buffer) != Status::kOk) {
    ++counters_.send_refused;  // the queue is full
    send_starved_ = true;
    return false;
  }
  token_.seq = header.seq;
  const auto packet = buffer->payload();
  const auto stored = ring_.queue.insert(
      header.seq, StoredMessage{buffer, packet, packet.subspan(mcast_header_size()), self_, delivery, recovery});
  RTOTEM_ASSERT(stored == SortQueue::Insert::kStored);
  return true;
}

void Node::request_missing() {
  auto listed = [&](Seq seq) {
    return std::find(token_.rtr.begin(), token_.rtr.begin() + token_.rtr_count, seq) !=
           token_.rtr.begin() + token_.rtr_count;
  };
  // Holes beyond the window would be dropped as out of window by whoever we ask: not yet.
  const Seq through = std::min(token_.seq, ring_.queue.base() + window_limit_);
  ring_.queue.for_each_missing(through, rtr_max_, [&](Seq seq) {
    if (token_.rtr_count >= rtr_max_ || listed(seq)) return;
    token_.rtr[token_.rtr_count++] = seq;
    ++counters_.retransmits_requested;
  });
}

// corosync: lower the ring's aru to ours, or own it again if we set it last.
void Node::update_aru() {
  const Seq my_aru = ring_.queue.aru();
  if (my_aru < token_.aru || token_.aru_addr == self_ || token_.aru_addr == kNoNode) {
    token_.aru = my_aru;
    token_.aru_addr = my_aru == token_.seq ? kNoNode : self_;
  }
  // The ring's aru is never above ours, so what the token calls stable this node holds.
  RTOTEM_ASSERT(token_.aru <= my_aru);
  RTOTEM_ASSERT(token_.aru_addr != kNoNode || token_.aru == token_.seq);
}

void Node::forward_token(Time now) {
  RTOTEM_ASSERT(next_token_buffer_ && token_.ring_id == ring_.id);
  ++token_.token_seq;
  SendBufferRef buffer = std::move(next_token_buffer_);
  const std::size_t size = encode_token(token_, buffer->writable_payload());
  buffer->set_payload_size(static_cast<std::uint32_t>(size));
  seq_forwarded_ = token_.seq;
  send_token_buffer(std::move(buffer), successor(), ring_.id, now);
  // The buffer for the next token is taken now, while this visit's messages are still ours to
  // free: a pool drained by submissions later cannot stop the ring.
  (void)backend_->acquire(next_token_buffer_);
}

// A token (or commit token) is kept and resent until the successor shows it has it.
void Node::send_token_buffer(SendBufferRef buffer, NodeId to, const RingId& ring, Time now) {
  RTOTEM_ASSERT(buffer && to != kNoNode);
  if (backend_->unicast(to, buffer) != Status::kOk) ++counters_.send_refused;  // resent by the timer
  token_buffer_ = std::move(buffer);
  token_sent_to_ = to;
  token_ring_ = ring;
  events_.arm_timer(TimerId::kTokenRetransmit, now + ms_to_time(config_.token_retransmit_ms));
}

// The representative starts a ring's token: at the end of Commit, or on an installed ring.
void Node::originate_token(Time now) {
  RTOTEM_ASSERT(self_ == ring_.id.rep);
  RTOTEM_ASSERT(state_ == MemberState::kOperational || (state_ == MemberState::kRecovery && recovery_.token_started));
  token_ = Token{};
  token_.ring_id = ring_.id;
  last_token_seq_ = 0;
  my_trc_ = my_pbl_ = 0;
  if (!next_token_buffer_ && backend_->acquire(next_token_buffer_) != Status::kOk) {
    ++counters_.tokens_deferred;  // no buffer: token loss re-forms the ring
    return;
  }
  handle_token(now);
}

}  // namespace rtotem::membership
