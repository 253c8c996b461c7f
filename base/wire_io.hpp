// Big-endian cursors over packet bytes: a reader that never reads past its span, a writer that
// asserts it never writes past its span. Neither allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/assert.hpp"

namespace rtotem {

// Reads fields in order from bytes received off the network. A read that would pass the end sets
// a sticky `short_read()` and returns 0, so a decoder can read a group of fields and check once.
// Borrows the bytes; single-threaded.
class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}

  std::uint8_t get_u8() noexcept { return static_cast<std::uint8_t>(get_be(1)); }
  std::uint16_t get_u16() noexcept { return static_cast<std::uint16_t>(get_be(2)); }
  std::uint32_t get_u32() noexcept { return static_cast<std::uint32_t>(get_be(4)); }
  std::uint64_t get_u64() noexcept { return get_be(8); }

  // The next `n` bytes, consumed; empty (and short_read()) if fewer remain.
  std::span<const std::byte> get_bytes(std::size_t n) noexcept {
    if (short_ || remaining() < n) {
      short_ = true;
      return {};
    }
    auto bytes = bytes_.subspan(pos_, n);
    pos_ += n;
    return bytes;
  }

  // Everything not read yet, consumed (an mcast's payload).
  std::span<const std::byte> get_rest() noexcept {
    auto rest = bytes_.subspan(pos_);
    pos_ = bytes_.size();
    return rest;
  }

  std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == bytes_.size(); }
  bool short_read() const noexcept { return short_; }

 private:
  std::uint64_t get_be(std::size_t n) noexcept {
    if (short_ || remaining() < n) {
      short_ = true;
      return 0;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = v << 8 | std::uint64_t(bytes_[pos_ + i]);
    pos_ += n;
    return v;
  }

  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
  bool short_ = false;  // sticky: once a read fell short, every later read does too
};

// Writes fields in order into a buffer the encoder sized; running out of room is a bug, asserted.
// Borrows the bytes; single-threaded.
class WireWriter {
 public:
  explicit WireWriter(std::span<std::byte> out) noexcept : out_(out) {}

  void put_u8(std::uint8_t v) noexcept { put_be(v, 1); }
  void put_u16(std::uint16_t v) noexcept { put_be(v, 2); }
  void put_u32(std::uint32_t v) noexcept { put_be(v, 4); }
  void put_u64(std::uint64_t v) noexcept { put_be(v, 8); }

  std::size_t written() const noexcept { return pos_; }

 private:
  void put_be(std::uint64_t v, std::size_t n) noexcept {
    RTOTEM_ASSERT(out_.size() - pos_ >= n);
    for (std::size_t i = 0; i < n; ++i) out_[pos_ + i] = std::byte(v >> (8 * (n - 1 - i)));
    pos_ += n;
  }

  std::span<std::byte> out_;
  std::size_t pos_ = 0;
};

}  // namespace rtotem
