// Command-line options of rtotem-bench (a librtotem client measuring group throughput and latency).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rtotem/rtotem.h"
#include "transport/result.hpp"

namespace rtotem::bench {

enum class BenchMode : std::uint8_t { kThroughput, kLatency };

// What one member of the group can tell apart: at most this many senders are tracked (FIFO check,
// end markers); the per-sender table is allocated once, at this size.
inline constexpr std::size_t kSendersMax = 64;
// The latency samples are preallocated: rate * duration may not exceed this (80 MB of samples).
inline constexpr std::uint64_t kLatencySamplesMax = 10'000'000;
// The largest --size the parser takes; the cluster's own limit (rtotem_max_message_size) is
// checked once connected.
inline constexpr std::size_t kSizeMax = std::size_t{1} << 20;

struct BenchOptions {
  std::string ipc_name;  // empty: $RTOTEM_IPC, else "rtotem"
  std::string group = "bench";
  std::size_t size_bytes = 1024;
  std::uint32_t duration_s = 10;
  rtotem_order order = RTOTEM_AGREED;
  BenchMode mode = BenchMode::kThroughput;
  std::uint32_t senders = 1;
  std::uint32_t rate_per_s = 1000;
  bool json = false;
  bool help = false;
};

extern const std::string_view kBenchUsage;

Result<BenchOptions> parse_bench_options(int argc, char** argv);

std::string_view mode_name(BenchMode mode) noexcept;
std::string_view order_name(rtotem_order order) noexcept;

}  // namespace rtotem::bench
