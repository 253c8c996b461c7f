// Parsing rtotem-sim's command line, drawing the parameters a seed leaves open, and spelling a
// run back out as the command that replays it.
#include "src/sim/sim_options.hpp"

#include "base/cli_args.hpp"
#include "membership/packets.hpp"
#include "src/sim/sim_quorum.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace rtotem::sim {
namespace {

// The parameter draws take their own stream, split from the seed: the run's stream (the
// network's Rng, seeded with the seed itself) is then the same whether parameters are drawn or
// given, which is what lets a printed command replay the run.
constexpr std::uint64_t kParamsSalt = 0x7061'7261'6d73'0001;  // "params"

// Drawn fault rates, in hundredths per virtual second: at most one split or crash every 2 s on
// average, so that in a default run (5 s, a ring re-forming in ~2.5 token timeouts) the rings
// settle between faults about as often as faults overlap.
constexpr std::uint64_t kDrawnRateMinPercent = 5;
constexpr std::uint64_t kDrawnRateMaxPercent = 50;

constexpr CliValue kValue = CliValue::kAny;
constexpr std::uint32_t kClientProcessesMax = 8;
constexpr CliOption kOptions[] = {{"-h"},
                                  {"--help"},
                                  {"-v"},
                                  {"--verbose"},
                                  {"--crypto"},
                                  {"--groups"},
                                  {"--seed", kValue},
                                  {"--seeds", kValue},
                                  {"--nodes", kValue},
                                  {"--duration", kValue},
                                  {"--loss", kValue},
                                  {"--dup", kValue},
                                  {"--reorder", kValue},
                                  {"--delay-us", kValue},
                                  {"--rate", kValue},
                                  {"--safe", kValue},
                                  {"--token-timeout-ms", kValue},
                                  {"--partitions", kValue},
                                  {"--crashes", kValue},
                                  {"--stops", kValue},
                                  {"--late", kValue},
                                  {"--corrupt", kValue},
                                  {"--pauses", kValue},
                                  {"--clock-skew", kValue},
                                  {"--slow", kValue},
                                  {"--torn", kValue},
                                  {"--message-size", kValue},
                                  {"--lose-state", kValue},
                                  {"--quorum", kValue},
                                  {"--links", kValue},
                                  {"--link-mode", kValue},
                                  {"--link-cuts", kValue},
                                  {"--vote-changes", kValue},
                                  {"--reloads", kValue},
                                  {"--clients", kValue}};

constexpr std::string_view kUsage =
    "usage: rtotem-sim [--seed S | --seeds A..B] [options]\n"
    "Runs totem nodes on a simulated network under virtual time, with faults, and checks no\n"
    "creation, no duplication, total order, safe delivery, agreement, virtual synchrony,\n"
    "self-delivery and liveness. The nodes form their rings themselves, from a cold start.\n"
    "Options not given are drawn from the seed; the parameters are printed first, and a failure\n"
    "prints the command that replays it. Exit 0: every property held; 1: a violation; 2: bad usage.\n"
    "  --seed S               the run's seed, decimal or 0x hex (default 1)\n"
    "  --seeds A..B           every seed from A to B, one summary line at the end\n"
    "  --nodes N              nodes, 1..64 (drawn: 3..8); above 42, a 9000-byte mtu\n"
    "  --duration SECONDS     virtual seconds of faults and traffic (default 5); then the faults\n"
    "                         stop, crashed nodes restart, and the nodes get 30 token timeouts\n"
    "                         to become one ring and deliver everything\n"
    "  --loss P               probability a packet copy is lost (drawn: 0..0.2)\n"
    "  --dup P                probability a packet copy arrives twice (drawn: 0..0.1)\n"
    "  --reorder P            delay jitter, P x 1 ms on top of --delay-us; 0 keeps send order\n"
    "                         (drawn: 0..1)\n"
    "  --delay-us US          one-way delay of a packet before jitter (drawn: 5..200)\n"
    "  --rate R               messages per second each node submits, on average (drawn: 20..1000)\n"
    "  --safe P               share of messages submitted as safe, the rest agreed (drawn: 0..1)\n"
    "  --token-timeout-ms MS  the totem token timeout (default 1000)\n"
    "  --partitions RATE      network splits per virtual second, 0..10: a partition into 2 or 3\n"
    "                         groups or (1 in 3) one-way links cut, healed after 0.2..4 token\n"
    "                         timeouts\n"
    "  --crashes RATE         crashes per virtual second, 0..10, of a live node (never the last);\n"
    "                         it restarts after 0.5..5 token timeouts\n"
    "                         (drawn for both: 40% of seeds neither, 30% partitions only, 30%\n"
    "                         both; each rate 0.05..0.5)\n"
    "  --stops P              the share of crashes that are graceful stops: the node leaves the\n"
    "                         ring first, as rtotemd does on SIGTERM (drawn: 0..1)\n"
    "  --message-size N|A..B  every message N bytes, or uniform in A..B, 12..32768 (2 or 3\n"
    "                         pieces at the default mtu: 1333..3996). Not given: sizes drawn\n"
    "                         per message, 5% of them split in pieces\n"
    "  --lose-state P         the share of restarts that come back without their state directory\n"
    "                         (the stored ring seq lost); never drawn (default 0)\n"
    "  --links N              links per node, 1..4, each a network of its own with the same faults\n"
    "                         drawn apart; partitions, cuts and deafness strike every link. The\n"
    "                         nodes run rtotemd's LinkSet, pinging as it does; never drawn\n"
    "  --link-mode MODE       passive (default) or active, as totem.link_mode\n"
    "  --link-cuts RATE       link failures per virtual second, 0..10: one node's port on one link\n"
    "                         down for 0.2..4 token timeouts, one at a time; with no other\n"
    "                         membership fault, the checker then wants one ring throughout\n"
    "                         (link-failover)\n"
    "  The faults below are each drawn off in half the seeds:\n"
    "  --late P               share of packet copies delayed 0.5..5 token timeouts, a heavy\n"
    "                         tail behind the jitter (drawn: 0.001..0.02)\n"
    "  --corrupt P            share of delivered copies damaged: cut short, or a bit flipped\n"
    "                         where a decoder checks (anywhere with --crypto) (drawn: 0.001..0.02)\n"
    "  --pauses RATE          pauses per virtual second, 0..10, of a live node: no polls, no\n"
    "                         timers for 0.1..3 token timeouts, then every timer overdue\n"
    "                         (drawn: 0.05..0.5)\n"
    "  --clock-skew S         each node's clock runs up to S fast or slow, 0..0.1 (drawn:\n"
    "                         0.001..0.05)\n"
    "  --slow P               chance that a node is a slow receiver: it polls at most every\n"
    "                         0.5..10 ms, through a receive ring of 8 windows (drawn: 0.1..0.5)\n"
    "  --torn P               share of crashes (not stops) that strike between a call into the\n"
    "                         node that queued packets and its flush: what it delivered stays\n"
    "                         delivered, what it queued never leaves (drawn: 0..1); above 0, a\n"
    "                         crashed node's packets in flight still land, late ones after its\n"
    "                         restart\n"
    "  --crypto               seal every packet with a cluster key (XChaCha20-Poly1305, replay\n"
    "                         windows), as rtotemd with totem.crypto on; slower (default off)\n"
    "  --groups               every node runs process groups (rtotemd's GroupService): its\n"
    "                         processes join, leave and multicast to a few groups, and the\n"
    "                         checker judges their views too; never drawn (default off)\n"
    "  --clients N            every node runs rtotemd's node stack (process groups, staging and\n"
    "                         credits, key store, node control) and N processes (0..8) on the\n"
    "                         real librtotem over in-memory connections: they join, leave and\n"
    "                         join again, multicast messages small and in pieces, dispatch late\n"
    "                         and disconnect; the checker judges every message they are handed,\n"
    "                         and the stack's group views; never drawn (default 0: the bare\n"
    "                         services; not with --groups or --quorum)\n"
    "  --quorum FEATURES      every node runs votequorum (rtotemd's QuorumService), and the\n"
    "                         checker judges that no two disjoint rings are quorate at once,\n"
    "                         that members decide alike, and wait_for_all. FEATURES: majority,\n"
    "                         or a comma list of votes (node n has 1 + n % 3), two_node,\n"
    "                         wait_for_all[=0], last_man_standing (window: 2 token timeouts),\n"
    "                         auto_tie_breaker[=lowest|highest|ID:ID...], device[=VOTES] (a\n"
    "                         quorum device and an arbiter as qnetd, which stalls or is cut\n"
    "                         off from a node at half the --partitions rate); never drawn\n"
    "  --vote-changes RATE    with --quorum: runtime changes per virtual second, 0..10, as an\n"
    "                         operator makes them (rtotemctl quorum votes|expected) at a node\n"
    "                         whose ring is in sync and quorate: a drawn node's votes (0..3) or\n"
    "                         the expected votes; never drawn (default 0)\n"
    "  --reloads RATE         with --clients: reloads of every node per virtual second, 0..10,\n"
    "                         as an operator asks them (rtotemctl reload) after editing the\n"
    "                         token in every node's file (in one of four, in some files only);\n"
    "                         judged: a change takes effect at one place in the order on every\n"
    "                         member; never drawn (default 0)\n"
    "  -v, --verbose          with --seeds: a line per seed too\n"
    "  -h, --help             this text\n";

// A fault off in half the seeds, else lo..hi / scale: both draws made either way.
double on_or_off(Rng& rng, std::uint64_t lo, std::uint64_t hi, double scale) {
  const bool on = rng.uniform(2) == 0;
  const double value = static_cast<double>(rng.uniform_range(lo, hi)) / scale;
  return on ? value : 0;
}

Result<void> parse_message_size(SimOptions& options, std::string_view text) {
  const auto dots = text.find("..");
  const std::string_view low_text = text.substr(0, dots);
  const std::string_view high_text = dots == std::string_view::npos ? low_text : text.substr(dots + 2);
  auto low = parse_number("--message-size", low_text, kMessageSizeMin, kMessageSizeMax);
  if (!low) return low.error();
  auto high = parse_number("--message-size", high_text, kMessageSizeMin, kMessageSizeMax);
  if (!high) return high.error();
  if (*high < *low) return Error::make("--message-size: {} ends before it starts", text);
  options.message_size_low = *low;
  options.message_size_high = *high;
  return {};
}

Result<void> parse_seeds(SimOptions& options, std::string_view text) {
  const auto dots = text.find("..");
  if (dots == std::string_view::npos) return Error::make("--seeds: '{}' is not A..B", text);
  constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
  auto first = parse_number<std::uint64_t>("--seeds", text.substr(0, dots), 0, kU64Max);
  if (!first) return first.error();
  auto last = parse_number<std::uint64_t>("--seeds", text.substr(dots + 2), 0, kU64Max);
  if (!last) return last.error();
  if (*last < *first) return Error::make("--seeds: {} ends before it starts", text);
  if (*last - *first >= kSeedsPerRangeMax)
    return Error::make("--seeds: {} is more than {} seeds", text, kSeedsPerRangeMax);
  options.seed_first = *first;
  options.seed_last = *last;
  options.range = true;
  return {};
}

template <class T>
Result<void> store(std::optional<T>& field, Result<T> parsed) {
  if (!parsed) return parsed.error();
  field = *parsed;
  return {};
}

// Sets the one option `name` names; the reader has checked that it is one of kOptions.
Result<void> apply_option(SimOptions& options, std::string_view name, std::string_view value) {
  constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
  const auto flag = [](bool& field) -> Result<void> {
    field = true;
    return {};
  };
  if (name == "-v" || name == "--verbose") return flag(options.verbose);
  if (name == "--crypto") return flag(options.crypto);
  if (name == "--groups") return flag(options.groups);
  if (name == "--clients") {
    auto processes = parse_number(name, value, std::uint32_t{0}, kClientProcessesMax);
    if (!processes) return processes.error();
    options.clients = *processes;
    return {};
  }
  if (name == "--seed") {
    auto seed = parse_number<std::uint64_t>(name, value, 0, kU64Max);
    if (!seed) return seed.error();
    options.seed_first = options.seed_last = *seed;
    return {};
  }
  if (name == "--seeds") return parse_seeds(options, value);
  if (name == "--nodes") return store(options.nodes, parse_number(name, value, std::uint32_t{1}, kNodesMax));
  if (name == "--duration") return store(options.duration_s, parse_number(name, value, 1e-6, kDurationMaxS));
  if (name == "--loss") return store(options.loss, parse_number(name, value, 0.0, 1.0));
  if (name == "--dup") return store(options.dup, parse_number(name, value, 0.0, 1.0));
  if (name == "--reorder") return store(options.reorder, parse_number(name, value, 0.0, 1.0));
  if (name == "--delay-us") return store(options.delay_us, parse_number<std::uint32_t>(name, value, 0, kDelayMaxUs));
  if (name == "--rate") return store(options.rate, parse_number(name, value, 1e-3, 1e6));
  if (name == "--safe") return store(options.safe, parse_number(name, value, 0.0, 1.0));
  if (name == "--token-timeout-ms")
    return store(options.token_timeout_ms, parse_number<std::uint32_t>(name, value, 10, 600'000));
  if (name == "--partitions") return store(options.partitions, parse_number(name, value, 0.0, kFaultRateMax));
  if (name == "--crashes") return store(options.crashes, parse_number(name, value, 0.0, kFaultRateMax));
  if (name == "--stops") return store(options.stops, parse_number(name, value, 0.0, 1.0));
  if (name == "--late") return store(options.late, parse_number(name, value, 0.0, 1.0));
  if (name == "--corrupt") return store(options.corrupt, parse_number(name, value, 0.0, 1.0));
  if (name == "--pauses") return store(options.pauses, parse_number(name, value, 0.0, kFaultRateMax));
  if (name == "--clock-skew") return store(options.clock_skew, parse_number(name, value, 0.0, kClockSkewMax));
  if (name == "--slow") return store(options.slow, parse_number(name, value, 0.0, 1.0));
  if (name == "--torn") return store(options.torn, parse_number(name, value, 0.0, 1.0));
  if (name == "--message-size") return parse_message_size(options, value);
  if (name == "--quorum") {
    if (auto features = parse_quorum_features(value, kNodesMax, kDefaultTokenTimeoutMs); !features)
      return features.error();
    options.quorum = value;
    return {};
  }
  if (name == "--links") {
    auto links = parse_number(name, value, std::uint32_t{1}, kSimLinksMax);
    if (!links) return links.error();
    options.links = *links;
    return {};
  }
  if (name == "--link-mode") {
    if (value != "passive" && value != "active")
      return Error::make("{}: '{}' is neither passive nor active", name, value);
    options.link_active = value == "active";
    return {};
  }
  if (name == "--link-cuts") {
    auto rate = parse_number(name, value, 0.0, kFaultRateMax);
    if (!rate) return rate.error();
    options.link_cuts = *rate;
    return {};
  }
  if (name == "--vote-changes") {
    auto rate = parse_number(name, value, 0.0, kFaultRateMax);
    if (!rate) return rate.error();
    options.vote_changes = *rate;
    return {};
  }
  if (name == "--reloads") {
    auto rate = parse_number(name, value, 0.0, kFaultRateMax);
    if (!rate) return rate.error();
    options.reloads = *rate;
    return {};
  }
  if (name == "--lose-state") {
    auto share = parse_number(name, value, 0.0, 1.0);
    if (!share) return share.error();
    options.lose_state = *share;
    return {};
  }
  return Error::make("unknown option '{}'", name);
}

}  // namespace

Result<SimOptions> parse_sim_options(std::span<char* const> args) {
  SimOptions options;
  bool seed_given = false;
  for (CliReader reader(args, kOptions); !reader.done();) {
    auto option = reader.next();
    if (!option) return option.error();
    const auto [name, value] = *option;
    if (name == "-h" || name == "--help") {
      options.help = true;
      return options;
    }
    if (name == "--seed" || name == "--seeds") {
      if (seed_given) return Error::make("{}: give one --seed or one --seeds", name);
      seed_given = true;
    }
    if (auto ok = apply_option(options, name, value); !ok) return ok.error();
  }
  if (options.vote_changes > 0 && options.quorum.empty()) return Error::make("--vote-changes needs --quorum");
  if (options.reloads > 0 && options.clients == 0) return Error::make("--reloads needs --clients");
  if (options.clients > 0 && (options.groups || !options.quorum.empty()))
    return Error::make("--clients runs the node stack's own process groups: not with --groups or --quorum");
  return options;
}

RunParams resolve(const SimOptions& options, std::uint64_t seed) {
  Rng rng(seed ^ kParamsSalt);
  RunParams p;
  p.seed = seed;
  // Always every draw, in this order: see the header.
  p.nodes = static_cast<std::uint32_t>(rng.uniform_range(3, 8));
  p.loss = static_cast<double>(rng.uniform_range(0, 200)) / 1000;
  p.dup = static_cast<double>(rng.uniform_range(0, 100)) / 1000;
  p.reorder = static_cast<double>(rng.uniform_range(0, 100)) / 100;
  p.delay_us = static_cast<std::uint32_t>(rng.uniform_range(5, 200));
  p.rate = static_cast<double>(rng.uniform_range(20, 1000));
  p.safe = static_cast<double>(rng.uniform_range(0, 10)) / 10;
  // The membership faults' profile: 4 in 10 seeds have none (rings form once, at the start), 3
  // partitions only, 3 partitions and crashes. Both rates are drawn whatever the profile.
  const std::uint64_t profile = rng.uniform(10);
  const double partitions = static_cast<double>(rng.uniform_range(kDrawnRateMinPercent, kDrawnRateMaxPercent)) / 100;
  const double crashes = static_cast<double>(rng.uniform_range(kDrawnRateMinPercent, kDrawnRateMaxPercent)) / 100;
  p.partitions = profile >= 4 ? partitions : 0;
  p.crashes = profile >= 7 ? crashes : 0;
  p.stops = static_cast<double>(rng.uniform_range(0, 10)) / 10;  // drawn after the above: they stay as they were
  // Issue 18's faults, after --stops for the same reason: a replay command printed before them
  // replays exactly with each given as 0.
  p.late = on_or_off(rng, 1, 20, 1000);
  p.corrupt = on_or_off(rng, 1, 20, 1000);
  p.pauses = on_or_off(rng, kDrawnRateMinPercent, kDrawnRateMaxPercent, 100);
  p.clock_skew = on_or_off(rng, 1, 50, 1000);
  p.slow = on_or_off(rng, 1, 5, 10);
  p.torn = static_cast<double>(rng.uniform_range(0, 10)) / 10;
  p.duration_s = kDefaultDurationS;
  p.token_timeout_ms = kDefaultTokenTimeoutMs;
  p.nodes = options.nodes.value_or(p.nodes);
  p.duration_s = options.duration_s.value_or(p.duration_s);
  p.loss = options.loss.value_or(p.loss);
  p.dup = options.dup.value_or(p.dup);
  p.reorder = options.reorder.value_or(p.reorder);
  p.delay_us = options.delay_us.value_or(p.delay_us);
  p.rate = options.rate.value_or(p.rate);
  p.safe = options.safe.value_or(p.safe);
  p.token_timeout_ms = options.token_timeout_ms.value_or(p.token_timeout_ms);
  p.partitions = options.partitions.value_or(p.partitions);
  p.crashes = options.crashes.value_or(p.crashes);
  p.stops = options.stops.value_or(p.stops);
  p.late = options.late.value_or(p.late);
  p.corrupt = options.corrupt.value_or(p.corrupt);
  p.pauses = options.pauses.value_or(p.pauses);
  p.clock_skew = options.clock_skew.value_or(p.clock_skew);
  p.slow = options.slow.value_or(p.slow);
  p.torn = options.torn.value_or(p.torn);
  p.crypto = options.crypto;
  p.groups = options.groups;
  p.clients = options.clients;
  p.message_size_low = options.message_size_low;
  p.message_size_high = options.message_size_high;
  p.lose_state = options.lose_state;
  p.links = options.links;
  p.link_active = options.link_active;
  p.link_cuts = options.link_cuts;
  p.quorum = options.quorum;
  p.vote_changes = options.vote_changes;
  p.reloads = options.reloads;
  return p;
}

SimSpec to_spec(const RunParams& params) {
  SimSpec spec;
  spec.seed = params.seed;
  spec.nodes = params.nodes;
  spec.duration_us = static_cast<Time>(std::llround(params.duration_s * 1e6));
  spec.faults.loss = params.loss;
  spec.faults.duplicate = params.dup;
  spec.faults.delay_min_us = params.delay_us;
  spec.faults.delay_max_us = params.delay_us + static_cast<Time>(std::llround(params.reorder * kJitterMaxUs));
  spec.rate_per_s = params.rate;
  spec.safe_fraction = params.safe;
  spec.totem.token_timeout_ms = params.token_timeout_ms;
  spec.partitions_per_s = params.partitions;
  spec.crashes_per_s = params.crashes;
  spec.stop_share = params.stops;
  spec.crypto = params.crypto;
  const Time timeout_us = Time{params.token_timeout_ms} * 1000;
  spec.faults.late = params.late;
  spec.faults.late_min_us = timeout_us / 2;
  spec.faults.late_max_us = 5 * timeout_us;
  spec.faults.corrupt = params.corrupt;
  spec.pauses_per_s = params.pauses;
  spec.clock_skew = params.clock_skew;
  spec.slow_share = params.slow;
  spec.torn_share = params.torn;
  spec.crashed_copies_land = params.torn > 0;
  if (params.nodes > membership::members_max_for_mtu(spec.backend.payload_mtu())) spec.backend.mtu = kJumboMtu;
  spec.groups = params.groups;
  spec.clients = params.clients;
  spec.message_size = params.message_size_low;
  spec.message_size_max = params.message_size_high;
  spec.lose_state = params.lose_state;
  spec.links = params.links;
  spec.link_mode = params.link_active ? transport::LinkMode::kActive : transport::LinkMode::kPassive;
  spec.link_cuts_per_s = params.link_cuts;
  spec.reloads_per_s = params.reloads;
  if (!params.quorum.empty()) {
    auto features = parse_quorum_features(params.quorum, params.nodes, params.token_timeout_ms);
    RTOTEM_ASSERT(features.ok());  // checked when the option was parsed
    spec.quorum = features->options;
    spec.quorum_votes = features->votes;
    spec.vote_changes_per_s = params.vote_changes;
  }
  return spec;
}

// fmt's "{}" prints a double in its shortest form that reads back to the same value.
std::string command_line(const RunParams& p) {
  return fmt::format(
             "rtotem-sim --seed {} --nodes {} --duration {} --loss {} --dup {} --reorder {} --delay-us {} --rate {} "
             "--safe {} --token-timeout-ms {} --partitions {} --crashes {} --stops {} --late {} --corrupt {} --pauses "
             "{} "
             "--clock-skew {} --slow {} --torn {}",
             p.seed, p.nodes, p.duration_s, p.loss, p.dup, p.reorder, p.delay_us, p.rate, p.safe, p.token_timeout_ms,
             p.partitions, p.crashes, p.stops, p.late, p.corrupt, p.pauses, p.clock_skew, p.slow, p.torn) +
         (p.lose_state > 0 ? fmt::format(" --lose-state {}", p.lose_state) : "") + (p.crypto ? " --crypto" : "") +
         (p.groups ? " --groups" : "") + (p.clients > 0 ? fmt::format(" --clients {}", p.clients) : "") +
         (p.links == 1 ? std::string()
                       : fmt::format(" --links {} --link-mode {} --link-cuts {}", p.links,
                                     p.link_active ? "active" : "passive", p.link_cuts)) +
         (p.quorum.empty() ? std::string() : " --quorum " + p.quorum) +
         (p.vote_changes > 0 ? fmt::format(" --vote-changes {}", p.vote_changes) : "") +
         (p.reloads > 0 ? fmt::format(" --reloads {}", p.reloads) : "") +
         (p.message_size_low == 0 ? std::string()
                                  : fmt::format(" --message-size {}..{}", p.message_size_low, p.message_size_high));
}

std::string_view sim_usage() noexcept { return kUsage; }

}  // namespace rtotem::sim
