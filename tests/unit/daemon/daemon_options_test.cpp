// rtotemd's arguments: its flags, its values (none may be empty), the node id's range, and
// clear refusals.
#include "src/daemon/daemon_options.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "src/common/corosync_files.hpp"

namespace rtotem::daemon {
namespace {

Result<DaemonOptions> parse(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return parse_daemon_options(argv);
}

std::string error_of(std::vector<std::string> words) {
  auto options = parse(std::move(words));
  return options ? "<ok>" : options.error().message();
}

TEST(DaemonOptions, DefaultsToTheInstalledConfigAndStateDir) {
  auto options = parse({});
  ASSERT_TRUE(options) << options.error().message();
  // Corosync's file only where rtotem's own is absent, as on a node moved from Corosync
  // (DaemonFiles.WithoutItsOwnFilesRtotemdReadsCorosyncs makes such a host).
  const bool corosyncs =
      !std::filesystem::exists(RTOTEM_DEFAULT_CONFIG) && std::filesystem::exists(std::string(kCorosyncConfigFile));
  EXPECT_EQ(options->config_path, corosyncs ? std::string(kCorosyncConfigFile) : RTOTEM_DEFAULT_CONFIG);
  EXPECT_EQ(options->state_dir, RTOTEM_DEFAULT_STATE_DIR);
  EXPECT_FALSE(options->foreground || options->check_only || options->version || options->help);
  EXPECT_FALSE(options->nodeid);
  EXPECT_EQ(options->ipc_name, "");
}

TEST(DaemonOptions, ReadsEveryFlagAndValue) {
  auto options = parse({"-f", "-t", "-c", "/etc/x.conf", "--nodeid", "3", "--ipc-name", "n1", "--state-dir=/tmp/s"});
  ASSERT_TRUE(options) << options.error().message();
  EXPECT_TRUE(options->foreground);
  EXPECT_TRUE(options->check_only);
  EXPECT_EQ(options->config_path, "/etc/x.conf");
  EXPECT_EQ(options->nodeid, 3u);
  EXPECT_EQ(options->ipc_name, "n1");
  EXPECT_EQ(options->state_dir, "/tmp/s");
  EXPECT_TRUE(parse({"-v"})->version);
  EXPECT_TRUE(parse({"--version"})->version);
  EXPECT_TRUE(parse({"-h"})->help);
  EXPECT_TRUE(parse({"--help"})->help);
}

TEST(DaemonOptions, MakesThePathsAbsolute) {
  auto options = parse({"-c", "rtotem.conf", "--state-dir", "state"});
  ASSERT_TRUE(options) << options.error().message();
  EXPECT_TRUE(options->config_path.starts_with('/')) << options->config_path;
  EXPECT_TRUE(options->config_path.ends_with("/rtotem.conf")) << options->config_path;
  EXPECT_TRUE(options->state_dir.starts_with('/')) << options->state_dir;
}

TEST(DaemonOptions, TheNodeIdIsANumberFromOne) {
  EXPECT_EQ(parse({"--nodeid", "4294967295"})->nodeid, 4294967295u);
  EXPECT_EQ(error_of({"--nodeid", "0"}), "--nodeid: 0 is out of range [1, 4294967295]");
  EXPECT_EQ(error_of({"--nodeid", "4294967296"}), "--nodeid: 4294967296 is out of range [1, 4294967295]");
  EXPECT_EQ(error_of({"--nodeid", "two"}), "--nodeid: 'two' is not a number");
}

TEST(DaemonOptions, BadArgumentsAreNamed) {
  EXPECT_EQ(error_of({"-c"}), "-c: missing value");
  EXPECT_EQ(error_of({"-f", "--state-dir"}), "--state-dir: missing value");
  EXPECT_EQ(error_of({"-c", ""}), "-c: empty value");
  EXPECT_EQ(error_of({"--ipc-name="}), "--ipc-name: empty value");
  EXPECT_EQ(error_of({"--nodeid", ""}), "--nodeid: empty value");
  EXPECT_EQ(error_of({"--foreground"}), "unknown option '--foreground'");
  EXPECT_EQ(error_of({"-x"}), "unknown option '-x'");
  EXPECT_EQ(error_of({"/etc/rtotem.conf"}), "unexpected argument '/etc/rtotem.conf'");
}

}  // namespace
}  // namespace rtotem::daemon
