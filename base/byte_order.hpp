// Big-endian integers in packet bytes, for the transport's own fields (wire header, seal nonce,
// link pings); the protocol's packets use base/wire_io.hpp's cursors.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rtotem {

template <class T>
void put_be(std::byte* p, T v) noexcept {
  for (std::size_t i = sizeof(T); i-- > 0; v = static_cast<T>(v >> 8)) p[i] = std::byte(v & 0xff);
}

template <class T>
T get_be(const std::byte* p) noexcept {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v << 8 | std::to_integer<T>(p[i]));
  return v;
}

}  // namespace rtotem
