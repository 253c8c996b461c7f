// The simulator's judge of quorum (src/services/quorum/quorum_service.hpp): records, per node, the
// quorum state its QuorumService holds after every configuration and every change it reports,
// and checks what votequorum promises an HA manager:
// - kQuorumSplit: at no instant are two nodes quorate in rings with no member in common: the two
//   sides of a partition are never both quorate. A node keeps its last state until it records
//   another (it does not know it is cut off yet), so a stale majority ring still overlaps the
//   newer one. Exempt: two_node in force on both sides, which is quorate on both sides by design
//   (votequorum.5: fencing decides).
// - kQuorumAgreement: the members of one ring reach the same decisions (quorate, votes, expected
//   votes, quorum, flags) in the same order once the ring is in sync; a decision taken early, at
//   the configuration, is the first one taken in sync (unless a member was silent).
// - kQuorumWaitForAll: with wait_for_all, an incarnation of a node is quorate only once it has
//   been in sync in a ring of every node, or in a ring with a node that had (transitively).
//
// Determinism: ordered containers only. Threading: the simulator's one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "src/services/quorum/quorum_service.hpp"
#include "src/sim/history_checker.hpp"

namespace rtotem::sim {

class QuorumChecker {
 public:
  // `nodes`: every node of the run (sorted, unique).
  QuorumChecker(std::span<const NodeId> nodes, bool wait_for_all);

  // A new incarnation of `node`: not quorate, and it has seen no one yet.
  void record_start(NodeId node);
  // `node`'s QuorumService holds `state` from `now` on.
  void record_state(Time now, NodeId node, const quorum::QuorumState& state);
  // `node` crashed or stopped: it holds no quorum from `now` on.
  void record_down(NodeId node);

  std::uint64_t violation_count() const noexcept { return violation_count_; }
  const std::vector<Violation>& violations() const noexcept { return violations_; }
  std::uint64_t states() const noexcept { return states_; }
  std::uint64_t decisions_compared() const noexcept { return decisions_compared_; }
  std::uint64_t early_compared() const noexcept { return early_compared_; }  // early decisions checked
  std::uint64_t quorate_rings() const noexcept { return quorate_rings_.size(); }
  std::uint64_t synced_rings() const noexcept { return ring_decisions_.size(); }
  // Rings decided by the sync timeout, without a member that had not reported.
  std::uint64_t rings_with_silent() const noexcept { return silent_rings_.size(); }

 private:
  struct NodeView {
    bool up = false;
    bool quorate = false;
    bool two_node = false;
    bool seen_all = false;  // this incarnation, for wait_for_all
    RingId ring_id;
    std::vector<NodeId> members;
    std::uint32_t decisions = 0;            // synced decisions recorded in ring_id
    std::optional<quorum::Decision> early;  // taken in ring_id before it was in sync
  };
  using RingKey = std::tuple<Seq, NodeId>;  // (seq, representative)

  std::size_t index_of(NodeId node) const;
  void check_split(Time now, NodeId node, const NodeView& view);
  void check_agreement(Time now, NodeId node, NodeView& view, const quorum::QuorumState& state);
  void report(Property property, Time now, std::vector<NodeId> nodes, std::string detail);

  std::vector<NodeId> nodes_;
  bool wait_for_all_;
  std::vector<NodeView> views_;
  std::map<RingKey, std::vector<quorum::Decision>> ring_decisions_;  // in the order decided
  std::map<RingKey, bool> quorate_rings_;
  std::map<RingKey, bool> silent_rings_;
  std::uint64_t states_ = 0;
  std::uint64_t decisions_compared_ = 0;
  std::uint64_t early_compared_ = 0;
  std::uint64_t violation_count_ = 0;
  std::vector<Violation> violations_;
};

}  // namespace rtotem::sim
