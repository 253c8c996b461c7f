// Command-line options of rtotem-bench-udp.
#pragma once

#include <cstdint>
#include <vector>

#include "transport/result.hpp"

namespace rtotem::bench {

struct BenchOptions {
  std::uint64_t messages = 1'000'000;
  std::vector<std::uint32_t> sizes = {64, 1024};
  std::uint32_t window = 256;
  unsigned rounds = 3;
  std::uint16_t port = 17400;
};

inline constexpr const char* kUsage =
    "usage: rtotem-bench-udp [--messages N] [--sizes 64,1024,...] [--window W] [--rounds R] [--port P]\n";

Result<BenchOptions> parse_options(int argc, char** argv);

}  // namespace rtotem::bench
