// rtotem-sim's command line: what is given, what the seed draws, and the one-line command that
// replays a run with every parameter spelled out.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "src/sim/sim_cluster.hpp"
#include "base/result.hpp"

namespace rtotem::sim {

inline constexpr std::uint64_t kSeedsPerRangeMax = 100'000'000;
inline constexpr double kDurationMaxS = 24 * 3600;
inline constexpr std::uint32_t kDelayMaxUs = 1'000'000;
inline constexpr Time kJitterMaxUs = 1'000;  // --reorder 1: delays spread over 1 ms
inline constexpr double kDefaultDurationS = 5;
inline constexpr std::uint32_t kDefaultTokenTimeoutMs = 1000;
// --nodes (drawn: 3..8): a ring's most (membership::kMembersMax). Above what a commit token holds
// at the default mtu (42 nodes), the run takes kJumboMtu.
inline constexpr std::uint32_t kNodesMax = 64;
inline constexpr std::uint32_t kJumboMtu = 9000;
inline constexpr std::uint32_t kMessageSizeMin = kStampSize;  // --message-size: a message names itself
inline constexpr std::uint32_t kMessageSizeMax = kSimMessageSizeMax;

// Every parameter of one run, as the command line spells it.
struct RunParams {
  std::uint64_t seed = 0;
  std::uint32_t nodes = 0;
  double duration_s = 0;       // virtual seconds of the fault phase
  double loss = 0;             // probability a packet copy is lost
  double dup = 0;              // probability a packet copy arrives twice
  double reorder = 0;          // delay jitter, as a share of kJitterMaxUs: 0 keeps send order
  std::uint32_t delay_us = 0;  // one-way delay before jitter
  double rate = 0;             // messages per second each node submits, on average
  double safe = 0;             // the share of messages submitted as safe
  std::uint32_t token_timeout_ms = 0;
  double partitions = 0;  // network splits (partitions, one-way link cuts) per virtual second
  double crashes = 0;     // node crashes per virtual second, each followed by a restart
  double stops = 0;       // the share of those crashes that are graceful stops
  bool crypto = false;    // packets sealed (never drawn: --crypto)
  // Issue 18's faults, drawn after all of the above (see SimSpec for each).
  double late = 0;            // the share of copies delayed 0.5..5 token timeouts
  double corrupt = 0;         // the share of delivered copies damaged
  double pauses = 0;          // node pauses per virtual second
  double clock_skew = 0;      // each node's clock rate error, at most this
  double slow = 0;            // the chance that a node is a slow receiver
  double torn = 0;            // the share of (non-graceful) crashes struck before a flush
  bool groups = false;        // process groups on every node (never drawn: --groups)
  std::uint32_t clients = 0;  // librtotem processes per node over the node stack (never drawn: --clients)
  // Never drawn: 0 draws each message's size; else sizes uniform in [low, high].
  std::uint32_t message_size_low = 0;
  std::uint32_t message_size_high = 0;
  double lose_state = 0;  // the share of restarts without their state (never drawn: --lose-state)
  // Never drawn (--links, --link-mode, --link-cuts): links per node, their mode, and link
  // failures per virtual second (SimSpec).
  std::uint32_t links = 1;
  bool link_active = false;
  double link_cuts = 0;
  std::string quorum;       // votequorum's features on every node (sim_quorum.hpp); empty: none
  double vote_changes = 0;  // runtime quorum changes per virtual second (never drawn: --vote-changes)
  double reloads = 0;       // reloads of every node per virtual second (never drawn: --reloads)
};

struct SimOptions {
  std::uint64_t seed_first = 1;
  std::uint64_t seed_last = 1;  // == seed_first unless --seeds A..B
  bool range = false;           // --seeds: one summary for the range
  // Given on the command line; the rest is drawn from each seed.
  std::optional<std::uint32_t> nodes;
  std::optional<double> duration_s;
  std::optional<double> loss;
  std::optional<double> dup;
  std::optional<double> reorder;
  std::optional<std::uint32_t> delay_us;
  std::optional<double> rate;
  std::optional<double> safe;
  std::optional<std::uint32_t> token_timeout_ms;
  std::optional<double> partitions;
  std::optional<double> crashes;
  std::optional<double> stops;
  std::optional<double> late;
  std::optional<double> corrupt;
  std::optional<double> pauses;
  std::optional<double> clock_skew;
  std::optional<double> slow;
  std::optional<double> torn;
  double lose_state = 0;               // --lose-state P
  std::uint32_t links = 1;             // --links N
  bool link_active = false;            // --link-mode active
  double link_cuts = 0;                // --link-cuts RATE
  bool crypto = false;                 // --crypto: seal every packet
  bool groups = false;                 // --groups: process groups on every node
  std::uint32_t clients = 0;           // --clients N: the node stack, and N librtotem processes over it
  std::string quorum;                  // --quorum FEATURES (sim_quorum.hpp)
  double vote_changes = 0;             // --vote-changes RATE (needs --quorum)
  double reloads = 0;                  // --reloads RATE (needs --clients)
  std::uint32_t message_size_low = 0;  // --message-size N or LOW..HIGH; 0: drawn
  std::uint32_t message_size_high = 0;
  bool verbose = false;  // a range: a line per seed too
  bool help = false;     // --help: print the usage and exit 0
};

// Parses argv[1..]; the error names the argument at fault.
Result<SimOptions> parse_sim_options(std::span<char* const> args);

// The parameters of run `seed`: those given, the others drawn from the seed. Every draw is made
// whether or not its value is given, so spelling a drawn value out changes nothing else.
RunParams resolve(const SimOptions& options, std::uint64_t seed);
SimSpec to_spec(const RunParams& params);
// "rtotem-sim --seed 7 --nodes 5 ...": every parameter, so it replays the run exactly.
std::string command_line(const RunParams& params);

std::string_view sim_usage() noexcept;

}  // namespace rtotem::sim
