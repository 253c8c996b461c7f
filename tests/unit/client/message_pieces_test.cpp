// The library's side of a message sent in pieces: put back together per sender and group, in
// whatever interleaving the ring delivers; whatever cannot be finished is dropped, never a crash.
#include "src/client/message_pieces.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace rtotem::client {
namespace {

using Bytes = std::vector<std::byte>;
using Outcome = PieceAssembler::Outcome;

// The pieces a sender's library makes of `message`, `each` bytes of it per piece.
std::vector<Bytes> split(const std::string& message, std::size_t each) {
  std::vector<Bytes> pieces;
  for (std::size_t at = 0; at < message.size(); at += each) {
    Bytes piece(kPieceHeaderSize);
    put_piece_header(std::span<std::byte, kPieceHeaderSize>(piece.data(), kPieceHeaderSize), at == 0, message.size());
    const std::string part = message.substr(at, each);
    for (const char c : part) piece.push_back(static_cast<std::byte>(c));
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

std::string text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

constexpr rtotem_member kA{1, 100};
constexpr rtotem_member kB{2, 200};

TEST(MessagePieces, InterleavedSendersAreEachPutBackTogetherAtTheirLastPiece) {
  PieceAssembler assembler;
  const auto a = split("the first sender's long message", 4);
  const auto b = split("another one, from node 2", 5);
  std::vector<std::string> delivered;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size() && assembler.add(kA, "g", a[i]) == Outcome::kComplete)
      delivered.push_back(text(assembler.take_message()));
    if (i < b.size() && assembler.add(kB, "g", b[i]) == Outcome::kComplete)
      delivered.push_back(text(assembler.take_message()));
  }
  EXPECT_EQ(delivered, (std::vector<std::string>{"another one, from node 2", "the first sender's long message"}));
  EXPECT_EQ(assembler.pending(), 0u);
  EXPECT_EQ(assembler.dropped(), 0u);
}

TEST(MessagePieces, AWholeMessageIsHandedOverNotKept) {
  PieceAssembler assembler;
  const auto pieces = split("0123456789", 4);
  for (std::size_t i = 0; i + 1 < pieces.size(); ++i) ASSERT_EQ(assembler.add(kA, "g", pieces[i]), Outcome::kPending);
  ASSERT_EQ(assembler.add(kA, "g", pieces.back()), Outcome::kComplete);
  EXPECT_EQ(text(assembler.take_message()), "0123456789");
  EXPECT_TRUE(assembler.take_message().empty());  // its memory went with it
}

TEST(MessagePieces, TheSameSenderInTwoGroupsIsTwoMessages) {
  PieceAssembler assembler;
  const auto one = split("0123456789", 3);
  const auto two = split("abcdefghij", 3);
  for (std::size_t i = 0; i + 1 < one.size(); ++i) {
    EXPECT_EQ(assembler.add(kA, "g1", one[i]), Outcome::kPending);
    EXPECT_EQ(assembler.add(kA, "g2", two[i]), Outcome::kPending);
  }
  ASSERT_EQ(assembler.add(kA, "g2", two.back()), Outcome::kComplete);
  EXPECT_EQ(text(assembler.take_message()), "abcdefghij");
  ASSERT_EQ(assembler.add(kA, "g1", one.back()), Outcome::kComplete);
  EXPECT_EQ(text(assembler.take_message()), "0123456789");
}

TEST(MessagePieces, AMemberThatMissedTheFirstPieceDropsTheRestAndTakesTheNextMessage) {
  PieceAssembler assembler;
  const auto missed = split("begun before this member joined", 8);
  for (std::size_t i = 1; i < missed.size(); ++i) EXPECT_EQ(assembler.add(kA, "g", missed[i]), Outcome::kDropped);
  const auto next = split("the next one", 5);
  Outcome last{};
  for (const Bytes& piece : next) last = assembler.add(kA, "g", piece);
  ASSERT_EQ(last, Outcome::kComplete);
  EXPECT_EQ(text(assembler.take_message()), "the next one");
  EXPECT_EQ(assembler.dropped(), missed.size() - 1);
}

TEST(MessagePieces, ASenderThatLeftMidMessageLeavesNothingBehind) {
  PieceAssembler assembler;
  const auto cut = split("cut short by a leave", 6);
  EXPECT_EQ(assembler.add(kA, "g", cut[0]), Outcome::kPending);
  EXPECT_EQ(assembler.add(kB, "g", split("kept", 2)[0]), Outcome::kPending);
  assembler.changed("g", std::span(&kA, 1), false);
  EXPECT_EQ(assembler.pending(), 1u);
  EXPECT_EQ(assembler.add(kA, "g", cut[1]), Outcome::kDropped);
  assembler.changed("g", {}, true);
  EXPECT_EQ(assembler.pending(), 0u);
  EXPECT_EQ(assembler.dropped(), 3u);  // A's message, A's stray piece, B's message
}

// Issue 48: this member's own leave and join, where its event stream has them, end every message
// of the group begun before them. M2, as large as M1 and begun while the member was out, must not
// be joined to M1's start; and the pieces of a group it left go at once, not at its next join.
TEST(MessagePieces, AMembersOwnLeaveAndJoinEndWhatWasBegunBeforeThem) {
  constexpr rtotem_member kSelf{3, 300};
  PieceAssembler assembler;
  const auto m1 = split(std::string(10, 'A'), 2);
  const auto m2 = split(std::string(10, 'B'), 2);
  EXPECT_EQ(assembler.add(kA, "g", m1[0]), Outcome::kPending);
  EXPECT_EQ(assembler.add(kA, "g", m1[1]), Outcome::kPending);
  EXPECT_EQ(assembler.add(kB, "other", split("elsewhere", 5)[0]), Outcome::kPending);
  assembler.changed("g", std::span(&kSelf, 1), true);  // its own leave
  EXPECT_EQ(assembler.pending(), 1u) << "the group it left still holds pieces";
  assembler.changed("g", {}, true);  // its own join
  for (std::size_t i = 2; i < m2.size(); ++i) EXPECT_EQ(assembler.add(kA, "g", m2[i]), Outcome::kDropped) << i;
  EXPECT_EQ(assembler.pending(), 1u);  // the other group's message is untouched
  EXPECT_TRUE(assembler.take_message().empty());
}

// Another member's join or leave ends only what the members that left had begun.
TEST(MessagePieces, OthersJoiningOrLeavingEndOnlyTheMessagesOfThoseWhoLeft) {
  PieceAssembler assembler;
  const auto a = split("from the first", 5);
  const auto b = split("from the second", 5);
  EXPECT_EQ(assembler.add(kA, "g", a[0]), Outcome::kPending);
  EXPECT_EQ(assembler.add(kB, "g", b[0]), Outcome::kPending);
  constexpr rtotem_member kOther{4, 400};
  assembler.changed("g", {}, false);                     // another member joined
  assembler.changed("g", std::span(&kOther, 1), false);  // and left
  assembler.changed("g", std::span(&kB, 1), false);      // the second sender left
  EXPECT_EQ(assembler.pending(), 1u);
  Outcome last{};
  for (std::size_t i = 1; i < a.size(); ++i) last = assembler.add(kA, "g", a[i]);
  ASSERT_EQ(last, Outcome::kComplete);
  EXPECT_EQ(text(assembler.take_message()), "from the first");
  EXPECT_EQ(assembler.add(kB, "g", b[1]), Outcome::kDropped);
}

TEST(MessagePieces, AFirstPieceWhileAMessageIsUnfinishedStartsAfresh) {
  PieceAssembler assembler;
  const auto abandoned = split("abandoned by its library", 5);
  EXPECT_EQ(assembler.add(kA, "g", abandoned[0]), Outcome::kPending);
  const auto fresh = split("fresh", 4);
  EXPECT_EQ(assembler.add(kA, "g", fresh[0]), Outcome::kPending);
  ASSERT_EQ(assembler.add(kA, "g", fresh[1]), Outcome::kComplete);
  EXPECT_EQ(text(assembler.take_message()), "fresh");
  EXPECT_EQ(assembler.dropped(), 1u);
}

// The bound on what unfinished messages hold together: a sender that stopped midway is evicted
// for one that goes on, not the other way round; its later pieces are dropped as they come.
TEST(MessagePieces, PastTheBoundTheMessageLeastRecentlyGivenAPieceIsDropped) {
  PieceAssembler assembler(100);
  const auto stalled = split(std::string(80, 's'), 20);
  EXPECT_EQ(assembler.add(kA, "g", stalled[0]), Outcome::kPending);
  EXPECT_EQ(assembler.add(kA, "g", stalled[1]), Outcome::kPending);
  const auto going = split(std::string(80, 'g'), 20);
  Outcome last{};
  for (const Bytes& piece : going) {
    last = assembler.add(kB, "g", piece);
    EXPECT_LE(assembler.held(), 100u);
  }
  ASSERT_EQ(last, Outcome::kComplete);
  EXPECT_EQ(text(assembler.take_message()), std::string(80, 'g'));
  EXPECT_EQ(assembler.evicted(), 1u);
  EXPECT_EQ(assembler.add(kA, "g", stalled[2]), Outcome::kDropped);
  EXPECT_EQ(assembler.pending(), 0u);
  EXPECT_EQ(assembler.held(), 0u);
}

// Storage is counted as allocated, and grows by doubling only up to its message's size: three
// messages of 6, 6 and 4 bytes in 1-byte pieces fill a bound of 16 exactly (doubling past 6
// would make it 20), and all three are delivered.
TEST(MessagePieces, StorageGrowsNoFurtherThanItsMessageAndIsCountedAsAllocated) {
  PieceAssembler assembler(16);
  const rtotem_member senders[] = {kA, kB, {5, 500}};
  const std::vector<std::string> messages{"aaaaaa", "bbbbbb", "cccc"};
  std::vector<std::vector<Bytes>> pieces;
  for (const std::string& m : messages) pieces.push_back(split(m, 1));
  std::vector<std::string> delivered;
  for (std::size_t i = 0; i < 6; ++i) {
    for (std::size_t s = 0; s < 3; ++s) {
      if (i >= pieces[s].size()) continue;
      if (assembler.add(senders[s], "g", pieces[s][i]) == Outcome::kComplete)
        delivered.push_back(text(assembler.take_message()));
      EXPECT_LE(assembler.held(), 16u);
    }
  }
  EXPECT_EQ(delivered, (std::vector<std::string>{"cccc", "aaaaaa", "bbbbbb"}));
  EXPECT_EQ(assembler.evicted(), 0u);
  EXPECT_EQ(assembler.held(), 0u);
}

// A message larger than the bound alone is dropped at its first piece; it evicts no other.
TEST(MessagePieces, AMessageLargerThanTheBoundIsDroppedAndEvictsNoOther) {
  PieceAssembler assembler(16);
  const auto small = split("small", 2);
  EXPECT_EQ(assembler.add(kA, "g", small[0]), Outcome::kPending);
  const auto large = split(std::string(20, 'L'), 8);
  for (const Bytes& piece : large) EXPECT_EQ(assembler.add(kB, "g", piece), Outcome::kDropped);
  EXPECT_EQ(assembler.evicted(), 1u);
  EXPECT_EQ(assembler.add(kA, "g", small[1]), Outcome::kPending);
  ASSERT_EQ(assembler.add(kA, "g", small[2]), Outcome::kComplete);
  EXPECT_EQ(text(assembler.take_message()), "small");
}

TEST(MessagePieces, PiecesThatDoNotFitTheirMessageAreDroppedWithIt) {
  const auto bytes = [](std::initializer_list<int> v) {
    Bytes out;
    for (int b : v) out.push_back(static_cast<std::byte>(b));
    return out;
  };
  PieceAssembler assembler;
  EXPECT_EQ(assembler.add(kA, "g", bytes({1, 0, 0})), Outcome::kDropped);                    // header cut short
  EXPECT_EQ(assembler.add(kA, "g", bytes({3, 0, 0, 0, 4, 'x'})), Outcome::kDropped);         // an unknown flag
  EXPECT_EQ(assembler.add(kA, "g", bytes({1, 0xff, 0xff, 0xff, 0xff})), Outcome::kDropped);  // above RTOTEM_MESSAGE_MAX
  EXPECT_EQ(assembler.add(kA, "g", bytes({1, 0, 0, 0, 4, 'a', 'b'})), Outcome::kPending);
  EXPECT_EQ(assembler.add(kA, "g", bytes({0, 0, 0, 0, 5, 'c'})), Outcome::kDropped);  // another message's size
  EXPECT_EQ(assembler.pending(), 0u);
  EXPECT_EQ(assembler.add(kA, "g", bytes({1, 0, 0, 0, 4, 'a', 'b'})), Outcome::kPending);
  EXPECT_EQ(assembler.add(kA, "g", bytes({0, 0, 0, 0, 4, 'c', 'd', 'e'})), Outcome::kDropped);  // past its size
  EXPECT_EQ(assembler.pending(), 0u);
  EXPECT_EQ(assembler.dropped(), 5u);
}

}  // namespace
}  // namespace rtotem::client
