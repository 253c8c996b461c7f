// Redundant links in the simulator (issue 21): nodes on a LinkSet over two simulated networks, one
// node's port on one link failing at a time. While every two nodes keep a link, no ring changes
// (kLinkFailover); and the property is shown to catch a ring change under link faults alone.
#include <gtest/gtest.h>

#include "membership/packets.hpp"
#include "src/sim/sim_cluster.hpp"
#include "tests/sim/scenario_helpers.hpp"

namespace rtotem::sim {
namespace {

SimSpec links_spec(std::uint64_t seed, std::uint32_t nodes, transport::LinkMode mode) {
  SimSpec spec = spec_of(seed, nodes, faults_of(0.01, 0.01, 20, 200), 300);
  spec.duration_us = 4 * kSecondUs;
  spec.links = 2;
  spec.link_mode = mode;
  spec.link_cuts_per_s = 3;
  return spec;
}

// Ports fail and heal, three a second on average, each down 0.2..4 token timeouts, on link 0 or
// link 1: the token and retransmissions take the other link at once, the bulk moves within a
// ping timeout, and the ring of every node stays the one ring.
TEST(Links, OneLinkCutAtATimeNeverChangesTheRing) {
  for (const auto mode : {transport::LinkMode::kPassive, transport::LinkMode::kActive}) {
    std::uint64_t cuts = 0;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      const SimSpec spec = links_spec(seed, 3 + seed % 3, mode);
      const SimResult r = run(spec);
      EXPECT_TRUE(r.ok()) << explain(spec, r);
      EXPECT_EQ(rings_with(r, all_of(spec), 0, ~Time{0}), 1u) << explain(spec, r);
      expect_one_ring_of_all(spec, r);
      cuts += r.link_cuts;
    }
    EXPECT_GE(cuts, 6u) << "the runs cut links (one at a time, each down 0.2..4 token timeouts)";
  }
}

// A hand-made violation: node 3's port on link 1 goes down, and for two seconds every token copy
// to node 3 is dropped (a planted fault below the ring, on every link: link 0's pings still pass,
// so it stays up). The token cannot reach node 3, the ring re-forms without it, and kLinkFailover,
// which sees only link faults in the run, reports the ring change.
TEST(Links, ARingChangeUnderLinkFaultsAloneBreaksLinkFailover) {
  SimSpec spec = links_spec(3, 3, transport::LinkMode::kPassive);
  spec.link_cuts_per_s = 0;
  spec.faults.loss = 0;
  spec.script.push_back({.at_us = kSecondUs, .kind = ScriptedFault::Kind::kPortDown, .node = 3, .link = 1});
  spec.drop_rule = [](Time now_us, NodeId, NodeId to, std::span<const std::byte> packet) {
    membership::PacketType type{};
    membership::DecodeError error{};
    return now_us >= kSecondUs && now_us < 3 * kSecondUs && to == 3 && membership::peek_type(packet, type, error) &&
           type == membership::PacketType::kToken;
  };
  const SimResult r = run(spec);
  ASSERT_FALSE(r.ok()) << explain(spec, r);
  EXPECT_EQ(r.link_cuts, 1u);
  EXPECT_GT(r.network.cut, 0u) << "the counts are every link's: link 1's copies to node 3 were cut";
  EXPECT_TRUE(std::ranges::any_of(r.violations, [](const Violation& v) {
    return v.property == Property::kLinkFailover;
  })) << explain(spec, r);
}

// Two scripted ports down, node 1's on link 0 and node 2's on link 1, leave those two nodes no
// link in common: a split, which may change the ring, not a link failover to judge.
TEST(Links, ScriptedPortsThatLeaveTwoNodesNoLinkAreASplitNotAFailover) {
  SimSpec spec = links_spec(5, 3, transport::LinkMode::kPassive);
  spec.link_cuts_per_s = 0;
  spec.script.push_back({.at_us = kSecondUs, .kind = ScriptedFault::Kind::kPortDown, .node = 1, .link = 0});
  spec.script.push_back({.at_us = kSecondUs, .kind = ScriptedFault::Kind::kPortDown, .node = 2, .link = 1});
  const SimResult r = run(spec);
  EXPECT_TRUE(r.ok()) << explain(spec, r);
  EXPECT_GT(rings_with(r, all_of(spec), 0, ~Time{0}), 1u) << "the split changed the ring: " << explain(spec, r);
  expect_one_ring_of_all(spec, r);
}

// With a scripted port down from the start, before any drawn cut, a drawn cut that would leave two nodes no common
// link is not made: the drawn cuts stay failovers, and the ring never changes for them.
TEST(Links, DrawnCutsBesideAScriptedPortNeverSplitTheCluster) {
  std::uint64_t cuts = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SimSpec spec = links_spec(seed, 3, transport::LinkMode::kPassive);
    spec.link_cuts_per_s = 6;
    spec.script.push_back({.at_us = 1, .kind = ScriptedFault::Kind::kPortDown, .node = 1, .link = 0});
    const SimResult r = run(spec);
    EXPECT_TRUE(r.ok()) << explain(spec, r);
    EXPECT_EQ(rings_with(r, all_of(spec), 0, ~Time{0}), 1u) << explain(spec, r);
    cuts += r.link_cuts;
  }
  EXPECT_GE(cuts, 8u) << "drawn cuts beside the scripted one";
}

}  // namespace
}  // namespace rtotem::sim
