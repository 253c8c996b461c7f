// Command-line options of rtotem-bench-udp.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.hpp"

namespace rtotem::bench {

struct BenchOptions {
  std::uint64_t messages = 1'000'000;
  std::vector<std::uint32_t> sizes = {64, 1024};
  std::uint32_t window = 256;
  unsigned rounds = 3;
  std::uint16_t port = 17400;
  // A third contender, in the same rounds: the backend sealing and opening every packet with a
  // cluster key (what totem.crypto costs at this layer).
  bool crypto = false;
};

inline constexpr const char* kUsage =
    "usage: rtotem-bench-udp [--messages N] [--sizes 64,1024,...] [--window W] [--rounds R] [--port P] [--crypto]\n";

Result<BenchOptions> parse_options(int argc, char** argv);

}  // namespace rtotem::bench
