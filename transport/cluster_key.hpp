// The cluster's shared secret in memory: the key every node seals and opens packets with.
//
// Held where libsodium keeps secrets: its own pages (sodium_malloc: guard pages on both sides, a
// canary, locked against swapping where RLIMIT_MEMLOCK allows), read-only once filled, wiped
// when freed. Move-only, so there is exactly one copy of the bytes; backends share it through a
// shared_ptr<const ClusterKey> made at start-up.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace rtotem::transport {

// XChaCha20-Poly1305's key size, and the size of rtotem-keygen's key files.
inline constexpr std::size_t kClusterKeySize = 32;
// The label of the key derived from a longer shared secret (a Corosync authkey): rtotem's own,
// so the same file never gives the key that another program derives from it.
inline constexpr std::string_view kDerivedKeyLabel = "rtotem cluster key v1";

// libsodium's one-time initialisation (idempotent, thread-safe); everything here calls it.
Result<void> sodium_ready();

class ClusterKey {
 public:
  // A copy of `bytes` (exactly kClusterKeySize of them) in guarded memory.
  static Result<ClusterKey> from_bytes(std::span<const std::byte> bytes);
  // The key HKDF-SHA256 derives from `secret` (a Corosync authkey's bytes) with kDerivedKeyLabel:
  // the same secret gives the same key on every node.
  static Result<ClusterKey> derive(std::span<const std::byte> secret);
  // A fresh key from the system's CSPRNG (libsodium randombytes: getrandom).
  static Result<ClusterKey> random();

  ClusterKey(ClusterKey&& other) noexcept;
  ClusterKey& operator=(ClusterKey&& other) noexcept;
  ClusterKey(const ClusterKey&) = delete;
  ClusterKey& operator=(const ClusterKey&) = delete;
  ~ClusterKey();

  std::span<const std::byte, kClusterKeySize> bytes() const noexcept;
  // 16 hex digits that tell keys apart without telling anything of the key: a keyed BLAKE2b
  // hash of a fixed label. Nodes compare it to agree on a new key.
  std::string fingerprint() const;
  // Locks the key's pages in memory again (and out of core dumps): a child of fork(), such as
  // daemon()'s, does not inherit memory locks, so the key could be swapped out there.
  Result<void> lock_in_memory() const;
  const unsigned char* data() const noexcept { return key_; }

 private:
  explicit ClusterKey(unsigned char* key) noexcept : key_(key) {}
  // Guarded pages, writable until `fill` has run, then read-only.
  template <class Fill>
  static Result<ClusterKey> make(Fill&& fill);

  unsigned char* key_ = nullptr;
};

}  // namespace rtotem::transport
