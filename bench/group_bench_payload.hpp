// The header the group bench writes at the start of every message it multicasts, and the order hash
// over what it delivers. Big-endian on the wire, as the rest of rtotem, so nodes may differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "base/assert.hpp"

namespace rtotem::bench {

enum class PayloadKind : std::uint8_t { kData = 1, kEnd = 2 };

struct PayloadHeader {
  PayloadKind kind = PayloadKind::kData;
  std::uint64_t run_id = 0;   // one sender's run: random, so a reused pid is not the same sender
  std::uint64_t seq = 0;      // per sender, from 0, data messages only
  std::uint64_t send_ns = 0;  // CLOCK_MONOTONIC of the sender's host
};

// magic 4, kind 1, reserved 3, run_id 8, seq 8, send_ns 8: the smallest --size.
inline constexpr std::size_t kPayloadHeaderBytes = 32;
inline constexpr std::uint32_t kPayloadMagic = 0x72746258;  // "rtbX"

namespace detail {

inline void put_be(std::span<std::byte> out, std::size_t at, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[at + i] = std::byte(v >> (8 * (n - 1 - i)));
}

inline std::uint64_t get_be(std::span<const std::byte> in, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | std::to_integer<std::uint64_t>(in[at + i]);
  return v;
}

}  // namespace detail

inline void encode_payload_header(const PayloadHeader& h, std::span<std::byte> out) {
  RTOTEM_ASSERT(out.size() >= kPayloadHeaderBytes);
  detail::put_be(out, 0, kPayloadMagic, 4);
  detail::put_be(out, 4, static_cast<std::uint8_t>(h.kind), 1);
  detail::put_be(out, 5, 0, 3);
  detail::put_be(out, 8, h.run_id, 8);
  detail::put_be(out, 16, h.seq, 8);
  detail::put_be(out, 24, h.send_ns, 8);
}

// nullopt: not a message of the group bench (another client in the group), or truncated.
inline std::optional<PayloadHeader> decode_payload_header(std::span<const std::byte> in) {
  if (in.size() < kPayloadHeaderBytes || detail::get_be(in, 0, 4) != kPayloadMagic) return std::nullopt;
  const auto kind = static_cast<PayloadKind>(detail::get_be(in, 4, 1));
  if (kind != PayloadKind::kData && kind != PayloadKind::kEnd) return std::nullopt;
  return PayloadHeader{kind, detail::get_be(in, 8, 8), detail::get_be(in, 16, 8), detail::get_be(in, 24, 8)};
}

// FNV-1a (64-bit) over (nodeid, pid, seq) of each data message, in delivery order: equal on two
// members iff they delivered the same messages in the same order (up to collisions).
class OrderHash {
 public:
  void add(std::uint32_t nodeid, std::uint32_t pid, std::uint64_t seq) noexcept {
    mix(nodeid, 4);
    mix(pid, 4);
    mix(seq, 8);
  }
  std::uint64_t value() const noexcept { return h_; }

 private:
  void mix(std::uint64_t v, int bytes) noexcept {
    for (int i = 0; i < bytes; ++i) {
      h_ ^= (v >> (8 * i)) & 0xff;
      h_ *= 0x100000001b3ULL;  // the FNV-1a 64-bit prime
    }
  }
  std::uint64_t h_ = 0xcbf29ce484222325ULL;  // the FNV-1a 64-bit offset basis
};

}  // namespace rtotem::bench
