// The simulator's judge of process groups (src/services/groups/group_service.hpp): records, per node,
// the group changes and messages its GroupService reports, interleaved with the ring deliveries
// and configurations that caused them, and checks what the service promises:
// - kGroupViews: two nodes about to deliver the same group packet (ring, seq, index) in the same
//   configuration hold the same members in every group, as far as both know the processes' nodes
//   first-hand (see Settled below); and each change's members are the last ones plus `joined`
//   minus `left`. The same configuration: both in the ring's regular one, or both in the same
//   transitional one. A node delivering in a transitional configuration skips the packets none of
//   its members received (EVS), so its views there may rightly differ from a regular delivery's.
// - kGroupSender: a group message comes from a process in the receiver's view of the group, and
//   every group packet from a node of the receiver's configuration.
// - kGroupNodeDown: NODEDOWN comes only with a regular configuration, only for processes of nodes
//   not in its transitional one (departed, or joined and thus stale), and after it no process of
//   such a node is left. With the packets' check above, a departed node's last messages come
//   before its processes' NODEDOWN, at every surviving member.
// - kGroupJoinReason: a process joins where a packet of its node is delivered: with JOIN at its own
//   join packet, with NODEUP at its node's join list or at a message from it (a merge brought it).
//
// Settled: views agree only once each side has learnt a node's processes. A node knows its own
// first-hand; after a merge, it knows another side's node's processes only once that node's join
// list for this configuration is delivered (before it, only those that sent something). So node a
// is settled on node m in regular configuration C when m is a itself, m's join list for C was
// delivered at a, or m came with a from a's previous ring (C's transitional members) and a was
// settled on m there. m's join lists still in its send queue when C came (made for an earlier
// ring) are delivered in C first, in order: the first of m's JOINLISTs delivered in C past those
// is its list for C. The simulated applications' join lists fit one packet each.
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

#include "src/services/groups/group_service.hpp"
#include "src/sim/history_checker.hpp"

namespace rtotem::sim {

// A stamped payload opens with its origin node id, big-endian u32 (history_checker.hpp): a first
// byte of 0 for every node id there can be. A group packet opens with its wire version, not 0.
bool is_group_packet(std::span<const std::byte> payload) noexcept;

class GroupChecker {
 public:
  using Members = std::vector<groups::ProcessId>;             // sorted
  using Views = std::map<std::string, Members, std::less<>>;  // groups with members only

  // `nodes`: every node of the run (sorted, unique, at most membership::kMembersMax).
  explicit GroupChecker(std::span<const NodeId> nodes);

  // A new incarnation of `node` starts: its GroupService, and so its views, start empty.
  void record_start(NodeId node);
  // `node`'s GroupService hands its Node this packet (before the Node answers).
  void record_submit(NodeId node, std::span<const std::byte> packet_head);
  // ... and the Node refused it.
  void record_refused(NodeId node, std::span<const std::byte> packet_head);
  // `node`'s GroupService is about to be handed this delivery, a group packet.
  void record_delivery(Time now, NodeId node, const Delivered& message);
  // `node`'s GroupService is about to be handed `change`; end_configuration() once it has been.
  void begin_configuration(Time now, NodeId node, const ConfigChange& change);
  void end_configuration(Time now, NodeId node);
  // What `node`'s GroupService reported (its GroupEvents).
  void record_change(Time now, NodeId node, const groups::GroupChange& change);
  void record_message(Time now, NodeId node, const groups::GroupMessage& message);
  // The end of the run: live nodes (sorted) in one regular configuration, neither past it into a
  // transitional one, that delivered as many group packets in it hold the same views, as far as
  // both are settled.
  void finish(Time now, std::span<const NodeId> live);

  const std::vector<Violation>& violations() const noexcept { return violations_; }
  std::uint64_t violation_count() const noexcept { return violation_count_; }
  std::uint64_t changes() const noexcept { return changes_; }
  std::uint64_t messages() const noexcept { return messages_; }
  std::uint64_t views_compared() const noexcept { return views_compared_; }

 private:
  struct Delivering {
    NodeId sender = transport::kNoNode;
    bool join = false;  // a JOIN (else a message or a join list: a leave makes no joins)
    bool join_list = false;
    std::uint32_t pid = 0;  // a JOIN's or a message's
  };
  struct NodeState {
    Views views;
    std::optional<RingId> regular;   // the current regular configuration's ring
    std::optional<RingId> closing;   // the transitional configuration that closes it, once begun
    std::vector<NodeId> members;     // of that configuration
    std::vector<NodeId> came_along;  // its transitional members: those not stale here
    std::uint64_t settled = 0;       // bit i: settled on nodes_[i]
    std::uint64_t delivered = 0;     // group packets delivered in `regular`, before `closing`
    bool in_regular_change = false;  // between begin_ and end_configuration of a regular one
    // This incarnation's JOINLISTs accepted by its Node, and of them those it delivered itself.
    std::uint64_t lists_submitted = 0;
    std::uint64_t lists_self_delivered = 0;
    std::map<NodeId, std::uint64_t> lists_delivered;  // in `regular`, by sender
    // The group packet being handed to the service, for the reasons of the joins it makes.
    std::optional<Delivering> delivering;
  };
  // The first node to deliver a packet, as it stood just before.
  struct Seen {
    NodeId node = transport::kNoNode;
    Views views;
    std::uint64_t settled = 0;
  };
  // Ring rep, ring seq, seq, index; then the transitional configuration's ring, or {} if regular.
  using PacketKey = std::tuple<NodeId, Seq, Seq, std::uint16_t, NodeId, Seq>;

  void report(Property property, Time now, std::vector<NodeId> nodes, std::string detail);
  std::size_t index_of(NodeId node) const;
  // Why `joined` may join at the packet being delivered; a reason, or "" where it agrees.
  static std::string join_reason_error(const Delivering& delivering, const groups::ProcessId& joined,
                                       groups::Reason why);
  bool settled(std::uint64_t mask, NodeId node) const;
  // Where two nodes' views differ on processes both are settled on; "" if nowhere.
  std::string difference(NodeId a_node, const Views& a, NodeId b_node, const Views& b,
                         std::uint64_t settled_both) const;

  std::vector<NodeId> nodes_;
  std::vector<NodeState> states_;  // by index in nodes_
  std::map<PacketKey, Seen> seen_;
  // (ring, node): the node's JOINLISTs still to be delivered when it installed the ring's regular
  // configuration, made for earlier rings.
  std::map<std::tuple<NodeId, Seq, NodeId>, std::uint64_t> stale_lists_;
  std::uint64_t changes_ = 0;
  std::uint64_t messages_ = 0;
  std::uint64_t views_compared_ = 0;
  std::vector<Violation> violations_;
  std::uint64_t violation_count_ = 0;
};

}  // namespace rtotem::sim
