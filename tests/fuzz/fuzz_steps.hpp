// The input of the targets that replay a sequence of events (fuzz_assembler, fuzz_group_packets)
// rather than decode one message: a series of steps, each
//   u8 op | u16 size (big-endian) | size bytes
// where a step whose bytes run past the input takes what is left. What `op` means is the
// target's; fuzz_seeds writes seeds in the same form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/wire_io.hpp"

namespace rtotem::fuzz {

struct Step {
  std::uint8_t op = 0;
  std::span<const std::byte> bytes;
};

class StepReader {
 public:
  explicit StepReader(std::span<const std::byte> input) noexcept : in_(input) {}

  // The next step; false once fewer bytes than a step's header remain.
  bool next(Step& out) noexcept {
    if (in_.remaining() < kHeaderSize) return false;
    out.op = in_.get_u8();
    const std::size_t size = in_.get_u16();
    out.bytes = size <= in_.remaining() ? in_.get_bytes(size) : in_.get_rest();
    return true;
  }

 private:
  static constexpr std::size_t kHeaderSize = 3;
  WireReader in_;
};

// Appends one step to `out` (fuzz_seeds); `bytes` is at most UINT16_MAX long.
inline void append_step(std::vector<std::byte>& out, std::uint8_t op, std::span<const std::byte> bytes = {}) {
  RTOTEM_ASSERT(bytes.size() <= UINT16_MAX);
  out.push_back(std::byte{op});
  out.push_back(std::byte(bytes.size() >> 8));
  out.push_back(std::byte(bytes.size() & 0xff));
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace rtotem::fuzz
