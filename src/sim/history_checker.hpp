// The simulator's judge: records what every node delivered, which configurations it installed and
// what the application submitted, and checks the totem guarantees over that history, extended
// virtual synchrony included (EVS 1994: Moser, Amir, Melliar-Smith, Agarwal).
//
// Payloads identify themselves: the first kStampSize bytes are the origin node and its submission
// counter, the rest a pattern derived from both, so every delivered byte is verified without
// storing any payload.
//
// Determinism: ordered containers keyed by integers only; nothing depends on addresses or hashing.
// Threading: one thread, the simulator's.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "membership/node.hpp"

namespace rtotem::sim {

using membership::ConfigChange;
using membership::Delivered;
using membership::Delivery;
using membership::RingId;
using membership::Seq;
using membership::Time;
using transport::NodeId;

inline constexpr std::size_t kStampSize = 12;       // u32 origin + u64 counter, big-endian
inline constexpr std::size_t kViolationsKept = 64;  // the rest are counted, not stored

// One application message: who submitted it and its rank among that node's submissions (from 0).
struct MessageId {
  NodeId origin = transport::kNoNode;
  std::uint64_t counter = 0;
  friend auto operator<=>(const MessageId&, const MessageId&) = default;
};

// Fills `out` (at least kStampSize bytes) with the payload of message `id`.
void write_payload(MessageId id, std::span<std::byte> out) noexcept;
// Reads the stamp of a payload; false if it is too short to carry one.
bool read_stamp(std::span<const std::byte> payload, MessageId& out) noexcept;
// Whether every byte of `payload` is what write_payload(id) writes at that length.
bool payload_matches(MessageId id, std::span<const std::byte> payload) noexcept;

enum class Property : std::uint8_t {
  kNoCreation,        // delivered = submitted, byte for byte, by that sender, and accepted
  kNoDuplication,     // a node delivers a message at most once, across restarts too
  kTotalOrder,        // one (ring, seq) per message; nodes agree on the order of what they share
  kSafeDelivery,      // a safe message is delivered only once every member holds it
  kConfiguration,     // deliveries happen in the node's current configuration; configurations are
                      // well formed and every node that installs one sees the same members
  kVirtualSynchrony,  // nodes that go from configuration C to the same next one delivered the
                      // same messages in C
  kAgreement,         // at the end, live nodes in the same regular configuration delivered the
                      // same messages in it
  kSelfDelivery,      // at the end, every accepted submission was delivered at its origin, unless
                      // the origin crashed first
  kLiveness,          // after the faults stop, the live nodes form one ring and deliver their own
                      // submissions within a bound
  kPrefix,            // within one regular configuration, every member's deliveries are a prefix
                      // of one sequence (no member skips what another delivered there)
  kFifo,              // every node delivers a sender's messages in the order it submitted them
  kProgress,          // while a majority of the nodes stays pairwise connected for longer than a
                      // bound, a ring holding such a majority delivers, at least once a bound
  kLinkFailover,      // several links, and link failures the only membership faults: once every
                      // node is on one ring, no other ring forms (each link fails over first)
  // Process groups (group_checker.hpp): views agree at equal places in the order; a group message
  // comes from a member; NODEDOWN comes with the regular configuration, after the node's messages;
  // a join's reason is the packet's that made it (JOIN: its own join; NODEUP: a merge).
  kGroupViews,
  kGroupSender,
  kGroupNodeDown,
  kGroupJoinReason,
  // Quorum (quorum_checker.hpp): no two disjoint rings quorate at once; members of a ring reach the
  // same decisions in the same order; wait_for_all holds until every node has been seen.
  kQuorumSplit,
  kQuorumAgreement,
  kQuorumWaitForAll,
  // Clients (client_checker.hpp), through librtotem: a message a client is handed is one message a
  // client sent, whole, from that sender, in that group; and each client is handed a sender's
  // messages in a group once each, in the order they were sent.
  kClientMessage,
  kClientFifo,
  // Reloads of every node (reload_checker.hpp): a reload that changes a node's timing changes it
  // at one place in the order, to the same timing on every member that delivers that place.
  kReloadOrder,
};

// Safety: something bad happened. Liveness: something good did not happen in time. Within a
// configuration that has ended, differing deliveries are safety (virtual synchrony); within the
// last one, they mean a node has not caught up yet: liveness (agreement).
enum class Kind : std::uint8_t { kSafety, kLiveness };

Kind kind_of(Property property) noexcept;
std::string_view name_of(Property property) noexcept;

struct Violation {
  Property property = Property::kNoCreation;
  Time time_us = 0;           // virtual time at which it was seen
  std::vector<NodeId> nodes;  // the nodes involved (the delivering node first)
  std::optional<MessageId> message;
  std::string detail;
};

// "safety: total-order at t=1.234567 s, nodes 2,3, message 1#17: ..."
std::string describe(const Violation& violation);
// "1#17": origin 1, counter 17.
std::string describe(MessageId id);

// How long a pairwise-connected majority may go without a ring of its nodes delivering, for
// `totem` (the reasoning is in history_checker_progress.cpp).
Time progress_bound_us(const membership::TotemConfig& totem, std::size_t nodes) noexcept;

class HistoryChecker {
 public:
  // `nodes`: every node of the run (sorted, unique, at most membership::kMembersMax).
  // `progress_bound_us`: see kProgress; needed (above 0) once record_connectivity() is called.
  explicit HistoryChecker(std::span<const NodeId> nodes, Time progress_bound_us = 0);

  // The application hands message `id` to its origin's Node (called before submit(): a Node may
  // deliver it before submit() returns). Counters of one origin are offered 0, 1, 2, ... once each,
  // across the origin's restarts.
  void record_offer(Time now, MessageId id, std::uint32_t size, Delivery delivery);
  // submit() answered kOk. Before it does, the message is only offered (refused: it is retried).
  void record_accepted(Time now, MessageId id);
  // `node` delivered `message` (from inside NodeEvents::deliver: the payload is still valid).
  void record_delivery(Time now, NodeId node, const Delivered& message);
  // `node` installed a configuration (from inside NodeEvents::configuration: the spans are valid).
  void record_configuration(Time now, NodeId node, const ConfigChange& change);
  // The node crashed: its current configuration ends with no successor (never compared for virtual
  // synchrony), messages it offered but that were never accepted are dropped (no obligations), and
  // accepted messages of this origin not yet delivered at the origin lose their self-delivery
  // obligation. A restart needs no call: the node's next configuration is a fresh one.
  void record_crash(Time now, NodeId node);
  // A safe `message` being delivered at `node` while `lacking` members do not hold it yet.
  void check_safe(Time now, NodeId node, const Delivered& message, std::span<const NodeId> lacking);
  // The network from `now` on, as the nodes can use it: bit j of links[i] is set iff nodes i and j
  // (indexes in `nodes`) are both up and each reaches the other, multicasts included. Called at
  // the start of the fault phase and whenever a fault may have changed it; the same again is
  // ignored. Each change ends a window of constant connectivity, judged for kProgress.
  void record_connectivity(Time now, std::span<const std::uint64_t> links);
  // The fault phase is over: the last window is judged and no new one opens (the applications
  // make no more messages, so a ring has nothing to deliver; finish() judges what follows).
  void end_connectivity(Time now);
  // The run could not go on (e.g. virtual time stopped advancing): a liveness failure.
  void record_stall(Time now, std::string detail);
  // A ring formed that kLinkFailover says must not have (SimCluster judges the rings it saw).
  void record_link_failover(Time now, std::vector<NodeId> nodes, std::string detail);
  // The end of the liveness phase; `live`: the nodes alive now (sorted). Checks self-delivery,
  // agreement in the final configuration, liveness, the pairwise order of whole histories, safe
  // delivery at every member, and that every member listed in a transitional configuration
  // installed it.
  void finish(Time now, std::span<const NodeId> live);

  // Whether the run can stop early: every live node has installed the same regular configuration,
  // whose members are exactly `live`; every message offered by a live node was accepted and
  // (unless exempted by a crash) delivered at its origin; and every live node delivered as many
  // messages in that configuration. Cheap: called after every simulator step. True if `live` is
  // empty (nothing is left to wait for).
  bool quiescent(std::span<const NodeId> live) const;

  bool ok() const noexcept { return violation_count_ == 0; }
  const std::vector<Violation>& violations() const noexcept { return violations_; }
  std::uint64_t violation_count() const noexcept { return violation_count_; }
  std::uint64_t messages_accepted() const noexcept { return accepted_; }
  std::uint64_t messages_delivered() const noexcept { return delivered_somewhere_; }
  std::uint64_t deliveries() const noexcept { return deliveries_; }
  std::uint64_t configurations() const noexcept { return configurations_; }  // changes, all nodes

 private:
  static constexpr std::uint32_t kNoRing = ~std::uint32_t{0};

  // Where a ring ordered a message: its packet's seq, and its index among the messages packed
  // into that packet.
  struct Place {
    Seq seq = 0;
    std::uint16_t index = 0;
    auto operator<=>(const Place&) const = default;
  };
  static std::string place_text(Place place);
  struct MessageState {
    std::uint32_t size = 0;
    Delivery delivery = Delivery::kAgreed;
    bool accepted = false;
    bool dropped = false;              // never accepted, and its origin crashed: nothing is owed
    bool self_exempt = false;          // accepted, and its origin crashed before delivering it
    std::uint64_t delivered_mask = 0;  // bit i: nodes_[i] delivered it
    // Where it was first delivered, which every later delivery must match.
    std::uint32_t ring = kNoRing;  // index into rings_
    Place place;
    NodeId first_node = transport::kNoNode;
  };
  // One delivery in a node's history, in the order the node delivered.
  struct Record {
    Time time_us = 0;
    std::uint32_t ring = 0;  // index into rings_
    Place place;
    MessageId id;
  };
  // A configuration, as every node that installs it must see it.
  struct Config {
    bool transitional = false;
    std::uint32_t ring = 0;                  // index into rings_: the new ring (ring_id) in both kinds
    std::uint32_t closed_ring = kNoRing;     // transitional: the ring it closes (none for a fresh node)
    NodeId fresh_node = transport::kNoNode;  // a fresh node's transitional configuration: whose
    std::vector<NodeId> members;             // as the first node to install it reported them
    NodeId first_node = transport::kNoNode;
    // Regular: the longest sequence of deliveries a member made in it; every member's is a prefix.
    std::vector<MessageId> sequence;
  };
  // Identifies a configuration: transitional, closed ring, fresh node, ring.
  using ConfigKey = std::tuple<bool, std::uint32_t, NodeId, std::uint32_t>;
  // A configuration in a node's history; its deliveries run from history[first] to the next
  // installed configuration's first (or the history's end).
  struct Installed {
    std::uint32_t config = 0;  // index into configs_
    std::uint64_t first = 0;
    Time time_us = 0;      // when it was installed
    bool crashed = false;  // the node crashed while in it: it ended with no successor
  };
  struct NodeState {
    std::vector<Record> history;
    std::vector<Installed> installed;
    bool in_config = false;        // installed.back() is current: false before any, after a crash
    bool in_transitional = false;  // installed.back() is a transitional configuration
    // The current regular configuration; while a transitional one is current, the one it closes.
    std::optional<std::uint32_t> regular;
    Place last;                          // the last place delivered in the current ring
    std::set<std::uint32_t> left_rings;  // never to deliver in again
  };

  // Where two nodes' deliveries in one configuration first part.
  struct Difference {
    MessageId message;
    std::string text;
  };

  // history_checker.cpp: deliveries
  void report(Property property, Time now, std::vector<NodeId> nodes, std::optional<MessageId> message,
              std::string detail);
  std::size_t index_of(NodeId node) const;
  MessageState* find(MessageId id);
  std::uint32_t ring_index(const RingId& ring);
  bool settled(const MessageState& state, std::size_t origin) const noexcept;
  void check_creation(Time now, NodeId node, const Delivered& message, MessageId id, const MessageState& state);
  void check_ring_seq(Time now, NodeId node, const Delivered& message, MessageId id, std::uint32_t ring,
                      MessageState& state);
  void check_node_sequence(Time now, std::size_t at, const Delivered& message, MessageId id, std::uint32_t ring);
  std::string ring_text(std::uint32_t ring) const;
  // history_checker_configs.cpp: configurations, crashes, virtual synchrony
  std::uint32_t install_transitional(Time now, std::size_t at, const ConfigChange& change);
  std::uint32_t install_regular(Time now, std::size_t at, const ConfigChange& change);
  void check_well_formed(Time now, NodeId node, const ConfigChange& change);
  std::uint32_t config_index(Time now, NodeId node, const ConfigKey& key, std::span<const NodeId> members);
  void check_virtual_synchrony(Time now, std::size_t at, std::uint32_t next);
  std::optional<Difference> compare_deliveries(std::size_t a, std::size_t a_position, std::size_t b,
                                               std::size_t b_position) const;
  std::span<const Record> deliveries_in(std::size_t at, std::size_t position) const;
  std::string config_text(std::uint32_t config) const;
  std::string whereabouts(std::size_t at) const;
  // history_checker_order.cpp: the prefix rule and FIFO, per delivery
  void check_prefix(Time now, std::size_t at, MessageId id);
  void check_fifo(Time now, std::size_t at, MessageId id);
  // history_checker_members.cpp: what a configuration owes each member, judged at the end
  void finish_safe_delivery();
  void finish_transitional_members();
  std::optional<std::size_t> position_of(std::size_t at, std::uint32_t config) const;
  // history_checker_progress.cpp: progress while a connected majority lasts
  void judge_progress(Time now);
  void progress_times(std::uint32_t config, Time from, Time to, bool whole, std::vector<Time>& out) const;
  std::size_t connected_within(std::span<const NodeId> members) const;
  // history_checker_finish.cpp: the end of the run
  std::optional<std::uint32_t> shared_regular(std::span<const NodeId> live) const;
  void finish_convergence(Time now, std::span<const NodeId> live);
  void finish_outstanding(Time now, std::span<const NodeId> live);
  void finish_messages(Time now);
  void finish_agreement(Time now, std::span<const NodeId> live);
  void finish_pairwise_order();
  std::vector<NodeId> nodes_lacking(std::uint64_t mask) const;

  std::vector<NodeId> nodes_;
  std::vector<NodeState> node_states_;               // by index in nodes_
  std::vector<std::vector<MessageState>> messages_;  // [origin index][counter]
  // Per origin: offered messages neither dropped nor accepted-and-delivered-at-origin (or exempt).
  std::vector<std::uint64_t> outstanding_;
  std::vector<RingId> rings_;                                       // in order of first mention
  std::map<std::pair<NodeId, Seq>, std::uint32_t> ring_indexes_;    // (rep, seq) -> index in rings_
  std::map<std::tuple<std::uint32_t, Place>, MessageId> by_place_;  // (ring index, place)
  std::vector<Config> configs_;                                     // in order of first installation
  // [node index * nodes + origin index]: 1 + the highest counter of that origin the node delivered.
  std::vector<std::uint64_t> fifo_next_;
  // The connectivity in force (record_connectivity), and since when; none outside the fault phase.
  struct Connectivity {
    Time since_us = 0;
    std::vector<std::uint64_t> links;
  };
  std::optional<Connectivity> connectivity_;
  Time progress_bound_us_ = 0;
  std::map<ConfigKey, std::uint32_t> config_indexes_;
  // (configuration, the next one) -> (node index, position in its installed) of the first node
  // seen to make that move: every other node making it must have delivered the same in the first.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::size_t, std::size_t>> moves_;
  std::uint64_t accepted_ = 0;
  std::uint64_t delivered_somewhere_ = 0;
  std::uint64_t deliveries_ = 0;
  std::uint64_t configurations_ = 0;
  std::vector<Violation> violations_;
  std::uint64_t violation_count_ = 0;
};

}  // namespace rtotem::sim
