// The messages of the current ring, by sequence number: the receive window from which messages
// are delivered in order, retransmitted on request, and discarded once every member holds them
// (tocssrp95 §3.2; corosync's regular_sort_queue). Fixed capacity, made at start-up.
//
// It keeps a reference to each message's buffer (a RecvBuffer, or our own SendBuffer from the
// local path), so storing a message copies nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "membership/packets.hpp"
#include "transport/buffer.hpp"

namespace rtotem::membership {

struct StoredMessage {
  transport::BufferRef hold;          // keeps `packet` alive
  std::span<const std::byte> packet;  // the whole mcast packet (header and payload)
  std::span<const std::byte> payload;
  NodeId sender = kNoNode;
  Delivery delivery = Delivery::kAgreed;
  bool recovery = false;  // a new ring's Recovery packet: internal, never delivered itself
  bool resent = false;    // an old ring's message that came through Recovery: already re-sent
  bool answered = false;  // re-sent by us for the last request of it (retransmit_requested)
};

class SortQueue {
 public:
  enum class Insert : std::uint8_t {
    kStored,
    kDuplicate,    // already held, or at or below the discard point
    kOutOfWindow,  // too far ahead of the discard point: dropped, retransmission brings it back
  };

  // `capacity`: messages between the discard point and the highest one held; a power of two.
  explicit SortQueue(std::size_t capacity);

  // Empties the queue; the next message expected is base + 1 (a new ring starts at base 0).
  void reset(Seq base) noexcept;

  Insert insert(Seq seq, StoredMessage message) noexcept;
  const StoredMessage* find(Seq seq) const noexcept;
  StoredMessage* find(Seq seq) noexcept {
    return const_cast<StoredMessage*>(static_cast<const SortQueue&>(*this).find(seq));
  }
  bool holds(Seq seq) const noexcept { return find(seq) != nullptr; }

  Seq base() const noexcept { return base_; }          // everything <= base is discarded
  Seq aru() const noexcept { return aru_; }            // all received up to here
  Seq high_seq() const noexcept { return high_seq_; }  // the highest held (or base)
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t size() const noexcept { return size_; }

  // Recovery was abandoned: what came through it reached some members only, so it must be
  // re-sent in the next attempt.
  void forget_resent() noexcept;

  // Walks every slot: the count, aru and high_seq agree with what is held, and nothing is held
  // outside (base, high_seq]. For RTOTEM_INVARIANT: linear in the capacity.
  bool consistent() const noexcept;

  // Drops every message <= seq (all members hold them); seq may not pass aru.
  void discard_through(Seq seq) noexcept;

  // Calls fn(seq) for each missing seq in (aru, through], lowest first, at most `max` times;
  // returns how many.
  template <class Fn>
  std::size_t for_each_missing(Seq through, std::size_t max, Fn&& fn) const {
    std::size_t n = 0;
    for (Seq seq = aru_ + 1; seq <= through && n < max; ++seq)
      if (!holds(seq)) fn(seq), ++n;
    return n;
  }

 private:
  StoredMessage& slot(Seq seq) noexcept { return slots_[seq & mask_]; }
  const StoredMessage& slot(Seq seq) const noexcept { return slots_[seq & mask_]; }

  std::unique_ptr<StoredMessage[]> slots_;
  std::size_t capacity_;
  Seq mask_;
  Seq base_ = 0;
  Seq aru_ = 0;
  Seq high_seq_ = 0;
  std::size_t size_ = 0;
};

}  // namespace rtotem::membership
