// The simulator's one source of randomness: xoshiro256** seeded through splitmix64, so one uint64
// seed replays a whole run bit for bit, on any standard library.
//
// Why not <random>: the engines are specified, but the distributions are not, and libstdc++ and
// libc++ draw differently; every draw here is written out.
//
// Threading: one thread (the simulator's); not synchronised.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>

#include "base/assert.hpp"

namespace rtotem {

class Rng {
 public:
  // Vigna's recommended seeding: four splitmix64 outputs, never the all-zero state.
  explicit Rng(std::uint64_t seed) noexcept {
    for (std::uint64_t& word : state_) word = splitmix64(seed);
  }

  // xoshiro256** (Blackman, Vigna 2018), transcribed from the reference C code.
  std::uint64_t next_u64() noexcept {
    const std::uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = std::rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, n). Rejects the draws below 2^64 mod n, so every residue has the same number
  // of preimages: a plain `% n` would favour the small values.
  std::uint64_t uniform(std::uint64_t n) noexcept {
    RTOTEM_ASSERT(n > 0);
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    for (;;) {
      const std::uint64_t x = next_u64();
      if (x >= threshold) return x % n;
    }
  }

  // Uniform in [lo, hi], both ends included.
  std::uint64_t uniform_range(std::uint64_t lo, std::uint64_t hi) noexcept {
    RTOTEM_ASSERT(lo <= hi);
    if (hi - lo == std::numeric_limits<std::uint64_t>::max()) return next_u64();
    return lo + uniform(hi - lo + 1);
  }

  // True with probability p. Always draws once, whatever p, so changing a probability does not
  // shift the rest of the stream. 53 bits: a double in [0, 1) with every value equally likely,
  // so p = 0 is never and p = 1 always.
  bool chance(double p) noexcept {
    RTOTEM_ASSERT(p >= 0.0 && p <= 1.0);
    return static_cast<double>(next_u64() >> 11) * 0x1.0p-53 < p;
  }

 private:
  static std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }

  std::array<std::uint64_t, 4> state_{};
};

}  // namespace rtotem
