#include "src/common/corosync_files.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rtotem {
namespace {

// rtotem's own file wins where it exists; Corosync's is read where only it exists; with neither,
// rtotem's, so that the error names the file rtotem wants.
TEST(FirstExisting, RtotemsOwnFileWinsThenCorosyncsThenRtotemsNameForTheError) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rtotem-first-existing-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string own = dir / "rtotem.conf";
  const std::string corosync = dir / "corosync.conf";
  EXPECT_EQ(first_existing({own, corosync}), own);
  std::ofstream(corosync) << "x";
  EXPECT_EQ(first_existing({own, corosync}), corosync);
  std::ofstream(own) << "x";
  EXPECT_EQ(first_existing({own, corosync}), own);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rtotem
