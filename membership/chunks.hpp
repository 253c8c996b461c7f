// What an application mcast carries after its header: one or more chunks, each a whole message
// (several small ones packed into one packet) or one piece of a message too large for a packet.
//
// Wire form, big-endian, repeated to the end of the payload:
//   u16 size | u8 kind | u8 reserved (zero) | u32 total | [u32 message: pieces only] | size bytes
// `total` is the whole message's length: equal to `size` for a whole one; the same on every
// piece of a split one. A sender's pieces go out in order and nothing of its own comes between
// them, so a receiver tells a complete message from what a configuration change cut short.
// `message` numbers the sender's split messages: where a receiver misses pieces of two of them
// (its transitional configuration skips what a departed sender's missing packets held), the
// first piece of one and the last of the next would otherwise fit together into a message
// nobody sent. Whole messages, the small ones packed many to a packet, do not pay for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "membership/packets.hpp"

namespace rtotem::membership {

inline constexpr std::size_t kChunkHeaderSize = 8;   // a whole message's
inline constexpr std::size_t kPieceHeaderSize = 12;  // a piece's: with its message number

enum class ChunkKind : std::uint8_t {
  kWhole = 0,  // a message of its own
  kFirst = 1,  // the opening piece of a split message
  kMiddle = 2,
  kLast = 3,  // the closing piece: the message is complete
};

struct Chunk {
  ChunkKind kind = ChunkKind::kWhole;
  std::uint32_t total = 0;
  std::uint32_t message = 0;  // pieces: which of the sender's split messages (0 for a whole one)
  std::span<const std::byte> bytes;
};

constexpr std::size_t chunk_header_size(ChunkKind kind) noexcept {
  return kind == ChunkKind::kWhole ? kChunkHeaderSize : kPieceHeaderSize;
}

// Payload bytes of one packet after its mcast header, for chunks: room is left for a second
// header, as Recovery re-sends an old ring's packets whole inside new-ring ones.
std::size_t packet_room(std::size_t mtu) noexcept;
// The largest piece of a message one packet carries: packet_room() - kPieceHeaderSize. A whole
// message of up to this size is sent whole.
std::size_t piece_max(std::size_t mtu) noexcept;
// The packets a message of `size` bytes takes: 1 up to piece_max().
std::size_t pieces_for(std::size_t size, std::size_t mtu) noexcept;

// Writes a chunk header at the start of `out` (asserted large enough); returns its size,
// chunk_header_size(kind). `message` is written for pieces only (0 for a whole message).
std::size_t encode_chunk_header(ChunkKind kind, std::uint16_t size, std::uint32_t total, std::uint32_t message,
                                std::span<std::byte> out) noexcept;

// Reads the chunks of one payload in order, never past it. A payload that breaks the form stops
// the reading with a reason: what came before it stands, as on every node that reads it.
class ChunkReader {
 public:
  explicit ChunkReader(std::span<const std::byte> payload) noexcept : rest_(payload) {}
  // The next chunk; false at the end or on a malformed one (then error() says which).
  bool next(Chunk& out) noexcept;
  DecodeError error() const noexcept { return error_; }

 private:
  std::span<const std::byte> rest_;
  DecodeError error_ = DecodeError::kNone;
  bool read_any_ = false;
};

}  // namespace rtotem::membership
