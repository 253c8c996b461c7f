#include "src/client/message_pieces.hpp"

#include <algorithm>

#include "base/wire_io.hpp"
#include "base/assert.hpp"

namespace rtotem::client {

void put_piece_header(std::span<std::byte, kPieceHeaderSize> out, bool first, std::size_t total) noexcept {
  WireWriter w(out);
  w.put_u8(first ? kPieceFirst : 0);
  w.put_u32(static_cast<std::uint32_t>(total));
}

void PieceAssembler::erase(Partials::iterator at) {
  held_ -= at->second.bytes.capacity();
  partial_.erase(at);
}

PieceAssembler::Outcome PieceAssembler::drop(Partials::iterator at) {
  if (at != partial_.end()) erase(at);
  ++dropped_;
  return Outcome::kDropped;
}

PieceAssembler::Outcome PieceAssembler::add(const rtotem_member& sender, std::string_view group,
                                            std::span<const std::byte> piece) {
  WireReader in(piece);
  const std::uint8_t flags = in.get_u8();
  const std::uint32_t total = in.get_u32();
  const std::span<const std::byte> data = in.get_rest();
  auto at = partial_.find(std::tuple(group, sender.nodeid, sender.pid));
  // Nothing here can crash the reader: a piece that does not fit what it began is dropped with
  // the message it claims to continue.
  if (in.short_read() || (flags & ~kPieceFirst) != 0 || total > RTOTEM_MESSAGE_MAX) return drop(at);
  if ((flags & kPieceFirst) != 0) {
    // A new message: one still unfinished from this sender was cut short (its library gave up).
    if (at != partial_.end()) (void)drop(at);
    // Not reserved up front: the size is the sender's word, and the pieces may never come.
    at = partial_.emplace(Key(group, sender.nodeid, sender.pid), Partial{total, {}, 0}).first;
  } else if (at == partial_.end() || at->second.total != total) {
    return drop(at);  // joined after its first piece, or a piece of another message
  }
  Partial& p = at->second;
  if (data.size() > p.total - p.bytes.size()) return drop(at);
  if (!make_room(at, data.size())) {
    ++evicted_;
    return drop(at);
  }
  p.added = ++added_;
  p.bytes.insert(p.bytes.end(), data.begin(), data.end());
  if (p.bytes.size() < p.total) return Outcome::kPending;
  held_ -= p.bytes.capacity();
  complete_ = std::move(p.bytes);
  partial_.erase(at);
  return Outcome::kComplete;
}

// Storage for `more` bytes in `at`'s message, within held_max_ with everyone else's: doubled (up
// to its message's size) as far as there is room, and where there is not room for `more`, others
// are evicted. false: its message would not fit even alone (and evicts no other).
bool PieceAssembler::make_room(Partials::iterator at, std::size_t more) {
  std::vector<std::byte>& bytes = at->second.bytes;
  const std::size_t needed = bytes.size() + more;
  if (at->second.total > held_max_) return false;
  if (needed <= bytes.capacity()) return true;
  while (held_ - bytes.capacity() + needed > held_max_) evict_oldest_but(at);
  const std::size_t others = held_ - bytes.capacity();
  const std::size_t doubled = std::min<std::size_t>(at->second.total, std::max(needed, 2 * bytes.capacity()));
  bytes.reserve(std::min(doubled, held_max_ - others));
  held_ = others + bytes.capacity();
  return true;
}

// The message least recently given a piece, of those that hold storage, other than `keep`.
void PieceAssembler::evict_oldest_but(Partials::iterator keep) {
  auto oldest = partial_.end();
  for (auto it = partial_.begin(); it != partial_.end(); ++it) {
    if (it == keep || it->second.bytes.capacity() == 0) continue;
    if (oldest == partial_.end() || it->second.added < oldest->second.added) oldest = it;
  }
  RTOTEM_ASSERT(oldest != partial_.end());  // held_ counts storage beyond keep's
  ++evicted_;
  (void)drop(oldest);
}

void PieceAssembler::changed(std::string_view group, std::span<const rtotem_member> left, bool own) {
  if (own) {
    forget_group(group);
    return;
  }
  for (const rtotem_member& gone : left) forget(gone, group);
}

void PieceAssembler::forget(const rtotem_member& sender, std::string_view group) {
  if (const auto at = partial_.find(std::tuple(group, sender.nodeid, sender.pid)); at != partial_.end()) drop(at);
}

void PieceAssembler::forget_group(std::string_view group) {
  for (auto at = partial_.begin(); at != partial_.end();) {
    if (std::get<0>(at->first) == group) {
      const auto next = std::next(at);
      (void)drop(at);
      at = next;
    } else {
      ++at;
    }
  }
}

}  // namespace rtotem::client
