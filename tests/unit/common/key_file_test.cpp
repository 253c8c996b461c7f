// The key file: written whole with mode 0400, never over an existing key unless forced, and read
// back only when it is a key or a Corosync authkey and nobody else can access it.
#include "src/common/key_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rtotem {
namespace {

struct KeyFileTest : ::testing::Test {
  std::string dir;
  std::string path;
  void SetUp() override {
    char name[] = "/tmp/rtotem-keyfile-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir = name;
    path = dir + "/authkey";
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::vector<std::byte> bytes_of(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> out(chars.size());
    for (std::size_t i = 0; i < chars.size(); ++i) out[i] = std::byte(chars[i]);
    return out;
  }
  // A file of `bytes` (`size` of 'k' when empty), made anew: an earlier 0400 one is not writable.
  void write_raw(std::size_t size, mode_t mode, const std::string& bytes = "") {
    std::filesystem::remove(path);
    std::ofstream(path, std::ios::binary) << (bytes.empty() ? std::string(size, 'k') : bytes);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  }
  std::string read_error() {
    auto key = read_key_file(path);
    return key ? "<ok>" : key.error().message();
  }
};

TEST_F(KeyFileTest, AWrittenKeyIsModeFourHundredAndReadsBackTheSameBytes) {
  ASSERT_TRUE(write_key_file(path, false).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  EXPECT_EQ(static_cast<std::size_t>(st.st_size), transport::kClusterKeySize);
  auto key = read_key_file(path);
  ASSERT_TRUE(key.ok()) << key.error().message();
  const auto on_disk = bytes_of(path);
  ASSERT_EQ(on_disk.size(), transport::kClusterKeySize);
  EXPECT_TRUE(std::equal(on_disk.begin(), on_disk.end(), key->bytes().begin()));
  // Nothing left beside it: the temp file was linked into place, then removed.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
}

TEST_F(KeyFileTest, AnExistingFileIsNeverReplacedWithoutForce) {
  ASSERT_TRUE(write_key_file(path, false).ok());
  const auto first = bytes_of(path);
  auto again = write_key_file(path, false);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message(),
            path + " exists: not replacing a cluster key (--force does; then every node needs the new one)");
  EXPECT_EQ(bytes_of(path), first);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
}

TEST_F(KeyFileTest, ForceReplacesTheKeyWithAFreshOne) {
  ASSERT_TRUE(write_key_file(path, false).ok());
  const auto first = bytes_of(path);
  ASSERT_TRUE(write_key_file(path, true).ok());
  const auto second = bytes_of(path);
  ASSERT_EQ(second.size(), transport::kClusterKeySize);
  EXPECT_NE(second, first);  // 2^-256 to fail by chance
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
}

// corosync-keygen's sizes, 128 to 4096 bytes (256 by default): the key is derived from the file's
// bytes, so the same file gives the same key everywhere, and another file another key.
TEST_F(KeyFileTest, ACorosyncAuthkeyOfAnySizeCorosyncTakesGivesTheKeyDerivedFromIt) {
  for (std::size_t size : {128, 256, 4096}) {
    write_raw(size, 0400);
    auto key = read_key_file(path);
    ASSERT_TRUE(key.ok()) << size << ": " << key.error().message();
    const std::vector<std::byte> file = bytes_of(path);
    const auto derived = transport::ClusterKey::derive(file);
    ASSERT_TRUE(derived.ok());
    EXPECT_TRUE(std::ranges::equal(key->bytes(), derived->bytes())) << size;
    EXPECT_FALSE(std::ranges::equal(key->bytes(), std::span(file).first(32))) << "not the file's first bytes";
  }
  write_raw(256, 0400);
  const auto one = read_key_file(path);
  write_raw(256, 0400, std::string(255, 'k') + 'j');
  const auto other = read_key_file(path);
  ASSERT_TRUE(one.ok() && other.ok());
  EXPECT_FALSE(std::ranges::equal(one->bytes(), other->bytes()));
}

TEST_F(KeyFileTest, AMissingDirectoryIsAnErrorThatNamesThePath) {
  auto written = write_key_file(dir + "/no/such/authkey", false);
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message().find(dir + "/no/such/authkey"), std::string::npos) << written.error().message();
}

TEST_F(KeyFileTest, ReadRefusesWhatIsNotAPrivateKeyOfTheRightSize) {
  EXPECT_EQ(read_error(),
            "key file " + path + ": does not exist (make one with rtotem-keygen and copy it to every node)");
  write_raw(transport::kClusterKeySize, 0644);
  EXPECT_EQ(read_error(), "key file " + path +
                              ": permissions 0644 are too open: a cluster key must not be accessible "
                              "by group or others (chmod 0400 " +
                              path + ")");
  ASSERT_EQ(::chmod(path.c_str(), 0440), 0);
  EXPECT_NE(read_error().find("permissions 0440 are too open"), std::string::npos);
  ASSERT_EQ(::chmod(path.c_str(), 0402), 0);
  EXPECT_NE(read_error().find("permissions 0402 are too open"), std::string::npos);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(read_error(), "<ok>");  // the owner may write it: only others matter
  for (std::size_t size : {31, 33, 64, 127, 4097}) {
    write_raw(size, 0400);
    EXPECT_EQ(read_error(), "key file " + path + ": " + std::to_string(size) +
                                " bytes; a cluster key is 32 bytes (rtotem-keygen's) or a Corosync authkey of 128 "
                                "to 4096 bytes (make one with rtotem-keygen and copy it to every node)");
  }
  EXPECT_EQ(read_key_file(dir).ok(), false);  // a directory
}

}  // namespace
}  // namespace rtotem
