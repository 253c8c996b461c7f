// The simulator's judge: records what every node delivered and what the application submitted,
// and checks the totem guarantees over that history (no creation, no duplication, total order,
// safe delivery, agreement, self-delivery, liveness).
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
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "membership/node.hpp"

namespace rtotem::sim {

using membership::Delivered;
using membership::Delivery;
using membership::RingId;
using membership::Seq;
using membership::Time;
using transport::NodeId;

inline constexpr std::size_t kStampSize = 12;  // u32 origin + u64 counter, big-endian
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
  kNoCreation,     // delivered = submitted, byte for byte, by that sender, and accepted
  kNoDuplication,  // a node delivers a message at most once
  kTotalOrder,     // nodes agree on the order of the messages they have in common
  kSafeDelivery,   // a safe message is delivered only once every member holds it
  kAgreement,      // at the end, every node delivered the same set
  kSelfDelivery,   // at the end, every accepted submission was delivered at its origin
  kLiveness,       // after the faults stop, everything submitted is delivered within a bound
};

// Safety: something bad happened. Liveness: something good did not happen in time. With one ring
// (no membership yet), a set that differs at the end (agreement, self-delivery) means a node has
// not caught up: liveness. With membership, agreement within a configuration becomes safety.
enum class Kind : std::uint8_t { kSafety, kLiveness };

Kind kind_of(Property property) noexcept;
std::string_view name_of(Property property) noexcept;

struct Violation {
  Property property = Property::kNoCreation;
  Time time_us = 0;             // virtual time at which it was seen
  std::vector<NodeId> nodes;    // the nodes involved (the delivering node first)
  std::optional<MessageId> message;
  std::string detail;
};

// "safety: total-order at t=1.234567 s, nodes 2,3, message 1#17: ..."
std::string describe(const Violation& violation);

class HistoryChecker {
 public:
  // `nodes`: every node of the run (sorted, unique, at most membership::kMembersMax).
  explicit HistoryChecker(std::span<const NodeId> nodes);

  // The application hands message `id` to its origin's Node (called before submit(): a Node may
  // deliver it before submit() returns). Counters of one origin are offered 0, 1, 2, ... once each.
  void record_offer(Time now, MessageId id, std::uint32_t size, Delivery delivery);
  // submit() answered kOk. Before it does, the message is only offered (refused: it is retried).
  void record_accepted(Time now, MessageId id);
  // `node` delivered `message` (from inside NodeEvents::deliver: the payload is still valid).
  void record_delivery(Time now, NodeId node, const Delivered& message);
  // A safe `message` being delivered at `node` while `lacking` members do not hold it yet.
  void check_safe(Time now, NodeId node, const Delivered& message, std::span<const NodeId> lacking);
  // The run could not go on (e.g. virtual time stopped advancing): a liveness failure.
  void record_stall(Time now, std::string detail);
  // The end of the liveness phase: agreement, self-delivery, liveness, and the pairwise order of
  // whole histories (which also covers histories spanning several rings).
  void finish(Time now);

  // Every accepted message delivered at every node, and nothing left only offered.
  bool quiescent() const noexcept { return complete_ == accepted_ && offered_ == accepted_; }

  bool ok() const noexcept { return violation_count_ == 0; }
  const std::vector<Violation>& violations() const noexcept { return violations_; }
  std::uint64_t violation_count() const noexcept { return violation_count_; }
  std::uint64_t messages_accepted() const noexcept { return accepted_; }
  std::uint64_t messages_delivered() const noexcept { return delivered_somewhere_; }
  std::uint64_t deliveries() const noexcept { return deliveries_; }

 private:
  struct MessageState {
    std::uint32_t size = 0;
    Delivery delivery = Delivery::kAgreed;
    bool accepted = false;
    std::uint64_t delivered_mask = 0;  // bit i: nodes_[i] delivered it
    // Where it was first delivered, which every later delivery must match.
    std::uint32_t ring = 0;            // index into rings_
    Seq seq = 0;
    NodeId first_node = transport::kNoNode;
  };
  // One delivery in a node's history, in the order the node delivered.
  struct Record {
    Time time_us = 0;
    std::uint32_t ring = 0;  // index into rings_
    Seq seq = 0;
    MessageId id;
  };
  struct NodeState {
    std::vector<Record> history;
    std::optional<std::uint32_t> ring;  // the ring it delivers in now
    Seq last_seq = 0;
    std::vector<std::uint32_t> left_rings;  // rings it moved on from: never to deliver in again
  };

  void report(Property property, Time now, std::vector<NodeId> nodes, std::optional<MessageId> message,
              std::string detail);
  std::size_t index_of(NodeId node) const;
  MessageState* find(MessageId id);
  std::uint32_t ring_index(const RingId& ring);
  void check_creation(Time now, NodeId node, const Delivered& message, MessageId id, const MessageState& state);
  void check_order(Time now, NodeId node, const Delivered& message, MessageId id, MessageState& state);
  void check_node_sequence(Time now, NodeId node, std::uint32_t ring, Seq seq, MessageId id);
  void finish_sets(Time now);
  void finish_liveness(Time now);
  void finish_pairwise_order();
  std::vector<NodeId> nodes_lacking(std::uint64_t mask) const;
  std::string ring_text(std::uint32_t ring) const;

  std::vector<NodeId> nodes_;
  std::uint64_t all_mask_ = 0;
  std::vector<NodeState> node_states_;                // by index in nodes_
  std::vector<std::vector<MessageState>> messages_;   // [origin index][counter]
  std::vector<RingId> rings_;                         // in order of first delivery
  std::map<std::tuple<std::uint32_t, Seq>, MessageId> by_ring_seq_;  // (ring index, seq)
  std::uint64_t offered_ = 0;
  std::uint64_t accepted_ = 0;
  std::uint64_t complete_ = 0;  // accepted messages delivered at every node
  std::uint64_t delivered_somewhere_ = 0;
  std::uint64_t deliveries_ = 0;
  std::vector<Violation> violations_;
  std::uint64_t violation_count_ = 0;
};

}  // namespace rtotem::sim
