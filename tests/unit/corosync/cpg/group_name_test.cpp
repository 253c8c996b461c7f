// CPG group names as rtotem group names: the usual name (a NUL counted at its end) is its text;
// every other name still maps, and back to the very same length and bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "src/corosync/cpg/group_name.hpp"

namespace rtotem::corosync {
namespace {

cpg_name name_of(const std::string& bytes) {
  cpg_name n{};
  n.length = static_cast<uint32_t>(bytes.size());
  std::memcpy(n.value, bytes.data(), bytes.size());
  return n;
}

std::string bytes_of(const cpg_name& n) { return std::string(n.value, n.length); }

TEST(CpgGroupName, TheUsualNameIsItsTextWithoutTheNul) {
  const auto rtotem = rtotem_group_name(name_of(std::string("crmd\0", 5)));
  ASSERT_TRUE(rtotem.has_value());
  EXPECT_EQ(*rtotem, "crmd");
  const auto back = cpg_group_name("crmd");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(bytes_of(*back), std::string("crmd\0", 5));
  EXPECT_EQ(back->value[5], '\0') << "zero-filled after the length";
}

TEST(CpgGroupName, EveryOtherNameMapsAndComesBackTheSame) {
  for (const std::string& bytes :
       {std::string("crmd"), std::string("a\0b\0", 4), std::string("\x01x\0", 3), std::string("\x02\0", 2),
        std::string(""), std::string(127, 'x') + std::string(1, '\0')}) {
    const auto rtotem = rtotem_group_name(name_of(bytes));
    ASSERT_TRUE(rtotem.has_value()) << bytes.size();
    EXPECT_EQ(rtotem->find('\0'), std::string::npos) << "rtotem names have no NUL";
    const auto back = cpg_group_name(*rtotem);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(bytes_of(*back), bytes);
  }
  EXPECT_NE(*rtotem_group_name(name_of("crmd")), *rtotem_group_name(name_of(std::string("crmd\0", 5))))
      << "two CPG groups, two rtotem groups";
}

TEST(CpgGroupName, TooLongOrBrokenFormsAreRefused) {
  EXPECT_FALSE(rtotem_group_name(name_of(std::string(128, '\0'))).has_value()) << "escaped, 257 bytes";
  cpg_name too_long{};
  too_long.length = CPG_MAX_NAME_LENGTH + 1;
  EXPECT_FALSE(rtotem_group_name(too_long).has_value());
  EXPECT_FALSE(cpg_group_name("\x01"
                              "a\x02")
                   .has_value())
      << "an escape cut short";
  EXPECT_FALSE(cpg_group_name("\x01\x02x").has_value()) << "an unknown escape";
}

}  // namespace
}  // namespace rtotem::corosync
