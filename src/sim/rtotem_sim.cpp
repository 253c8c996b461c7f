// rtotem-sim: runs totem nodes on the simulated network, one seed or a range, and checks the
// protocol's guarantees; a failure prints the command that replays it.
#include <fmt/format.h>

#include <cstdio>
#include <span>
#include <string>

#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_options.hpp"

namespace {

using namespace rtotem;
using namespace rtotem::sim;

constexpr int kExitHeld = 0;
constexpr int kExitViolated = 1;
constexpr int kExitUsage = 2;
constexpr std::size_t kViolationsPrinted = 10;  // per run; the count says how many more

std::string seconds(Time us) { return fmt::format("{}.{:06}", us / 1'000'000, us % 1'000'000); }

struct Totals {
  std::uint64_t runs = 0;
  std::uint64_t failed = 0;
  std::uint64_t messages = 0;
  std::uint64_t rings = 0;
  Time virtual_us = 0;
};

void print_summary(const RunParams& params, const SimResult& r) {
  fmt::print("seed {}: ok: {} node{}, {} messages delivered ({} deliveries), {} ring{} formed, {} submissions "
             "refused and retried, {} token losses, {} token retransmits, {} s virtual ({} s to converge)\n",
             params.seed, params.nodes, params.nodes == 1 ? "" : "s", r.messages_delivered, r.deliveries, r.rings_formed,
             r.rings_formed == 1 ? "" : "s", r.submit_refusals, r.counters.token_losses,
             r.counters.tokens_retransmitted, seconds(r.end_us), seconds(r.converged_us));
}

void print_failure(const RunParams& params, const SimResult& r) {
  bool safety = false;
  for (const Violation& v : r.violations) safety = safety || kind_of(v.property) == Kind::kSafety;
  fmt::print("seed {}: FAILED ({}): {} violation{}\n", params.seed, safety ? "safety" : "liveness",
             r.violation_count, r.violation_count == 1 ? "" : "s");
  for (std::size_t i = 0; i < r.violations.size() && i < kViolationsPrinted; ++i)
    fmt::print("  {}\n", describe(r.violations[i]));
  if (r.violation_count > kViolationsPrinted)
    fmt::print("  ... and {} more\n", r.violation_count - kViolationsPrinted);
  for (const NodeSnapshot& n : r.nodes)
    fmt::print("  node {}: {}delivered through seq {}, {} queued, {} refused waiting; tokens {} received, "
               "{} deferred, {} lost; {} sends refused\n",
               n.id, n.operational ? "" : "not operational, ", n.delivered_through, n.send_queue, n.pending,
               n.counters.tokens_received, n.counters.tokens_deferred, n.counters.token_losses,
               n.counters.send_refused);
  fmt::print("replay: {}\n", command_line(params));
}

// One seed. False: the parameters cannot make a cluster (printed).
bool run_one(const SimOptions& options, std::uint64_t seed, Totals& totals) {
  const RunParams params = resolve(options, seed);
  const bool verbose = !options.range || options.verbose;
  if (verbose) fmt::print("{}\n", command_line(params));
  auto cluster = SimCluster::create(to_spec(params));
  if (!cluster) {
    fmt::print(stderr, "rtotem-sim: seed {}: {}\n", seed, cluster.error().message());
    return false;
  }
  const SimResult result = (*cluster)->run();
  ++totals.runs;
  totals.messages += result.messages_delivered;
  totals.rings += result.rings_formed;
  totals.virtual_us += result.end_us;
  if (result.ok()) {
    if (verbose) print_summary(params, result);
    return true;
  }
  ++totals.failed;
  if (!verbose) fmt::print("{}\n", command_line(params));
  print_failure(params, result);
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::span<char* const> args(argv + (argc > 0 ? 1 : 0), argc > 0 ? static_cast<std::size_t>(argc - 1) : 0);
  auto options = parse_sim_options(args);
  if (!options) {
    fmt::print(stderr, "rtotem-sim: {}\n{}", options.error().message(), sim_usage());
    return kExitUsage;
  }
  if (options->help) {
    fmt::print("{}", sim_usage());
    return kExitHeld;
  }
  Totals totals;
  for (std::uint64_t seed = options->seed_first;; ++seed) {
    if (!run_one(*options, seed, totals)) return kExitUsage;
    if (seed == options->seed_last) break;
  }
  if (options->range)
    fmt::print("seeds {}..{}: {} runs, {} failed, {} messages delivered, {} rings formed, {} s virtual time\n",
               options->seed_first, options->seed_last, totals.runs, totals.failed, totals.messages, totals.rings,
               seconds(totals.virtual_us));
  return totals.failed == 0 ? kExitHeld : kExitViolated;
}
