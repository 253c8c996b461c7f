// totem.crypto and totem.keyfile: parsed with their lines, corosync's crypto_cipher/crypto_hash
// mapped onto them, and the key file checked at load with errors naming file, line and key.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "src/common/key_file.hpp"
#include "src/daemon/config/daemon_config.hpp"

namespace rtotem::config {
namespace {

// A valid file with `totem` lines from line 3 on.
std::string with_totem(std::string_view totem) {
  return fmt::format(
      "totem {{\n  cluster_name: c\n{}\n}}\nnodelist {{\n  node {{\n    nodeid: 1\n"
      "    ring0_addr: 10.0.0.1\n  }}\n}}\n",
      totem);
}

DaemonConfig parsed(std::string_view totem) {
  auto config = parse_config(with_totem(totem), "t.conf");
  EXPECT_TRUE(config.ok()) << config.error().message();
  return config.ok() ? std::move(*config) : DaemonConfig{};
}

std::string error_of(std::string_view totem) {
  auto config = parse_config(with_totem(totem), "t.conf");
  return config.ok() ? "<ok>" : config.error().message();
}

TEST(ConfigCrypto, OffByDefaultWithTheDefaultKeyFile) {
  const DaemonConfig config = parsed("");
  EXPECT_FALSE(config.crypto);
  EXPECT_EQ(config.keyfile, kDefaultKeyFile);
  EXPECT_EQ(crypto_off_warning(config),
            "t.conf: totem.crypto is off: packets travel in the clear and unauthenticated, so any host that reaches "
            "port 5405 can read them and inject its own (rtotem-keygen, then crypto: on)");
  auto key = load_cluster_key(config);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(*key, nullptr);  // no key is read while crypto is off
}

TEST(ConfigCrypto, CryptoAndKeyfileMapToTheirFields) {
  const DaemonConfig config = parsed("  crypto: on\n  keyfile: /srv/key");
  EXPECT_TRUE(config.crypto);
  EXPECT_EQ(config.keyfile, "/srv/key");
  EXPECT_EQ(config.crypto_line, 3);
  EXPECT_EQ(config.keyfile_line, 4);
  EXPECT_EQ(crypto_off_warning(config), "");
  EXPECT_FALSE(parsed("  crypto: off").crypto);
  EXPECT_TRUE(parsed("  crypto: yes").crypto);
}

TEST(ConfigCrypto, RefusalsNameLineAndKey) {
  EXPECT_EQ(error_of("  crypto: aes"), "t.conf:3: totem.crypto: 'aes' is not one of: on, yes, true, off, no, false");
  EXPECT_EQ(error_of("  keyfile:"), "t.conf:3: totem.keyfile: empty value");
}

TEST(ConfigCrypto, CorosyncCipherOrHashOtherThanNoneTurnsCryptoOn) {
  EXPECT_FALSE(parsed("  crypto_cipher: none\n  crypto_hash: none").crypto);
  const DaemonConfig on = parsed("  crypto_cipher: aes256\n  crypto_hash: sha256\n  keyfile: /etc/corosync/authkey");
  EXPECT_TRUE(on.crypto);
  EXPECT_EQ(on.crypto_key, "totem.crypto_cipher");
  EXPECT_EQ(on.crypto_line, 3);
  ASSERT_EQ(on.warnings.size(), 2u);
  EXPECT_EQ(on.warnings[0],
            "t.conf:3: totem.crypto_cipher: aes256: rtotem seals packets with XChaCha20-Poly1305 "
            "(crypto on, key from totem.keyfile)");
  // Corosync's authentication-only setting asks for protection too: rtotem seals, and says so.
  const DaemonConfig hash_only = parsed("  crypto_cipher: none\n  crypto_hash: sha1");
  EXPECT_TRUE(hash_only.crypto);
  EXPECT_EQ(hash_only.crypto_line, 4);
  ASSERT_EQ(hash_only.warnings.size(), 1u);
  EXPECT_EQ(hash_only.warnings[0],
            "t.conf:4: totem.crypto_hash: sha1: rtotem seals packets with XChaCha20-Poly1305 (crypto on, key from "
            "totem.keyfile); corosync would authenticate them only");
  // A cipher without a hash: corosync refuses it, so does rtotem.
  EXPECT_EQ(error_of("  crypto_cipher: aes256"),
            "t.conf:3: totem.crypto_cipher: aes256 asks for a cipher, which needs a crypto_hash other than none "
            "(corosync refuses it too)");
  EXPECT_EQ(error_of("  crypto_cipher: aes256\n  crypto_hash: none"), error_of("  crypto_cipher: aes256"));
  // Our key and corosync's agree, or the file is refused where they part.
  EXPECT_TRUE(parsed("  crypto: on\n  crypto_cipher: aes256\n  crypto_hash: sha256").crypto);
  EXPECT_EQ(error_of("  crypto: off\n  crypto_cipher: aes256\n  crypto_hash: sha256"),
            "t.conf:4: totem.crypto_cipher: turns crypto on, but totem.crypto is off (line 3)");
  EXPECT_EQ(error_of("  crypto_cipher: none\n  crypto: on"),
            "t.conf:3: totem.crypto_cipher: turns crypto off, but totem.crypto is on (line 4)");
}

// Corosync 2's secauth: on is aes256 with sha256, so a file from that era stays protected;
// crypto_cipher and crypto_hash, where given, override it.
TEST(ConfigCrypto, SecauthOnProtectsAsCorosyncsCipherAndHashDo) {
  const DaemonConfig on = parsed("  secauth: on");
  EXPECT_TRUE(on.crypto);
  EXPECT_EQ(on.crypto_key, "totem.secauth");
  EXPECT_EQ(on.crypto_line, 3);
  EXPECT_FALSE(parsed("  secauth: off").crypto);
  EXPECT_FALSE(parsed("  secauth: on\n  crypto_cipher: none\n  crypto_hash: none").crypto);
  EXPECT_TRUE(parsed("  secauth: on\n  crypto_cipher: none").crypto);  // sha256 from secauth remains
  EXPECT_EQ(error_of("  secauth: on\n  crypto_hash: none"),
            "t.conf:3: totem.secauth: on asks for a cipher, which needs a crypto_hash other than none (corosync "
            "refuses it too)");
  EXPECT_EQ(error_of("  secauth: maybe"),
            "t.conf:3: totem.secauth: 'maybe' is not one of: on, yes, true, off, no, false");
}

struct ConfigKeyFileTest : ::testing::Test {
  std::string dir;
  std::string key;
  void SetUp() override {
    char name[] = "/tmp/rtotem-confkey-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir = name;
    key = dir + "/authkey";
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string load_error(std::string_view totem) {
    const DaemonConfig config = parsed(totem);
    auto loaded = load_cluster_key(config);
    return loaded ? "<ok>" : loaded.error().message();
  }
};

TEST_F(ConfigKeyFileTest, AGoodKeyLoads) {
  ASSERT_TRUE(write_key_file(key, false).ok());
  const DaemonConfig config = parsed(fmt::format("  crypto: on\n  keyfile: {}", key));
  auto loaded = load_cluster_key(config);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  ASSERT_NE(*loaded, nullptr);
}

TEST_F(ConfigKeyFileTest, CryptoOnWithoutAKeyFileNamesTheKeyfileLine) {
  EXPECT_EQ(load_error(fmt::format("  crypto: on\n  keyfile: {}", key)),
            fmt::format("t.conf:4: totem.keyfile: key file {}: does not exist (make one with rtotem-keygen and copy "
                        "it to every node)",
                        key));
}

TEST_F(ConfigKeyFileTest, WithTheDefaultPathTheLineThatTurnedCryptoOnIsNamed) {
  DaemonConfig config = parsed("  token: 1000\n  crypto: on");
  config.keyfile = key;  // the default path, as if kDefaultKeyFile were here
  auto loaded = load_cluster_key(config);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message(),
            fmt::format("t.conf:4: totem.crypto: crypto on needs the cluster key: key file {}: does not exist (make "
                        "one with rtotem-keygen and copy it to every node)",
                        key));
}

TEST_F(ConfigKeyFileTest, AKeyOfTheWrongSizeOrTooOpenIsRefused) {
  std::ofstream(key) << std::string(64, 'x');
  ASSERT_EQ(::chmod(key.c_str(), 0400), 0);
  EXPECT_EQ(load_error(fmt::format("  crypto: on\n  keyfile: {}", key)),
            fmt::format("t.conf:4: totem.keyfile: key file {}: 64 bytes; a cluster key is 32 bytes (rtotem-keygen's) "
                        "or a Corosync authkey of 128 to 4096 bytes (make one with rtotem-keygen and copy it to "
                        "every node)",
                        key));
  std::filesystem::remove(key);
  ASSERT_TRUE(write_key_file(key, false).ok());
  ASSERT_EQ(::chmod(key.c_str(), 0644), 0);
  EXPECT_EQ(load_error(fmt::format("  crypto_hash: sha256\n  keyfile: {}", key)),
            fmt::format("t.conf:4: totem.keyfile: key file {}: permissions 0644 are too open: a cluster key must not "
                        "be accessible by group or others (chmod 0400 {})",
                        key, key));
}

}  // namespace
}  // namespace rtotem::config
