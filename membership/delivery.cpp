// Delivery (tocssrp95 §3.3): agreed messages in sequence order as soon as every lower one is
// held; safe ones only once every member holds them, i.e. below the aru the token carried on two
// consecutive visits. Messages every member holds and this node delivered are discarded.
// Only an operational node delivers: once its ring is lost, what it still delivers in that ring
// is settled with the other survivors in Recovery (recovery.cpp).
#include <algorithm>

#include "membership/node.hpp"

namespace rtotem::membership {

void Node::release_stable(Seq token_aru) {
  RTOTEM_ASSERT(token_aru <= ring_.queue.aru() && ring_.last_token_aru <= ring_.queue.aru());
  const Seq stable = std::min(token_aru, ring_.last_token_aru);
  ring_.safe_through = std::max(ring_.safe_through, stable);
  ring_.last_token_aru = token_aru;
  deliver_ready();
}

void Node::deliver_ready() {
  RingState& ring = ring_;
  while (ring.delivered_through < ring.queue.aru()) {
    const Seq seq = ring.delivered_through + 1;
    const StoredMessage* message = ring.queue.find(seq);
    RTOTEM_ASSERT(message);   // held: seq <= aru, and nothing undelivered is ever discarded
    if (message->recovery) {  // the protocol's own: consumed when it arrived
      ring.delivered_through = seq;
      ring.last_sender = message->sender;
      continue;
    }
    if (state_ != MemberState::kOperational) break;
    if (message->delivery == Delivery::kSafe && seq > ring.safe_through) break;  // total order waits too
    RTOTEM_ASSERT(message->delivery == Delivery::kAgreed || seq <= ring.safe_through);
    ring.delivered_through = seq;
    ring.last_sender = message->sender;
    deliver_packet(ring.id, seq, *message, false);
  }
  RTOTEM_ASSERT(ring.delivered_through <= ring.queue.aru() && ring.safe_through <= ring.queue.aru());
  const Seq discard = std::min(ring.safe_through, ring.delivered_through);
  if (discard > ring.queue.base()) ring.queue.discard_through(discard);
  // Nothing undelivered is discarded: a retransmission request can always be answered by someone.
  RTOTEM_ASSERT(ring.queue.base() <= ring.delivered_through);
}

// A packet's messages, in order: each whole one as it is (zero copy, the packet's buffer to keep),
// each split one once its last piece is here. Every node reads the same packets in the same order
// with the same pieces under way, so all of them deliver, and drop, the same messages.
void Node::deliver_packet(const RingId& ring, Seq seq, const StoredMessage& message, bool transitional) {
  // Only the ring being left delivers in Recovery, and only an operational node in its own ring.
  RTOTEM_ASSERT(state_ == MemberState::kRecovery ? ring == old_ring_.id
                                                 : state_ == MemberState::kOperational && ring == ring_.id);
  RTOTEM_ASSERT(!message.recovery && (!transitional || state_ == MemberState::kRecovery));
  ChunkReader reader(message.payload);
  Chunk chunk;
  Delivered out{ring, seq, message.sender, message.delivery, transitional};
  while (reader.next(chunk)) {
    out.payload = chunk.bytes;
    out.hold = &message.hold;
    if (chunk.kind != ChunkKind::kWhole) {
      const Assembler::Outcome outcome = assembler_.add(message.sender, chunk);
      counters_.messages_cut_short = assembler_.dropped();
      if (outcome != Assembler::Outcome::kComplete) continue;
      out.payload = assembler_.message();
      out.hold = nullptr;
    }
    events_.deliver(out);
    ++out.index;
    ++counters_.messages_delivered;
  }
  if (reader.error() != DecodeError::kNone)
    ++counters_.payloads_malformed;  // a broken sender: skipped alike everywhere
}

}  // namespace rtotem::membership
