// The transmit queue of a backend: a fixed array of (destination, buffer) items, sent from the
// front in order. Full is back-pressure; nothing here allocates.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <utility>

#include "transport/buffer.hpp"

namespace rtotem::transport {

inline constexpr std::size_t kTxQueueMax = 256;

// Where a backend over several links sends a packet (LinkSet); one link ignores it.
enum class Spread : std::uint8_t {
  kRoute,      // the link mode's choice
  kEveryLink,  // every live link, in any mode: recovery traffic
};

struct TxItem {
  NodeId dest = kNoNode;  // kNoNode: multicast to the ring
  SendBufferRef buffer;
  // The bytes to send: the buffer's own wire bytes, or (with a key) the sealed copy in a seal slot
  // that Backend::flush made for this transmit call.
  std::span<const std::byte> wire;
  Spread spread = Spread::kRoute;
};

class TxQueue {
 public:
  bool empty() const noexcept { return head_ == tail_; }
  bool full() const noexcept { return tail_ - head_ == kTxQueueMax; }
  std::size_t size() const noexcept { return tail_ - head_; }

  void push(NodeId dest, SendBufferRef buffer, Spread spread = Spread::kRoute) noexcept {
    RTOTEM_ASSERT(!full());
    if (tail_ == kTxQueueMax) compact();
    const auto wire = buffer->wire();  // a queued buffer is shared, so never rewritten: stable
    items_[tail_++] = TxItem{dest, std::move(buffer), wire, spread};
  }
  // The queued items, oldest first, contiguous so a backend can walk them into one batch.
  std::span<TxItem> pending() noexcept { return {items_.data() + head_, tail_ - head_}; }
  // Drops the first `n` items (sent or discarded): their buffer references are released.
  void pop_front(std::size_t n) noexcept {
    RTOTEM_ASSERT(n <= size());
    for (std::size_t i = 0; i < n; ++i) items_[head_ + i].buffer.reset();
    head_ += n;
    if (head_ == tail_) head_ = tail_ = 0;
  }

 private:
  void compact() noexcept {
    std::size_t j = 0;
    for (std::size_t i = head_; i < tail_; ++i, ++j) items_[j] = std::move(items_[i]);
    head_ = 0;
    tail_ = j;
  }

  std::array<TxItem, kTxQueueMax> items_{};
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
};

}  // namespace rtotem::transport
