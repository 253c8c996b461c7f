// HKDF-SHA256 against RFC 5869's test vectors, and the cluster key derived from a Corosync authkey
// pinned to its bytes: every rtotem version must derive the same key from the same file.
#include "transport/hkdf.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "transport/cluster_key.hpp"

namespace rtotem::transport {
namespace {

std::vector<std::byte> from_hex(std::string_view hex) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::byte>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

std::vector<std::byte> sequence(int from, int to) {
  std::vector<std::byte> out;
  for (int b = from; b < to; ++b) out.push_back(static_cast<std::byte>(b));
  return out;
}

std::vector<std::byte> hkdf(std::span<const std::byte> salt, std::span<const std::byte> secret, std::string_view info,
                            std::size_t size) {
  std::vector<std::byte> out(size);
  hkdf_sha256(salt, secret, info, out);
  return out;
}

const std::vector<std::byte> kIkm(22, std::byte{0x0b});

TEST(Hkdf, RfcCaseOneWithSaltAndInfo) {
  const std::vector<std::byte> info = sequence(0xf0, 0xfa);
  const std::string info_text(reinterpret_cast<const char*>(info.data()), info.size());
  EXPECT_EQ(hkdf(sequence(0, 13), kIkm, info_text, 42),
            from_hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"));
}

TEST(Hkdf, RfcCaseThreeWithNeitherSaltNorInfo) {
  EXPECT_EQ(hkdf({}, kIkm, "", 42),
            from_hex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"));
}

TEST(Hkdf, AShorterOutputIsThePrefixOfALongerOne) {
  const auto longer = hkdf({}, kIkm, "label", 70);
  EXPECT_EQ(hkdf({}, kIkm, "label", 33), std::vector<std::byte>(longer.begin(), longer.begin() + 33));
  EXPECT_NE(hkdf({}, kIkm, "other label", 33), hkdf({}, kIkm, "label", 33));
}

// The bytes 0..255 as a 256-byte authkey (corosync-keygen's default size) give this key; the
// figure comes from an independent HKDF (Python's hmac and hashlib).
TEST(Hkdf, TheKeyDerivedFromACorosyncAuthkeyIsPinned) {
  const auto key = ClusterKey::derive(sequence(0, 256));
  ASSERT_TRUE(key.ok()) << key.error().message();
  const std::vector<std::byte> got(key->bytes().begin(), key->bytes().end());
  EXPECT_EQ(got, from_hex("57bd4dc02232c0d43e3a324619118bdc783014c8922a983fd74a67d8f8cb9d71"));
}

}  // namespace
}  // namespace rtotem::transport
