// SortQueue: aru as messages arrive in any order, duplicates and the window bound, the holes a
// token's rtr list asks for, and buffers going home when messages are discarded.
#include "membership/sort_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "transport/buffer_arena.hpp"
#include "transport/send_pool.hpp"

namespace rtotem::membership {
namespace {

using transport::BufferArena;
using transport::SendBufferRef;
using transport::SendPool;

constexpr std::uint32_t kSlot = 128;
constexpr std::uint32_t kBuffers = 64;

struct SortQueueTest : ::testing::Test {
  BufferArena arena = std::move(BufferArena::map(kSlot * kBuffers).value());
  SendPool pool{arena.region(), kBuffers, kSlot};
  SortQueue queue{16};

  StoredMessage message(NodeId sender = 2) {
    SendBufferRef buffer;
    EXPECT_EQ(pool.acquire(transport::WireHeader{}, buffer), Status::kOk);
    StoredMessage m;
    m.packet = buffer->wire();
    m.payload = buffer->payload();
    m.sender = sender;
    m.hold = std::move(buffer);
    return m;
  }
  std::vector<Seq> missing(Seq through, std::size_t max = 100) {
    std::vector<Seq> out;
    queue.for_each_missing(through, max, [&](Seq s) { out.push_back(s); });
    return out;
  }
};

TEST_F(SortQueueTest, InOrderMessagesAdvanceAru) {
  for (Seq s = 1; s <= 5; ++s) EXPECT_EQ(queue.insert(s, message()), SortQueue::Insert::kStored);
  EXPECT_EQ(queue.aru(), 5u);
  EXPECT_EQ(queue.high_seq(), 5u);
  EXPECT_EQ(queue.size(), 5u);
  EXPECT_EQ(queue.find(3)->sender, 2u);
}

TEST_F(SortQueueTest, AHoleHoldsAruUntilItIsFilled) {
  queue.insert(1, message());
  queue.insert(3, message());
  queue.insert(4, message());
  EXPECT_EQ(queue.aru(), 1u);
  EXPECT_EQ(queue.high_seq(), 4u);
  EXPECT_FALSE(queue.holds(2));
  queue.insert(2, message());
  EXPECT_EQ(queue.aru(), 4u);
}

TEST_F(SortQueueTest, DuplicatesAreRecognisedAndKeepTheFirstCopy) {
  queue.insert(1, message(2));
  EXPECT_EQ(queue.insert(1, message(3)), SortQueue::Insert::kDuplicate);
  EXPECT_EQ(queue.find(1)->sender, 2u);
  queue.discard_through(1);
  EXPECT_EQ(queue.insert(1, message()), SortQueue::Insert::kDuplicate);  // already discarded
  EXPECT_EQ(pool.available(), kBuffers);                                 // the refused copies went home at once
}

TEST_F(SortQueueTest, MessagesBeyondTheWindowAreDroppedNotStored) {
  EXPECT_EQ(queue.insert(16, message()), SortQueue::Insert::kStored);
  EXPECT_EQ(queue.insert(17, message()), SortQueue::Insert::kOutOfWindow);
  EXPECT_EQ(queue.high_seq(), 16u);
  EXPECT_EQ(pool.available(), kBuffers - 1);
}

TEST_F(SortQueueTest, MissingListsTheHolesLowestFirstWithinABound) {
  queue.insert(2, message());
  queue.insert(5, message());
  EXPECT_EQ(missing(6), (std::vector<Seq>{1, 3, 4, 6}));
  EXPECT_EQ(missing(6, 2), (std::vector<Seq>{1, 3}));
  EXPECT_EQ(missing(1), (std::vector<Seq>{1}));
}

TEST_F(SortQueueTest, DiscardReleasesBuffersToTheirPool) {
  for (Seq s = 1; s <= 8; ++s) queue.insert(s, message());
  EXPECT_EQ(pool.available(), kBuffers - 8);
  queue.discard_through(5);
  EXPECT_EQ(queue.base(), 5u);
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(pool.available(), kBuffers - 3);
  EXPECT_EQ(queue.find(5), nullptr);
  EXPECT_NE(queue.find(6), nullptr);
}

TEST_F(SortQueueTest, ResetForANewRingReleasesEverything) {
  queue.insert(1, message());
  queue.insert(3, message());
  queue.reset(0);
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_EQ(queue.aru(), 0u);
  EXPECT_EQ(queue.high_seq(), 0u);
  EXPECT_EQ(pool.available(), kBuffers);
  EXPECT_EQ(queue.insert(1, message()), SortQueue::Insert::kStored);
}

TEST_F(SortQueueTest, SlotsAreReusedAcrossManyWindows) {
  for (Seq s = 1; s <= 1000; ++s) {
    ASSERT_EQ(queue.insert(s, message(static_cast<NodeId>(s))), SortQueue::Insert::kStored);
    if (s % 7 == 0) queue.discard_through(s - 3);
  }
  EXPECT_EQ(queue.aru(), 1000u);
  EXPECT_EQ(queue.find(999)->sender, 999u);
  queue.discard_through(1000);
  EXPECT_EQ(pool.available(), kBuffers);
}

TEST_F(SortQueueTest, DiscardingPastAruIsABug) {
  queue.insert(2, message());
  EXPECT_DEATH(queue.discard_through(2), "seq <= aru_");
}

}  // namespace
}  // namespace rtotem::membership
