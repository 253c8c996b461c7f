// rtotem-ping's inbound path: hellos, pings to answer, pongs to time, and peers saying done.
#include "src/tools/ping_session.hpp"

#include <algorithm>
#include <limits>

namespace rtotem::tools {

void PingSession::on_packets(std::span<transport::InboundPacket> batch) {
  const std::int64_t now = steady_ns();
  for (const transport::InboundPacket& packet : batch) {
    if (packet.from == options_.node) continue;  // our own multicasts, through the local path
    std::size_t index = 0;
    Peer* peer = find_peer(packet.from, index);
    if (peer == nullptr) {
      ++report_.strangers;
      continue;
    }
    PingMessage message;
    if (!decode_ping(packet.payload, message)) {
      ++report_.bad_messages;
      continue;
    }
    on_message(*peer, index, message, now);
  }
}

void PingSession::on_message(Peer& peer, std::size_t index, const PingMessage& message, std::int64_t now) {
  peer.tally.heard = true;
  const bool flagged = (message.flags & kHeardAll) != 0;
  switch (message.type) {
    case PingType::kHello:
      peer.tally.heard_all = peer.tally.heard_all || flagged;
      if (phase_ != PingPhase::kHello) peer.owe_hello = true;  // it still waits for our word
      break;
    case PingType::kPing:
      peer.tally.heard_all = true;  // a node pings only once it heard everyone
      owe_pong(index, message);
      break;
    case PingType::kPong: on_pong(peer, index, message, now); break;
    case PingType::kDone:
      peer.tally.heard_all = true;
      peer.tally.done = true;
      peer.done_all = peer.done_all || flagged;
      break;
  }
}

// Times one peer's answer to one of our pings, from our own clock; settles the ping once every
// peer answered it.
void PingSession::on_pong(Peer& peer, std::size_t index, const PingMessage& message, std::int64_t now) {
  if (message.seq < front_ || message.seq >= next_) {
    ++peer.tally.late;
    return;
  }
  const std::size_t slot_index = message.seq % kWindowMax;
  PingSlot& slot = slots_[slot_index];
  std::uint8_t& answered = answered_by_[slot_index * peers_.size() + index];
  if (slot.settled || static_cast<std::uint64_t>(slot.sent_ns) != message.sent_ns || answered != 0) {
    ++peer.tally.late;
    return;
  }
  answered = 1;
  ++peer.tally.pongs;
  const std::int64_t rtt = std::max<std::int64_t>(now - slot.sent_ns, 0);
  RTOTEM_ASSERT(report_.rtt_ns.size() < report_.rtt_ns.capacity());  // pre-sized: one per pong
  report_.rtt_ns.push_back(
      static_cast<std::uint32_t>(std::min<std::int64_t>(rtt, std::numeric_limits<std::uint32_t>::max())));
  if (++slot.answered < peers_.size()) return;
  slot.settled = true;
  settle_front();
}

// Queues a pong; a peer pinging past its window fills the ring, and the rest go unanswered.
void PingSession::owe_pong(std::size_t index, const PingMessage& ping) {
  if (owed_count_ == owed_.size()) {
    ++report_.pongs_dropped;
    return;
  }
  owed_[(owed_head_ + owed_count_) % owed_.size()] = OwedPong{index, ping.seq, ping.sent_ns};
  ++owed_count_;
}

void PingSession::settle_front() {
  while (front_ < next_ && slots_[front_ % kWindowMax].settled) ++front_;
}

PingSession::Peer* PingSession::find_peer(transport::NodeId node, std::size_t& index) {
  auto it = std::lower_bound(peers_.begin(), peers_.end(), node,
                             [](const Peer& peer, transport::NodeId id) { return peer.tally.node < id; });
  if (it == peers_.end() || it->tally.node != node) return nullptr;
  index = static_cast<std::size_t>(it - peers_.begin());
  return &*it;
}

}  // namespace rtotem::tools
