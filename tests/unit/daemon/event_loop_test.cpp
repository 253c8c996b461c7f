// LoopTimer and LoopJob on a real libqb loop: a timer re-armed later fires once, at the later
// deadline (it is only recorded, not handed to libqb again); earlier, at the earlier one; a
// cancelled timer never fires; a job posted many times runs once per turn.
#include "src/daemon/event_loop.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace rtotem::daemon {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kMs = 1'000'000;

class EventLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = EventLoop::create();
    ASSERT_TRUE(created) << created.error().message();
    loop_ = std::move(*created);
  }
  // Runs the loop for `ms` milliseconds.
  void run_for(std::uint64_t ms) {
    LoopTimer stop(*loop_, [this] { loop_->stop(); });
    stop.arm(ms * kMs);
    loop_->run();
  }
  double ms_since(Clock::time_point start) const {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }

  std::unique_ptr<EventLoop> loop_;
};

TEST_F(EventLoopTest, ATimerReArmedLaterFiresOnceAtTheLaterDeadline) {
  const auto start = Clock::now();
  int fired = 0;
  double fired_at_ms = 0;
  LoopTimer timer(*loop_, [&] { ++fired, fired_at_ms = ms_since(start); });
  timer.arm(20 * kMs);
  timer.arm(120 * kMs);
  EXPECT_TRUE(timer.armed());
  run_for(300);
  EXPECT_EQ(fired, 1);
  EXPECT_GE(fired_at_ms, 120.0);
  EXPECT_FALSE(timer.armed());
}

TEST_F(EventLoopTest, ATimerReArmedEarlierFiresAtTheEarlierDeadline) {
  int fired = 0;
  LoopTimer timer(*loop_, [&] { ++fired; });
  timer.arm(10'000 * kMs);
  timer.arm(10 * kMs);
  run_for(200);
  EXPECT_EQ(fired, 1);
}

TEST_F(EventLoopTest, ACancelledTimerNeverFiresAndCanBeArmedAgain) {
  int fired = 0;
  LoopTimer timer(*loop_, [&] { ++fired; });
  timer.arm(10 * kMs);
  timer.cancel();
  EXPECT_FALSE(timer.armed());
  run_for(100);
  EXPECT_EQ(fired, 0);

  const auto start = Clock::now();
  double fired_at_ms = 0;
  LoopTimer again(*loop_, [&] { ++fired, fired_at_ms = ms_since(start); });
  again.arm(10 * kMs);
  again.cancel();
  again.arm(60 * kMs);  // after the cancel: the stale libqb timer must not fire it early
  run_for(200);
  EXPECT_EQ(fired, 1);
  EXPECT_GE(fired_at_ms, 60.0);
}

TEST_F(EventLoopTest, AJobPostedManyTimesRunsOncePerTurn) {
  int runs = 0;
  std::unique_ptr<LoopJob> job;
  auto created = LoopJob::create(*loop_, [&] {
    if (++runs == 1) job->post();  // posted from its own run: runs again, on a later turn
  });
  ASSERT_TRUE(created) << created.error().message();
  job = std::move(*created);
  job->post();
  job->post();
  job->post();
  run_for(100);
  EXPECT_EQ(runs, 2);
}

}  // namespace
}  // namespace rtotem::daemon
