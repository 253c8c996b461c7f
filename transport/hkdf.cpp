// HKDF-SHA256 on libsodium's HMAC-SHA256, its intermediate keys wiped.
#include "transport/hkdf.hpp"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "base/assert.hpp"

namespace rtotem::transport {
namespace {

static_assert(kHkdfSha256Size == crypto_auth_hmacsha256_BYTES);

const unsigned char* bytes_of(std::span<const std::byte> s) { return reinterpret_cast<const unsigned char*>(s.data()); }

// The HMAC state holds the key's pads: wiped with the blocks it makes.
struct Hmac {
  crypto_auth_hmacsha256_state state{};
  ~Hmac() { sodium_memzero(&state, sizeof state); }
};

}  // namespace

void hkdf_sha256(std::span<const std::byte> salt, std::span<const std::byte> secret, std::string_view info,
                 std::span<std::byte> out) {
  RTOTEM_ASSERT(out.size() <= kHkdfOutputMax);
  const std::array<unsigned char, kHkdfSha256Size> zeros{};
  std::array<unsigned char, kHkdfSha256Size> prk{};
  std::array<unsigned char, kHkdfSha256Size> block{};
  Hmac hmac;
  // Extract: PRK = HMAC(salt, secret).
  if (salt.empty())
    crypto_auth_hmacsha256_init(&hmac.state, zeros.data(), zeros.size());
  else
    crypto_auth_hmacsha256_init(&hmac.state, bytes_of(salt), salt.size());
  crypto_auth_hmacsha256_update(&hmac.state, bytes_of(secret), secret.size());
  crypto_auth_hmacsha256_final(&hmac.state, prk.data());
  // Expand: T(i) = HMAC(PRK, T(i-1) | info | i), out = T(1) | T(2) | ...
  std::size_t done = 0;
  for (std::uint8_t i = 1; done < out.size(); ++i) {
    crypto_auth_hmacsha256_init(&hmac.state, prk.data(), prk.size());
    if (i > 1) crypto_auth_hmacsha256_update(&hmac.state, block.data(), block.size());
    crypto_auth_hmacsha256_update(&hmac.state, reinterpret_cast<const unsigned char*>(info.data()), info.size());
    crypto_auth_hmacsha256_update(&hmac.state, &i, 1);
    crypto_auth_hmacsha256_final(&hmac.state, block.data());
    const std::size_t n = std::min(block.size(), out.size() - done);
    std::copy_n(reinterpret_cast<const std::byte*>(block.data()), n, out.begin() + static_cast<std::ptrdiff_t>(done));
    done += n;
  }
  sodium_memzero(prk.data(), prk.size());
  sodium_memzero(block.data(), block.size());
}

}  // namespace rtotem::transport
