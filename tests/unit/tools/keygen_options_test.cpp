// rtotem-keygen's arguments: the path, --force, --help, and clear refusals.
#include "src/tools/keygen_options.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/common/key_file.hpp"

namespace rtotem::tools {
namespace {

Result<KeygenOptions> parse(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return parse_keygen_options(argv);
}

std::string error_of(std::vector<std::string> words) {
  auto options = parse(std::move(words));
  return options ? "<ok>" : options.error().message();
}

TEST(KeygenOptions, DefaultsToTheDaemonsDefaultKeyFileWithoutForce) {
  auto options = parse({});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->path, kDefaultKeyFile);
  EXPECT_FALSE(options->force);
  EXPECT_FALSE(options->help);
}

TEST(KeygenOptions, ThePathComesFromShortLongOrEqualsForm) {
  EXPECT_EQ(parse({"-k", "/tmp/a"})->path, "/tmp/a");
  EXPECT_EQ(parse({"--key", "/tmp/b", "--force"})->path, "/tmp/b");
  EXPECT_TRUE(parse({"--key", "/tmp/b", "--force"})->force);
  EXPECT_EQ(parse({"--key=/tmp/c"})->path, "/tmp/c");
  EXPECT_TRUE(parse({"--help"})->help);
  EXPECT_TRUE(parse({"-h"})->help);
}

TEST(KeygenOptions, BadArgumentsAreNamed) {
  EXPECT_EQ(error_of({"-k"}), "-k: missing value");
  EXPECT_EQ(error_of({"--key="}), "--key: empty value");
  EXPECT_EQ(error_of({"--key", ""}), "--key: empty value");
  EXPECT_EQ(error_of({"--force=yes"}), "--force: takes no value");
  EXPECT_EQ(error_of({"--forse"}), "unknown option '--forse'");
  EXPECT_EQ(error_of({"/tmp/key"}), "unexpected argument '/tmp/key'");
}

TEST(KeygenOptions, HelpReadsLikeAManPage) {
  const std::string usage = keygen_usage();
  for (const char* part : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "--force", "-k, --key PATH",
                           "0400", kDefaultKeyFile})
    EXPECT_NE(usage.find(part), std::string::npos) << part;
}

}  // namespace
}  // namespace rtotem::tools
