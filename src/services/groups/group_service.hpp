// Process groups (corosync's CPG) on the ring, sans-I/O: local clients' joins, leaves and
// multicasts become group packets submitted to the ring; group packets and configuration changes
// delivered by the ring become group messages and membership changes, in the ring's total order,
// so every daemon that delivers the same sequence reports the same changes in the same order.
//
// State: for each group, the processes (node id, pid) in it. A process enters a group when its
// join is delivered (or its first message, where that comes first: see below), leaves when its
// leave is delivered (LEAVE, or PROCDOWN when its client disconnected).
//
// Views across configuration changes, the same at every daemon that delivers the same sequence:
// - A node that left the configuration: its messages still in the old ring are delivered after
//   the transitional configuration, with their effect, and then, at the regular configuration,
//   its processes leave (NODEDOWN). So a client never hears from a process already reported gone,
//   and hears a departed process's last messages before its NODEDOWN, as corosync's CPG has it.
// - A node that joined: what a daemon still holds of it is stale and leaves (NODEDOWN); then each
//   daemon submits a join list of its local processes, and a process learnt from a join list is
//   reported as joining with NODEUP (the two sides of a merge each see the other side join, as
//   corosync's CPG reports them). A message from a process the daemon does not know yet (its
//   daemon's join list is still on its way) reports that process joining first, NODEUP too: a
//   client never hears from a process it was not told of. A join delivered as such is JOIN.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "membership/node.hpp"
#include "rtotem/rtotem.h"
#include "base/result.hpp"

namespace rtotem::groups {

using membership::NodeId;

inline constexpr std::size_t kGroupNameMax = RTOTEM_GROUP_NAME_MAX;  // the C API's limit

struct ProcessId {
  NodeId node = 0;
  std::uint32_t pid = 0;
  friend auto operator<=>(const ProcessId&, const ProcessId&) = default;
};

// Values are the C API's enum rtotem_reason.
enum class Reason : std::uint8_t { kJoin = 0, kLeave = 1, kNodeDown = 2, kProcDown = 3, kNodeUp = 4 };

struct GroupMessage {
  std::string_view group;
  ProcessId sender;
  membership::Delivery order = membership::Delivery::kAgreed;
  std::span<const std::byte> data;  // valid during the call
  bool piece = false;               // one piece of a larger message (librtotem joins them)
};

struct GroupChange {
  std::string_view group;
  std::span<const ProcessId> members;  // sorted, after the change
  std::span<const ProcessId> joined;
  std::span<const Reason> joined_reason;  // one per joined: kJoin, or kNodeUp (learnt across a merge)
  std::span<const ProcessId> left;
  std::span<const Reason> left_reason;  // one per left
};

// What the service tells its host (the daemon, or a test). Called from inside the service's calls.
class GroupEvents {
 public:
  virtual void group_message(const GroupMessage& message) = 0;
  virtual void group_change(const GroupChange& change) = 0;

 protected:
  ~GroupEvents() = default;
};

// How the service puts a packet on the ring: Node::submit in the daemon. A multicast's packet is
// its header and the client's data (copied once, into the send buffers); the others are whole.
using Submit = std::function<Status(const membership::Gather& packet, membership::Delivery order)>;

struct GroupJoinList;  // group_wire.hpp
struct JoinListEntry;

// The smallest max_message_size of a ring the service runs on: any packet with one name fits
// whole (group_wire.hpp checks it); the host refuses a smaller configuration at start-up.
inline constexpr std::size_t kRingMessageSizeMin = 256;

// Single-threaded: every call, and every event it raises, on the host's loop. The host may call
// join/leave/multicast from inside an event, but not on_deliver/on_configuration.
class GroupService {
 public:
  // `max_message_size`: the ring's (Node::max_message_size()), at least kRingMessageSizeMin.
  // `events` outlives the service.
  GroupService(NodeId self, std::size_t max_message_size, Submit submit, GroupEvents& events);
  GroupService(const GroupService&) = delete;
  GroupService& operator=(const GroupService&) = delete;

  // A local client's requests. kOk: submitted (the effect comes when it is delivered); else the
  // ring's back-pressure (retry later) or kTooLarge. Names are 1..kGroupNameMax bytes, checked
  // by the caller with valid_group_name().
  Status join(std::string_view group, std::uint32_t pid);
  Status leave(std::string_view group, std::uint32_t pid, Reason why);  // kLeave or kProcDown
  // `piece`: the data is one piece of a larger message, passed on marked (GroupMessage::piece).
  Status multicast(std::string_view group, std::uint32_t pid, std::span<const std::byte> data,
                   membership::Delivery order, bool piece = false);
  // Largest `data` multicast() takes when the ring carries messages up to `max_message_size`.
  static std::size_t data_max(std::size_t max_message_size) noexcept;

  // What the ring delivers, in order. A packet that does not decode is counted and ignored.
  void on_deliver(const membership::Delivered& message);
  void on_configuration(const membership::ConfigChange& change);
  // Retries a join list the ring refused (back-pressure): the host calls it after each turn of
  // its loop; cheap when nothing waits.
  void retry_pending();

  // Processes in `group`, sorted (empty if none). Group names, sorted.
  std::span<const ProcessId> members(std::string_view group) const;
  std::vector<std::string> group_names() const;
  std::uint64_t packets_malformed() const noexcept { return packets_malformed_; }
  // Join-list packets the ring refused (back-pressure); each is retried after the next turn.
  std::uint64_t join_list_refusals() const noexcept { return join_list_refusals_; }
  bool join_list_pending() const noexcept { return join_list_pending_; }

  static bool valid_group_name(std::string_view group) noexcept;
  // Whether a leave of (group, pid) submitted here is not delivered yet.
  bool leave_in_flight(std::string_view group, std::uint32_t pid) const;

 private:
  using Members = std::vector<ProcessId>;  // sorted
  using Groups = std::map<std::string, Members, std::less<>>;
  // A local process in a group, (group, pid); the map below finds owned keys by such a view.
  using LocalView = std::pair<std::string_view, std::uint32_t>;
  using LocalKey = std::pair<std::string, std::uint32_t>;
  struct LocalLess {
    using is_transparent = void;
    bool operator()(const LocalView& a, const LocalView& b) const noexcept { return a < b; }
  };

  // What the ring delivers.
  void on_join(ProcessId process, std::string_view group, Reason why);  // kJoin or kNodeUp
  void on_leave(ProcessId process, std::string_view group, Reason why);
  void on_join_list(NodeId sender, const GroupJoinList& list);
  void own_leave_delivered(std::string_view group, std::uint32_t pid);
  void remove_nodes(std::span<const NodeId> nodes);
  Groups::iterator group_for_join(std::string_view group);
  void forget_if_empty(Groups::iterator group);
  // What this daemon submits.
  std::span<std::byte> packet_buffer(std::size_t size);
  void send_join_list();
  std::vector<JoinListEntry> join_list_unsent() const;
  std::size_t join_list_packet_end(std::span<const JoinListEntry> entries, std::size_t begin) const;

  NodeId self_;
  std::size_t max_message_size_;
  Submit submit_;
  GroupEvents& events_;
  Groups groups_;
  // Nodes the transitional configuration says left: their processes leave at the regular one.
  std::vector<NodeId> departed_;
  // This daemon's leaves submitted but not delivered yet, by count: the ring delivers them before
  // any join list submitted now, so a join list must not carry these processes back in.
  std::map<LocalKey, std::uint32_t, LocalLess> leaves_in_flight_;
  // A join list the ring refused, waiting for retry_pending(); and, when it was split into
  // several packets, the last local process already submitted.
  bool join_list_pending_ = false;
  std::optional<LocalKey> join_list_sent_through_;
  std::vector<std::byte> packet_buffer_;  // encoding space, reused: grows to the largest packet sent
  std::uint64_t packets_malformed_ = 0;
  std::uint64_t join_list_refusals_ = 0;
};

}  // namespace rtotem::groups
