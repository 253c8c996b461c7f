// The send window: buffers held until the signalled completion that covers them; wrap-around;
// inline sends hold nothing; a full window is back-pressure.
#include <gtest/gtest.h>

#include <vector>

#include "transport/buffer_arena.hpp"
#include "transport/rdma/rdma_send_window.hpp"
#include "transport/send_pool.hpp"

namespace rtotem::transport {
namespace {

constexpr std::uint32_t kSlot = 256;
constexpr std::uint32_t kCount = 16;

struct Fixture {
  BufferArena arena = std::move(BufferArena::map(kCount * kSlot).value());
  SendPool pool{arena.carve(kCount * kSlot), kCount, kSlot};

  SendBufferRef buffer() {
    WireHeader header;
    header.sender = 1;
    SendBufferRef ref;
    EXPECT_EQ(pool.acquire(header, ref), Status::kOk);
    return ref;
  }
};

TEST(SendWindow, SignalledCompletionReleasesItAndEveryEarlierUnsignalledSend) {
  Fixture f;
  SendWindow window(8);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(window.push(f.buffer()), std::uint64_t(i));  // the window holds the only Ref
  EXPECT_EQ(f.pool.available(), kCount - 5);
  EXPECT_EQ(window.in_flight(), 5u);

  EXPECT_EQ(window.complete_through(2), 3u);  // wr_ids 0, 1, 2
  EXPECT_EQ(f.pool.available(), kCount - 2);
  EXPECT_EQ(window.complete_through(2), 0u);  // a stale id retires nothing
  EXPECT_EQ(window.complete_through(9), 0u);  // nor one never posted
  EXPECT_EQ(window.complete_through(4), 2u);
  EXPECT_TRUE(window.empty());
  EXPECT_EQ(f.pool.available(), kCount);
}

TEST(SendWindow, FullWindowHasNoRoomUntilACompletion) {
  Fixture f;
  SendWindow window(4);
  for (int i = 0; i < 4; ++i) (void)window.push(f.buffer());
  EXPECT_EQ(window.room(), 0u);
  EXPECT_EQ(window.complete_through(0), 1u);
  EXPECT_EQ(window.room(), 1u);
}

TEST(SendWindow, WrapsAroundItsSlots) {
  Fixture f;
  SendWindow window(4);
  for (std::uint64_t id = 0; id < 40; ++id) {
    EXPECT_EQ(window.push(f.buffer()), id);
    if (id % 3 == 2) {
      EXPECT_EQ(window.complete_through(id), 3u);
    }
  }
  EXPECT_EQ(window.in_flight(), 1u);  // id 39
  EXPECT_EQ(f.pool.available(), kCount - 1);
}

TEST(SendWindow, InlineSendsTakeASlotButHoldNoBuffer) {
  Fixture f;
  SendWindow window(4);
  (void)window.push(SendBufferRef{});
  (void)window.push(f.buffer());
  EXPECT_EQ(window.in_flight(), 2u);
  EXPECT_EQ(window.complete_through(1), 2u);
  EXPECT_EQ(f.pool.available(), kCount);
}

}  // namespace
}  // namespace rtotem::transport
