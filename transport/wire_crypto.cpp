// XChaCha20-Poly1305 sealing of wire packets, with the replay check before the decryption.
#include "transport/wire_crypto.hpp"

#include <sodium.h>

#include <cstring>
#include <utility>

#include "base/assert.hpp"
#include "base/byte_order.hpp"

namespace rtotem::transport {
namespace {

static_assert(kSealNonceSize == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
static_assert(kSealTagSize == crypto_aead_xchacha20poly1305_ietf_ABYTES);
static_assert(kSealNonceSize == 3 * sizeof(std::uint64_t));

std::span<std::byte, kWireHeaderSize> header_of(std::byte* packet) noexcept {
  return std::span<std::byte, kWireHeaderSize>(packet, kWireHeaderSize);
}

auto* uc(std::byte* p) noexcept { return reinterpret_cast<unsigned char*>(p); }
auto* uc(const std::byte* p) noexcept { return reinterpret_cast<const unsigned char*>(p); }

}  // namespace

WireCrypto::WireCrypto(std::shared_ptr<const ClusterKey> key, std::uint64_t epoch, std::size_t senders_max)
    : key_(std::move(key)), epoch_(epoch), replay_(senders_max) {
  RTOTEM_ASSERT(key_ != nullptr);
  RTOTEM_ASSERT(epoch_ > 0);           // 0 is a fresh window's "nothing seen"
  RTOTEM_ASSERT(sodium_ready().ok());  // a ClusterKey exists, so libsodium is initialised
  randombytes_buf(&salt_, sizeof salt_);
}

std::span<const std::byte> WireCrypto::seal(std::span<const std::byte> packet, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(packet.size() >= kWireHeaderSize);
  RTOTEM_ASSERT(out.size() >= packet.size() + kSealOverhead);
  const std::size_t plain_len = packet.size() - kWireHeaderSize;
  std::byte* header = out.data();
  std::byte* cipher = header + kWireHeaderSize;
  std::byte* nonce = cipher + plain_len;
  std::byte* tag = nonce + kSealNonceSize;
  std::memcpy(header, packet.data(), kWireHeaderSize);
  header[kWireFlagsOffset] |= std::byte(kFlagSealed);
  store_payload_len(header_of(header), static_cast<std::uint32_t>(plain_len + kSealOverhead));
  put_be<std::uint64_t>(nonce, epoch_);
  put_be<std::uint64_t>(nonce + 8, counter_++);
  std::memcpy(nonce + 16, &salt_, sizeof salt_);
  unsigned long long tag_len = 0;
  (void)crypto_aead_xchacha20poly1305_ietf_encrypt_detached(uc(cipher), uc(tag), &tag_len,
                                                            uc(packet.data() + kWireHeaderSize), plain_len, uc(header),
                                                            kWireHeaderSize, nullptr, uc(nonce), key_->data());
  RTOTEM_ASSERT(tag_len == kSealTagSize);
  return out.first(packet.size() + kSealOverhead);
}

void WireCrypto::set_keys(std::shared_ptr<const ClusterKey> seal_with,
                          std::shared_ptr<const ClusterKey> also_open) noexcept {
  RTOTEM_ASSERT(seal_with != nullptr && seal_with != also_open);
  key_ = std::move(seal_with);
  also_open_ = std::move(also_open);
}

OpenCheck WireCrypto::open(std::span<std::byte> packet, NodeId sender, std::uint32_t& payload_len) noexcept {
  RTOTEM_ASSERT(packet.size() >= kWireHeaderSize);
  std::byte* header = packet.data();
  if ((std::uint8_t(header[kWireFlagsOffset]) & kFlagSealed) == 0) return OpenCheck::kUnsealed;
  if (packet.size() < kWireHeaderSize + kSealOverhead) return OpenCheck::kShort;
  const std::size_t plain_len = packet.size() - kWireHeaderSize - kSealOverhead;
  std::byte* cipher = header + kWireHeaderSize;
  const std::byte* nonce = cipher + plain_len;
  const std::byte* tag = nonce + kSealNonceSize;
  const std::uint64_t epoch = get_be<std::uint64_t>(nonce);
  const std::uint64_t counter = get_be<std::uint64_t>(nonce + 8);
  // Cheap refusals first: a replay or an unknown sender with no room is not worth a decryption.
  ReplayWindow* window = replay_.find(sender);
  if (window != nullptr ? !window->fresh(epoch, counter) : replay_.full()) return OpenCheck::kReplay;
  const unsigned char* key = key_->data();
  if (also_open_ != nullptr) {
    // A failed decryption wipes its output, here the packet itself: check which key first.
    const auto verifies = [&](const ClusterKey& k) {
      return crypto_aead_xchacha20poly1305_ietf_decrypt_detached(nullptr, nullptr, uc(cipher), plain_len, uc(tag),
                                                                 uc(header), kWireHeaderSize, uc(nonce), k.data()) == 0;
    };
    if (!verifies(*key_)) {
      if (!verifies(*also_open_)) return OpenCheck::kAuth;
      key = also_open_->data();
    }
  }
  if (crypto_aead_xchacha20poly1305_ietf_decrypt_detached(uc(cipher), nullptr, uc(cipher), plain_len, uc(tag),
                                                          uc(header), kWireHeaderSize, uc(nonce), key) != 0)
    return OpenCheck::kAuth;
  if (window == nullptr) window = replay_.add(sender);
  RTOTEM_ASSERT(window != nullptr);
  window->record(epoch, counter);
  header[kWireFlagsOffset] &= ~std::byte(kFlagSealed);
  store_payload_len(header_of(header), static_cast<std::uint32_t>(plain_len));
  payload_len = static_cast<std::uint32_t>(plain_len);
  return OpenCheck::kOk;
}

}  // namespace rtotem::transport
