// The seal epoch grows across starts even when the clock goes back, and is stored before use.
#include "src/common/seal_epoch.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace rtotem {
namespace {

struct SealEpochTest : ::testing::Test {
  std::string dir;
  void SetUp() override {
    char name[] = "/tmp/rtotem-epoch-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir = name;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::uint64_t next(std::uint64_t now) {
    auto epoch = next_seal_epoch(dir, now);
    EXPECT_TRUE(epoch.ok()) << epoch.error().message();
    return epoch.ok() ? *epoch : 0;
  }
};

TEST_F(SealEpochTest, TheClockWhenItMovesOnAndOneMoreThanTheLastWhenItWentBack) {
  EXPECT_EQ(next(1'000'000), 1'000'000u);  // a fresh directory: the clock
  EXPECT_EQ(next(5'000'000), 5'000'000u);  // later: the clock again
  EXPECT_EQ(next(2'000'000), 5'000'001u);  // set back: above the last one all the same
  EXPECT_EQ(next(5'000'001), 5'000'002u);  // the same instant twice: still above
  std::ifstream in(dir + "/sealepoch");
  std::string magic, value;
  std::getline(in, magic);
  std::getline(in, value);
  EXPECT_EQ(magic, "rtotem-sealepoch 1");
  EXPECT_EQ(value, "5000002");
}

TEST_F(SealEpochTest, ADamagedFileIsRefusedNotGuessed) {
  std::ofstream(dir + "/sealepoch") << "garbage\n";
  auto epoch = next_seal_epoch(dir, 1);
  ASSERT_FALSE(epoch.ok());
  EXPECT_EQ(epoch.error().message(), dir +
                                         "/sealepoch: not an rtotem seal epoch file (remove it only if the clock "
                                         "is right: the next epoch then comes from it alone)");
}

TEST(WallClock, IsNanosecondsSinceTheEpoch) {
  EXPECT_GT(wall_clock_ns(), 1'700'000'000ull * 1'000'000'000ull);  // after November 2023
}

}  // namespace
}  // namespace rtotem
