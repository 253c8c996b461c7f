// RingSeqFile: survives a reopen, starts at 0, refuses a damaged file instead of guessing.
#include "src/common/ring_seq_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace rtotem {
namespace {

struct RingSeqFileTest : ::testing::Test {
  std::string dir;
  void SetUp() override {
    char name[] = "/tmp/rtotem-ringseq-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir = name;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  void write_raw(const std::string& text) { std::ofstream(dir + "/ringseq") << text; }
};

TEST_F(RingSeqFileTest, AFreshDirectoryStartsAtZero) {
  auto file = RingSeqFile::in(dir);
  ASSERT_TRUE(file.ok());
  auto seq = file->load();
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 0u);
}

TEST_F(RingSeqFileTest, AStoredSeqIsWhatTheNextProcessLoads) {
  ASSERT_TRUE(RingSeqFile::in(dir)->store(41).ok());
  ASSERT_TRUE(RingSeqFile::in(dir)->store(0xfffffffffffffff0ull).ok());
  auto seq = RingSeqFile::in(dir)->load();
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 0xfffffffffffffff0ull);
  EXPECT_FALSE(std::filesystem::exists(dir + "/ringseq.tmp"));  // renamed into place
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/ringseq").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(RingSeqFileTest, ADamagedFileIsAnErrorNotZero) {
  for (const char* text : {"", "rtotem-ringseq 1\n", "rtotem-ringseq 1\n12x\n", "something else\n",
                           "rtotem-ringseq 1\n99999999999999999999999\n", "rtotem-ringseq 1\n12"}) {
    write_raw(text);
    auto seq = RingSeqFile::in(dir)->load();
    ASSERT_FALSE(seq.ok()) << "accepted '" << text << "'";
    EXPECT_NE(seq.error().message().find(dir + "/ringseq"), std::string::npos) << seq.error().message();
  }
}

TEST_F(RingSeqFileTest, AMissingOrNonDirectoryStateDirIsRefusedWithItsName) {
  auto missing = RingSeqFile::in(dir + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("/nope"), std::string::npos);
  write_raw("x");
  auto file_not_dir = RingSeqFile::in(dir + "/ringseq");
  ASSERT_FALSE(file_not_dir.ok());
  EXPECT_NE(file_not_dir.error().message().find("not a directory"), std::string::npos);
}

}  // namespace
}  // namespace rtotem
