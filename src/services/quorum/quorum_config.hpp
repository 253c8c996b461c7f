// What votequorum is told in corosync.conf (quorum { } and nodelist.node.quorum_votes), checked
// against votequorum.5's rules and resolved into the values every node's QuorumService computes
// with. Every node of a cluster must resolve the same QuorumConfig, as corosync requires.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "membership/node.hpp"
#include "base/result.hpp"

namespace rtotem::quorum {

using membership::NodeId;

enum class TieBreaker : std::uint8_t { kNone, kLowest, kHighest, kList };

// quorum { } as an operator writes it, corosync's names; unset keys have votequorum's defaults.
struct QuorumOptions {
  std::optional<std::uint32_t> expected_votes;  // overrides the nodelist's sum of votes
  bool two_node = false;
  std::optional<bool> wait_for_all;  // not given: on with two_node, else off
  bool last_man_standing = false;
  std::uint32_t last_man_standing_window_ms = 10'000;
  bool auto_tie_breaker = false;
  std::string auto_tie_breaker_node = "lowest";  // lowest | highest | node ids, space-separated
  // quorum.device { }: corosync-qdevice's vote. Unset model: no device.
  std::string device_model;
  std::optional<std::uint32_t> device_votes;      // not given: the nodes' votes less one (votequorum.5)
  std::uint32_t device_timeout_ms = 10'000;       // a poll must come this often, or the vote is gone
  std::uint32_t device_sync_timeout_ms = 30'000;  // the same, after a ring change
};

struct NodeVotes {
  NodeId node = 0;
  std::uint32_t votes = 1;  // nodelist.node.quorum_votes
};

// The sync timeout rtotemd and the simulator set, in token timeouts: a ring's reports come within
// a rotation or two of its forming; this is far beyond that, and short of what an operator waits.
inline constexpr std::uint32_t kSyncTimeouts = 2;

// A quorum device (corosync-qdevice) as votequorum counts it: its votes count in a ring once a
// member's device has polled for that ring with its vote cast (quorum_decision.hpp).
struct DeviceConfig {
  std::string model;
  std::uint32_t votes = 1;
  std::uint32_t timeout_ms = 10'000;
  std::uint32_t sync_timeout_ms = 30'000;
};

struct QuorumConfig {
  std::vector<NodeVotes> nodes;  // sorted by node id
  std::uint32_t expected_votes = 0;
  bool expected_votes_configured = false;  // given in quorum { }, not the nodelist's sum
  bool two_node = false;
  bool wait_for_all = false;
  bool last_man_standing = false;
  std::uint32_t last_man_standing_window_ms = 10'000;
  TieBreaker tie_breaker = TieBreaker::kNone;
  std::vector<NodeId> tie_breaker_nodes;  // kList: in priority order
  // Not corosync's: how long a ring waits for every member's report before it decides without
  // those that have not reported (counted with no votes; a member whose config lacks quorum { }
  // never reports). Set by the host from its token timeout; 0: wait for ever.
  std::uint32_t sync_timeout_ms = 0;
  // Its votes are in expected_votes, unless the file gives those.
  std::optional<DeviceConfig> device;

  // A node's configured votes; 1 for a node the nodelist does not name (it has no say there).
  std::uint32_t votes_of(NodeId node) const noexcept;
};

// Checks `options` against the nodelist and resolves them, or says which rule they break: the
// combinations votequorum.5 forbids (two_node with auto_tie_breaker; last_man_standing with a node
// of more than one vote; a quorum device with two_node, last_man_standing or auto_tie_breaker, or
// with expected_votes but not its own votes), no expected_votes and no nodelist, a tie-breaker
// list naming a node the nodelist lacks, and values out of range.
Result<QuorumConfig> resolve_quorum(const QuorumOptions& options, std::span<const NodeVotes> nodelist);

}  // namespace rtotem::quorum
