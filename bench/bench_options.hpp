// Command-line options of rtotem-bench-udp, and the number parsing the bench tools share.
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>
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

// `text` as a number in [lo, hi]; the refusal names `option`.
template <class T>
Result<T> parse_number(std::string_view option, std::string_view text, T lo, T hi) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi)
    return Error::make("{}: '{}' is not a number in [{}, {}]", option, text, lo, hi);
  return value;
}

}  // namespace rtotem::bench
