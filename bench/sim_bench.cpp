// rtotem-bench-sim: the protocol's CPU cost with the network taken out: N nodes in the simulator,
// no faults, every node submitting as fast as flow control allows, messages of one size. Reports
// deliveries per CPU second (all nodes' work on one CPU, simulator and checker included); the
// instructions spent inside the Node itself come from bench/sim_instructions.sh (callgrind).
#include <fmt/format.h>
#include <time.h>

#include <limits>
#include <string_view>

#include "base/cli_args.hpp"
#include "src/sim/sim_cluster.hpp"

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

std::uint32_t parse(std::string_view text, const char* what) {
  auto n = rtotem::parse_number(what, text, std::uint32_t{1}, std::numeric_limits<std::uint32_t>::max());
  if (!n) {
    fmt::print(stderr, "rtotem-bench-sim: {}\n", n.error().message());
    std::exit(2);
  }
  return *n;
}

}  // namespace

// usage: rtotem-bench-sim [VIRTUAL_MS] [NODES SIZE]...  (default: 2000 ms; 3 64, 3 1024, 8 64, 8 1024)
int main(int argc, char** argv) {
  using namespace rtotem;
  std::uint32_t virtual_ms = argc > 1 ? parse(argv[1], "virtual ms") : 2000;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> rows = {{3, 64}, {3, 1024}, {8, 64}, {8, 1024}};
  if (argc > 2) {
    if (argc % 2 != 0) {
      fmt::print(stderr, "usage: rtotem-bench-sim [VIRTUAL_MS] [NODES SIZE]...\n");
      return 2;
    }
    rows.clear();
    for (int i = 2; i + 1 < argc; i += 2) rows.emplace_back(parse(argv[i], "nodes"), parse(argv[i + 1], "size"));
  }
  fmt::print(
      "| nodes | payload B | messages | deliveries (all nodes) | CPU s | deliveries / CPU s | virtual msgs/s |\n");
  fmt::print("|---:|---:|---:|---:|---:|---:|---:|\n");
  int status = 0;
  for (auto [nodes, size] : rows) {
    sim::SimSpec spec;
    spec.seed = 1;
    spec.nodes = nodes;
    spec.duration_us = sim::Time{virtual_ms} * 1000;
    spec.faults = {.loss = 0, .duplicate = 0, .delay_min_us = 20, .delay_max_us = 20};
    spec.rate_per_s = 1e6;  // more than the ring carries: flow control sets the pace
    spec.burst_max = sim::kBurstMaxLimit;
    spec.safe_fraction = 0;
    spec.message_size = size;
    auto cluster = sim::SimCluster::create(spec);
    if (!cluster) {
      fmt::print(stderr, "rtotem-bench-sim: {}\n", cluster.error().message());
      return 1;
    }
    const double start = cpu_seconds();
    const sim::SimResult result = (*cluster)->run();
    const double cpu = cpu_seconds() - start;
    if (!result.ok()) status = 1;
    fmt::print("| {} | {} | {} | {} | {:.2f} | {:.0f} | {:.0f} |{}\n", nodes, size, result.messages_delivered,
               result.deliveries, cpu, double(result.deliveries) / cpu,
               double(result.messages_delivered) / (double(result.end_us) / 1e6), result.ok() ? "" : " VIOLATION");
  }
  return status;
}
