// Encoding and validation of rtotem-ping's messages.
#include "src/tools/ping_wire.hpp"

#include "base/assert.hpp"

namespace rtotem::tools {
namespace {

template <class T>
void store_be(std::byte* out, T value) noexcept {
  for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<std::byte>(value >> (8 * (sizeof(T) - 1 - i)));
}

template <class T>
T load_be(const std::byte* in) noexcept {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value = static_cast<T>((value << 8) | std::to_integer<T>(in[i]));
  return value;
}

bool known_type(std::uint8_t type) noexcept {
  return type >= static_cast<std::uint8_t>(PingType::kHello) && type <= static_cast<std::uint8_t>(PingType::kDone);
}

}  // namespace

void encode_ping(const PingMessage& message, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(out.size() >= kPingHeaderSize);
  RTOTEM_ASSERT(known_type(static_cast<std::uint8_t>(message.type)));
  RTOTEM_ASSERT((message.flags & ~kHeardAll) == 0);
  std::byte* p = out.data();
  p[0] = static_cast<std::byte>(message.type);
  p[1] = static_cast<std::byte>(message.flags);
  store_be<std::uint16_t>(p + 2, 0);
  store_be<std::uint32_t>(p + 4, message.seq);
  store_be<std::uint64_t>(p + 8, message.sent_ns);
}

bool decode_ping(std::span<const std::byte> payload, PingMessage& out) noexcept {
  if (payload.size() < kPingHeaderSize) return false;
  const std::byte* p = payload.data();
  const auto type = std::to_integer<std::uint8_t>(p[0]);
  const auto flags = std::to_integer<std::uint8_t>(p[1]);
  if (!known_type(type) || (flags & ~kHeardAll) != 0 || load_be<std::uint16_t>(p + 2) != 0) return false;
  out.type = static_cast<PingType>(type);
  out.flags = flags;
  out.seq = load_be<std::uint32_t>(p + 4);
  out.sent_ns = load_be<std::uint64_t>(p + 8);
  return true;
}

}  // namespace rtotem::tools
