// Key store values: cmap's type names, text both ways with their ranges, the wire form, and C's
// host-order bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "src/ipc/key_value.hpp"

namespace rtotem::ipc {
namespace {

TEST(KeyValue, NamesAreCmapctlsAndKeysAreCmapsCharacters) {
  EXPECT_EQ(type_named("u32"), KeyType::kUint32);
  EXPECT_EQ(type_named("bin"), KeyType::kBinary);
  EXPECT_EQ(type_named("uint32"), std::nullopt);
  EXPECT_EQ(type_name(KeyType::kDouble), "dbl");
  EXPECT_TRUE(valid_key_name("totem.token"));
  EXPECT_TRUE(valid_key_name("a:b/c-d_e"));
  EXPECT_FALSE(valid_key_name("ab"));  // cmap's minimum is 3
  EXPECT_FALSE(valid_key_name("app key"));
  EXPECT_FALSE(valid_key_name(std::string(256, 'a')));
  EXPECT_TRUE(valid_key_prefix(""));
  EXPECT_FALSE(valid_key_prefix("a*"));
}

TEST(KeyValue, TextIsReadWithinTheTypesRange) {
  EXPECT_EQ(parse_value(KeyType::kUint8, "255")->bits, 255u);
  EXPECT_EQ(parse_value(KeyType::kUint8, "256"), std::nullopt);
  EXPECT_EQ(parse_value(KeyType::kInt8, "-128")->bits, 0x80u);
  EXPECT_EQ(parse_value(KeyType::kInt8, "128"), std::nullopt);
  EXPECT_EQ(value_text(*parse_value(KeyType::kInt16, "-2")), "-2");
  EXPECT_EQ(value_text(*parse_value(KeyType::kUint64, "18446744073709551615")), "18446744073709551615");
  EXPECT_EQ(parse_value(KeyType::kUint32, ""), std::nullopt);
  EXPECT_EQ(parse_value(KeyType::kUint32, "12x"), std::nullopt);
  EXPECT_EQ(value_text(*parse_value(KeyType::kDouble, "0.5")), "0.5");
  EXPECT_EQ(parse_value(KeyType::kFloat, "1e300"), std::nullopt);
  EXPECT_EQ(parse_value(KeyType::kBinary, "00ff")->data, std::string("\0\xff", 2));
  EXPECT_EQ(parse_value(KeyType::kBinary, "0g"), std::nullopt);
  EXPECT_EQ(value_text(*parse_value(KeyType::kBinary, "00ff")), "00ff");
}

TEST(KeyValue, TheWireFormReadsBackAndRefusesWhatIsShortOrUnknown) {
  for (const KeyValue& v : {KeyValue::u8(7), KeyValue::u32(70000), KeyValue::u64(1ull << 40), KeyValue::string("x y"),
                            *parse_value(KeyType::kInt64, "-5"), *parse_value(KeyType::kFloat, "2.5")}) {
    BodyWriter out;
    put_value(out, v);
    WireReader in(out.data());
    EXPECT_EQ(read_value(in), v);
    EXPECT_TRUE(in.at_end());
    std::vector<std::byte> cut(out.data().begin(), out.data().end() - 1);
    WireReader short_in(cut);
    EXPECT_EQ(read_value(short_in), std::nullopt);
  }
  const std::byte unknown[] = {std::byte{13}, std::byte{0}};
  WireReader in(unknown);
  EXPECT_EQ(read_value(in), std::nullopt);
}

TEST(KeyValue, CBytesAreHostOrderInTheTypesWidth) {
  const std::uint16_t n = 513;
  const auto v = from_native(KeyType::kUint16, &n, sizeof n);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->bits, 513u);
  EXPECT_EQ(from_native(KeyType::kUint16, &n, 4), std::nullopt);
  std::uint8_t out[8] = {};
  EXPECT_EQ(native_bytes(*v, out), 2u);
  std::uint16_t back = 0;
  std::memcpy(&back, out, 2);
  EXPECT_EQ(back, 513);
}

}  // namespace
}  // namespace rtotem::ipc
