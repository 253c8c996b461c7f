// Helpers of the simulator's scenario tests: specs, scripted faults, running a cluster, and what a
// failing scenario prints.
#pragma once

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "src/sim/sim_cluster.hpp"

namespace rtotem::sim {

inline SimSpec spec_of(std::uint64_t seed, std::uint32_t nodes, transport::SimFaults faults, double rate_per_s) {
  SimSpec spec;
  spec.seed = seed;
  spec.nodes = nodes;
  spec.duration_us = 2'000'000;
  spec.faults = faults;
  spec.rate_per_s = rate_per_s;
  return spec;
}

inline transport::SimFaults faults_of(double loss, double duplicate, Time delay_min_us, Time delay_max_us) {
  transport::SimFaults faults;
  faults.loss = loss;
  faults.duplicate = duplicate;
  faults.delay_min_us = delay_min_us;
  faults.delay_max_us = delay_max_us;
  return faults;
}

inline constexpr Time kSecondUs = 1'000'000;
// A node crashed at 1..1.5 s is back here: its ring has had time to lose the token (1 s), give up
// on it (the consensus timeout, 1.2 s), and form again under 5% loss, with room to spare.
inline constexpr Time kRestartUs = 5'500'000;

inline ScriptedFault crash_at(Time at_us, NodeId node) { return {at_us, ScriptedFault::Kind::kCrash, node, {}}; }
inline ScriptedFault stop_at(Time at_us, NodeId node) { return {at_us, ScriptedFault::Kind::kStop, node, {}}; }
inline ScriptedFault restart_at(Time at_us, NodeId node) { return {at_us, ScriptedFault::Kind::kRestart, node, {}}; }
inline ScriptedFault cut_link_at(Time at_us, NodeId from, NodeId to) {
  return {.at_us = at_us, .kind = ScriptedFault::Kind::kCutLink, .node = from, .to = to};
}
inline ScriptedFault deaf_at(Time at_us, NodeId node) { return {at_us, ScriptedFault::Kind::kDeaf, node, {}}; }
inline ScriptedFault heal_at(Time at_us) { return {at_us, ScriptedFault::Kind::kHeal, transport::kNoNode, {}}; }
inline ScriptedFault partition_at(Time at_us, std::vector<std::vector<NodeId>> groups) {
  return {at_us, ScriptedFault::Kind::kPartition, transport::kNoNode, std::move(groups)};
}

inline SimResult run(const SimSpec& spec) {
  auto cluster = SimCluster::create(spec);
  if (!cluster) {
    ADD_FAILURE() << cluster.error().message();
    return {};
  }
  return (*cluster)->run();
}

inline std::string ring_text(const RingId& ring) { return fmt::format("{}/{}", ring.rep, ring.seq); }

// Every violation, the rings formed, each node's end state and the spec's seed: what a failing
// scenario prints.
inline std::string explain(const SimSpec& spec, const SimResult& r) {
  std::string text = fmt::format("seed {}, {} nodes: {} violations, {} configurations, {} crashes, {} partitions\n",
                                 spec.seed, spec.nodes, r.violation_count, r.configurations, r.crashes, r.partitions);
  for (std::size_t i = 0; i < r.violations.size() && i < 8; ++i) text += "  " + describe(r.violations[i]) + "\n";
  for (std::size_t i = 0; i < r.rings.size() && i < 16; ++i)
    text += fmt::format("  ring {} {{{}}} formed at {} us\n", ring_text(r.rings[i].ring_id),
                        fmt::join(r.rings[i].members, ","), r.rings[i].formed_us);
  for (const NodeSnapshot& n : r.nodes)
    text += fmt::format(
        "  node {}: {}, {} on ring {} {{{}}}, delivered through {}, {} queued, {} refused waiting, "
        "{} tokens deferred, {} restarts\n",
        n.id, n.alive ? "alive" : "crashed", membership::describe(n.state), ring_text(n.ring_id),
        fmt::join(n.members, ","), n.delivered_through, n.send_queue, n.pending, n.counters.tokens_deferred,
        n.restarts);
  for (const NodeSnapshot& n : r.nodes) text += fmt::format("  node {} counters:{}\n", n.id, counters_text(n.counters));
  text += fmt::format(
      "  network: {} sent, {} delivered, {} lost, {} to a full receive ring, {} late, {} damaged, "
      "{} from a dead incarnation\n",
      r.network.sent, r.network.delivered, r.network.lost, r.network.ring_full, r.network.late, r.network.corrupted,
      r.network.from_dead_incarnation);
  return text;
}

inline std::vector<NodeId> all_of(const SimSpec& spec) {
  std::vector<NodeId> ids;
  for (NodeId id = 1; id <= spec.nodes; ++id) ids.push_back(id);
  return ids;
}

// At the end, every node is up and operational on one ring of them all.
inline void expect_one_ring_of_all(const SimSpec& spec, const SimResult& r) {
  ASSERT_EQ(r.nodes.size(), spec.nodes);
  for (const NodeSnapshot& n : r.nodes) {
    EXPECT_TRUE(n.alive) << explain(spec, r);
    EXPECT_EQ(n.state, membership::MemberState::kOperational) << explain(spec, r);
    EXPECT_EQ(n.ring_id, r.nodes.front().ring_id) << explain(spec, r);
    EXPECT_EQ(n.members, all_of(spec)) << explain(spec, r);
  }
}

// The rings formed with exactly `members` within [from_us, to_us].
inline std::size_t rings_with(const SimResult& r, const std::vector<NodeId>& members, Time from_us, Time to_us) {
  return static_cast<std::size_t>(std::count_if(r.rings.begin(), r.rings.end(), [&](const FormedRing& ring) {
    return ring.members == members && ring.formed_us >= from_us && ring.formed_us <= to_us;
  }));
}

}  // namespace rtotem::sim
