// A message handed to the ring in two parts, copied once into its send buffers: a header its
// sender wrote (the group packet's) and a payload left where it is (the client's IPC request).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>

namespace rtotem::membership {

struct Gather {
  std::span<const std::byte> head;
  std::span<const std::byte> tail;

  std::size_t size() const noexcept { return head.size() + tail.size(); }
  // Bytes [at, at + out.size()) of head-then-tail into `out`; within size().
  void copy(std::size_t at, std::span<std::byte> out) const noexcept {
    std::size_t done = 0;
    if (at < head.size() && !out.empty()) {
      done = std::min(out.size(), head.size() - at);
      std::memcpy(out.data(), head.data() + at, done);
    }
    if (done < out.size()) std::memcpy(out.data() + done, tail.data() + (at + done - head.size()), out.size() - done);
  }
};

}  // namespace rtotem::membership
