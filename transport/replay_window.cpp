// The sliding replay window and the fixed table of them.
#include "transport/replay_window.hpp"

#include <algorithm>

#include "base/assert.hpp"

namespace rtotem::transport {

bool ReplayWindow::fresh(std::uint64_t epoch, std::uint64_t counter) const noexcept {
  if (epoch != epoch_) return epoch > epoch_;
  if (counter > top_) return true;
  if (top_ - counter >= kReplayWindowBits) return false;  // left of the window: too old to tell
  return !seen(counter);
}

void ReplayWindow::record(std::uint64_t epoch, std::uint64_t counter) noexcept {
  RTOTEM_ASSERT(fresh(epoch, counter));
  if (epoch > epoch_) {  // the sender restarted: its old epoch's counters mean nothing now
    epoch_ = epoch;
    top_ = counter;
    bits_.fill(0);
  } else if (counter > top_) {
    // Slide right: the counters between the old top and the new one are not seen yet. A slide
    // is usually by one; a slide by a window or more forgets everything.
    if (counter - top_ >= kReplayWindowBits) {
      bits_.fill(0);
    } else {
      for (std::uint64_t c = top_ + 1; c < counter; ++c) mark(c, false);
    }
    top_ = counter;
  }
  mark(counter, true);
}

bool ReplayWindow::seen(std::uint64_t counter) const noexcept {
  const std::uint64_t bit = counter % kReplayWindowBits;
  return (bits_[bit / 64] >> (bit % 64) & 1) != 0;
}

void ReplayWindow::mark(std::uint64_t counter, bool on) noexcept {
  const std::uint64_t bit = counter % kReplayWindowBits;
  const std::uint64_t mask = std::uint64_t{1} << (bit % 64);
  if (on)
    bits_[bit / 64] |= mask;
  else
    bits_[bit / 64] &= ~mask;
}

ReplayTable::ReplayTable(std::size_t senders_max) : senders_max_(senders_max) {
  RTOTEM_ASSERT(senders_max > 0);
  entries_.reserve(senders_max);
}

std::vector<ReplayTable::Entry>::iterator ReplayTable::lower_bound(NodeId sender) noexcept {
  return std::lower_bound(entries_.begin(), entries_.end(), sender,
                          [](const Entry& entry, NodeId id) { return entry.sender < id; });
}

ReplayWindow* ReplayTable::find(NodeId sender) noexcept {
  const auto it = lower_bound(sender);
  return it != entries_.end() && it->sender == sender ? &it->window : nullptr;
}

const ReplayWindow* ReplayTable::find(NodeId sender) const noexcept {
  return const_cast<ReplayTable*>(this)->find(sender);
}

ReplayWindow* ReplayTable::add(NodeId sender) noexcept {
  if (full()) return nullptr;
  const auto it = lower_bound(sender);
  RTOTEM_ASSERT(it == entries_.end() || it->sender != sender);
  return &entries_.insert(it, Entry{sender, ReplayWindow{}})->window;  // within capacity: no allocation
}

}  // namespace rtotem::transport
