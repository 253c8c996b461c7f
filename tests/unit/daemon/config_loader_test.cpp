// ConfigLoader on a real libqb loop: a load's outcome comes back on the loop, on a later turn,
// and the loader is busy until then; a loader that goes with a load under way drops its result.
#include "src/daemon/config_loader.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>

namespace rtotem::daemon {
namespace {

class ConfigLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = EventLoop::create();
    ASSERT_TRUE(created) << created.error().message();
    loop_ = std::move(*created);
    char templ[] = "/tmp/rtotem-loader-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Runs the loop until a callback stops it, or 10 s have passed (a safety net: a load takes
  // milliseconds).
  void run() {
    LoopTimer stop(*loop_, [this] { loop_->stop(); });
    stop.arm(10'000'000'000);
    loop_->run();
  }
  // A loader's `done` that keeps the outcome and stops the loop.
  ConfigLoader::Done keep(std::optional<Result<config::DaemonConfig>>& got) {
    return [this, &got](Result<config::DaemonConfig> file) {
      got.emplace(std::move(file));
      loop_->stop();
    };
  }
  std::string write_config(const std::string& cluster) {
    const std::string path = dir_ + "/rtotem.conf";
    std::ofstream(path) << "totem {\n  version: 2\n  cluster_name: " << cluster
                        << "\n  transport: udpu\n}\nnodelist {\n  node {\n    nodeid: 1\n    ring0_addr: 127.0.0.1\n"
                           "  }\n}\n";
    return path;
  }

  std::unique_ptr<EventLoop> loop_;
  std::string dir_;
};

TEST_F(ConfigLoaderTest, TheOutcomeComesBackOnTheLoopAndTheLoaderIsBusyUntilThen) {
  auto loader = ConfigLoader::create(*loop_);
  ASSERT_TRUE(loader) << loader.error().message();
  std::optional<Result<config::DaemonConfig>> got;
  ASSERT_TRUE((*loader)->load(write_config("east"), keep(got)));
  EXPECT_TRUE((*loader)->busy());
  EXPECT_FALSE(got) << "done before the loop ran";
  run();
  ASSERT_TRUE(got);
  EXPECT_FALSE((*loader)->busy());
  ASSERT_TRUE(*got) << got->error().message();
  EXPECT_EQ((*got)->cluster_name, "east");

  got.reset();
  ASSERT_TRUE((*loader)->load(dir_ + "/missing.conf", keep(got)));
  run();
  ASSERT_TRUE(got);
  ASSERT_FALSE(*got);
  EXPECT_NE(got->error().message().find("missing.conf"), std::string::npos) << got->error().message();
}

TEST_F(ConfigLoaderTest, ALoaderThatGoesWithALoadUnderWayDropsItsResult) {
  std::optional<Result<config::DaemonConfig>> got;
  {
    auto loader = ConfigLoader::create(*loop_);
    ASSERT_TRUE(loader) << loader.error().message();
    ASSERT_TRUE((*loader)->load(write_config("west"), keep(got)));
  }
  LoopTimer stop(*loop_, [this] { loop_->stop(); });
  stop.arm(300'000'000);  // the load has long ended by then, and found no loader
  loop_->run();
  EXPECT_FALSE(got);
}

}  // namespace
}  // namespace rtotem::daemon
