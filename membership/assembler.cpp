#include "membership/assembler.hpp"

#include <algorithm>
#include <cstring>

#include "base/assert.hpp"

namespace rtotem::membership {

Assembler::Assembler(std::size_t max_senders, std::size_t max_message_size)
    : max_message_size_(max_message_size),
      slot_count_(max_senders),
      slots_(std::make_unique<Slot[]>(max_senders)),
      // Default-initialised, not zeroed: the pages stay untouched until a piece lands in them.
      bytes_(new std::byte[max_senders * max_message_size]) {
  RTOTEM_ASSERT(max_senders >= 1);
}

Assembler::Outcome Assembler::add(NodeId sender, const Chunk& piece) noexcept {
  RTOTEM_ASSERT(piece.kind != ChunkKind::kWhole);
  completed_ = {};
  Slot* slot = find(sender);
  if (piece.kind == ChunkKind::kFirst) {
    if (slot) (void)drop(*slot);  // its previous message never finished
    if (piece.total > max_message_size_) {
      ++dropped_;
      return Outcome::kDiscarded;
    }
    slot = find(kNoNode);
    if (!slot) {  // more senders than a ring holds: not from a ring we were on
      ++dropped_;
      return Outcome::kDiscarded;
    }
    *slot = Slot{sender, piece.message, piece.total, 0};
  } else if (!slot) {
    return Outcome::kDiscarded;  // its opening piece was cut off: counted where it was
  }
  const std::size_t after = std::size_t{slot->size} + piece.bytes.size();
  const bool last = piece.kind == ChunkKind::kLast;
  if (piece.message != slot->message || piece.total != slot->total || after > slot->total ||
      (last && after != slot->total) || (!last && after == slot->total))
    return drop(*slot);
  std::memcpy(bytes_of(*slot) + slot->size, piece.bytes.data(), piece.bytes.size());
  slot->size = static_cast<std::uint32_t>(after);
  if (!last) return Outcome::kPartial;
  completed_ = std::span<const std::byte>(bytes_of(*slot), slot->size);
  slot->sender = kNoNode;  // free again; its bytes stay valid until the next add()
  return Outcome::kComplete;
}

void Assembler::reset() noexcept {
  completed_ = {};
  for (std::size_t i = 0; i < slot_count_; ++i)
    if (slots_[i].sender != kNoNode) (void)drop(slots_[i]);
}

std::size_t Assembler::under_way() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(slots_.get(), slots_.get() + slot_count_, [](const Slot& s) { return s.sender != kNoNode; }));
}

Assembler::Slot* Assembler::find(NodeId sender) noexcept {
  Slot* end = slots_.get() + slot_count_;
  Slot* it = std::find_if(slots_.get(), end, [sender](const Slot& s) { return s.sender == sender; });
  return it == end ? nullptr : it;
}

std::byte* Assembler::bytes_of(const Slot& slot) const noexcept {
  return bytes_.get() + static_cast<std::size_t>(&slot - slots_.get()) * max_message_size_;
}

Assembler::Outcome Assembler::drop(Slot& slot) noexcept {
  slot.sender = kNoNode;
  ++dropped_;
  return Outcome::kDiscarded;
}

}  // namespace rtotem::membership
