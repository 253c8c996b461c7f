// Votequorum on the ring, sans-I/O: the daemon (or the simulator) feeds it the ring's
// configurations and the quorum packets the ring delivers, and it tells its host when the quorum
// state changes. Every decision is taken at the same place in the ring's total order at every
// member, from what that order carries:
// - At a regular configuration each node multicasts a NODEINFO (its votes, the expected votes it
//   holds, its flags, the last quorate ring it knows). When the NODEINFO of every member has been
//   delivered in that ring, the ring is in sync and every member decides (quorum_decision.hpp)
//   from the same reports, and tells its clients, with the ring's id.
// - Before that a member may only lose quorum: at the configuration it checks the new members
//   against what it last knew of them, and drops quorum at once if they cannot hold it. A ring
//   that only lost members of a ring in sync decides at once, from what its members held there:
//   their reports confirm it.
// - A member that has not reported after config.sync_timeout_ms (its config lacks quorum { }, or
//   it is stuck) would hold the ring out of sync for ever: each node's timer multicasts
//   SYNC_EXPIRED, and where the first is delivered every member decides without the silent ones
//   (no votes), as if they were not there. A report that comes later counts from then on.
// - Runtime changes (a node's votes, expected votes) are multicast safe, each for the ring it was
//   checked in, and act where that ring delivers them in its regular configuration. EVS may
//   deliver a message on one side of a split only, so a change must leave at most one side
//   quorate whichever sides see it: in the transitional configuration a change only raises the
//   expected votes this node holds, and votes a change adds count only where it is delivered
//   safe in the regular configuration, once every member holds it (quorum_service.cpp). Expected
//   votes never go down but by such a change or by last_man_standing.
// - The last_man_standing window is a local timer, but all it does is multicast LMS_EXPIRED for
//   the ring; the lowering happens where that is delivered, if the ring is still the same and
//   still quorate.
// - A quorum device (corosync-qdevice) is this node's alone: its registration, its polls and its
//   vote (cast for one ring, named in the poll) go in this node's NODEINFO, sent again in the ring
//   whenever they change; a later NODEINFO of a member in the same ring changes only its device's
//   flags. The vote is for that ring only: a new ring counts the device once a member's device
//   votes for it, so after a cut a side whose nodes alone cannot hold quorum loses it at the
//   configuration, and regains it with the vote qnetd gives to one side only. A device that does
//   not poll within its timeout (its sync timeout after a ring change) is no longer alive, and its
//   vote is gone.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "membership/node.hpp"
#include "src/services/quorum/quorum_decision.hpp"
#include "src/services/quorum/quorum_wire.hpp"
#include "base/result.hpp"

namespace rtotem::quorum {

using membership::Time;

// What clients read (votequorum's getinfo, the quorum notification) after each change.
struct QuorumState {
  RingId ring_id;                    // the ring the state belongs to: the one of its configuration
  std::vector<NodeId> members;       // sorted
  std::vector<std::uint32_t> votes;  // one per member, as last reported or set
  bool synced = false;               // every member's NODEINFO for this ring delivered, or SYNC_EXPIRED
  // Decided at the configuration, before the reports, from what every member holds alike (a ring
  // that only lost members: quorum_service.cpp); the decision once synced is the same.
  bool early = false;
  std::vector<NodeId> silent;  // members that had not reported when SYNC_EXPIRED was delivered
  Decision decision;           // decision.quorate: the quorate flag
};

class QuorumEvents {
 public:
  // After the ring is in sync, and whenever the state changes later (quorate flag, numbers).
  virtual void quorum_changed(const QuorumState& state) = 0;

 protected:
  ~QuorumEvents() = default;
};

// How the service puts a packet on the ring, in the order it asks: Node::submit in the daemon.
using QuorumSubmit = std::function<Status(std::span<const std::byte> packet, membership::Delivery delivery)>;

// Single-threaded, on the host's loop. The host may call set_votes/set_expected from inside an
// event, but not on_deliver/on_configuration.
class QuorumService {
 public:
  QuorumService(NodeId self, QuorumConfig config, QuorumSubmit submit, QuorumEvents& events);
  QuorumService(const QuorumService&) = delete;
  QuorumService& operator=(const QuorumService&) = delete;

  // What the ring delivers, in order. `message` must name RingService::kQuorum; one that does not
  // decode is counted and ignored.
  void on_configuration(const membership::ConfigChange& change, Time now);
  void on_deliver(const membership::Delivered& message);

  // The next deadline (the last_man_standing window, the ring's sync timeout), if armed; the host
  // calls on_time once it passes.
  std::optional<Time> next_deadline() const noexcept {
    std::optional<Time> next;
    for (const std::optional<Time>& d : {lms_deadline_, sync_deadline_, device_deadline_})
      if (d && (!next || *d < *next)) next = d;
    return next;
  }
  void on_time(Time now);
  // Resubmits packets the ring refused (back-pressure): the host calls it after each turn.
  void retry_pending();

  // Runtime changes (votequorum_setvotes, votequorum_setexpected), checked here as votequorum
  // checks them, effective where delivered (above). Votes added raise the expected votes to the
  // votes present, or by as many while a node of the nodelist is away. 0; -ENOENT: no such node; -EINVAL: the change
  // would leave an impossible or (when quorate) unreachable quorum; -EAGAIN: the ring is not in sync yet (a refused
  // packet is queued and resubmitted, never answered -EAGAIN). A change the ring delivers where it cannot act (the ring
  // changed first) is dropped and counted: changes_dropped().
  int set_votes(NodeId node, std::uint32_t votes);
  int set_expected(std::uint32_t expected_votes);
  // Nodes added to or removed from the nodelist (a reload of every node, applied by every member
  // at one place in the order): who is listed and with how many votes. The expected votes follow
  // through set_expected, where the file does not give them.
  void set_nodelist(std::vector<NodeVotes> nodes);

  // This node's quorum device, as votequorum's qdevice calls: 0; -EACCES: no quorum.device in the
  // config; -EEXIST: a device of another name is registered; -ENOENT: none is; -EINVAL: `name` is
  // not the registered one; -ESTALE (poll): `ring` is not this node's ring (the device polls with
  // the ring of its last nodelist notification). Registration outlives the client that made it,
  // as votequorum's: a device that dies stops polling, and its vote goes with its timeout.
  int device_register(std::string_view name);
  int device_unregister(std::string_view name);
  int device_update(std::string_view old_name, std::string_view new_name);
  int device_poll(std::string_view name, bool cast_vote, const RingId& ring, Time now);
  int device_master_wins(std::string_view name, bool allow);
  const std::string& device_name() const noexcept { return device_name_; }

  // What votequorum_getinfo says of one node: a member of the ring, or a node of the nodelist (or
  // one heard before) that is not in it.
  struct NodeView {
    bool member = false;
    std::uint32_t votes = 0;
    std::uint32_t expected_votes = 0;  // as it last reported; this node's own for a silent one
    DeviceFlags device;                // as it last reported in this ring; this node's own for itself
  };
  std::optional<NodeView> node(NodeId node) const;

  const QuorumState& state() const noexcept { return state_; }
  const QuorumConfig& config() const noexcept { return config_; }
  std::uint64_t packets_malformed() const noexcept { return packets_malformed_; }
  std::uint64_t submit_refusals() const noexcept { return submit_refusals_; }
  std::uint64_t changes_dropped() const noexcept { return changes_dropped_; }

 private:
  bool holds_what_members_hold(const membership::ConfigChange& change) const;
  void on_node_info(NodeId sender, const NodeInfo& info);
  void on_set_votes(const SetVotes& packet, const membership::Delivered& message);
  void on_set_expected(const SetExpected& packet, const membership::Delivered& message);
  // Sets every member's expected votes in this ring to `expected_votes`, then decides.
  void set_ring_expected(std::uint32_t expected_votes);
  void drop_change() noexcept { ++changes_dropped_; }
  void on_lms_expired(const LmsExpired& packet);
  void on_sync_expired(const SyncExpired& packet);
  // Decides from the members' reports (in sync), arms the window, tells the host on a change.
  void recompute(bool announce);
  std::vector<MemberReport> cached_reports() const;
  std::uint32_t votes_known(NodeId node) const;
  std::uint32_t votes_in_ring(NodeId node) const;  // a member's as counted now, else votes_known
  // The ring's total and expected votes were `node` to have `votes` (quorum_service.cpp).
  std::uint64_t total_with(NodeId node, std::uint32_t votes) const;
  std::uint64_t expected_with(NodeId node, std::uint32_t votes) const;
  void submit(const QuorumPacket& packet);
  NodeInfo own_report() const;  // this node's NODEINFO for its ring, as it holds things now
  // Reports this node's device again in this ring, if its flags changed since the last report.
  void report_device();
  int check_device(std::string_view name) const;

  NodeId self_;
  QuorumConfig config_;
  QuorumSubmit submit_;
  QuorumEvents& events_;

  // This node's own values, reported in its NODEINFO.
  std::uint32_t votes_;
  std::uint32_t expected_votes_;
  bool waiting_for_all_;
  QuorateRing last_quorate_;
  std::string device_name_;
  DeviceFlags device_;                   // now
  DeviceFlags device_reported_;          // in this ring's last NODEINFO
  std::optional<Time> device_deadline_;  // the device must poll by then, while alive

  QuorumState state_;
  std::vector<std::optional<MemberReport>> reports_;  // one per member of state_.ring_id
  std::size_t reports_missing_ = 0;
  bool someone_left_ = false;     // a member of the previous ring is not in this one
  bool lms_applied_ = false;      // LMS_EXPIRED already lowered this ring's expected votes
  bool changes_in_ring_ = false;  // a runtime change, LMS_EXPIRED or SYNC_EXPIRED delivered in this ring
  Time now_ = 0;
  std::optional<Time> lms_deadline_;
  std::optional<Time> sync_deadline_;            // the ring's members have until then to report
  std::map<NodeId, std::uint32_t> votes_heard_;  // the latest votes reported or set, by node
  // Changes delivered in this ring, for a NODEINFO ordered after them but made before: its
  // sender's votes are the ones set, its expected votes at least those set.
  std::map<NodeId, std::uint32_t> votes_set_in_ring_;
  std::optional<std::uint32_t> expected_set_in_ring_;
  struct Pending {
    std::vector<std::byte> bytes;
    membership::Delivery delivery = membership::Delivery::kAgreed;
  };
  std::deque<Pending> pending_;  // refused by the ring, resubmitted in order
  std::uint64_t packets_malformed_ = 0;
  std::uint64_t submit_refusals_ = 0;
  std::uint64_t changes_dropped_ = 0;
};

}  // namespace rtotem::quorum
