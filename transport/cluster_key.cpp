// The cluster key in libsodium's guarded memory.
#include "transport/cluster_key.hpp"

#include <sodium.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "transport/hkdf.hpp"

namespace rtotem::transport {

static_assert(kClusterKeySize == crypto_aead_xchacha20poly1305_ietf_KEYBYTES);

Result<void> sodium_ready() {
  if (sodium_init() < 0) return Error::make("libsodium cannot initialise (no usable random source?)");
  return {};
}

template <class Fill>
Result<ClusterKey> ClusterKey::make(Fill&& fill) {
  if (auto ready = sodium_ready(); !ready) return ready.error();
  auto* key = static_cast<unsigned char*>(sodium_malloc(kClusterKeySize));
  if (key == nullptr) return Error::sys(errno, "cluster key: sodium_malloc");
  fill(key);
  (void)sodium_mprotect_readonly(key);  // a stray write now faults instead of changing the key
  return ClusterKey(key);
}

Result<ClusterKey> ClusterKey::from_bytes(std::span<const std::byte> bytes) {
  if (bytes.size() != kClusterKeySize)
    return Error::make("a cluster key is {} bytes, not {}", kClusterKeySize, bytes.size());
  return make([&](unsigned char* key) { std::memcpy(key, bytes.data(), kClusterKeySize); });
}

Result<ClusterKey> ClusterKey::derive(std::span<const std::byte> secret) {
  return make([&](unsigned char* key) {
    hkdf_sha256({}, secret, kDerivedKeyLabel, std::span(reinterpret_cast<std::byte*>(key), kClusterKeySize));
  });
}

Result<ClusterKey> ClusterKey::random() {
  return make([](unsigned char* key) { randombytes_buf(key, kClusterKeySize); });
}

std::string ClusterKey::fingerprint() const {
  constexpr std::string_view kLabel = "rtotem key fingerprint v1";
  unsigned char hash[8];
  crypto_generichash(hash, sizeof hash, reinterpret_cast<const unsigned char*>(kLabel.data()), kLabel.size(), key_,
                     kClusterKeySize);
  std::string hex;
  for (unsigned char b : hash) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
  return hex;
}

ClusterKey::ClusterKey(ClusterKey&& other) noexcept : key_(std::exchange(other.key_, nullptr)) {}

ClusterKey& ClusterKey::operator=(ClusterKey&& other) noexcept {
  if (this != &other) {
    ClusterKey gone(std::move(*this));
    key_ = std::exchange(other.key_, nullptr);
  }
  return *this;
}

ClusterKey::~ClusterKey() {
  if (key_ != nullptr) sodium_free(key_);  // zeroes the pages before unmapping them
}

Result<void> ClusterKey::lock_in_memory() const {
  RTOTEM_ASSERT(key_ != nullptr);
  if (sodium_mlock(key_, kClusterKeySize) != 0) return Error::sys(errno, "cluster key: mlock (RLIMIT_MEMLOCK?)");
  return {};
}

std::span<const std::byte, kClusterKeySize> ClusterKey::bytes() const noexcept {
  RTOTEM_ASSERT(key_ != nullptr);
  return std::span<const std::byte, kClusterKeySize>(reinterpret_cast<const std::byte*>(key_), kClusterKeySize);
}

}  // namespace rtotem::transport
