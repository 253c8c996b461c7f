#include "src/client/message_pieces.hpp"

#include "membership/wire_io.hpp"

namespace rtotem::client {

void put_piece_header(std::span<std::byte, kPieceHeaderSize> out, bool first, std::size_t total) noexcept {
  membership::WireWriter w(out);
  w.put_u8(first ? kPieceFirst : 0);
  w.put_u32(static_cast<std::uint32_t>(total));
}

PieceAssembler::Outcome PieceAssembler::drop(Partials::iterator at) {
  if (at != partial_.end()) partial_.erase(at);
  ++dropped_;
  return Outcome::kDropped;
}

PieceAssembler::Outcome PieceAssembler::add(const rtotem_member& sender, std::string_view group,
                                            std::span<const std::byte> piece) {
  membership::WireReader in(piece);
  const std::uint8_t flags = in.get_u8();
  const std::uint32_t total = in.get_u32();
  const std::span<const std::byte> data = in.get_rest();
  auto at = partial_.find(std::tuple(group, sender.nodeid, sender.pid));
  // Nothing here can crash the reader: a piece that does not fit what it began is dropped with
  // the message it claims to continue.
  if (in.short_read() || (flags & ~kPieceFirst) != 0 || total > RTOTEM_MESSAGE_MAX) return drop(at);
  if ((flags & kPieceFirst) != 0) {
    // A new message: one still unfinished from this sender was cut short (its library gave up).
    if (at != partial_.end()) ++dropped_;
    // Not reserved up front: the size is the sender's word, and the pieces may never come.
    at = partial_.insert_or_assign(Key(group, sender.nodeid, sender.pid), Partial{total, {}}).first;
  } else if (at == partial_.end() || at->second.total != total) {
    return drop(at);  // joined after its first piece, or a piece of another message
  }
  Partial& p = at->second;
  if (data.size() > p.total - p.bytes.size()) return drop(at);
  p.bytes.insert(p.bytes.end(), data.begin(), data.end());
  if (p.bytes.size() < p.total) return Outcome::kPending;
  complete_ = std::move(p.bytes);
  partial_.erase(at);
  return Outcome::kComplete;
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
      at = partial_.erase(at);
      ++dropped_;
    } else {
      ++at;
    }
  }
}

}  // namespace rtotem::client
