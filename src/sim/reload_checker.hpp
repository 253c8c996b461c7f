// The simulator's judge of reloads of every node (src/services/control/cluster_reload.hpp): a
// reload's changes apply where its last report is delivered, on every member that delivers it in
// the ring the reload started in, or on none. Recorded: each node's configurations, the reload
// messages it delivers in a regular configuration, and the totem timing it runs before and after
// each, and at the end of every turn. Checked (kReloadOrder):
// - a node's timing changes only while it delivers a report of a reload, by then having delivered
//   in this ring a report of that reload from every member (the last one);
// - wherever one node's timing changed, every node that delivered that message runs the same
//   timing after it (nodes whose timing changed nowhere may differ: one restarted from another
//   file; so may nodes that delivered the message in a transitional configuration, where the
//   reload had already ended);
// - no node's timing changes anywhere else (record_turn).
//
// Determinism: ordered containers only. Threading: the simulator's one thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <vector>

#include "membership/totem_config.hpp"
#include "src/services/control/reload_wire.hpp"
#include "src/sim/history_checker.hpp"

namespace rtotem::sim {

class ReloadChecker {
 public:
  // `node` installed a configuration (either kind): the reports it delivered before count no more.
  void record_configuration(NodeId node);
  // `node` delivered node control message `message` in its regular configuration of `members` at
  // `now`, running `before` as it came and `after` once it was handled.
  void record_control(Time now, NodeId node, std::span<const NodeId> members, const Delivered& message,
                      const membership::TotemConfig& before, const membership::TotemConfig& after);
  // `node` ends a turn (a call into it) running `now_running`; `last_seen` is what it ran after its
  // last node control message, or at its start. A difference is a change made outside the place
  // of a reload's last report: a violation.
  void record_turn(Time now, NodeId node, const membership::TotemConfig& last_seen,
                   const membership::TotemConfig& now_running);
  // Judges what was recorded; call once, at the end of the run.
  void finish();

  std::uint64_t violation_count() const noexcept { return violations_.size(); }
  const std::vector<Violation>& violations() const noexcept { return violations_; }
  std::uint64_t applied() const noexcept { return applied_; }  // places where some node's timing changed

 private:
  // The fields a reload changes: the protocol's timing (not the sizes a backend fills in).
  using Timing = std::array<std::uint32_t, 10>;
  static Timing timing_of(const membership::TotemConfig& totem) noexcept;
  using Place = std::tuple<NodeId, Seq, Seq, std::uint16_t>;  // ring rep, ring seq, seq, index
  struct Seen {
    Time now = 0;
    NodeId node = membership::kNoNode;
    bool changed = false;
    Timing after{};
  };

  // Per node: the senders of each reload's reports it delivered since its last configuration.
  std::map<NodeId, std::map<control::ReloadId, std::set<NodeId>>> reported_;
  std::map<Place, std::vector<Seen>> places_;
  std::vector<Violation> violations_;
  std::uint64_t applied_ = 0;
};

}  // namespace rtotem::sim
