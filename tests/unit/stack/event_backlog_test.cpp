// EventBacklog: events come out whole and in order however pushes and pops interleave (wrapping
// and growing on the way), the memory a push takes is known before it is taken, and a backlog
// that keeps being used stops growing.
#include "src/stack/event_backlog.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <deque>
#include <random>
#include <vector>

namespace rtotem::stack {
namespace {

using Bytes = std::vector<std::byte>;

Bytes event(std::size_t size, unsigned seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::byte>(seed * 31 + i);
  return out;
}

void push(EventBacklog& backlog, const Bytes& e) {
  // Two parts, as IpcServer hands them (header and body, then a payload).
  const std::size_t split = e.size() / 3;
  const iovec iov[2] = {{const_cast<std::byte*>(e.data()), split},
                        {const_cast<std::byte*>(e.data()) + split, e.size() - split}};
  backlog.push(iov, e.size());
}

void expect_front(const EventBacklog& backlog, const Bytes& e) {
  const auto front = backlog.front();
  ASSERT_EQ(front.size(), e.size());
  EXPECT_TRUE(std::equal(front.begin(), front.end(), e.begin()));
}

TEST(EventBacklog, KeepsOrderAndBytesThroughWrapsAndGrowth) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    EventBacklog backlog;
    std::deque<Bytes> model;
    std::size_t model_bytes = 0;
    for (unsigned step = 0; step < 5000; ++step) {
      // Sizes from empty to larger than the first storage, pushes slightly more likely.
      const bool do_push = model.empty() || rng() % 100 < 55;
      if (do_push) {
        const std::size_t size = rng() % 8 == 0 ? rng() % 100'000 : rng() % 3000;
        model.push_back(event(size, step));
        model_bytes += size;
        const std::size_t foreseen = backlog.capacity_after_push(size);
        push(backlog, model.back());
        ASSERT_EQ(backlog.capacity(), foreseen) << "seed " << seed << " step " << step;
      } else {
        expect_front(backlog, model.front());
        model_bytes -= model.front().size();
        model.pop_front();
        backlog.pop();
      }
      ASSERT_EQ(backlog.count(), model.size()) << "seed " << seed << " step " << step;
      ASSERT_EQ(backlog.bytes(), model_bytes) << "seed " << seed << " step " << step;
      if (!model.empty()) expect_front(backlog, model.front());
    }
  }
}

TEST(EventBacklog, SteadyUseStopsGrowing) {
  EventBacklog backlog;
  const Bytes e = event(20'000, 7);
  std::size_t capacity = 0;
  for (int round = 0; round < 1000; ++round) {
    // A client that is always about ten events behind.
    while (backlog.count() < 10) push(backlog, e);
    backlog.pop();
    if (round == 100) capacity = backlog.capacity();
  }
  EXPECT_GT(capacity, 0u);
  EXPECT_EQ(backlog.capacity(), capacity);  // no reallocation once warmed up
  EXPECT_LE(capacity, 4 * 10 * (e.size() + 8));
}

// Events held by reference come out whole and in order among copied ones, count in bytes() as
// their size, cost a record of the ring, and each block goes with its last reference: popped,
// cleared, or the backlog destroyed.
TEST(EventBacklog, EventsHeldByReferenceKeepOrderAndAreReleased) {
  std::size_t live = 0;
  {
    EventBacklog a, b;
    std::deque<Bytes> model;
    std::mt19937 rng(11);
    for (unsigned step = 0; step < 3000; ++step) {
      const Bytes e = event(rng() % 20'000, step);
      if (rng() % 2 == 0) {
        const iovec iov[1] = {{const_cast<std::byte*>(e.data()), e.size()}};
        SharedEvent::Handle shared = SharedEvent::copy_of(iov, e.size(), live);
        a.push_shared(*shared.get());
        b.push_shared(*shared.get());
      } else {
        push(a, e);
        push(b, e);
      }
      model.push_back(e);
      if (rng() % 3 == 0) {
        expect_front(a, model.front());
        expect_front(b, model.front());
        a.pop();
        b.pop();
        model.pop_front();
      }
    }
    std::size_t bytes = 0;
    for (const Bytes& e : model) bytes += e.size();
    EXPECT_EQ(a.bytes(), bytes);
    EXPECT_GT(live, 0u);
    a.clear();  // b still holds every block
    EXPECT_GT(live, 0u);
    for (; !model.empty(); model.pop_front(), b.pop()) expect_front(b, model.front());
    EXPECT_EQ(live, 0u) << "a block outlived its last reference";
    const Bytes e = event(5000, 1);
    const iovec iov[1] = {{const_cast<std::byte*>(e.data()), e.size()}};
    SharedEvent::Handle shared = SharedEvent::copy_of(iov, e.size(), live);
    const std::size_t record = b.capacity_after_push_shared();
    b.push_shared(*shared.get());
    EXPECT_EQ(b.capacity(), record);
  }
  EXPECT_EQ(live, 0u) << "the destroyed backlog kept a block";
}

TEST(EventBacklog, ClearGivesTheStorageBack) {
  EventBacklog backlog;
  push(backlog, event(1000, 1));
  push(backlog, Bytes{});  // an empty event is still one event
  EXPECT_EQ(backlog.count(), 2u);
  backlog.clear();
  EXPECT_TRUE(backlog.empty());
  EXPECT_EQ(backlog.bytes(), 0u);
  EXPECT_EQ(backlog.capacity(), 0u);
  push(backlog, event(10, 2));
  expect_front(backlog, event(10, 2));
}

}  // namespace
}  // namespace rtotem::stack
