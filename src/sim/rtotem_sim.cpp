// rtotem-sim: runs totem nodes on the simulated network, one seed or a range, and checks the
// protocol's guarantees; a failure prints the command that replays it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <span>
#include <string>

#include "base/cli_args.hpp"
#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_options.hpp"

namespace {

using namespace rtotem;
using namespace rtotem::sim;

constexpr int kExitHeld = 0;
constexpr int kExitViolated = 1;
constexpr int kExitUsage = 2;
constexpr std::size_t kViolationsPrinted = 10;  // per run; the count says how many more

// A run that does not finish leaves a sweep's seed unnamed: an assertion (RTOTEM_ASSERT) aborts
// the process, and a hung run is killed (by a timeout, or Ctrl-C). The handler writes this note,
// filled before each run, to stderr, then lets the signal end the process. write() from a fixed
// buffer: nothing in the handler allocates or locks.
constexpr int kNamedSignals[] = {SIGABRT, SIGTERM, SIGINT};
std::array<char, 1024> stop_note{};
std::size_t stop_note_size = 0;

extern "C" void write_stop_note(int signal_number) {
  if (stop_note_size > 0) {
    const ssize_t written = write(STDERR_FILENO, stop_note.data(), stop_note_size);
    (void)written;  // ending: nothing to do about a short write
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

void set_stop_note(const RunParams& params) {
  std::fflush(stdout);  // what the runs before printed comes first
  const auto out = fmt::format_to_n(stop_note.data(), stop_note.size() - 1,
                                    "rtotem-sim: seed {} did not finish (an assertion failed, or it was stopped)\n"
                                    "replay: {}\n",
                                    params.seed, command_line(params));
  stop_note_size = std::min(out.size, stop_note.size() - 1);
}

std::string seconds(Time us) { return fmt::format("{}.{:06}", us / 1'000'000, us % 1'000'000); }

struct Totals {
  std::uint64_t runs = 0;
  std::uint64_t failed = 0;
  std::uint64_t messages = 0;
  std::uint64_t configurations = 0;
  std::uint64_t rings = 0;
  std::uint64_t crashes = 0;
  std::uint64_t stops = 0;
  std::uint64_t states_lost = 0;  // restarts without their state (--lose-state)
  std::uint64_t partitions = 0;
  std::uint64_t link_cuts = 0;
  std::uint64_t pauses = 0;
  std::uint64_t torn = 0;             // crashes struck between a call into the Node and its flush
  std::uint64_t torn_unsent = 0;      // packets those calls queued, never sent
  std::uint64_t torn_deliveries = 0;  // deliveries made in those calls
  std::uint64_t late = 0;             // packet copies delayed by the heavy tail
  std::uint64_t corrupted = 0;        // packet copies delivered damaged
  std::uint64_t split = 0;            // messages sent in pieces
  std::uint64_t restarted = 0;        // of those, cut short by a ring change and sent again whole
  std::uint64_t deaf_left = 0;        // nodes that failed to receive and left their ring
  std::uint64_t group_changes = 0;    // --groups: what the GroupChecker judged
  std::uint64_t group_messages = 0;
  std::uint64_t group_views_compared = 0;
  std::uint64_t client_offers = 0;  // --clients: what the ClientChecker judged
  std::uint64_t client_deliveries = 0;
  std::uint64_t client_pieced = 0;
  std::uint64_t clients_cut_off = 0;
  std::uint64_t quorum_states = 0;  // --quorum: what the QuorumChecker judged
  std::uint64_t quorum_decisions_compared = 0;
  std::uint64_t quorum_early_compared = 0;
  std::uint64_t quorate_rings = 0;
  std::uint64_t synced_rings = 0;
  std::uint64_t silent_rings = 0;
  std::uint64_t quorum_changes_asked = 0;  // --vote-changes
  std::uint64_t quorum_changes_refused = 0;
  std::uint64_t quorum_changes_dropped = 0;
  std::uint64_t reloads_asked = 0;  // --reloads
  std::map<int, std::uint64_t> reload_answers;
  std::uint64_t reload_places = 0;
  std::uint64_t device_votes_given = 0;  // --quorum device
  std::uint64_t device_votes_refused = 0;
  std::uint64_t device_moves = 0;
  std::uint64_t device_faults = 0;
  Time virtual_us = 0;
};

const char* plural(std::uint64_t count) { return count == 1 ? "" : "s"; }

std::string ring_text(const RingId& ring) { return fmt::format("{}/{}", ring.rep, ring.seq); }

// --vote-changes: how many changes the services took and refused, and how many deliveries of
// one could not act (the ring changed first: the one-sided deliveries the quorum checks judge).
std::string changes_text(double rate, std::uint64_t asked, std::uint64_t refused, std::uint64_t dropped) {
  if (rate == 0) return "";
  return fmt::format(
      ", {} runtime changes ({} refused by votequorum's rule), {} deliveries of one that could not "
      "act",
      asked, refused, dropped);
}

// --reloads: what the operators asked, how the ring answered, and where timing changed.
std::string reloads_text(std::uint64_t asked, const std::map<int, std::uint64_t>& answers, std::uint64_t places) {
  std::string out = fmt::format("reloads: {} asked", asked);
  std::uint64_t answered = 0;
  for (const auto& [error, count] : answers) {
    const char* name = error == 0 ? "done" : strerrorname_np(-error);
    out += fmt::format(", {} {}", count, name != nullptr ? std::string(name) : fmt::format("errno {}", -error));
    answered += count;
  }
  return out +
         fmt::format(", {} unanswered (asked at a node that crashed); {} places in the order where timing changed",
                     asked - answered, places);
}

void print_summary(const RunParams& params, const SimResult& r) {
  fmt::print(
      "seed {}: ok: {} node{}, {} messages delivered ({} deliveries), {} configurations, {} ring{} formed, "
      "{} crash{}, {} partition{}, {} submissions refused and retried, {} token losses, {} token "
      "retransmits, {} s virtual ({} s to converge{}); {} pauses ({} timers fired overdue), {} torn crashes "
      "({} deliveries in the call struck, {} packets unsent), {} packet copies late, {} damaged, {} to a "
      "full receive ring, {} from a dead incarnation\n",
      params.seed, params.nodes, plural(params.nodes), r.messages_delivered, r.deliveries, r.configurations,
      r.rings_formed, plural(r.rings_formed), r.crashes, r.crashes == 1 ? "" : "es", r.partitions, plural(r.partitions),
      r.submit_refusals, r.counters.token_losses, r.counters.tokens_retransmitted, seconds(r.end_us),
      seconds(r.converged_us),
      r.drain_windows > 0 ? fmt::format(", {} drain window{} past the bound", r.drain_windows, plural(r.drain_windows))
                          : "",
      r.pauses, r.timers_overdue, r.torn, r.torn_deliveries, r.torn_unsent, r.network.late, r.network.corrupted,
      r.network.ring_full, r.network.from_dead_incarnation);
  if (params.groups)
    fmt::print("  groups: {} changes, {} messages, {} views compared\n", r.group_changes, r.group_messages,
               r.group_views_compared);
  if (params.clients > 0)
    fmt::print(
        "  clients: {} messages offered, {} delivered ({} in pieces), {} calls refused, {} cut off; groups: {} "
        "changes, {} messages, {} views compared\n",
        r.client_offers, r.client_deliveries, r.client_pieced, r.client_refusals, r.clients_cut_off, r.group_changes,
        r.group_messages, r.group_views_compared);
  if (params.links > 1) fmt::print("  links: {}, {} link cuts\n", params.links, r.link_cuts);
  if (params.reloads > 0) fmt::print("  {}\n", reloads_text(r.reloads_asked, r.reload_answers, r.reload_places));
  if (!params.quorum.empty())
    fmt::print(
        "  quorum: {} states, {} rings in sync ({} by the sync timeout), {} quorate, {} decisions compared ({} "
        "early){}\n",
        r.quorum_states, r.synced_rings, r.silent_rings, r.quorate_rings, r.quorum_decisions_compared,
        r.quorum_early_compared,
        changes_text(params.vote_changes, r.quorum_changes_asked, r.quorum_changes_refused, r.quorum_changes_dropped));
  if (r.device_votes_given + r.device_votes_refused > 0)
    fmt::print("  device: {} votes given, {} refused, moved {} times, {} faults\n", r.device_votes_given,
               r.device_votes_refused, r.device_moves, r.device_faults);
}

void print_node(const NodeSnapshot& n) {
  if (!n.alive) {
    fmt::print("  node {}: crashed ({} restarts)\n", n.id, n.restarts);
    return;
  }
  fmt::print(
      "  node {}: {} on ring {} {{{}}}, delivered through seq {}, {} queued, {} refused waiting; "
      "tokens {} received, {} deferred, {} lost; {} sends refused; {} restarts\n",
      n.id, membership::describe(n.state), ring_text(n.ring_id), fmt::join(n.members, ","), n.delivered_through,
      n.send_queue, n.pending, n.counters.tokens_received, n.counters.tokens_deferred, n.counters.token_losses,
      n.counters.send_refused, n.restarts);
  fmt::print("    counters:{}\n", counters_text(n.counters));
}

void print_failure(const RunParams& params, const SimResult& r) {
  bool safety = false;
  for (const Violation& v : r.violations) safety = safety || kind_of(v.property) == Kind::kSafety;
  fmt::print(
      "seed {}: FAILED ({}): {} violation{}; {} configurations, {} ring{} formed, {} crash{}, {} "
      "partition{}\n",
      params.seed, safety ? "safety" : "liveness", r.violation_count, plural(r.violation_count), r.configurations,
      r.rings_formed, plural(r.rings_formed), r.crashes, r.crashes == 1 ? "" : "es", r.partitions,
      plural(r.partitions));
  for (std::size_t i = 0; i < r.violations.size() && i < kViolationsPrinted; ++i)
    fmt::print("  {}\n", describe(r.violations[i]));
  if (r.violation_count > kViolationsPrinted) fmt::print("  ... and {} more\n", r.violation_count - kViolationsPrinted);
  for (const NodeSnapshot& n : r.nodes) print_node(n);
  const transport::SimNetworkStats& net = r.network;
  fmt::print(
      "  network: {} copies sent, {} delivered, {} lost, {} duplicated, {} cut, {} to no receiver, {} to a "
      "full receive ring, {} dropped by crashes; {} delayed late, {} damaged, {} from a dead incarnation\n",
      net.sent, net.delivered, net.lost, net.duplicated, net.cut, net.no_receiver, net.ring_full, net.crashed, net.late,
      net.corrupted, net.from_dead_incarnation);
  fmt::print("replay: {}\n", command_line(params));
}

// One seed. False: the parameters cannot make a cluster (printed).
bool run_one(const SimOptions& options, std::uint64_t seed, Totals& totals) {
  const RunParams params = resolve(options, seed);
  const bool verbose = !options.range || options.verbose;
  if (verbose) fmt::print("{}\n", command_line(params));
  set_stop_note(params);
  auto cluster = SimCluster::create(to_spec(params));
  if (!cluster) {
    fmt::print(stderr, "rtotem-sim: seed {}: {}\n", seed, cluster.error().message());
    return false;
  }
  const SimResult result = (*cluster)->run();
  ++totals.runs;
  totals.messages += result.messages_delivered;
  totals.configurations += result.configurations;
  totals.rings += result.rings_formed;
  totals.crashes += result.crashes;
  totals.stops += result.stops;
  totals.states_lost += result.states_lost;
  totals.partitions += result.partitions;
  totals.link_cuts += result.link_cuts;
  totals.pauses += result.pauses;
  totals.torn += result.torn;
  totals.torn_unsent += result.torn_unsent;
  totals.torn_deliveries += result.torn_deliveries;
  totals.late += result.network.late;
  totals.corrupted += result.network.corrupted;
  totals.split += result.counters.messages_split;
  totals.restarted += result.counters.messages_restarted;
  totals.deaf_left += result.counters.failed_to_receive;
  totals.virtual_us += result.end_us;
  totals.group_changes += result.group_changes;
  totals.group_messages += result.group_messages;
  totals.group_views_compared += result.group_views_compared;
  totals.client_offers += result.client_offers;
  totals.client_deliveries += result.client_deliveries;
  totals.client_pieced += result.client_pieced;
  totals.clients_cut_off += result.clients_cut_off;
  totals.quorum_states += result.quorum_states;
  totals.quorum_decisions_compared += result.quorum_decisions_compared;
  totals.quorum_early_compared += result.quorum_early_compared;
  totals.quorate_rings += result.quorate_rings;
  totals.synced_rings += result.synced_rings;
  totals.silent_rings += result.silent_rings;
  totals.quorum_changes_asked += result.quorum_changes_asked;
  totals.quorum_changes_refused += result.quorum_changes_refused;
  totals.quorum_changes_dropped += result.quorum_changes_dropped;
  totals.reloads_asked += result.reloads_asked;
  for (const auto& [error, count] : result.reload_answers) totals.reload_answers[error] += count;
  totals.reload_places += result.reload_places;
  totals.device_votes_given += result.device_votes_given;
  totals.device_votes_refused += result.device_votes_refused;
  totals.device_moves += result.device_moves;
  totals.device_faults += result.device_faults;
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
  const std::span<char* const> args = cli_arguments(argc, argv);
  auto options = parse_sim_options(args);
  if (!options) {
    fmt::print(stderr, "rtotem-sim: {}\n{}", options.error().message(), sim_usage());
    return kExitUsage;
  }
  if (options->help) {
    fmt::print("{}", sim_usage());
    return kExitHeld;
  }
  for (int signal_number : kNamedSignals) std::signal(signal_number, write_stop_note);
  Totals totals;
  for (std::uint64_t seed = options->seed_first;; ++seed) {
    if (!run_one(*options, seed, totals)) return kExitUsage;
    if (seed == options->seed_last) break;
  }
  if (options->range)
    fmt::print(
        "seeds {}..{}: {} runs, {} failed, {} messages delivered, {} configurations, {} rings formed, {} "
        "crashes ({} graceful stops, {} torn with {} deliveries and {} packets unsent in the call struck, {} "
        "restarts without state), {} partitions, {} pauses, {} messages split ({} sent again whole after a "
        "ring change), {} failures to receive, {} packet copies late, {} damaged, {} s virtual time\n",
        options->seed_first, options->seed_last, totals.runs, totals.failed, totals.messages, totals.configurations,
        totals.rings, totals.crashes, totals.stops, totals.torn, totals.torn_deliveries, totals.torn_unsent,
        totals.states_lost, totals.partitions, totals.pauses, totals.split, totals.restarted, totals.deaf_left,
        totals.late, totals.corrupted, seconds(totals.virtual_us));
  if (options->range && options->links > 1)
    fmt::print("links: {} a node, {} link cuts\n", options->links, totals.link_cuts);
  if (options->range && options->groups)
    fmt::print("groups: {} changes, {} messages, {} views compared\n", totals.group_changes, totals.group_messages,
               totals.group_views_compared);
  if (options->range && options->clients > 0)
    fmt::print(
        "clients: {} messages offered, {} delivered ({} in pieces), {} connections cut off; groups: {} "
        "changes, {} messages, {} views compared\n",
        totals.client_offers, totals.client_deliveries, totals.client_pieced, totals.clients_cut_off,
        totals.group_changes, totals.group_messages, totals.group_views_compared);
  if (options->range && !options->quorum.empty())
    fmt::print(
        "quorum: {} states, {} rings in sync ({} by the sync timeout), {} quorate, {} decisions compared ({} "
        "early){}\n",
        totals.quorum_states, totals.synced_rings, totals.silent_rings, totals.quorate_rings,
        totals.quorum_decisions_compared, totals.quorum_early_compared,
        changes_text(options->vote_changes, totals.quorum_changes_asked, totals.quorum_changes_refused,
                     totals.quorum_changes_dropped));
  if (options->range && options->reloads > 0)
    fmt::print("{}\n", reloads_text(totals.reloads_asked, totals.reload_answers, totals.reload_places));
  if (options->range && totals.device_votes_given + totals.device_votes_refused > 0)
    fmt::print("device: {} votes given, {} refused, moved {} times, {} faults\n", totals.device_votes_given,
               totals.device_votes_refused, totals.device_moves, totals.device_faults);
  return totals.failed == 0 ? kExitHeld : kExitViolated;
}
