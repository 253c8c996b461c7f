#include "membership/chunks.hpp"

#include "base/wire_io.hpp"

namespace rtotem::membership {

std::size_t packet_room(std::size_t mtu) noexcept {
  RTOTEM_ASSERT(mtu > 2 * mcast_header_size() + kPieceHeaderSize);
  return mtu - 2 * mcast_header_size();
}

std::size_t piece_max(std::size_t mtu) noexcept { return packet_room(mtu) - kPieceHeaderSize; }

std::size_t pieces_for(std::size_t size, std::size_t mtu) noexcept {
  const std::size_t piece = piece_max(mtu);
  return size <= piece ? 1 : (size + piece - 1) / piece;
}

std::size_t encode_chunk_header(ChunkKind kind, std::uint16_t size, std::uint32_t total, std::uint32_t message,
                                std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(kind == ChunkKind::kWhole ? total == size && message == 0 : size > 0 && size <= total);
  WireWriter w(out);
  w.put_u16(size);
  w.put_u8(static_cast<std::uint8_t>(kind));
  w.put_u8(0);
  w.put_u32(total);
  if (kind != ChunkKind::kWhole) w.put_u32(message);
  return w.written();
}

bool ChunkReader::next(Chunk& out) noexcept {
  if (error_ != DecodeError::kNone) return false;
  if (rest_.empty()) {
    if (!read_any_) error_ = DecodeError::kTooShort;  // a message packet carries at least one
    return false;
  }
  WireReader r(rest_);
  const std::uint16_t size = r.get_u16();
  const std::uint8_t kind = r.get_u8();
  const std::uint8_t reserved = r.get_u8();
  const std::uint32_t total = r.get_u32();
  const bool piece =
      kind >= static_cast<std::uint8_t>(ChunkKind::kFirst) && kind <= static_cast<std::uint8_t>(ChunkKind::kLast);
  const std::uint32_t message = piece ? r.get_u32() : 0;
  if (r.short_read() || r.remaining() < size) {
    error_ = DecodeError::kTooShort;
  } else if (reserved != 0) {
    error_ = DecodeError::kReservedNotZero;
  } else if (kind > static_cast<std::uint8_t>(ChunkKind::kLast)) {
    error_ = DecodeError::kBadValue;
  } else if (piece ? size == 0 || size > total : total != size) {
    error_ = DecodeError::kBadValue;
  }
  if (error_ != DecodeError::kNone) return false;
  out.kind = static_cast<ChunkKind>(kind);
  out.total = total;
  out.message = message;
  const std::size_t header = chunk_header_size(out.kind);
  out.bytes = rest_.subspan(header, size);
  rest_ = rest_.subspan(header + size);
  read_any_ = true;
  return true;
}

}  // namespace rtotem::membership
