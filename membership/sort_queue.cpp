// SortQueue: a ring of slots indexed by seq modulo capacity, with aru kept as messages arrive.
#include "membership/sort_queue.hpp"

#include <bit>

namespace rtotem::membership {

SortQueue::SortQueue(std::size_t capacity)
    : slots_(std::make_unique<StoredMessage[]>(capacity)), capacity_(capacity), mask_(capacity - 1) {
  RTOTEM_ASSERT(std::has_single_bit(capacity));
}

void SortQueue::reset(Seq base) noexcept {
  for (Seq seq = base_ + 1; seq <= high_seq_; ++seq) slot(seq) = StoredMessage{};
  base_ = aru_ = high_seq_ = base;
  size_ = 0;
}

SortQueue::Insert SortQueue::insert(Seq seq, StoredMessage message) noexcept {
  RTOTEM_ASSERT(message.hold);
  if (seq <= base_) return Insert::kDuplicate;
  if (seq - base_ > capacity_) return Insert::kOutOfWindow;
  StoredMessage& s = slot(seq);
  if (s.hold) return Insert::kDuplicate;
  s = std::move(message);
  ++size_;
  if (seq > high_seq_) high_seq_ = seq;
  while (aru_ < high_seq_ && slot(aru_ + 1).hold) ++aru_;
  return Insert::kStored;
}

const StoredMessage* SortQueue::find(Seq seq) const noexcept {
  if (seq <= base_ || seq > high_seq_) return nullptr;
  const StoredMessage& s = slot(seq);
  return s.hold ? &s : nullptr;
}

void SortQueue::forget_resent() noexcept {
  for (Seq seq = base_ + 1; seq <= high_seq_; ++seq) slot(seq).resent = false;
}

bool SortQueue::consistent() const noexcept {
  if (!(base_ <= aru_ && aru_ <= high_seq_ && high_seq_ - base_ <= capacity_)) return false;
  std::size_t held = 0;
  for (Seq seq = base_ + 1; seq <= base_ + capacity_; ++seq) {
    const bool in_window = seq <= high_seq_;
    if (slot(seq).hold && !in_window) return false;  // a slot left behind by a discard or reset
    if (!in_window) continue;
    held += slot(seq).hold ? 1 : 0;
    if (seq <= aru_ && !slot(seq).hold) return false;  // aru claims one that is missing
  }
  const bool aru_is_highest = aru_ == high_seq_ || !slot(aru_ + 1).hold;
  const bool high_is_held = high_seq_ == base_ || slot(high_seq_).hold;
  return held == size_ && aru_is_highest && high_is_held;
}

void SortQueue::discard_through(Seq seq) noexcept {
  RTOTEM_ASSERT(seq <= aru_);
  for (; base_ < seq; ++base_) {
    slot(base_ + 1) = StoredMessage{};  // releases the buffer: re-posted or back to its pool
    --size_;
  }
}

}  // namespace rtotem::membership
