// What the group bench prints at the end of a run: text lines, or one JSON object (--json).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "bench/group_bench_options.hpp"
#include "bench/group_bench_receiver.hpp"

namespace rtotem::bench {

struct LatencySummary {
  std::size_t samples = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};

struct BenchReport {
  const BenchOptions* options = nullptr;
  std::uint32_t node = 0;
  std::uint32_t pid = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t eagain = 0;  // mcast refused for back-pressure, counted per attempt
  DeliveryStats delivered;
  std::size_t end_markers_missing = 0;
  std::size_t left_without_end_marker = 0;
  std::uint64_t ring_changes = 0;  // after the run started: the ring lost or gained a node
  std::optional<LatencySummary> latency;
};

// Sorts `samples_ns` (nearest-rank percentiles). nullopt if there are none.
std::optional<LatencySummary> summarize_latency(std::vector<std::uint64_t>& samples_ns);

void print_report(const BenchReport& r);

}  // namespace rtotem::bench
