// Fixed-seed simulator scenarios: whole clusters of Nodes under chosen faults (packet faults,
// scripted partitions and crashes, drawn ones), judged by the history checker and by the rings
// they form; rtotem-sim's options; and the replay promise (one seed, or its printed command, is
// one run).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_options.hpp"
#include "tests/sim/scenario_helpers.hpp"

namespace rtotem::sim {
namespace {

// No faults but the packet ones: no node is ever left out of a ring and every node delivers every
// message. (Heavy loss may lose a token, its retransmissions with it, at two hops of one
// rotation: the nodes then form a ring of all of them again.)
void expect_everything_delivered_everywhere(const SimSpec& spec, const SimResult& r) {
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_GT(r.messages_accepted, 0u);
  EXPECT_EQ(r.messages_delivered, r.messages_accepted);
  EXPECT_EQ(r.deliveries, r.messages_accepted * spec.nodes) << explain(spec, r);
  EXPECT_EQ(rings_with(r, all_of(spec), 0, ~Time{0}), r.rings_formed) << explain(spec, r);
  if (spec.faults.loss == 0) {
    EXPECT_EQ(r.rings_formed, 1u) << explain(spec, r);
  }
  expect_one_ring_of_all(spec, r);
}

TEST(Ordering, ThreeNodesNoFaultsDeliverEverythingInOneOrder) {
  const SimSpec spec = spec_of(1, 3, faults_of(0, 0, 50, 50), 200);
  const SimResult r = run(spec);
  expect_everything_delivered_everywhere(spec, r);
  EXPECT_EQ(r.network.lost, 0u);
  EXPECT_EQ(r.counters.retransmits_requested, 0u);  // nothing lost, nothing reordered: nothing to ask
}

TEST(Ordering, FiveNodesWithTwentyPercentLossConverge) {
  const SimSpec spec = spec_of(2, 5, faults_of(0.2, 0, 20, 200), 30);
  const SimResult r = run(spec);
  expect_everything_delivered_everywhere(spec, r);
  EXPECT_GT(r.network.lost, 0u);
  EXPECT_GT(r.counters.retransmits_sent, 0u);
  EXPECT_GT(r.counters.tokens_retransmitted, 0u);
}

TEST(Ordering, DuplicationAndReorderingNeverDuplicateADelivery) {
  const SimSpec spec = spec_of(3, 4, faults_of(0, 0.1, 5, 1'000), 300);
  const SimResult r = run(spec);
  expect_everything_delivered_everywhere(spec, r);  // deliveries == messages x nodes: none twice
  EXPECT_GT(r.network.duplicated, 0u);
  EXPECT_GT(r.counters.mcasts_duplicate, 0u);
}

TEST(Ordering, SafeMessagesWaitForEveryMember) {
  SimSpec spec = spec_of(4, 6, faults_of(0.05, 0.02, 10, 500), 100);
  spec.safe_fraction = 1;  // every delivery checks what every member holds()
  const SimResult r = run(spec);
  expect_everything_delivered_everywhere(spec, r);
}

TEST(Ordering, AgreedAndSafeMixedKeepOneOrder) {
  SimSpec spec = spec_of(5, 5, faults_of(0.1, 0.05, 10, 800), 60);
  spec.safe_fraction = 0.5;
  expect_everything_delivered_everywhere(spec, run(spec));
}

// A send queue as small as allowed (max_messages) under a rate far above it: refusals are many,
// and every refused submission is retried until accepted and delivered.
TEST(Ordering, BackPressureNeverDropsASubmission) {
  SimSpec spec = spec_of(6, 4, faults_of(0.02, 0, 10, 100), 2'000);
  spec.burst_max = 32;
  spec.totem.send_queue_max = spec.totem.max_messages;
  spec.totem.max_message_size = 8 << 10;  // 7 packets: a message fits the small queue whole
  const SimResult r = run(spec);
  expect_everything_delivered_everywhere(spec, r);
  EXPECT_GT(r.submit_refusals, 0u);
  EXPECT_GT(r.counters.submit_backpressure, 0u);
}

// Offered load above what the ring carries under loss, with the default queue and pool sizes:
// the send queue fills, and the node must still pass the token on, or nothing ever drains.
TEST(FlowControl, AFullSendQueueNeverWedgesTheToken) {
  SimSpec spec = spec_of(7, 5, faults_of(0.1, 0, 20, 200), 800);
  const SimResult r = run(spec);
  expect_everything_delivered_everywhere(spec, r);
  EXPECT_GT(r.submit_refusals, 0u);
}

TEST(Ordering, ASingleNodeRingDeliversItsOwnMessages) {
  const SimSpec spec = spec_of(8, 1, faults_of(0, 0, 5, 50), 100);
  expect_everything_delivered_everywhere(spec, run(spec));
}

TEST(Ordering, EightNodesUnderEveryFaultConverge) {
  SimSpec spec = spec_of(9, 8, faults_of(0.1, 0.05, 5, 1'000), 20);
  spec.safe_fraction = 0.3;
  expect_everything_delivered_everywhere(spec, run(spec));
}

// A token a node sends itself waits on the local path, where no descriptor turns readable: the
// host must treat it as an event. It once waited for the next timer (0.48 s to converge here).
TEST(Ordering, ALoneNodeDeliversWithoutWaitingForATimer) {
  SimSpec spec = spec_of(1, 1, faults_of(0, 0, 10, 10), 100'000);
  spec.totem.window_size = 10;
  spec.totem.max_messages = 10;
  const SimResult r = run(spec);
  expect_everything_delivered_everywhere(spec, r);
  EXPECT_EQ(r.converged_us, 0u) << explain(spec, r);
}

// With a small MTU the rtr list is cut to what a token can carry: a token too big to send would
// be refused at every retransmission and stop the ring.
TEST(Ordering, HeavyLossWithASmallMtuKeepsTheTokenSendable) {
  SimSpec spec = spec_of(7, 5, faults_of(0.4, 0, 5, 500), 2000);
  spec.backend.mtu = 256;
  const SimResult r = run(spec);
  expect_everything_delivered_everywhere(spec, r);
  EXPECT_EQ(r.counters.send_refused, 0u) << explain(spec, r);
}

TEST(Replay, TheSameSeedRunsTheSameRun) {
  SimSpec spec = spec_of(10, 5, faults_of(0.1, 0.05, 5, 500), 200);
  spec.duration_us = 4 * kSecondUs;
  spec.partitions_per_s = 1;
  spec.crashes_per_s = 1;
  const SimResult a = run(spec);
  const SimResult b = run(spec);
  EXPECT_GT(a.crashes + a.partitions, 0u);
  EXPECT_EQ(a.end_us, b.end_us);
  EXPECT_EQ(a.deliveries, b.deliveries);
  EXPECT_EQ(a.submit_refusals, b.submit_refusals);
  EXPECT_EQ(a.configurations, b.configurations);
  EXPECT_EQ(a.crashes, b.crashes);
  EXPECT_EQ(a.partitions, b.partitions);
  ASSERT_EQ(a.rings.size(), b.rings.size());
  for (std::size_t i = 0; i < a.rings.size(); ++i) {
    EXPECT_EQ(a.rings[i].ring_id, b.rings[i].ring_id);
    EXPECT_EQ(a.rings[i].formed_us, b.rings[i].formed_us);
  }
  EXPECT_EQ(a.network, b.network);
  EXPECT_EQ(a.counters.tokens_received, b.counters.tokens_received);
}

TEST(Replay, AnotherSeedRunsAnotherRun) {
  SimSpec spec = spec_of(10, 5, faults_of(0.1, 0.05, 5, 500), 200);
  const SimResult a = run(spec);
  spec.seed = 11;
  const SimResult b = run(spec);
  EXPECT_NE(a.network, b.network);
}

// A printed replay command ("rtotem-sim --seed ..."), parsed as rtotem-sim parses its own.
Result<SimOptions> parse_command(const std::string& command) {
  std::vector<std::string> words;
  for (std::size_t at = 0; at < command.size();) {
    const std::size_t end = std::min(command.find(' ', at), command.size());
    words.push_back(command.substr(at, end - at));
    at = end + 1;
  }
  std::vector<char*> args;
  for (std::size_t i = 1; i < words.size(); ++i) args.push_back(words[i].data());  // not argv[0]
  return parse_sim_options(args);
}

// The printed command, parsed again, gives back every parameter of the run, drawn or not.
TEST(Replay, ThePrintedCommandReplaysTheRun) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const RunParams drawn = resolve(SimOptions{}, seed);
    const std::string command = command_line(drawn);
    auto options = parse_command(command);
    ASSERT_TRUE(options) << options.error().message();
    const RunParams replayed = resolve(*options, options->seed_first);
    EXPECT_EQ(command_line(replayed), command);
    const SimSpec a = to_spec(drawn);
    const SimSpec b = to_spec(replayed);
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(a.duration_us, b.duration_us);
    EXPECT_EQ(a.faults.loss, b.faults.loss);
    EXPECT_EQ(a.faults.duplicate, b.faults.duplicate);
    EXPECT_EQ(a.faults.delay_max_us, b.faults.delay_max_us);
    EXPECT_EQ(a.rate_per_s, b.rate_per_s);
    EXPECT_EQ(a.safe_fraction, b.safe_fraction);
    EXPECT_EQ(a.partitions_per_s, b.partitions_per_s);
    EXPECT_EQ(a.crashes_per_s, b.crashes_per_s);
  }
}

// Sealed packets (rtotemd's totem.crypto): the same guarantees under loss, duplication (the copies
// now dropped below the protocol, as replays) and a crash whose restart comes back with a newer
// epoch that the others' replay windows must take.
TEST(Crypto, ASealedClusterUnderLossDuplicationAndACrashKeepsEveryGuarantee) {
  SimSpec spec = spec_of(31, 4, faults_of(0.05, 0.1, 20, 400), 150);
  spec.crypto = true;
  spec.duration_us = 9 * kSecondUs;
  spec.script = {crash_at(1 * kSecondUs, 2), restart_at(kRestartUs, 2)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_EQ(r.nodes[1].restarts, 1u);
  EXPECT_GT(r.network.duplicated, 0u);
  EXPECT_GE(rings_with(r, {1, 2, 3, 4}, kRestartUs, r.end_us), 1u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

TEST(Crypto, ThePrintedCommandKeepsCrypto) {
  SimOptions options;
  options.crypto = true;
  const std::string command = command_line(resolve(options, 9));
  EXPECT_TRUE(command.ends_with(" --crypto")) << command;
  auto parsed = parse_command(command);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_TRUE(to_spec(resolve(*parsed, 9)).crypto);
  EXPECT_FALSE(to_spec(resolve(SimOptions{}, 9)).crypto);
}

// Membership: rings form, re-form and merge by themselves (tocssrp95 §4-§5).

TEST(Membership, ASingleNodeFormsARingAlone) {
  const SimSpec spec = spec_of(21, 1, faults_of(0, 0, 10, 10), 100);
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  ASSERT_EQ(r.rings_formed, 1u) << explain(spec, r);
  EXPECT_EQ(r.rings[0].members, std::vector<NodeId>{1});
  EXPECT_GE(r.configurations, 1u);
  expect_one_ring_of_all(spec, r);
  EXPECT_EQ(r.messages_delivered, r.messages_accepted);
}

// Every node starts at t=0 in Gather: they hear each other's joins, agree, and form one ring of
// all, well before a token timeout would have them give up on anyone.
TEST(Membership, ThreeNodesFormOneRingFromAColdStart) {
  const SimSpec spec = spec_of(22, 3, faults_of(0, 0, 20, 200), 100);
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  ASSERT_EQ(r.rings_formed, 1u) << explain(spec, r);
  EXPECT_EQ(r.rings[0].members, all_of(spec));
  EXPECT_LT(r.rings[0].formed_us, spec.totem.token_timeout_ms * 1000) << explain(spec, r);
  EXPECT_GE(r.configurations, 3u);  // at least the regular configuration, at every node
  expect_one_ring_of_all(spec, r);
  EXPECT_EQ(r.deliveries, r.messages_accepted * spec.nodes);
}

// The survivors lose the token, give up on the crashed node and form a ring without it; once it
// restarts, the rings merge into one of all three.
TEST(Membership, ACrashedNodeIsLeftOutThenRejoinsAfterItsRestart) {
  SimSpec spec = spec_of(23, 3, faults_of(0.01, 0, 20, 200), 100);
  spec.duration_us = 9 * kSecondUs;
  spec.script = {crash_at(1 * kSecondUs, 3), restart_at(kRestartUs, 3)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_EQ(r.crashes, 1u);
  EXPECT_EQ(r.nodes[2].restarts, 1u);
  EXPECT_EQ(rings_with(r, {1, 2}, 1 * kSecondUs, kRestartUs), 1u) << explain(spec, r);
  EXPECT_GE(rings_with(r, {1, 2, 3}, kRestartUs, r.end_us), 1u) << explain(spec, r);
  EXPECT_GE(r.configurations, 3u + 2u + 3u);  // the regular ones: cold start, {1,2}, the merge
  expect_one_ring_of_all(spec, r);
}

// A graceful stop (rtotemd's SIGTERM) names the node failed in a join: the survivors form their
// ring in a round of joins, not after a token timeout and a consensus timeout as for a crash.
TEST(Membership, AStoppedNodeIsLeftOutAtOnceACrashedOneAfterItsTokenTimeout) {
  for (const bool graceful : {true, false}) {
    SimSpec spec = spec_of(26, 3, faults_of(0, 0, 20, 200), 100);
    spec.duration_us = 9 * kSecondUs;
    spec.script = {graceful ? stop_at(1 * kSecondUs, 3) : crash_at(1 * kSecondUs, 3), restart_at(kRestartUs, 3)};
    const SimResult r = run(spec);
    EXPECT_TRUE(r.ok()) << explain(spec, r);
    EXPECT_EQ(r.stops, graceful ? 1u : 0u);
    const Time token_us = spec.totem.token_timeout_ms * Time{1000};
    const Time soon = 1 * kSecondUs + token_us / 4;
    EXPECT_EQ(rings_with(r, {1, 2}, 1 * kSecondUs, soon), graceful ? 1u : 0u) << explain(spec, r);
    EXPECT_EQ(rings_with(r, {1, 2}, 1 * kSecondUs, kRestartUs), 1u) << explain(spec, r);
    expect_one_ring_of_all(spec, r);
  }
}

// {1,2} and {3,4,5} each form a ring of their own and go on delivering; healed, they merge.
TEST(Membership, APartitionTwoThreeFormsTwoRingsThenHealsIntoOne) {
  SimSpec spec = spec_of(24, 5, faults_of(0.01, 0.01, 20, 300), 100);
  spec.duration_us = 8 * kSecondUs;
  spec.script = {partition_at(1 * kSecondUs, {{1, 2}, {3, 4, 5}}), heal_at(4'500'000)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_EQ(r.partitions, 1u);
  EXPECT_EQ(rings_with(r, {1, 2}, 1 * kSecondUs, 4'500'000), 1u) << explain(spec, r);
  EXPECT_EQ(rings_with(r, {3, 4, 5}, 1 * kSecondUs, 4'500'000), 1u) << explain(spec, r);
  EXPECT_GE(rings_with(r, all_of(spec), 4'500'000, r.end_us), 1u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
  EXPECT_EQ(r.messages_delivered, r.messages_accepted);
}

// Every message safe: each delivery on a ring checks what every live member holds, before, across
// and after the crash of a member with messages in flight.
TEST(Membership, ACrashDuringSafeTrafficKeepsEveryGuarantee) {
  SimSpec spec = spec_of(25, 4, faults_of(0.05, 0.02, 10, 500), 150);
  spec.duration_us = 8 * kSecondUs;
  spec.safe_fraction = 1;
  spec.script = {crash_at(1'500'000, 2), restart_at(kRestartUs, 2)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_EQ(r.crashes, 1u);
  EXPECT_EQ(rings_with(r, {1, 3, 4}, 1'500'000, kRestartUs), 1u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
  EXPECT_GT(r.messages_delivered, 0u);
}

// Node 1, the representative, crashes twice and each time comes back cut off from the others, so
// it forms a ring alone. Were its ring seq not above every one it used, it would form ring 1/s
// again: a ring id listed twice, which the checker reports (a ring installed again after it was
// left, or with other members). With its state it starts from its stored seq; without it (a
// wiped state directory), from the wall clock's floor. Then the heal merges all three.
TEST(Membership, ARestartedNodeNeverReusesARingSeqWithOrWithoutItsState) {
  for (const double lose_state : {0.0, 1.0}) {
    SimSpec spec = spec_of(26, 3, faults_of(0, 0, 20, 100), 50);
    spec.duration_us = 8 * kSecondUs;
    spec.lose_state = lose_state;
    spec.script = {partition_at(500'000, {{1}, {2, 3}}),
                   crash_at(1 * kSecondUs, 1),
                   restart_at(1'500'000, 1),
                   crash_at(2'500'000, 1),
                   restart_at(3 * kSecondUs, 1),
                   heal_at(4 * kSecondUs)};
    const SimResult r = run(spec);
    EXPECT_TRUE(r.ok()) << "lose_state " << lose_state << ": " << explain(spec, r);
    EXPECT_EQ(r.crashes, 2u);
    EXPECT_EQ(r.states_lost, lose_state > 0 ? 2u : 0u);
    EXPECT_EQ(rings_with(r, {1}, 1'500'000, 2'500'000), 1u) << explain(spec, r);
    EXPECT_EQ(rings_with(r, {1}, 3 * kSecondUs, 4 * kSecondUs), 1u) << explain(spec, r);
    std::set<std::pair<NodeId, Seq>> ids;
    Seq last_of_node_1 = 0;
    for (const FormedRing& ring : r.rings) {
      EXPECT_TRUE(ids.emplace(ring.ring_id.rep, ring.ring_id.seq).second)
          << "ring " << ring_text(ring.ring_id) << " formed twice\n"
          << explain(spec, r);
      if (ring.ring_id.rep != 1) continue;
      EXPECT_GT(ring.ring_id.seq, last_of_node_1) << explain(spec, r);
      last_of_node_1 = ring.ring_id.seq;
    }
    expect_one_ring_of_all(spec, r);
  }
}

// Loses, while [from_us, until_us), the 2nd and 3rd packets node `s` sends of its own messages, and
// everything it sends after its 4th (the 4th itself reaches everyone): with every message two
// pieces, the others miss Last(M1) and First(M2) and S's retransmissions, as if S had crashed.
struct LoseTheMiddleOfTwoSplits {
  NodeId s = transport::kNoNode;
  Time from_us = 0;
  Time until_us = 0;
  std::vector<Seq> own;  // the seqs of S's own packets, in the order first sent

  bool operator()(Time now_us, NodeId from, std::span<const std::byte> packet) {
    if (from != s || now_us < from_us || now_us >= until_us) return false;
    membership::PacketType type{};
    membership::DecodeError error{};
    membership::McastHeader header;
    std::span<const std::byte> payload;
    const bool mcast = membership::peek_type(packet, type, error) && type == membership::PacketType::kMcast &&
                       membership::decode_mcast(packet, header, payload) == membership::DecodeError::kNone;
    if (mcast && header.sender == s) {
      auto at = std::find(own.begin(), own.end(), header.seq);
      if (at == own.end() && own.size() < 4) at = own.insert(own.end(), header.seq);
      if (at != own.end()) return at - own.begin() == 1 || at - own.begin() == 2;
    }
    return own.size() == 4;
  }
};

// Sender 3 sends two split messages of one size, M1 and M2; nodes 1 and 2 miss Last(M1) and
// First(M2), then lose 3. In their transitional configuration they hold First(M1) and Last(M2):
// pieces of two messages that fit together by sender, size and kind. Neither message may be
// delivered (no creation); a piece names its message, so they are not.
TEST(Membership, PiecesOfTwoMessagesAreNeverDeliveredAsOne) {
  SimSpec spec = spec_of(28, 3, faults_of(0, 0, 20, 20), 20);
  spec.duration_us = 7 * kSecondUs;
  spec.message_size = static_cast<std::uint32_t>(membership::piece_max(spec.backend.payload_mtu()) + 100);
  auto lose = std::make_shared<LoseTheMiddleOfTwoSplits>(LoseTheMiddleOfTwoSplits{3, 1 * kSecondUs, 5 * kSecondUs, {}});
  spec.drop_rule = [lose](Time now_us, NodeId from, NodeId, std::span<const std::byte> packet) {
    return (*lose)(now_us, from, packet);
  };
  const SimResult r = run(spec);
  EXPECT_EQ(lose->own.size(), 4u) << explain(spec, r);
  EXPECT_EQ(rings_with(r, {1, 2}, 1 * kSecondUs, 5 * kSecondUs), 1u) << explain(spec, r);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

// The time within [from_us, to_us) at which every node of `nodes` was operational.
Time all_operational_us(const SimResult& r, const std::vector<NodeId>& nodes, Time from_us, Time to_us) {
  std::vector<std::pair<Time, Time>> common{{from_us, to_us}};
  for (NodeId id : nodes) {
    std::vector<std::pair<Time, Time>> next;
    for (const auto& [a, b] : common)
      for (const auto& [c, d] : r.nodes[id - 1].operational)
        if (std::max(a, c) < std::min(b, d)) next.emplace_back(std::max(a, c), std::min(b, d));
    common = std::move(next);
  }
  Time total = 0;
  for (const auto& [a, b] : common) total += b - a;
  return total;
}

// Node 2's packets stop reaching node 3 for `cut_s` (60 s unless given); every other direction
// works. The first re-formation makes a ring of two, node 1 and one of 2 and 3: which one turns
// on the run's every draw, so each test runs a few seeds and judges either. What the ring then
// costs is the tests' measure (below). Healed, the three merge.
struct OneWayCut {
  std::vector<NodeId> ring;    // the first ring of two formed in the cut
  std::size_t formations = 0;  // of that ring in the cut
  double share = 0;            // its operational share of the whole cut
};

OneWayCut one_way_cut(std::uint64_t seed, std::uint32_t token_timeout_ms, Time cut_s = 60) {
  SimSpec spec = spec_of(seed, 3, faults_of(0, 0, 20, 200), 50);
  spec.totem.token_timeout_ms = token_timeout_ms;
  spec.duration_us = (cut_s + 6) * kSecondUs;
  const Time cut = 2 * kSecondUs, heal = (cut_s + 2) * kSecondUs;
  spec.script = {cut_link_at(cut, 2, 3), heal_at(heal)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_GE(rings_with(r, all_of(spec), heal, r.end_us), 1u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
  const auto first = std::find_if(r.rings.begin(), r.rings.end(), [&](const FormedRing& ring) {
    return ring.members.size() == 2 && ring.formed_us >= cut;
  });
  if (first == r.rings.end()) {
    ADD_FAILURE() << "no ring of two in the cut: " << explain(spec, r);
    return {};
  }
  OneWayCut out{first->members, rings_with(r, first->members, cut, heal), 0};
  out.share = static_cast<double>(all_operational_us(r, out.ring, cut, heal)) / static_cast<double>(heal - cut);
  EXPECT_TRUE(out.ring == (std::vector<NodeId>{1, 2}) || out.ring == (std::vector<NodeId>{1, 3})) << explain(spec, r);
  return out;
}

// Seeds 8 and 14 form {1,2} at 250 ms (the others mostly {1,3}); each test covers both.
constexpr std::uint64_t kOneWayCutSeeds[] = {8, 25, 28, 30};

// Either ring holds for the whole cut; all that is lost is the first re-formation. {1,2}: 3
// heard 1 go on without it and never heard 2, so it names 2 unheard, and no member proposes or
// votes for it (merge_vote.cpp); and 2, named, announces itself to 3 until 3 hears it. {1,3}: 2
// hears both, but 3 does not hear 2, so 3 never votes to let it in. Were the stranger let in, it
// would fail (or be failed by) the member it does not hear, and the ring would form again
// without it every backoff (11 rings, 89 % of the cut, at 250 ms before the names). With the
// simulator's 1 s token and with 250 ms (issue 18 asks 99 % of the cut up).
TEST(Membership, APersistentOneWayCutLeavesTheTwoWayRingAlone) {
  for (const auto& [token_timeout_ms, share] : {std::pair{1000u, 0.975}, std::pair{250u, 0.99}}) {
    for (std::uint64_t seed : kOneWayCutSeeds) {
      const OneWayCut cut = one_way_cut(seed, token_timeout_ms);
      RecordProperty(fmt::format("share_{}_seed{}", token_timeout_ms, seed), fmt::format("{:.4f}", cut.share));
      EXPECT_EQ(cut.formations, 1u) << "seed " << seed << ", token " << token_timeout_ms;
      EXPECT_GE(cut.share, share) << "seed " << seed << ", token " << token_timeout_ms;
    }
  }
}

// A name lapses 1000 merge periods (200 s) after it was given, since a node gone for good sends
// nothing that would lift it. A one-way cut of 300 s then costs a ring of {1,2} a re-formation or
// two more: the merge the lapse lets in fails on 2 again (twice if 3, pulled into Gather every
// 400 ms by the ring's merge detections, has just formed alone when the merge starts), and 3
// names 2 again. A ring of {1,3} names nobody (3's own hearing keeps 2 out), so nothing lapses.
TEST(Membership, AOneWayCutOutlastingTheNamesCostsAReformationOrTwoMore) {
  std::size_t lapsed = 0;
  for (std::uint64_t seed : {8, 14, 28}) {
    const OneWayCut cut = one_way_cut(seed, 250, 300);
    RecordProperty(fmt::format("formations_seed{}", seed), static_cast<int>(cut.formations));
    EXPECT_GE(cut.share, 0.99) << "seed " << seed;
    if (cut.ring == std::vector<NodeId>{1, 3}) {
      EXPECT_EQ(cut.formations, 1u) << "seed " << seed;
      continue;
    }
    ++lapsed;
    EXPECT_GE(cut.formations, 2u) << "seed " << seed;
    EXPECT_LE(cut.formations, 3u) << "seed " << seed;
  }
  EXPECT_GE(lapsed, 1u) << "no seed formed {1,2}: the lapse went untested; pick seeds that do";
}

// A cut-off side of two: on a ring of five, nodes 4 and 5 stop reaching node 1 for 60 s (every
// other direction works). 4 and 5 hear each other and 1, so they form rings of their own, and
// their merge detections reach 2 and 3; the majority, {1, 2, 3}, forms once and stays one ring
// for the whole cut, as with one node behind the cut (above). With the cut the other way (1's
// packets stop reaching 4 and 5), the ring of five goes on: the token's way 1 -> 2 works, and 4
// and 5 get 1's messages retransmitted by others. (Some seeds form {2,3,4,5} instead, as valid a
// ring; this one tells the story above.)
TEST(Membership, APairCutOffOneWayLeavesTheMajorityOneRing) {
  for (const std::uint32_t token_timeout_ms : {1000u, 250u}) {
    for (const bool towards_1 : {true, false}) {
      SimSpec spec = spec_of(20, 5, faults_of(0, 0, 20, 200), 50);
      spec.totem.token_timeout_ms = token_timeout_ms;
      spec.duration_us = 66 * kSecondUs;
      const Time cut = 2 * kSecondUs, heal = 62 * kSecondUs;
      spec.script = towards_1 ? std::vector{cut_link_at(cut, 4, 1), cut_link_at(cut, 5, 1), heal_at(heal)}
                              : std::vector{cut_link_at(cut, 1, 4), cut_link_at(cut, 1, 5), heal_at(heal)};
      const SimResult r = run(spec);
      EXPECT_TRUE(r.ok()) << explain(spec, r);
      expect_one_ring_of_all(spec, r);
      const std::vector<NodeId> majority = towards_1 ? std::vector<NodeId>{1, 2, 3} : all_of(spec);
      const double share =
          static_cast<double>(all_operational_us(r, majority, cut, heal)) / static_cast<double>(heal - cut);
      RecordProperty(fmt::format("share_{}_{}", token_timeout_ms, towards_1 ? "towards_1" : "from_1"),
                     fmt::format("{:.4f}", share));
      EXPECT_EQ(rings_with(r, majority, cut, heal), towards_1 ? 1u : 0u) << explain(spec, r);
      EXPECT_GE(share, token_timeout_ms == 1000 ? 0.975 : 0.99) << explain(spec, r);
    }
  }
}

// Node 1 stops hearing node 2 and node 2 stops hearing node 3 (seeds 155044 and 131907 of the long
// sweeps): the token still goes round 1 -> 2 -> 3, and each message that misses a node is held by
// another that the node hears: 3 has 2's, 1 has 3's. But the first holder on the token's way to
// a request was the sender itself, whose copies go into the cut: it took the request off the
// token, 1 failed to receive, and the re-formations that followed left 1 and 3, which hear each
// other, failing each other for seconds. A request asked again now reaches the next holder too:
// the ring of three goes on through the cut, and nobody fails to receive.
TEST(Membership, RetransmissionsGoRoundTwoLinksCutOneWay) {
  SimSpec spec = spec_of(30, 3, faults_of(0, 0, 20, 200), 200);
  spec.duration_us = 16 * kSecondUs;
  const Time cut = 2 * kSecondUs, heal = 14 * kSecondUs;
  spec.script = {cut_link_at(cut, 2, 1), cut_link_at(cut, 3, 2), heal_at(heal)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  for (const auto& node : r.nodes) EXPECT_EQ(node.counters.failed_to_receive, 0u) << explain(spec, r);
  EXPECT_EQ(r.rings_formed, 1u) << explain(spec, r);  // the first, before the cut
  EXPECT_EQ(all_operational_us(r, {1, 2, 3}, cut, heal), heal - cut) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

// Node 3 stops hearing multicasts for 5 s (tokens still reach it) on a ring that loses 3 % of its
// copies. It holds the ring's aru back, so nothing is delivered anywhere, and each lost token hop
// stalls the rotation for a token retransmit period (238 ms): the token visits it a few dozen
// times a second. It must still find within fail_recv_ms that it fails to receive and leave, so
// that 1 and 2 lose the token, form a ring without it and deliver again well within the progress
// bound; healed, the three merge. Alone and deaf, 3 sends no merge detection, which would pull 1
// and 2 into a Gather it cannot hear; their ring's detections bring it back.
TEST(Membership, ADeafNodeOnALossyRingLeavesItWithinFailRecv) {
  SimSpec spec = spec_of(29, 3, faults_of(0.03, 0, 20, 200), 200);
  spec.duration_us = 9 * kSecondUs;
  const Time deaf = 2 * kSecondUs, heal = 7 * kSecondUs;
  spec.script = {deaf_at(deaf, 3), heal_at(heal)};
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_GE(r.nodes[2].counters.failed_to_receive, 1u) << explain(spec, r);
  // fail_recv_ms (1 s), then 1 and 2 lose the token (1 s) and agree in a round of joins.
  EXPECT_GE(rings_with(r, {1, 2}, deaf, deaf + 3 * kSecondUs), 1u) << explain(spec, r);
  EXPECT_EQ(r.nodes[2].counters.merge_detects_sent, 0u) << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

// Partitions, cut links and crashes at 0.6 per second each, their instants, shapes and victims
// drawn from the seed, as is every other parameter: a small sweep that runs with the unit tests
// (rtotem-sim --seeds runs the large one).
TEST(Membership, DrawnPartitionsAndCrashesKeepEveryGuarantee) {
  std::uint64_t crashes = 0, partitions = 0, rings = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    SimOptions options;
    options.duration_s = 3;
    options.partitions = 0.6;
    options.crashes = 0.6;
    const RunParams params = resolve(options, seed);
    const SimSpec spec = to_spec(params);
    const SimResult r = run(spec);
    EXPECT_TRUE(r.ok()) << command_line(params) << "\n" << explain(spec, r);
    crashes += r.crashes;
    partitions += r.partitions;
    rings += r.rings_formed;
  }
  EXPECT_GT(crashes, 10u);
  EXPECT_GT(partitions, 10u);
  EXPECT_GT(rings, 60u);
}

// Seeds that fail without a fix, replayed by their printed commands:
// 1312, 4568 (found by the CI sweep): a node whose ring was still in Commit or Recovery answered
//   a stranger's join, and kept failing it from the failed set it had not cleared, round after
//   round;
// 1327, 3793 (found by sweeping with the fix taken out, after the traffic changed under 3305,
//   which found it): a node alone on its ring, out of send buffers in Recovery, spun its token
//   through the loopback at one instant, so the transmissions holding those buffers never finished;
// 4934 (found by a sweep of 9ca6d62): node 3, deaf to multicasts for 4 s, held the ring's aru back
//   and nothing was delivered anywhere: the 250 token visits failure to receive waited for took
//   longer than the deafness, each lost token hop stalling the rotation for a retransmit period;
// 18177 (found by a sweep with --lose-state 0.5): a checker failure, not the protocol's. Node 2,
//   torn, went down at no fault instant and the simulator did not report it: the checker held
//   nodes 1, 2 and 3 connected, a majority of 4, and found no ring of them delivering;
// 155044 (the long sweep, --lose-state 0.5): nodes 1 and 3, connected, failed each other in every
//   round for 1.4 s. Each formed a ring alone; when they merged, the last join of node 1's old
//   round (failing node 3) was still in flight and node 3 took it as this round's word;
// 185001 (the long sweep): a checker failure, not the protocol's. At 4.1 % loss on 8 nodes the
//   token lost 5 hops in 12, each waiting a retransmit period; the progress rule judged the run
//   as if the copy loss alone (under 5 %) said how often a rotation stalls;
// 131907 (the sweep on d403ec4): links 2->1 and 3->2 cut one way, as 155044's; node 2 answered
//   node 1's retransmission requests into the cut, node 1 failed to receive, and 1 and 3 failed
//   each other for 4 s (RetransmissionsGoRoundTwoLinksCutOneWay);
// 155557 (the sweep on 82089fa, --message-size): node 1 heard no one from the cold start on, and
//   nodes 2 and 3 formed singletons for 3.9 s. Node 3, having given up on node 2, took the seq of
//   node 2's new ring from a join it ignored, so its old verdict on node 2 looked fresh to node 2
//   (AJoinFromANodeFailedThisRoundDoesNotDateOurVerdictOnIt);
// 266368 (the sweep on f63f6a5, --message-size): node 2 paused, and nodes 1 and 3, connected, each
//   formed a ring alone. At the cold start node 1 waited out a commit token node 2 had moved on
//   from (InCommitAMembersJoinNamingMoreThanTheConsensusGathers); then node 3 never took node 1's
//   verdict on node 2, a stranger's (AStrangersVerdictIsTakenOnANodeOutsideOurRingOnly).
TEST(Regression, SeedsThatOnceFailedHoldEveryProperty) {
  // Printed before issue 18's faults: they replay exactly with those given as 0.
  const std::string before_issue_18 = " --late 0 --corrupt 0 --pauses 0 --clock-skew 0 --slow 0 --torn 0";
  const std::string commands[] = {
      "rtotem-sim --seed 1312 --nodes 6 --duration 5 --loss 0.117 --dup 0.098 --reorder 0 --delay-us 158 "
      "--rate 620 --safe 0 --token-timeout-ms 1000 --partitions 0.34 --crashes 0.21 --stops 0" +
          before_issue_18,
      "rtotem-sim --seed 4568 --nodes 7 --duration 5 --loss 0.045 --dup 0.071 --reorder 0 --delay-us 52 "
      "--rate 825 --safe 0.3 --token-timeout-ms 1000 --partitions 0.41 --crashes 0 --stops 0" +
          before_issue_18,
      "rtotem-sim --seed 1327 --nodes 7 --duration 5 --loss 0.001 --dup 0.067 --reorder 0.15 --delay-us 57 "
      "--rate 650 --safe 0.5 --token-timeout-ms 1000 --partitions 0.4 --crashes 0.3 --stops 0" +
          before_issue_18,
      "rtotem-sim --seed 3793 --nodes 4 --duration 5 --loss 0.001 --dup 0.037 --reorder 0.24 --delay-us 67 "
      "--rate 600 --safe 0.5 --token-timeout-ms 1000 --partitions 0.42 --crashes 0.25 --stops 0" +
          before_issue_18,
      // 16 nodes without a ring for 5 s: the backlog their applications piled up must drain in time.
      "rtotem-sim --seed 29 --nodes 16 --duration 5 --loss 0.129 --dup 0.083 --reorder 1 --delay-us 106 "
      "--rate 793 --safe 0.2 --token-timeout-ms 1000 --partitions 0 --crashes 0 --stops 0" +
          before_issue_18,
      "rtotem-sim --seed 4934 --nodes 3 --duration 5 --loss 0.02 --dup 0.078 --reorder 0.56 --delay-us 142 "
      "--rate 644 --safe 0.5 --token-timeout-ms 1000 --partitions 0.31 --crashes 0 --stops 1 --late 0.018 "
      "--corrupt 0 --pauses 0.05 --clock-skew 0 --slow 0.2 --torn 0.6",
      // Its run changed at 63b46d6 (a torn crash waits for a call that sends); what it found, a torn
      // node down past the progress bound, is Faults.ANodeDownFromATornCrashIsConnectedToNoOne.
      "rtotem-sim --seed 18177 --nodes 4 --duration 5 --loss 0.035 --dup 0.076 --reorder 0.12 --delay-us 182 "
      "--rate 430 --safe 0.7 --token-timeout-ms 1000 --partitions 0.3 --crashes 0.38 --stops 0.1 --late 0.014 "
      "--corrupt 0 --pauses 0 --clock-skew 0.003 --slow 0.5 --torn 0.3 --lose-state 0.5",
      "rtotem-sim --seed 155044 --nodes 3 --duration 5 --loss 0.034 --dup 0.029 --reorder 0.95 --delay-us 160 "
      "--rate 513 --safe 0.2 --token-timeout-ms 1000 --partitions 0.45 --crashes 0 --stops 0.2 --late 0 "
      "--corrupt 0 --pauses 0 --clock-skew 0.009 --slow 0 --torn 0.7 --lose-state 0.5",
      "rtotem-sim --seed 185001 --nodes 8 --duration 5 --loss 0.041 --dup 0.005 --reorder 0.76 --delay-us 38 "
      "--rate 398 --safe 1 --token-timeout-ms 1000 --partitions 0 --crashes 0 --stops 0 --late 0.009 "
      "--corrupt 0.016 --pauses 0 --clock-skew 0 --slow 0 --torn 0.9",
      "rtotem-sim --seed 131907 --nodes 3 --duration 5 --loss 0.034 --dup 0.094 --reorder 0.27 --delay-us 98 "
      "--rate 893 --safe 0.9 --token-timeout-ms 1000 --partitions 0.47 --crashes 0 --stops 0.7 --late 0.006 "
      "--corrupt 0 --pauses 0.35 --clock-skew 0 --slow 0.2 --torn 0",
      "rtotem-sim --seed 155557 --nodes 3 --duration 5 --loss 0.024 --dup 0.049 --reorder 0.73 --delay-us 73 "
      "--rate 505 --safe 0.2 --token-timeout-ms 1000 --partitions 0.26 --crashes 0 --stops 0.9 --late 0.002 "
      "--corrupt 0.008 --pauses 0.17 --clock-skew 0.031 --slow 0 --torn 1 --message-size 1333..3996",
      "rtotem-sim --seed 266368 --nodes 3 --duration 5 --loss 0.047 --dup 0 --reorder 0.22 --delay-us 71 "
      "--rate 199 --safe 0.7 --token-timeout-ms 1000 --partitions 0.12 --crashes 0 --stops 0.1 --late 0.02 "
      "--corrupt 0 --pauses 0.34 --clock-skew 0 --slow 0 --torn 0.5 --message-size 1333..3996",
      // Liveness failures of older sweeps that later fixes mended without a trace of their own
      // (SIMULATION.md, "Regression seeds"): kept so that no change brings them back.
      "rtotem-sim --seed 139748 --nodes 6 --duration 5 --loss 0.038 --dup 0.02 --reorder 0.25 --delay-us 32 "
      "--rate 366 --safe 0.8 --token-timeout-ms 1000 --partitions 0.35 --crashes 0 --stops 0.3 --late 0.007 "
      "--corrupt 0.017 --pauses 0.24 --clock-skew 0 --slow 0 --torn 0.2 --lose-state 0.5",
      "rtotem-sim --seed 193190 --nodes 8 --duration 5 --loss 0.032 --dup 0.081 --reorder 0.41 --delay-us 42 "
      "--rate 167 --safe 0.2 --token-timeout-ms 1000 --partitions 0.21 --crashes 0.11 --stops 0 --late 0.013 "
      "--corrupt 0 --pauses 0 --clock-skew 0 --slow 0.1 --torn 0.3 --message-size 1333..3996",
      // Group-views failures of the --clients sweep at 22d9dcf: a hole skipped in a transitional
      // configuration that the group checker compared with the regular one (its fix, 2a9544b).
      "rtotem-sim --seed 45654 --nodes 3 --duration 5 --loss 0.048 --dup 0.059 --reorder 0.72 --delay-us 181 "
      "--rate 50 --safe 1 --token-timeout-ms 1000 --partitions 0.48 --crashes 0.06 --stops 0.4 --late 0 "
      "--corrupt 0 --pauses 0 --clock-skew 0 --slow 0 --torn 0.7 --clients 3",
      "rtotem-sim --seed 25964 --nodes 4 --duration 5 --loss 0.011 --dup 0.035 --reorder 1 --delay-us 95 "
      "--rate 50 --safe 0.8 --token-timeout-ms 1000 --partitions 0.33 --crashes 0 --stops 0.8 --late 0 "
      "--corrupt 0 --pauses 0 --clock-skew 0.05 --slow 0.3 --torn 0.2 --clients 3",
  };
  for (const std::string& command : commands) {
    const auto options = parse_command(command);
    ASSERT_TRUE(options) << options.error().message();
    const RunParams params = resolve(*options, options->seed_first);
    ASSERT_EQ(command_line(params), command);  // the very run that failed
    const SimSpec spec = to_spec(params);
    const SimResult r = run(spec);
    EXPECT_TRUE(r.ok()) << command << "\n" << explain(spec, r);
  }
}

Result<SimOptions> parse_words(std::vector<std::string> words) {
  std::vector<char*> args;
  for (std::string& word : words) args.push_back(word.data());
  return parse_sim_options(args);
}

TEST(Options, PartitionAndCrashRatesAndNodesAreChecked) {
  auto given = parse_words({"--partitions", "0.5", "--crashes", "10", "--nodes", "16"});
  ASSERT_TRUE(given) << given.error().message();
  EXPECT_EQ(given->partitions, 0.5);
  EXPECT_EQ(given->crashes, 10);
  EXPECT_EQ(given->nodes, 16u);
  const RunParams params = resolve(*given, 3);
  EXPECT_EQ(params.partitions, 0.5);
  EXPECT_EQ(params.crashes, 10);
  EXPECT_FALSE(parse_words({"--crashes", "10.5"}));
  EXPECT_FALSE(parse_words({"--partitions", "-0.1"}));
  EXPECT_FALSE(parse_words({"--nodes", "65"}));
}

// Never drawn, so a command printed without it replays as before; given, the command keeps it.
TEST(Options, LoseStateIsCheckedAndThePrintedCommandKeepsIt) {
  auto given = parse_words({"--lose-state", "0.25"});
  ASSERT_TRUE(given) << given.error().message();
  const std::string command = command_line(resolve(*given, 9));
  EXPECT_TRUE(command.ends_with(" --lose-state 0.25")) << command;
  auto parsed = parse_command(command);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(to_spec(resolve(*parsed, 9)).lose_state, 0.25);
  EXPECT_EQ(command_line(resolve(SimOptions{}, 9)).find("--lose-state"), std::string::npos);
  EXPECT_FALSE(parse_words({"--lose-state", "1.5"}));
}

// Links are never drawn either: given, the printed command keeps them; a link cut needs two links.
TEST(Options, LinksAreCheckedAndThePrintedCommandKeepsThem) {
  auto given = parse_words({"--links", "2", "--link-mode", "active", "--link-cuts", "1.5"});
  ASSERT_TRUE(given) << given.error().message();
  const std::string command = command_line(resolve(*given, 9));
  EXPECT_TRUE(command.ends_with(" --links 2 --link-mode active --link-cuts 1.5")) << command;
  auto parsed = parse_command(command);
  ASSERT_TRUE(parsed) << parsed.error().message();
  const SimSpec spec = to_spec(resolve(*parsed, 9));
  EXPECT_EQ(spec.links, 2u);
  EXPECT_EQ(spec.link_mode, transport::LinkMode::kActive);
  EXPECT_EQ(spec.link_cuts_per_s, 1.5);
  EXPECT_EQ(command_line(resolve(SimOptions{}, 9)).find("--links"), std::string::npos);
  EXPECT_FALSE(parse_words({"--links", "5"}));
  EXPECT_FALSE(parse_words({"--link-mode", "rr"}));
  EXPECT_FALSE(parse_words({"--link-cuts", "11"}));
  auto one_link = parse_words({"--link-cuts", "1"});
  ASSERT_TRUE(one_link);
  auto refused = SimCluster::create(to_spec(resolve(*one_link, 9)));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("2 links"), std::string::npos) << refused.error().message();
}

// Giving one value changes no other: every draw is made whether or not its option is given.
TEST(Options, AGivenFaultRateLeavesTheOtherDrawsAlone) {
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    SimOptions options;
    options.crashes = 2;
    RunParams given = resolve(options, seed);
    const RunParams drawn = resolve(SimOptions{}, seed);
    EXPECT_EQ(given.crashes, 2);
    given.crashes = drawn.crashes;
    EXPECT_EQ(command_line(given), command_line(drawn));
  }
}

// The drawn profiles: about 40% of seeds without membership faults, 30% partitions only, 30%
// both, each rate in [0.05, 0.5]; 3..8 nodes.
TEST(Options, SeedsDrawAMixOfFaultProfiles) {
  constexpr std::uint64_t kSeeds = 3000;
  std::uint64_t none = 0, partitions_only = 0, both = 0;
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    const RunParams p = resolve(SimOptions{}, seed);
    EXPECT_GE(p.nodes, 3u);
    EXPECT_LE(p.nodes, 8u);
    if (p.partitions == 0 && p.crashes == 0) ++none;
    if (p.partitions > 0 && p.crashes == 0) ++partitions_only;
    if (p.partitions > 0 && p.crashes > 0) ++both;
    for (double rate : {p.partitions, p.crashes})
      if (rate != 0) {
        EXPECT_GE(rate, 0.05);
        EXPECT_LE(rate, 0.5);
      }
  }
  EXPECT_EQ(none + partitions_only + both, kSeeds);  // never crashes without partitions
  EXPECT_NEAR(double(none) / kSeeds, 0.4, 0.04);
  EXPECT_NEAR(double(partitions_only) / kSeeds, 0.3, 0.04);
  EXPECT_NEAR(double(both) / kSeeds, 0.3, 0.04);
}

TEST(Options, AScriptOutsideTheRunIsRefused) {
  SimSpec spec = spec_of(1, 3, faults_of(0, 0, 10, 10), 100);
  spec.script = {crash_at(spec.duration_us + 1, 2)};
  EXPECT_FALSE(SimCluster::create(spec));
  spec.script = {crash_at(1, 4)};
  EXPECT_FALSE(SimCluster::create(spec));
  spec.script = {partition_at(1, {{1, 2}, {2, 3}})};
  EXPECT_FALSE(SimCluster::create(spec));
  spec.script = {heal_at(2), heal_at(1)};
  EXPECT_FALSE(SimCluster::create(spec));
  spec.script = {};
  spec.crashes_per_s = kFaultRateMax + 1;
  EXPECT_FALSE(SimCluster::create(spec));
}

}  // namespace
}  // namespace rtotem::sim
