// The chunk form of an mcast's payload (packed and split messages) and the Assembler that puts
// split messages back together: round trips, every malformed form refused with its reason and
// never read past, and whole-or-nothing reassembly.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "membership/assembler.hpp"
#include "membership/chunks.hpp"
#include "membership/gather.hpp"

namespace rtotem::membership {
namespace {

std::vector<std::byte> bytes_of(const std::string& text) {
  std::vector<std::byte> out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

std::string text_of(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// A payload of chunks, each (kind, bytes, total).
struct PayloadBuilder {
  std::vector<std::byte> payload;
  PayloadBuilder& add(ChunkKind kind, const std::string& text, std::uint32_t total, std::uint32_t message = 0) {
    const std::size_t at = payload.size();
    const std::size_t header = chunk_header_size(kind);
    payload.resize(at + header + text.size());
    EXPECT_EQ(encode_chunk_header(kind, static_cast<std::uint16_t>(text.size()), total, message,
                                  std::span(payload).subspan(at)),
              header);
    std::memcpy(payload.data() + at + header, text.data(), text.size());
    return *this;
  }
  PayloadBuilder& whole(const std::string& text) {
    return add(ChunkKind::kWhole, text, static_cast<std::uint32_t>(text.size()));
  }
};

std::vector<std::string> read_all(std::span<const std::byte> payload, DecodeError& error) {
  ChunkReader reader(payload);
  Chunk chunk;
  std::vector<std::string> out;
  while (reader.next(chunk)) out.push_back(text_of(chunk.bytes));
  error = reader.error();
  return out;
}

TEST(Chunks, PackedMessagesComeOutInOrder) {
  const auto payload = PayloadBuilder{}.whole("one").whole("").whole("three").payload;
  DecodeError error{};
  EXPECT_EQ(read_all(payload, error), (std::vector<std::string>{"one", "", "three"}));
  EXPECT_EQ(error, DecodeError::kNone);
}

// A piece carries its message's number in 4 more header bytes; a whole message does not.
TEST(Chunks, APieceNamesItsMessageAWholeOneDoesNot) {
  const auto payload = PayloadBuilder{}.whole("ab").add(ChunkKind::kMiddle, "cd", 9, 0xA1B2C3D4).payload;
  EXPECT_EQ(payload.size(), kChunkHeaderSize + 2 + kPieceHeaderSize + 2);
  ChunkReader reader(payload);
  Chunk chunk;
  ASSERT_TRUE(reader.next(chunk));
  EXPECT_EQ(chunk.message, 0u);
  ASSERT_TRUE(reader.next(chunk));
  EXPECT_EQ(chunk.kind, ChunkKind::kMiddle);
  EXPECT_EQ(chunk.message, 0xA1B2C3D4u);
  EXPECT_EQ(text_of(chunk.bytes), "cd");
  EXPECT_FALSE(reader.next(chunk));
  EXPECT_EQ(reader.error(), DecodeError::kNone);

  DecodeError error{};
  auto cut = PayloadBuilder{}.add(ChunkKind::kFirst, "abc", 9).payload;
  cut.resize(kChunkHeaderSize + 2);  // cut inside the message number
  read_all(cut, error);
  EXPECT_EQ(error, DecodeError::kTooShort);
}

TEST(Chunks, MalformedPayloadsAreRefusedWithTheirReasonAndWhatCameBeforeStands) {
  DecodeError error{};
  EXPECT_TRUE(read_all({}, error).empty());
  EXPECT_EQ(error, DecodeError::kTooShort);  // a message packet carries at least one

  auto payload = PayloadBuilder{}.whole("ok").whole("cut").payload;
  payload.pop_back();  // the second chunk announces more than is there
  EXPECT_EQ(read_all(payload, error), std::vector<std::string>{"ok"});
  EXPECT_EQ(error, DecodeError::kTooShort);

  payload = PayloadBuilder{}.whole("ok").payload;
  payload.resize(payload.size() + 5);  // a header cut short
  EXPECT_EQ(read_all(payload, error), std::vector<std::string>{"ok"});
  EXPECT_EQ(error, DecodeError::kTooShort);

  payload = PayloadBuilder{}.whole("x").payload;
  payload[3] = std::byte{1};
  read_all(payload, error);
  EXPECT_EQ(error, DecodeError::kReservedNotZero);

  payload = PayloadBuilder{}.whole("x").payload;
  payload[2] = std::byte{4};  // no such kind
  read_all(payload, error);
  EXPECT_EQ(error, DecodeError::kBadValue);

  payload = PayloadBuilder{}.whole("x").payload;
  payload[7] = std::byte{2};  // a whole message whose total is not its size
  read_all(payload, error);
  EXPECT_EQ(error, DecodeError::kBadValue);

  payload = PayloadBuilder{}.add(ChunkKind::kFirst, "abc", 9).payload;
  payload[7] = std::byte{2};  // a piece above its message's total
  read_all(payload, error);
  EXPECT_EQ(error, DecodeError::kBadValue);
}

TEST(Chunks, PiecesAreCountedFromTheMtu) {
  const std::size_t piece = piece_max(1400);
  EXPECT_EQ(piece, 1400 - 2 * mcast_header_size() - kPieceHeaderSize);
  EXPECT_EQ(pieces_for(0, 1400), 1u);
  EXPECT_EQ(pieces_for(piece, 1400), 1u);
  EXPECT_EQ(pieces_for(piece + 1, 1400), 2u);
  EXPECT_EQ(pieces_for(1 << 20, 1400), (std::size_t{1 << 20} + piece - 1) / piece);
}

Chunk piece(ChunkKind kind, const std::vector<std::byte>& bytes, std::uint32_t total, std::uint32_t message = 0) {
  return Chunk{kind, total, message, bytes};
}

TEST(Assembler, PiecesFromSeveralSendersComeBackWhole) {
  Assembler assembler(4, 64);
  const auto a1 = bytes_of("hello "), a2 = bytes_of("world");
  const auto b1 = bytes_of("12"), b2 = bytes_of("34"), b3 = bytes_of("5");
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, a1, 11)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(2, piece(ChunkKind::kFirst, b1, 5)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(2, piece(ChunkKind::kMiddle, b2, 5)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.under_way(), 2u);
  ASSERT_EQ(assembler.add(1, piece(ChunkKind::kLast, a2, 11)), Assembler::Outcome::kComplete);
  EXPECT_EQ(text_of(assembler.message()), "hello world");
  ASSERT_EQ(assembler.add(2, piece(ChunkKind::kLast, b3, 5)), Assembler::Outcome::kComplete);
  EXPECT_EQ(text_of(assembler.message()), "12345");
  EXPECT_EQ(assembler.under_way(), 0u);
  EXPECT_EQ(assembler.dropped(), 0u);
}

TEST(Assembler, AConfigurationChangeDropsWhatIsUnderWayAndItsRestIsRefused) {
  Assembler assembler(2, 64);
  const auto part = bytes_of("abc");
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, part, 9)), Assembler::Outcome::kPartial);
  assembler.reset();
  EXPECT_EQ(assembler.dropped(), 1u);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kMiddle, part, 9)), Assembler::Outcome::kDiscarded);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kLast, part, 9)), Assembler::Outcome::kDiscarded);
  EXPECT_EQ(assembler.under_way(), 0u);
}

TEST(Assembler, PiecesThatDoNotContinueTheMessageDropIt) {
  Assembler assembler(2, 64);
  const auto three = bytes_of("abc");
  // A new opening piece: the previous message never finished.
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, three, 9)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, three, 6)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.dropped(), 1u);
  // Another total than the opening piece's.
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kLast, three, 7)), Assembler::Outcome::kDiscarded);
  EXPECT_EQ(assembler.dropped(), 2u);
  // A last piece that does not reach the total, a middle one that does.
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, three, 9)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kLast, three, 9)), Assembler::Outcome::kDiscarded);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, three, 6)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kMiddle, three, 6)), Assembler::Outcome::kDiscarded);
  // Above the largest message.
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, three, 65)), Assembler::Outcome::kDiscarded);
  EXPECT_EQ(assembler.dropped(), 5u);
  EXPECT_EQ(assembler.under_way(), 0u);
}

// The pieces in between were never delivered (a departed sender's holes): the opening piece of
// message 7 and the closing piece of message 8 fit by sender, total and kind, but are two messages.
TEST(Assembler, APieceOfAnotherMessageDropsTheOneUnderWay) {
  Assembler assembler(2, 64);
  const auto three = bytes_of("abc");
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, three, 6, 7)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kLast, three, 6, 8)), Assembler::Outcome::kDiscarded);
  EXPECT_EQ(assembler.dropped(), 1u);
  EXPECT_EQ(assembler.under_way(), 0u);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, three, 6, 9)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kLast, three, 6, 9)), Assembler::Outcome::kComplete);
  EXPECT_EQ(text_of(assembler.message()), "abcabc");
}

TEST(Assembler, MoreSendersThanSlotsAreRefusedNotOverwritten) {
  Assembler assembler(1, 16);
  const auto part = bytes_of("ab");
  EXPECT_EQ(assembler.add(1, piece(ChunkKind::kFirst, part, 4)), Assembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(2, piece(ChunkKind::kFirst, part, 4)), Assembler::Outcome::kDiscarded);
  ASSERT_EQ(assembler.add(1, piece(ChunkKind::kLast, part, 4)), Assembler::Outcome::kComplete);
  EXPECT_EQ(text_of(assembler.message()), "abab");
}

}  // namespace
}  // namespace rtotem::membership

namespace rtotem::membership {
namespace {

// A group packet's header and its client's data reach a send buffer as one message, from any
// offset (a piece of a split message starts anywhere in either part).
TEST(Gather, CopiesAnyRangeAcrossItsTwoParts) {
  const std::string head = "HEAD", tail = "tail-bytes";
  const Gather message{std::as_bytes(std::span(head)), std::as_bytes(std::span(tail))};
  const std::string whole = head + tail;
  ASSERT_EQ(message.size(), whole.size());
  for (std::size_t at = 0; at <= whole.size(); ++at) {
    for (std::size_t n = 0; at + n <= whole.size(); ++n) {
      std::string out(n, '?');
      message.copy(at, std::as_writable_bytes(std::span(out)));
      EXPECT_EQ(out, whole.substr(at, n)) << "at " << at << ", " << n << " bytes";
    }
  }
  const Gather alone{std::as_bytes(std::span(head)), {}};
  std::string out(2, '?');
  alone.copy(1, std::as_writable_bytes(std::span(out)));
  EXPECT_EQ(out, "EA");
}

}  // namespace
}  // namespace rtotem::membership
