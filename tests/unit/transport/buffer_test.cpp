// Send pool, receive ring and references: sharing without copying, return on last release,
// re-post of receive buffers to their own ring, exhaustion as back-pressure.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "transport/buffer_arena.hpp"
#include "transport/recv_ring.hpp"
#include "transport/send_pool.hpp"

namespace rtotem::transport {
namespace {

constexpr std::uint32_t kSlot = 256;
constexpr std::uint32_t kCount = 8;

WireHeader header_of(NodeId sender) {
  WireHeader header;
  header.cluster_id = 42;
  header.sender = sender;
  return header;
}

struct Pools {
  BufferArena arena = std::move(BufferArena::map(2 * kCount * kSlot).value());
  SendPool send{arena.carve(kCount * kSlot), kCount, kSlot};
  SocketRecvRing ring{arena.carve(kCount * kSlot), kCount, kSlot};
};

TEST(SendPool, HandsOutEveryBufferOnceThenReportsExhaustion) {
  Pools pools;
  std::vector<SendBufferRef> held(kCount);
  for (auto& ref : held) ASSERT_EQ(pools.send.acquire(header_of(1), ref), Status::kOk);
  for (std::size_t i = 0; i < held.size(); ++i)
    for (std::size_t j = i + 1; j < held.size(); ++j) EXPECT_NE(held[i].get(), held[j].get());

  SendBufferRef extra;
  EXPECT_EQ(pools.send.acquire(header_of(1), extra), Status::kPoolExhausted);
  EXPECT_FALSE(extra);
  EXPECT_EQ(pools.send.exhausted_count(), 1u);
  EXPECT_EQ(pools.send.available(), 0u);

  held.pop_back();  // one release is enough to go on
  EXPECT_EQ(pools.send.acquire(header_of(1), extra), Status::kOk);
}

TEST(SendPool, BufferReturnsWhenTheLastShareDrops) {
  Pools pools;
  SendBufferRef mine;
  ASSERT_EQ(pools.send.acquire(header_of(1), mine), Status::kOk);
  std::memcpy(mine->writable_payload().data(), "hello", 5);
  mine->set_payload_size(5);

  SendBufferRef retransmit_queue = mine;  // shared, not copied
  SendBufferRef in_flight = mine;
  EXPECT_EQ(mine->refs(), 3u);
  EXPECT_EQ(retransmit_queue->payload().data(), mine->payload().data());
  EXPECT_EQ(pools.send.available(), kCount - 1);

  mine.reset();
  in_flight.reset();
  EXPECT_EQ(pools.send.available(), kCount - 1);  // the retransmit queue still holds it
  EXPECT_EQ(std::memcmp(retransmit_queue->payload().data(), "hello", 5), 0);
  retransmit_queue.reset();
  EXPECT_EQ(pools.send.available(), kCount);
}

TEST(SendPool, StampsTheHeaderAndTracksThePayloadLength) {
  Pools pools;
  SendBufferRef buffer;
  ASSERT_EQ(pools.send.acquire(header_of(7), buffer), Status::kOk);
  EXPECT_EQ(buffer->payload().size(), 0u);
  EXPECT_EQ(buffer->payload_capacity(), kSlot - kWireHeaderSize);
  buffer->set_payload_size(100);
  WireHeader decoded;
  ASSERT_EQ(decode_header(buffer->wire(), 42, decoded), HeaderCheck::kOk);
  EXPECT_EQ(decoded.sender, 7u);
  EXPECT_EQ(decoded.payload_len, 100u);
  EXPECT_EQ(buffer->wire().size(), kWireHeaderSize + 100);
}

TEST(SendPoolDeathTest, WritingASharedBufferIsABug) {
  Pools pools;
  SendBufferRef buffer;
  ASSERT_EQ(pools.send.acquire(header_of(1), buffer), Status::kOk);
  SendBufferRef on_the_wire = buffer;
  EXPECT_DEATH(buffer->writable_payload(), "refs\\(\\) == 1");
  EXPECT_DEATH(buffer->set_payload_size(1), "refs\\(\\) == 1");
}

TEST(SendPoolDeathTest, PayloadLargerThanTheSlotIsABug) {
  Pools pools;
  SendBufferRef buffer;
  ASSERT_EQ(pools.send.acquire(header_of(1), buffer), Status::kOk);
  EXPECT_DEATH(buffer->set_payload_size(kSlot), "payload_capacity");
}

TEST(SocketRecvRing, ReleasedBufferIsRepostedToItsRingNotToTheSendPool) {
  Pools pools;
  std::array<RecvBuffer*, 4> posted{};
  ASSERT_EQ(pools.ring.peek_posted(posted), 4u);
  RecvBufferRef received = pools.ring.take(*posted[0]);
  EXPECT_EQ(pools.ring.posted_count(), kCount - 1);
  EXPECT_EQ(received->kind(), BufferKind::kRecv);
  EXPECT_EQ(&received->owner(), &pools.ring);

  BufferRef held_as_generic = received;  // e.g. the protocol's receive window keeps it
  received.reset();
  EXPECT_EQ(pools.ring.posted_count(), kCount - 1);
  held_as_generic.reset();
  EXPECT_EQ(pools.ring.posted_count(), kCount);
  EXPECT_EQ(pools.ring.reposts(), 1u);
  EXPECT_EQ(pools.send.available(), kCount);  // the send pool never saw it
}

TEST(SocketRecvRing, HandsOutTheStackTopFirstAndRunsDry) {
  Pools pools;
  std::array<RecvBuffer*, kCount + 2> posted{};
  ASSERT_EQ(pools.ring.peek_posted(posted), kCount);
  std::vector<RecvBufferRef> taken;
  for (std::uint32_t i = 0; i < kCount; ++i) taken.push_back(pools.ring.take(*posted[i]));
  EXPECT_EQ(pools.ring.peek_posted(posted), 0u);

  RecvBuffer* last_released = taken.back().get();
  taken.pop_back();
  ASSERT_EQ(pools.ring.peek_posted(posted), 1u);
  EXPECT_EQ(posted[0], last_released);  // warm in cache: reused first
}

TEST(SocketRecvRingDeathTest, TakingOutOfOrderIsABug) {
  Pools pools;
  std::array<RecvBuffer*, 2> posted{};
  ASSERT_EQ(pools.ring.peek_posted(posted), 2u);
  EXPECT_DEATH((void)pools.ring.take(*posted[1]), "posted_");
}

TEST(BufferRefs, ASendBufferHeldAsGenericCanBeSharedAgainAsASendBuffer) {
  Pools pools;
  SendBufferRef sent;
  ASSERT_EQ(pools.send.acquire(header_of(1), sent), Status::kOk);
  BufferRef stored = sent;  // e.g. the protocol's sort queue
  SendBufferRef again = as_send_buffer(stored);
  EXPECT_EQ(again.get(), sent.get());
  EXPECT_EQ(sent->refs(), 3u);

  std::array<RecvBuffer*, 1> posted{};
  ASSERT_EQ(pools.ring.peek_posted(posted), 1u);
  BufferRef received = pools.ring.take(*posted[0]);
  EXPECT_FALSE(as_send_buffer(received));  // a receive buffer never becomes a send buffer
}

TEST(BufferArena, CarvesAlignedNonOverlappingSlices) {
  auto arena = BufferArena::map(4096);
  ASSERT_TRUE(arena.ok());
  auto a = arena->carve(100);
  auto b = arena->carve(100);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % kBufferAlign, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % kBufferAlign, 0u);
  EXPECT_GE(b.data(), a.data() + a.size());
  EXPECT_LE(b.data() + b.size(), arena->region().data() + arena->region().size());
}

TEST(BufferArena, RefusesZeroBytesWithAClearError) {
  auto arena = BufferArena::map(0);
  ASSERT_FALSE(arena.ok());
  EXPECT_NE(arena.error().message().find("zero bytes"), std::string::npos);
}

}  // namespace
}  // namespace rtotem::transport
