// Command-line options of the group bench (rtotem-bench, cpg-bench): group throughput, latency,
// and the times of membership changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rtotem/rtotem.h"
#include "base/result.hpp"

namespace rtotem::bench {

// throughput: send flat out; latency: send at --rate and time own deliveries; receive: a member
// that only receives (and checks); watch: print every membership change with its wall-clock time.
enum class BenchMode : std::uint8_t { kThroughput, kLatency, kReceive, kWatch };

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

std::string bench_usage(std::string_view program, std::string_view daemon);

Result<BenchOptions> parse_bench_options(int argc, char** argv);

std::string_view mode_name(BenchMode mode) noexcept;
std::string_view order_name(rtotem_order order) noexcept;

}  // namespace rtotem::bench
