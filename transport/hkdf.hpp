// HKDF with HMAC-SHA256 (RFC 5869): a key of the size a cipher needs, from a secret of any size.
// Debian 12's libsodium (1.0.18) has HMAC-SHA256 but not yet its crypto_kdf_hkdf_sha256.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace rtotem::transport {

inline constexpr std::size_t kHkdfSha256Size = 32;  // HashLen
inline constexpr std::size_t kHkdfOutputMax = 255 * kHkdfSha256Size;

// Extract then expand: fills `out` (at most kHkdfOutputMax bytes) from `secret`, `salt` (empty:
// HashLen zero bytes, as the RFC says) and `info`, the label that makes this use's key its own.
// The intermediate keys are wiped before it returns.
void hkdf_sha256(std::span<const std::byte> salt, std::span<const std::byte> secret, std::string_view info,
                 std::span<std::byte> out);

}  // namespace rtotem::transport
