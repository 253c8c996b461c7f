// A cluster of totem Nodes on one SimNetwork under virtual time: the discrete-event loop, the
// application traffic, the membership faults, and the HistoryChecker watching every delivery.
//
// A run has two phases. Fault phase (spec.duration_us): every node starts at t=0 and forms rings
// by itself; the network loses, duplicates, delays and reorders as spec.faults says; partitions
// and crashes come as spec.partitions_per_s and spec.crashes_per_s draw them (and as spec.script
// says); every live node's application submits messages; the checker is told the connectivity
// after every fault, to judge progress while the faults go on. Liveness phase: the network heals and
// stops losing and duplicating (its delays stay), every crashed node restarts, no new messages
// are made (refused ones are still retried), and the run ends once the live nodes are one ring
// with everything delivered, or at spec.liveness_bound_us; past it, a ring of every live node
// that still delivers its backlog is given drain windows, up to ten bounds in all.
//
// Each step goes to the next event (a network delivery, a timer deadline, an application
// submission or a fault), then, at that instant: due faults run; every node (in id order) polls
// its backend until a short batch; due timers fire in (deadline, node id, timer id) order; due
// submissions run in node id order. The backend of a node is flushed after every call into its
// Node. A paused node takes no part until its pause ends; a slow receiver polls at most once per
// its poll gap; each Node is told the time of its own (skewed) clock.
//
// A crash destroys the node's Node, then its backend (which drops its packets in flight, unless
// spec.crashed_copies_land) and its application's unaccepted messages. A torn crash strikes after
// the node's next call into its Node that queued packets, before the flush: it takes no more
// calls and is crashed at the end of that step. A restart is a new backend and Node, handed the
// ring seq the node last persisted; its application numbers its messages on from where it stopped.
//
// Determinism: every random choice comes from the network's one Rng (seeded by spec.seed); no
// wall clock, threads, hash-map iteration or pointer-ordered containers.
//
// Ownership: the cluster owns the network, every backend and every Node. Threading: one thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "membership/node.hpp"
#include "src/sim/client_checker.hpp"
#include "src/sim/group_checker.hpp"
#include "src/sim/history_checker.hpp"
#include "src/sim/quorum_arbiter.hpp"
#include "src/sim/quorum_checker.hpp"
#include "src/sim/reload_checker.hpp"
#include "transport/links/link_set.hpp"
#include "base/result.hpp"
#include "transport/sim/sim_network.hpp"

namespace rtotem::config {
struct DaemonConfig;
}  // namespace rtotem::config

namespace rtotem::sim {

struct ClientWorld;  // sim_clients.hpp

inline constexpr std::uint32_t kBurstMaxLimit = 64;
// Offered but unaccepted, per node: then the app waits. Bounded so the backlog left when faults
// stop (a ring may have been down the whole run) drains within the liveness bound even on 16
// lossy nodes, whose ring carries ~2,000 messages a second in the simulator.
inline constexpr std::size_t kPendingMax = 512;
static_assert(kBurstMaxLimit <= kPendingMax);
inline constexpr double kFaultRateMax = 10;   // partitions, crashes or pauses per virtual second
inline constexpr double kClockSkewMax = 0.1;  // clock_skew: up to 10% fast or slow
// The checker's progress rule counts nodes as connected only on a network losing at most this of
// the copies, and at most kProgressRotationLossMax token hops a rotation (loss x nodes): each lost
// hop waits a token retransmit period, so the chance that a rotation outlasts the token timeout
// grows with the ring (sim_cluster.cpp, report_connectivity).
inline constexpr double kProgressLossMax = 0.05;
inline constexpr double kProgressRotationLossMax = 0.2;  // 5 % on 4 nodes, 2.5 % on 8
// The simulated max_message_size: 25 pieces at the default mtu, splits without the cost of 1 MiB.
inline constexpr std::uint32_t kSimMessageSizeMax = 32 << 10;
inline constexpr std::uint32_t kSimLinksMax = 4;

// How SimFaults::corrupt damages a copy (sim_cluster_damage.cpp); returns the bytes that remain.
// `sealed` (a run with --crypto): anything, a bit anywhere or a cut anywhere, since the seal
// must refuse every change. Unsealed: only what the decoders can see; see the definition.
std::size_t damage_packet(std::span<std::byte> wire, Rng& rng, bool sealed);

// A fault at a chosen instant of the fault phase, on top of the drawn ones: for scenarios.
struct ScriptedFault {
  enum class Kind : std::uint8_t {
    kPartition,  // SimNetwork::partition(groups): replaces any partition in force
    kHeal,       // SimNetwork::heal(): every node reaches every node again
    kCrash,      // `node` crashes (if alive); it stays down until a kRestart or the liveness phase
    kStop,       // `node` stops gracefully (Node::leave), then is down as after kCrash
    kRestart,    // `node` restarts (if crashed)
    kCutLink,    // the link `node` -> `to` goes down, one way, until a kHeal (none: to the end)
    kPause,      // `node` (if alive) is paused for `length_us`: no poll, no timer, no traffic
    kDeaf,       // no multicast reaches `node` (tokens still do) until a kHeal
    kPortDown,   // `node`'s port on link `link` goes down (spec.links > 1) until the faults end
  };
  Time at_us = 0;
  Kind kind = Kind::kHeal;
  NodeId node = transport::kNoNode;
  std::vector<std::vector<NodeId>> groups;
  NodeId to = transport::kNoNode;  // kCutLink
  std::uint32_t link = 0;          // kPortDown
  Time length_us = 0;              // kPause
};

// Everything a run is, resolved: one spec and its seed replay the run exactly.
struct SimSpec {
  std::uint64_t seed = 1;
  std::uint32_t nodes = 3;       // ids 1..nodes
  Time duration_us = 2'000'000;  // the fault phase, with traffic
  transport::SimFaults faults;   // during the fault phase
  // Network splits per virtual second, on average: a partition into 2 or 3 groups, or (one in
  // three) one-way links cut; each heals after 0.2..4 token timeouts. 0: none.
  double partitions_per_s = 0;
  // Crashes per virtual second, on average, of a live node (never the last one); each restarts
  // after 0.5..5 token timeouts. 0: none.
  double crashes_per_s = 0;
  double stop_share = 0;  // of those drawn crashes, the share that are graceful stops
  // Of all restarts, the share that come back without the state directory: the stored ring seq
  // is gone (as a new disk, or a wiped /var/lib/rtotem, would leave it).
  double lose_state = 0;
  // Of the drawn crashes that are not stops, the share that strike between a call into the Node
  // and the flush after it: what the Node decided to send is never sent.
  double torn_share = 0;
  // The packets a crashed node had in flight still land (they had left its host), possibly after
  // its restart when faults.late delays them. false: they are dropped with it (as before).
  bool crashed_copies_land = false;
  // Pauses per virtual second, on average, of a live node: it neither polls nor fires timers for
  // 0.1..3 token timeouts (a VM migration, a swap storm), then resumes with its timers overdue.
  double pauses_per_s = 0;
  // Each node's clock runs at 1 + r of virtual time, r drawn in [-clock_skew, clock_skew], from
  // an offset drawn per incarnation. 0: every clock is virtual time.
  double clock_skew = 0;
  // Each node is, with this probability, a slow receiver: it polls at most every 0.5..10 ms, and
  // its receive ring is the smallest its Node accepts (8 windows: 400 packets at the default
  // window, not 1,024), so bursts overflow it.
  double slow_share = 0;
  // Links per node, 1..kSimLinksMax. Above 1 each node's Node runs on a LinkSet (in link_mode)
  // over one SimBackend per link, each link a SimNetwork of its own with the same faults drawn
  // apart; partitions, cut links and deafness strike every link (they are the node's whole
  // connectivity), link cuts one link.
  std::uint32_t links = 1;
  transport::LinkMode link_mode = transport::LinkMode::kPassive;
  // Link failures per virtual second: one node's port on one link goes down for 0.2..4 token
  // timeouts, one at a time, so every two nodes keep a link up. The property kLinkFailover then
  // holds the ring to its members. 0: none.
  double link_cuts_per_s = 0;
  std::vector<ScriptedFault> script;  // in time order, within the fault phase
  double rate_per_s = 200;            // messages each node's application submits, on average
  std::uint32_t burst_max = 8;        // they come in bursts of 1..burst_max
  double safe_fraction = 0.5;         // the share submitted as Delivery::kSafe
  // 0: drawn per message; else every size uniform in [message_size, message_size_max] (one size
  // when max is 0 or equal), clamped to what a message may be.
  std::uint32_t message_size = 0;
  std::uint32_t message_size_max = 0;
  double large_fraction = 0.05;  // drawn sizes: the share above one packet, split in pieces
  membership::TotemConfig totem = [] {
    membership::TotemConfig config;
    config.token_timeout_ms = 1000;  // virtual time is free; shorter keeps runs small
    config.max_message_size = kSimMessageSizeMax;
    config.fail_recv_ms = 1000;  // deafness that lasts under 4 token timeouts must be found
    return config;
  }();
  transport::BackendParams backend;  // local_node is set per node (and epoch, with a key)
  // Seal every packet (WireCrypto) with a key made for the run: the protocol over the sealing
  // backends, duplicates dropped as replays below it. Off by default: sealing costs CPU.
  bool crypto = false;
  // Each node runs a GroupService (process groups) on its Node, its application's processes
  // joining, leaving and multicasting to a few groups too; the GroupChecker judges what they see.
  bool groups = false;
  // Above 0: each node runs rtotemd's NodeStack (src/stack/) in place of the bare services, and
  // this many processes on the real librtotem over in-memory connections to it
  // (sim_clients.hpp); the ClientChecker judges what they are handed, the GroupChecker the
  // stack's group views. Not with `groups` or `quorum`.
  std::uint32_t clients = 0;
  // Each node runs a QuorumService (votequorum) with these options over the nodelist 1..nodes,
  // node n having quorum_votes[n - 1] votes (one each when empty); the QuorumChecker judges
  // them. Not set: no quorum.
  std::optional<quorum::QuorumOptions> quorum;
  std::vector<std::uint32_t> quorum_votes;
  // Runtime quorum changes per virtual second, on average, in the fault phase (spec.quorum only):
  // a drawn node whose ring is in sync and quorate sets a drawn node's votes (0..3) or the
  // expected votes, as `rtotemctl quorum votes|expected` would (sim_cluster_quorum.cpp). 0: none.
  double vote_changes_per_s = 0;
  // Reloads of every node per virtual second, on average, in the fault phase (spec.clients only):
  // the token in the nodes' files changes (in one reload of four, in some files only), and a
  // drawn node's operator asks for a reload as `rtotemctl reload` does (sim_cluster_reload.cpp);
  // the ReloadChecker judges where the change took effect. 0: none.
  double reloads_per_s = 0;
  // Scenarios only (never drawn): loses the copies it picks, as SimNetwork::set_drop_rule says,
  // on every link (each network holds a copy of it).
  transport::SimNetwork::DropRule drop_rule;
  // After the fault phase. 0: 30 x token_timeout (a token loss, consensus, commit and recovery).
  Time liveness_bound_us = 0;
};

// A ring some node became operational in, as that node first saw it.
struct FormedRing {
  RingId ring_id;
  std::vector<NodeId> members;
  Time formed_us = 0;  // when the first node became operational in it
};

// Every counter that moved, " name=value" each: what a node did is the first clue to why it is
// stuck.
std::string counters_text(const membership::NodeCounters& counters);

// Where a node stands at the end: enough to see which one is stuck, and why.
struct NodeSnapshot {
  NodeId id = transport::kNoNode;
  bool alive = false;  // false: crashed, and the run stopped before its restart
  membership::MemberState state = membership::MemberState::kGather;
  RingId ring_id;               // operational: its ring; else the last one
  std::vector<NodeId> members;  // of ring_id
  Seq delivered_through = 0;
  std::size_t send_queue = 0;  // accepted, waiting for the token
  std::size_t pending = 0;     // refused, waiting in the application for a retry
  std::uint32_t restarts = 0;
  membership::NodeCounters counters;  // of its current incarnation
  // When it was operational, [from, to) in virtual us, over all its incarnations: what a
  // scenario measures availability with.
  std::vector<std::pair<Time, Time>> operational;
};

struct SimResult {
  std::uint64_t violation_count = 0;
  std::vector<Violation> violations;  // the first kViolationsKept
  std::uint64_t messages_accepted = 0;
  std::uint64_t messages_delivered = 0;         // distinct messages delivered at some node
  std::uint64_t deliveries = 0;                 // at all nodes
  std::uint64_t submit_refusals = 0;            // back-pressure (or any refusal), each retried later
  std::uint64_t configurations = 0;             // configuration changes delivered, at all nodes
  std::uint64_t group_changes = 0;              // spec.groups: group membership changes, at all nodes
  std::uint64_t group_messages = 0;             // group messages, at all nodes
  std::uint64_t group_views_compared = 0;       // views compared between two nodes at one place
  std::uint64_t client_offers = 0;              // spec.clients: messages the clients handed librtotem
  std::uint64_t client_deliveries = 0;          // messages their deliver callbacks got, at all nodes
  std::uint64_t client_pieced = 0;              // of those, messages that came in pieces
  std::uint64_t client_refusals = 0;            // calls refused with -EAGAIN (back-pressure, a forming ring)
  std::uint64_t clients_cut_off = 0;            // connections the stack cut off for not reading
  std::uint64_t quorum_states = 0;              // spec.quorum: quorum states recorded, at all nodes
  std::uint64_t quorum_decisions_compared = 0;  // a ring's decision compared between two members
  std::uint64_t quorum_early_compared = 0;      // a decision taken at the configuration, with the synced one
  std::uint64_t quorate_rings = 0;              // rings some member was quorate in
  std::uint64_t synced_rings = 0;               // rings some member had every member's NODEINFO in
  std::uint64_t silent_rings = 0;               // of those, decided by the sync timeout without some
  std::uint64_t quorum_changes_asked = 0;       // spec.vote_changes_per_s: changes a service took
  std::uint64_t quorum_changes_refused = 0;     // refused by votequorum's rule (or the ring not in sync)
  std::uint64_t quorum_changes_dropped = 0;     // deliveries of a change where it could not act, at all nodes
  std::uint64_t reloads_asked = 0;              // spec.reloads_per_s: reloads an operator asked for
  std::map<int, std::uint64_t> reload_answers;  // by answer: 0 (applied, or nothing to change), -errno
  std::uint64_t reload_places = 0;              // places in the order where some node's timing changed
  std::uint64_t device_votes_given = 0;         // a quorum device configured: polls the arbiter voted in
  std::uint64_t device_votes_refused = 0;       // polls for a ring that had not the vote
  std::uint64_t device_moves = 0;               // the vote given to another ring
  std::uint64_t device_faults = 0;              // the arbiter stalled, or a node cut off from it
  std::uint64_t rings_formed = 0;               // rings.size()
  std::vector<FormedRing> rings;                // in the order they formed
  std::uint64_t crashes = 0;
  std::uint64_t stops = 0;        // of the crashes, graceful stops (Node::leave first)
  std::uint64_t states_lost = 0;  // restarts without the stored ring seq (spec.lose_state)
  std::uint64_t partitions = 0;   // network splits: partitions and one-way link cuts
  std::uint64_t link_cuts = 0;    // spec.link_cuts_per_s: one node's port on one link down
  std::uint64_t pauses = 0;
  std::uint64_t torn = 0;             // of the crashes, those struck before a flush
  std::uint64_t torn_unsent = 0;      // packets those kept from leaving: queued, never flushed
  std::uint64_t torn_deliveries = 0;  // deliveries made in the calls those struck
  std::uint64_t timers_overdue = 0;   // fired after their deadline: by a node waking from a pause
  Time end_us = 0;                    // virtual time at the end of the run
  Time converged_us = 0;              // liveness phase length: end_us - duration
  std::uint64_t drain_windows = 0;    // windows past the liveness bound a draining ring was given
  membership::NodeCounters counters;  // summed over every incarnation of every node
  std::vector<NodeSnapshot> nodes;
  transport::SimNetworkStats network;

  bool ok() const noexcept { return violation_count == 0; }
};

class SimCluster {
 public:
  // Errors: the spec's TotemConfig does not resolve, a rate or a scripted fault is out of range,
  // or a backend cannot be made.
  static Result<std::unique_ptr<SimCluster>> create(const SimSpec& spec);
  ~SimCluster();
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;

  // Both phases, then the end-of-run checks. Once per cluster.
  SimResult run();

  const SimSpec& spec() const noexcept { return spec_; }
  const HistoryChecker& checker() const noexcept { return checker_; }
  // nullptr while node `id` is crashed.
  const membership::Node* node(NodeId id) const;

 private:
  class Member;
  friend class Member;

  // One node id across its incarnations: what outlives a crash.
  struct Slot {
    std::unique_ptr<Member> member;     // nullptr while crashed
    Seq stored_ring_seq = 0;            // the node's durable store (NodeEvents::persist_ring_seq)
    std::uint64_t next_counter = 0;     // its application's: a MessageId is never reused
    std::optional<Time> restart_at_us;  // crashed by the drawn schedule: back then
    std::uint32_t restarts = 0;
    std::uint64_t incarnations = 0;                  // backends made: the next one's seal epoch is one more
    std::vector<std::pair<Time, Time>> operational;  // NodeSnapshot::operational, the closed spans
    std::int64_t clock_ppm = 0;                      // its oscillator's error: the same in every incarnation
    Time poll_gap_us = 0;                            // a slow receiver's; 0: not one
    // Its configuration file's timing (spec_.reloads_per_s changes it), resolved: what a restart
    // runs and what a reload reads.
    membership::TotemConfig file_totem;
  };

  SimCluster(const SimSpec& spec, const membership::TotemConfig& totem);
  Member* member(NodeId id) const;

  // sim_cluster_nodes.cpp: each node's hardware, and its incarnations.
  void draw_node_traits();
  Result<std::unique_ptr<Member>> make_member(NodeId id);
  Result<std::unique_ptr<transport::Backend>> open_backend(const transport::BackendParams& params);

  // sim_cluster.cpp: the loop, and what the Nodes report.
  bool step(Time limit_us);  // false when nothing is due at or before `limit_us`
  void advance_to(Time t);   // every link's network
  void fire_due_link_timers(Time now);
  std::optional<Time> next_event_us() const;
  void fire_due_timers(Time now, bool overdue_only);
  // Quorum services whose last_man_standing window has run out, by their node's clock.
  void fire_due_quorum_windows(Time now);
  // spec.clients: the node stacks' timers and client retries that are due, their posted jobs, and
  // the nodes that their stack stopped (an agreed shutdown, a kill).
  void fire_due_stacks(Time now);
  void on_deliver(Member& member, const Delivered& message);
  void after_node_call(Member& member);
  // Opens or closes the member's span of NodeSnapshot::operational.
  void note_operational(Member& member, bool operational);
  bool converged() const;
  // The liveness phase's look at a ring past its bound (sim_cluster.cpp: kLivenessDrainBounds).
  struct Drain {
    RingId ring_id{};
    std::uint64_t deliveries = 0;
    bool looked = false;
  };
  bool draining(Drain& last) const;
  SimResult result() const;
  void report_connectivity(Time now);
  // A network the progress rule (and link-failover) judges: kProgressLossMax and
  // kProgressRotationLossMax (see report_connectivity).
  bool reliable_network() const noexcept;

  // sim_cluster_traffic.cpp: the application (one Member at a time).
  void run_due_traffic(Time now);
  void generate_burst(Member& member, Time now);
  void submit_pending(Member& member, Time now);
  Time draw_gap_us();
  void group_action(Member& member);

  // sim_cluster_quorum.cpp: the operator's runtime quorum changes.
  void vote_change(Time now);
  // sim_cluster_reload.cpp: the operator's reloads of every node, and the nodes' files.
  void reload(Time now);
  void collect_reload_answers();
  void collect_reload_answers(Member& member);
  config::DaemonConfig file_of(NodeId id) const;
  // sim_cluster_device.cpp: the quorum device (a device in spec.quorum): each node's device and
  // the arbiter that gives its vote, and their faults.
  bool has_device() const noexcept { return quorum_ && quorum_->device; }
  void start_device(Member& member, Time now);
  void device_saw_ring(Member& member, Time now);  // a new ring: the device asks soon
  void fire_due_device_polls(Time now);
  void device_fault(Time now);
  Time device_timeout_us() const noexcept { return Time{quorum_->device->timeout_ms} * 1000; }

  // sim_cluster_faults.cpp: partitions, cut links, crashes and restarts.
  void begin_faults(Time now);
  void end_faults(Time now);
  std::optional<Time> next_fault_us() const;
  void run_due_faults(Time now);
  void run_scripted(const ScriptedFault& fault, Time now);
  void split_network(Time now);
  void cut_links();
  void cut_port(Time now);
  void heal_port();
  // Every two nodes share a link on which both their ports are up.
  bool ports_keep_every_pair() const;
  // Every link's network: node-level faults strike them all.
  template <class F>
  void each_network(F&& f) {
    f(network_);
    for (auto& more : more_links_) f(*more);
  }
  template <class F>
  void each_network(F&& f) const {
    f(network_);
    for (const auto& more : more_links_) f(*more);
  }
  // Judges kLinkFailover at the end of a run whose only membership faults were link cuts that
  // left every two nodes a common link.
  void judge_link_failover();
  void crash_drawn(Time now);
  // `graceful`: the node leaves the ring (Node::leave) before it goes.
  void crash(NodeId id, Time now, bool graceful = false);
  // Detaches the stopped Members whose last packets have landed (all of node `id`'s, if given).
  void retire_stopped(Time now, NodeId id = transport::kNoNode);
  void restart(NodeId id, Time now);
  void pause(NodeId id, Time now, Time length_us);
  // Crashes the torn Members whose last call has been made (and draws their restart); true if any.
  bool reap_torn(Time now);
  Time draw_between_us(double low_timeouts, double high_timeouts);

  SimSpec spec_;
  membership::TotemConfig totem_;  // resolved
  std::vector<NodeId> ids_;        // 1..nodes
  transport::SimNetwork network_;  // first: outlives every backend; link 0
  // Links 1.. (spec.links > 1): networks of their own, with their own draws.
  std::vector<std::unique_ptr<transport::SimNetwork>> more_links_;
  HistoryChecker checker_;
  GroupChecker group_checker_;                  // judges nothing unless spec_.groups
  std::optional<quorum::QuorumConfig> quorum_;  // spec_.quorum, resolved
  QuorumChecker quorum_checker_;                // judges nothing unless spec_.quorum
  ReloadChecker reload_checker_;                // judges every spec_.clients run (a timing change anywhere)
  std::unique_ptr<ClientWorld> client_world_;   // spec_.clients: what every node's clients share
  std::vector<Slot> slots_;                     // by id - 1; each Member owns its backend and Node
  // Stopped gracefully: the Member stays attached (taking no input) until the packets it sent
  // last, its leave among them, are delivered: they are on the wire, the process is not.
  struct Stopping {
    std::unique_ptr<Member> member;
    Time gone_at_us = 0;
  };
  std::vector<Stopping> stopping_;
  std::vector<NodeId> live_;  // sorted: the ids whose Member exists
  bool generating_ = true;    // false in the liveness phase
  Time same_instant_us_ = 0;  // the stall guard: steps without time moving
  std::uint64_t same_instant_steps_ = 0;
  bool stalled_ = false;
  std::uint64_t drain_windows_ = 0;  // windows the liveness phase gave a ring that still delivers
  std::vector<FormedRing> rings_;    // every ring a node has been operational in
  std::uint64_t submit_refusals_ = 0;
  membership::NodeCounters crashed_counters_;              // summed over the incarnations that crashed
  using DueTimer = std::tuple<Time, NodeId, std::size_t>;  // deadline, node, timer index
  std::vector<DueTimer> due_timers_;
  std::vector<NodeId> lacking_;  // scratch of on_deliver: no allocation per delivery

  // The fault schedule (sim_cluster_faults.cpp).
  std::optional<Time> split_at_us_;         // the next drawn partition or link cut
  std::optional<Time> heal_at_us_;          // the drawn split in force heals then
  std::optional<Time> crash_at_us_;         // the next drawn crash
  std::optional<Time> pause_at_us_;         // the next drawn pause
  std::optional<Time> link_cut_at_us_;      // the next drawn link cut
  std::optional<Time> link_heal_at_us_;     // the link cut in force heals then
  std::optional<Time> vote_change_at_us_;   // the next runtime quorum change
  std::optional<Time> reload_at_us_;        // the next reload of every node
  std::optional<Time> device_fault_at_us_;  // the next arbiter stall or node cut off
  QuorumArbiter arbiter_;
  Time arbiter_stalled_until_us_ = 0;  // no device hears from it until then
  std::uint64_t device_faults_ = 0;
  std::pair<std::size_t, NodeId> port_down_{0, transport::kNoNode};  // link, node: the cut in force
  std::uint64_t link_cuts_ = 0;
  bool ports_split_ = false;     // scripted ports down left two nodes no common link: not judged
  std::size_t script_next_ = 0;  // into spec_.script
  std::uint64_t crashes_ = 0;
  std::uint64_t stops_ = 0;
  std::uint64_t states_lost_ = 0;
  std::uint64_t partitions_ = 0;
  std::uint64_t pauses_ = 0;
  std::uint64_t torn_ = 0;
  std::uint64_t torn_unsent_ = 0;
  std::uint64_t torn_deliveries_ = 0;
  std::uint64_t timers_overdue_ = 0;
  std::uint64_t quorum_changes_asked_ = 0;
  std::uint64_t quorum_changes_refused_ = 0;
  std::uint64_t quorum_changes_dropped_ = 0;  // by incarnations that have crashed
  std::uint64_t reloads_asked_ = 0;
  std::map<int, std::uint64_t> reload_answers_;
};

}  // namespace rtotem::sim
