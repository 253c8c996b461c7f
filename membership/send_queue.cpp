// The application's side of the ring. submit() copies a message (its two parts: Gather) into send
// buffers once: packed behind others still waiting when it fits, else split into pieces of one
// packet each. The token
// visit (send_new_messages) gives each packet its sequence number and multicasts it; the buffer
// itself goes into the sort queue (zero copy), shared with the transport until it is sent.
//
// A split message whose ring fails before its last piece went out is sent again whole on the next
// ring (every receiver drops the cut-short pieces at the configuration change): its sent pieces
// are kept in the queue until the last one is out. Not re-sending it would break self-delivery.
#include <algorithm>
#include <cstring>

#include "membership/chunks.hpp"
#include "membership/node.hpp"

namespace rtotem::membership {

using transport::SendBufferRef;

std::size_t Node::max_message_size() const noexcept { return config_.max_message_size; }

Status Node::submit(const Gather& message, Delivery delivery, Time now) {
  if (state_ == MemberState::kLeft) return Status::kClosed;
  if (message.size() > max_message_size()) return Status::kTooLarge;
  if (!pack(message, delivery)) {
    if (const Status status = enqueue_pieces(message, delivery); status != Status::kOk) {
      ++counters_.submit_backpressure;
      return status;
    }
  }
  // A held token goes on at once with the new message; through the timer, not from in here, as
  // submit() may be called from inside deliver(). Held elsewhere, its holder is asked.
  RTOTEM_ASSERT(send_count_ > kept_ && send_count_ <= config_.send_queue_max);
  if (holding_token_)
    events_.arm_timer(TimerId::kTokenHold, now);
  else if (token_may_rest_)
    send_hold_cancel();
  return Status::kOk;
}

// Into the last waiting packet, if it holds whole messages of this delivery type and has room:
// one packet, one sequence number, one token slot for several small messages.
bool Node::pack(const Gather& message, Delivery delivery) noexcept {
  if (send_count_ == kept_) return false;  // nothing waiting that is not already on the wire
  Pending& tail = send_queue_[(send_head_ + send_count_ - 1) % config_.send_queue_max];
  const std::size_t used = tail.buffer->payload().size();
  // The buffer may be from a backend this node has since left (rebind), sized for a smaller mtu.
  const std::size_t room =
      std::min<std::size_t>(mcast_header_size() + packet_room(backend_->mtu()), tail.buffer->payload_capacity());
  if (tail.kind != ChunkKind::kWhole || tail.delivery != delivery || used + kChunkHeaderSize + message.size() > room)
    return false;
  write_chunk(*tail.buffer, ChunkKind::kWhole, 0, message, 0, message.size());
  RTOTEM_ASSERT(tail.buffer->payload().size() <= room);
  ++counters_.messages_packed;
  return true;
}

// All pieces or none: a message is never half queued. The last send buffers stay the protocol's
// own (copies of others' messages to retransmit, Recovery's re-sends).
Status Node::enqueue_pieces(const Gather& message, Delivery delivery) noexcept {
  const std::size_t pieces = pieces_for(message.size(), backend_->mtu());
  if (send_count_ + pieces > config_.send_queue_max) return Status::kQueueFull;
  if (backend_->send_pool().available() < submit_reserve_ + pieces) return Status::kPoolExhausted;
  const std::size_t piece = piece_max(backend_->mtu());
  RTOTEM_ASSERT(pieces >= 1 && (pieces - 1) * piece < std::max<std::size_t>(message.size(), 1));  // none empty
  const std::size_t first = send_count_;
  const std::uint32_t number = pieces > 1 ? next_split_message_ : 0;
  for (std::size_t i = 0; i < pieces; ++i) {
    SendBufferRef buffer;
    if (backend_->acquire(buffer) != Status::kOk) {
      for (std::size_t j = first; j < send_count_; ++j) send_queue_[(send_head_ + j) % config_.send_queue_max] = {};
      send_count_ = first;
      return Status::kPoolExhausted;
    }
    const ChunkKind kind = pieces == 1       ? ChunkKind::kWhole
                           : i == 0          ? ChunkKind::kFirst
                           : i == pieces - 1 ? ChunkKind::kLast
                                             : ChunkKind::kMiddle;
    // The mcast header is written when the token gives the packet its sequence number.
    buffer->set_payload_size(static_cast<std::uint32_t>(mcast_header_size()));
    write_chunk(*buffer, kind, number, message, i * piece, std::min(piece, message.size() - i * piece));
    send_queue_[(send_head_ + send_count_) % config_.send_queue_max] = Pending{std::move(buffer), delivery, kind};
    ++send_count_;
  }
  RTOTEM_ASSERT(send_count_ == first + pieces && send_count_ <= config_.send_queue_max);
  if (pieces > 1) {
    ++next_split_message_;
    ++counters_.messages_split;
  }
  return Status::kOk;
}

void Node::write_chunk(transport::SendBuffer& buffer, ChunkKind kind, std::uint32_t number, const Gather& message,
                       std::size_t at, std::size_t size) noexcept {
  const std::size_t end = buffer.payload().size();
  RTOTEM_ASSERT(end + kChunkHeaderSize + size <= buffer.payload_capacity());
  const auto out = buffer.writable_payload().subspan(end);
  const std::size_t header = encode_chunk_header(kind, static_cast<std::uint16_t>(size),
                                                 static_cast<std::uint32_t>(message.size()), number, out);
  message.copy(at, out.subspan(header, size));
  buffer.set_payload_size(static_cast<std::uint32_t>(end + header + size));
}

std::uint32_t Node::send_new_messages(std::uint32_t allowed) {
  std::uint32_t sent = 0;
  while (sent < allowed && send_count_ > kept_) {
    if (kept_ > 0 && !(kept_ring_ == ring_.id)) {  // cut short by a ring change: again, whole
      kept_ = 0;
      ++counters_.messages_restarted;
    }
    if (!next_seq_free()) break;
    RTOTEM_ASSERT(kept_ < send_count_);
    Pending& pending = send_queue_[(send_head_ + kept_) % config_.send_queue_max];
    RTOTEM_ASSERT(pending.buffer && (kept_ == 0 || pending.kind != ChunkKind::kWhole));
    if (pending.buffer->refs() > 1 && !unshare(pending.buffer)) {
      send_starved_ = true;
      break;
    }
    if (!multicast_next(pending.buffer, pending.delivery, false)) break;  // the rest waits for the next visit
    ++sent;
    ++counters_.messages_sent;
    if (pending.kind == ChunkKind::kFirst || pending.kind == ChunkKind::kMiddle) {
      ++kept_;  // kept until the message's last piece is out on this ring
      kept_ring_ = ring_.id;
      continue;
    }
    for (std::size_t i = 0; i <= kept_; ++i) send_queue_[(send_head_ + i) % config_.send_queue_max] = {};
    send_head_ = (send_head_ + kept_ + 1) % config_.send_queue_max;
    send_count_ -= kept_ + 1;
    kept_ = 0;
  }
  // Pieces kept on the wire are the first ones of one message whose last is still to go.
  RTOTEM_ASSERT(sent <= allowed && (kept_ == 0 || kept_ < send_count_));
  return sent;
}

// A piece to send again whose buffer an old ring's transmission still holds: its bytes may not
// change under the transport, so they move to a buffer of our own.
bool Node::unshare(SendBufferRef& buffer) noexcept {
  SendBufferRef copy;
  if (backend_->acquire(copy) != Status::kOk) return false;
  const auto bytes = buffer->payload();
  RTOTEM_ASSERT(bytes.size() <= copy->payload_capacity());
  std::memcpy(copy->writable_payload().data(), bytes.data(), bytes.size());
  copy->set_payload_size(static_cast<std::uint32_t>(bytes.size()));
  buffer = std::move(copy);
  return true;
}

}  // namespace rtotem::membership
