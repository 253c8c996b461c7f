// The simulator's PRNG: a fixed stream per seed (replay depends on it), unbiased ranges.
#include "base/rng.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace rtotem::transport {
namespace {

TEST(SimRng, MatchesTheReferenceStreamForASeed) {
  // xoshiro256** seeded by splitmix64(42), as published by other implementations of both.
  Rng rng(42);
  EXPECT_EQ(rng.next_u64(), 1546998764402558742u);
  EXPECT_EQ(rng.next_u64(), 6990951692964543102u);
  EXPECT_EQ(rng.next_u64(), 12544586762248559009u);
}

TEST(SimRng, SameSeedGivesTheSameStreamAndAnotherSeedAnother) {
  Rng a(7), b(7), c(8);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t x = a.next_u64();
    ASSERT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

TEST(SimRng, UniformStaysInRangeAndHitsEveryValue) {
  Rng rng(1);
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 7000; ++i) {
    const std::uint64_t x = rng.uniform(7);
    ASSERT_LT(x, 7u);
    ++seen[x];
  }
  for (int count : seen) EXPECT_GT(count, 800);  // 1000 expected each
  EXPECT_EQ(rng.uniform(1), 0u);
}

TEST(SimRng, UniformRangeIncludesBothEnds) {
  Rng rng(2);
  bool low = false, high = false;
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t x = rng.uniform_range(3, 5);
    ASSERT_GE(x, 3u);
    ASSERT_LE(x, 5u);
    low |= x == 3;
    high |= x == 5;
  }
  EXPECT_TRUE(low && high);
  EXPECT_EQ(rng.uniform_range(9, 9), 9u);
  (void)rng.uniform_range(0, std::numeric_limits<std::uint64_t>::max());  // no overflow, no assert
}

TEST(SimRng, ChanceZeroIsNeverOneIsAlwaysAndHalfIsAboutHalf) {
  Rng rng(3);
  int halves = 0;
  for (int i = 0; i < 10000; ++i) {
    ASSERT_FALSE(rng.chance(0.0));
    ASSERT_TRUE(rng.chance(1.0));
    halves += rng.chance(0.5);
  }
  EXPECT_GT(halves, 4700);
  EXPECT_LT(halves, 5300);
}

}  // namespace
}  // namespace rtotem::transport
