// The simulator's faults of issue 18, each shown to happen and to leave every guarantee standing:
// late copies, pauses, skewed clocks, damaged packets, slow receivers, torn crashes and a dead
// incarnation's packets, 64 nodes; and their options.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "membership/packets.hpp"
#include "src/sim/history_checker.hpp"
#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_cluster_member.hpp"
#include "src/sim/sim_options.hpp"
#include "tests/sim/scenario_helpers.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::sim {
namespace {

ScriptedFault pause_at(Time at_us, NodeId node, Time length_us) {
  return {.at_us = at_us, .kind = ScriptedFault::Kind::kPause, .node = node, .length_us = length_us};
}

// The late fault as rtotem-sim sets it: 0.5..5 token timeouts.
void make_late(SimSpec& spec, double share) {
  const Time timeout_us = Time{spec.totem.token_timeout_ms} * 1000;
  spec.faults.late = share;
  spec.faults.late_min_us = timeout_us / 2;
  spec.faults.late_max_us = 5 * timeout_us;
}

std::uint64_t foreign_ring_packets(const SimResult& r) { return r.counters.tokens_foreign_ring; }

// Node 5 crashes and comes back: the rings {1..5}, {1..4}, {1..5} follow one another. Copies held
// back for up to 5 token timeouts reach nodes that have moved on to the next ring: with the late
// fault, more tokens of a ring already left arrive (stale tokens, counted as foreign).
TEST(Faults, LateCopiesOfARingArriveAfterItsMembersMovedOn) {
  SimSpec spec = spec_of(41, 5, faults_of(0.01, 0, 20, 200), 300);
  spec.duration_us = 8 * kSecondUs;
  spec.script = {crash_at(1 * kSecondUs, 5), restart_at(kRestartUs, 5)};
  const SimResult prompt = run(spec);
  EXPECT_TRUE(prompt.ok()) << explain(spec, prompt);
  EXPECT_EQ(prompt.network.late, 0u);
  make_late(spec, 0.02);
  const SimResult late = run(spec);
  EXPECT_TRUE(late.ok()) << explain(spec, late);
  EXPECT_GT(late.network.late, 0u);
  EXPECT_GT(foreign_ring_packets(late), foreign_ring_packets(prompt)) << explain(spec, late);
  expect_one_ring_of_all(spec, late);
}

// Paused for 2.5 token timeouts, node 4 is left out of a ring {1,2,3}; it wakes with its timers
// long overdue, fires them at once, and rejoins.
TEST(Faults, APausedNodeWakesToItsOverdueTimersAndRejoins) {
  SimSpec spec = spec_of(42, 4, faults_of(0, 0, 20, 200), 100);
  spec.duration_us = 8 * kSecondUs;
  const Time resume_us = 3'500'000;
  spec.script = {pause_at(1 * kSecondUs, 4, resume_us - 1 * kSecondUs)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_EQ(r.pauses, 1u);
  EXPECT_EQ(rings_with(r, {1, 2, 3}, 1 * kSecondUs, resume_us), 1u) << explain(spec, r);
  EXPECT_GT(r.timers_overdue, 0u) << explain(spec, r);
  EXPECT_GT(r.network.ring_full, 0u) << explain(spec, r);  // its receive ring overflowed meanwhile
  EXPECT_GE(rings_with(r, {1, 2, 3, 4}, resume_us, r.end_us), 1u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

// A pause well inside the token timeout: the ring waits for the node and nobody notices.
TEST(Faults, APauseShorterThanTheTokenTimeoutLeavesTheRingAlone) {
  SimSpec spec = spec_of(43, 4, faults_of(0, 0, 20, 200), 100);
  spec.script = {pause_at(1 * kSecondUs, 2, 200'000)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_EQ(r.pauses, 1u);
  EXPECT_EQ(r.rings_formed, 1u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

TEST(Faults, ASkewedClockReadsItsOwnTimeAndItsDeadlinesFallWhereItReachesThem) {
  for (const std::int64_t ppm : {-100'000, -7, 0, 3, 50'000}) {
    const NodeClock clock{86'400'000'000, ppm};
    Time previous = 0;
    for (Time global = 0; global < 3'000'000; global += 999) {
      const Time local = clock.local(global);
      EXPECT_GE(local, previous);  // never backwards
      previous = local;
      const Time at = clock.global_at(local);
      EXPECT_LE(at, global);
      EXPECT_EQ(clock.local(at), local);
      EXPECT_TRUE(at == 0 || clock.local(at - 1) < local);
    }
    // 1 s of virtual time is 1 s and ppm microseconds on this clock.
    EXPECT_EQ(clock.local(1'000'000) - clock.local(0), static_cast<Time>(1'000'000 + ppm));
  }
}

// Clocks up to 10% apart, each from its own offset, under loss and a crash: the timeouts of
// every node still agree well enough for one ring, and every guarantee holds.
TEST(Faults, ClocksTenPercentApartKeepEveryGuarantee) {
  SimSpec spec = spec_of(44, 5, faults_of(0.05, 0.02, 20, 500), 300);
  spec.duration_us = 8 * kSecondUs;
  spec.clock_skew = kClockSkewMax;
  spec.script = {crash_at(1 * kSecondUs, 3), restart_at(kRestartUs, 3)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_EQ(rings_with(r, {1, 2, 4, 5}, 1 * kSecondUs, kRestartUs), 1u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

// A valid packet's first bytes: the transport header, then a token's totem prefix.
std::vector<std::byte> sample_packet(std::size_t payload_size) {
  std::vector<std::byte> wire(transport::kWireHeaderSize + payload_size);
  transport::WireHeader header;
  header.cluster_id = 7;
  header.sender = 3;
  header.payload_len = static_cast<std::uint32_t>(payload_size);
  transport::encode_header(header,
                           std::span<std::byte, transport::kWireHeaderSize>(wire.data(), transport::kWireHeaderSize));
  wire[transport::kWireHeaderSize] = std::byte(membership::PacketType::kToken);
  return wire;
}

// Unsealed, every damaged copy is one a decoder refuses: the transport header, or the totem
// prefix's type and reserved bytes, no longer check out (or the packet is cut short).
TEST(Faults, AnUnsealedDamagedPacketIsOneItsDecodersRefuse) {
  Rng rng(45);
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::byte> wire = sample_packet(64);
    const std::size_t size = damage_packet(wire, rng, false);
    ASSERT_LE(size, wire.size());
    transport::WireHeader header;
    const auto check = transport::decode_header(std::span(wire.data(), size), 7, header);
    if (check != transport::HeaderCheck::kOk) continue;
    ASSERT_EQ(size, wire.size());  // a cut always shows in the length
    const auto type = std::to_integer<std::uint8_t>(wire[transport::kWireHeaderSize]);
    const bool prefix_ok = type == std::uint8_t(membership::PacketType::kToken) &&
                           wire[transport::kWireHeaderSize + 2] == std::byte{0} &&
                           wire[transport::kWireHeaderSize + 3] == std::byte{0};
    EXPECT_FALSE(prefix_ok) << "draw " << i << ": a damaged packet passed as a token";
  }
}

// Sealed, damage may be anywhere: some of it in the payload, where only the seal can see it.
TEST(Faults, ASealedDamagedPacketMayChangeAnyByte) {
  Rng rng(46);
  bool payload_changed = false;
  for (int i = 0; i < 200 && !payload_changed; ++i) {
    const std::vector<std::byte> clean = sample_packet(256);
    std::vector<std::byte> wire = clean;
    if (damage_packet(wire, rng, true) != wire.size()) continue;
    payload_changed = !std::equal(wire.begin() + 20, wire.end(), clean.begin() + 20);
  }
  EXPECT_TRUE(payload_changed);
}

// 3% of the copies arrive damaged, sealed or not: refused below the protocol or by its decoders,
// they count as lost, and every guarantee holds.
TEST(Faults, DamagedPacketsAreRefusedAndEveryGuaranteeHolds) {
  for (const bool crypto : {false, true}) {
    SimSpec spec = spec_of(47, 4, faults_of(0.01, 0.01, 20, 200), 200);
    spec.faults.corrupt = 0.03;
    spec.crypto = crypto;
    spec.crashes_per_s = 0.3;
    const SimResult r = run(spec);
    EXPECT_TRUE(r.ok()) << "crypto " << crypto << ": " << explain(spec, r);
    EXPECT_GT(r.network.corrupted, 0u);
    expect_one_ring_of_all(spec, r);
  }
}

// Every node a slow receiver under a heavy load: the token waits at each of them, so it turns
// fewer times, and every guarantee holds. (Their receive rings do not overflow: totem's window
// bounds what one rotation brings. A pause's do, see APausedNode...)
TEST(Faults, SlowReceiversSlowTheTokenAndKeepEveryGuarantee) {
  SimSpec spec = spec_of(48, 5, faults_of(0.01, 0, 20, 200), 1000);
  const SimResult prompt = run(spec);
  spec.slow_share = 1;
  const SimResult slow = run(spec);
  EXPECT_TRUE(slow.ok()) << explain(spec, slow);
  const double prompt_per_s = double(prompt.counters.tokens_received) / double(prompt.end_us);
  const double slow_per_s = double(slow.counters.tokens_received) / double(slow.end_us);
  EXPECT_LT(slow_per_s * 2, prompt_per_s) << explain(spec, slow);
  expect_one_ring_of_all(spec, slow);
}

// Every drawn crash torn (after a call into the Node, before its flush), and the packets a node
// had in flight landing after it died, late ones after its restart.
TEST(Faults, TornCrashesAndADeadIncarnationsLatePacketsKeepEveryGuarantee) {
  SimSpec spec = spec_of(49, 5, faults_of(0.02, 0.01, 20, 200), 300);
  spec.duration_us = 10 * kSecondUs;
  spec.crashes_per_s = 0.5;
  spec.torn_share = 1;
  spec.crashed_copies_land = true;
  make_late(spec, 0.1);
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_GT(r.torn, 0u);
  EXPECT_EQ(r.torn, r.crashes);
  EXPECT_GT(r.network.from_dead_incarnation, 0u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

// A torn crash takes its node down at its next call into the Node that sends, at no fault
// instant: the checker must still hear of it. Two nodes, every crash torn: where one is down for
// longer than the progress bound, the other alone is no majority and owes no progress.
// Unreported, the node going down (and, at its restart, coming back) looked like no change: the
// checker held the two connected all along and failed seeds 6 and 35 here for want of a ring of
// both (and seed 18177 of rtotem-sim: 4 nodes, one crashed, one torn, the two left taken for 3
// of 4).
TEST(Faults, ANodeDownFromATornCrashIsConnectedToNoOne) {
  std::uint64_t down_past_the_bound = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SimSpec spec = spec_of(seed, 2, faults_of(0.01, 0, 20, 200), 300);
    spec.duration_us = 8 * kSecondUs;
    spec.crashes_per_s = 0.15;
    spec.torn_share = 1;
    const SimResult r = run(spec);
    EXPECT_TRUE(r.ok()) << explain(spec, r);
    EXPECT_EQ(r.torn, r.crashes);
    // The case itself: a torn node not operational, in the fault phase, for longer than the bound.
    const Time bound = progress_bound_us(*spec.totem.resolved(), spec.nodes);
    for (const NodeSnapshot& n : r.nodes)
      for (std::size_t i = 1; i < n.operational.size(); ++i)
        if (n.restarts > 0 && std::min(n.operational[i].first, spec.duration_us) > n.operational[i - 1].second + bound)
          ++down_past_the_bound;
  }
  EXPECT_GT(down_past_the_bound, 0u);
}

// A torn crash strikes at a call that queued packets, never sent: a token visit, a join, a
// retransmission; what that call delivered stands. Striking at the node's next call of any kind,
// it mostly struck an application's submission, which queues nothing until the token comes:
// `rtotem-sim --seeds 1..60 --torn 1 --crashes 0.5 --stops 0 --late 0 --partitions 0 --pauses 0`
// had 126 torn crashes and not one delivery in the call that struck. (A submission that asks for
// a held token queues its hold cancel, so some strike there; the seed is one where others strike
// in a delivering call.)
TEST(Faults, ATornCrashDeliversWhatItsLastCallDeliveredAndSendsNothingOfIt) {
  SimSpec spec = spec_of(51, 4, faults_of(0.01, 0, 20, 200), 300);
  spec.duration_us = 10 * kSecondUs;
  spec.crashes_per_s = 0.5;
  spec.torn_share = 1;
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_GT(r.torn, 2u);
  EXPECT_GT(r.torn_deliveries, 0u) << "deliveries made in the calls the torn crashes struck";
}

// Past the 42 members a commit token holds at mtu 1400, rtotem-sim takes a jumbo mtu: 64 nodes
// form one ring, lose one to a crash, and take it back. (Slowly: the 63 took until after the
// restart to form their ring, ~7 s; see SIMULATION.md, "Large-ring sweeps".)
TEST(Faults, SixtyFourNodesFormARingLoseOneAndTakeItBack) {
  SimOptions options;
  options.nodes = kNodesMax;
  const RunParams params = resolve(options, 50);
  SimSpec spec = to_spec(params);
  EXPECT_EQ(spec.backend.mtu, kJumboMtu);
  spec.faults = faults_of(0.01, 0, 20, 200);
  spec.rate_per_s = 20;
  spec.duration_us = 8 * kSecondUs;
  spec.partitions_per_s = spec.crashes_per_s = spec.pauses_per_s = 0;
  spec.faults.late = spec.faults.corrupt = 0;
  spec.slow_share = spec.clock_skew = 0;
  spec.script = {crash_at(1 * kSecondUs, 64), restart_at(kRestartUs, 64)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  std::vector<NodeId> without_last = all_of(spec);
  without_last.pop_back();
  EXPECT_EQ(rings_with(r, without_last, 1 * kSecondUs, r.end_us), 1u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

// Seed 25 at 16 nodes: six slow receivers hold the token, and at the liveness bound the one ring
// of all 16 still drains its backlog (65..205 messages a node). It is given drain windows while it
// delivers, and converges; a backlog that outlasts ten bounds is still a liveness failure.
TEST(Faults, ARingStillDrainingAtTheLivenessBoundIsGivenTimeWhileItDelivers) {
  SimOptions options;
  options.nodes = 16;
  const SimSpec spec = to_spec(resolve(options, 25));
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_GT(r.drain_windows, 0u) << "converged within the bound: this seed no longer tests the drain";
  expect_one_ring_of_all(spec, r);

  SimSpec short_bound = spec;
  short_bound.liveness_bound_us = 2 * kSecondUs;
  const SimResult cut = run(short_bound);
  ASSERT_FALSE(cut.ok());
  EXPECT_GT(cut.drain_windows, 0u);
  for (const Violation& v : cut.violations) EXPECT_EQ(kind_of(v.property), Kind::kLiveness) << v.detail;
}

TEST(Options, TheNewFaultsAreEachOffInAboutHalfTheSeeds) {
  std::array<int, 5> off{};
  constexpr int kSeeds = 400;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const RunParams p = resolve(SimOptions{}, seed);
    off[0] += p.late == 0;
    off[1] += p.corrupt == 0;
    off[2] += p.pauses == 0;
    off[3] += p.clock_skew == 0;
    off[4] += p.slow == 0;
  }
  for (int count : off) {
    EXPECT_GT(count, kSeeds / 3);
    EXPECT_LT(count, 2 * kSeeds / 3);
  }
}

// A replay command from before these faults lacks their options: given as 0, they leave every
// earlier draw of the seed as it was, and the run makes none of them.
TEST(Options, TheNewFaultsGivenAsZeroMakeNone) {
  SimOptions options;
  options.late = options.corrupt = options.pauses = options.clock_skew = options.slow = options.torn = 0;
  options.crashes = 0.5;
  const RunParams p = resolve(options, 51);
  EXPECT_EQ(p.nodes, resolve(SimOptions{}, 51).nodes);
  auto cluster = SimCluster::create(to_spec(p));
  ASSERT_TRUE(cluster);
  const SimResult r = (*cluster)->run();
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.pauses + r.torn + r.network.late + r.network.corrupted + r.network.from_dead_incarnation, 0u);
}

TEST(Options, TheNewFaultsAreParsedCheckedAndPrinted) {
  std::vector<std::string> args = {"--seed",       "9",    "--late", "0.01", "--corrupt", "0.02", "--pauses", "0.3",
                                   "--clock-skew", "0.05", "--slow", "0.4",  "--torn",    "0.5",  "--nodes",  "64"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  const auto options = parse_sim_options(argv);
  ASSERT_TRUE(options) << options.error().message();
  const std::string command = command_line(resolve(*options, 9));
  for (const char* part :
       {"--late 0.01", "--corrupt 0.02", "--pauses 0.3", "--clock-skew 0.05", "--slow 0.4", "--torn 0.5", "--nodes 64"})
    EXPECT_NE(command.find(part), std::string::npos) << command;
  for (std::vector<std::string> bad :
       {std::vector<std::string>{"--clock-skew", "0.2"}, {"--late", "2"}, {"--pauses", "11"}, {"--nodes", "65"}}) {
    std::vector<char*> bad_argv;
    for (std::string& arg : bad) bad_argv.push_back(arg.data());
    EXPECT_FALSE(parse_sim_options(bad_argv)) << bad[0];
  }
}

}  // namespace
}  // namespace rtotem::sim
