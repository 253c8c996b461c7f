// A cluster of totem Nodes on one SimNetwork under virtual time: the discrete-event loop, the
// application traffic, and the HistoryChecker watching every delivery.
//
// A run has two phases. Fault phase (spec.duration_us): the network loses, duplicates, delays and
// reorders as spec.faults says, and every node's application submits messages. Liveness phase:
// faults stop (set_faults({})), no new messages are made, refused ones are still retried, and the
// run ends once everything is delivered everywhere, or at spec.liveness_bound_us.
//
// Each step goes to the next event (a network delivery, a timer deadline or an application
// submission), then, at that instant: every node (in id order) polls its backend until a short
// batch; due timers fire in (deadline, node id, timer id) order; due submissions run in node id
// order. The backend of a node is flushed after every call into its Node.
//
// Determinism: every random choice comes from the network's one Rng (seeded by spec.seed); no
// wall clock, threads, hash-map iteration or pointer-ordered containers.
//
// Not yet: crashes, partitions and joins need the membership protocol. They fit here as
// scheduled events, like submissions: a crash destroys a Member (Node, then backend), a partition
// calls SimNetwork::partition, and install_ring gives way to the Node forming rings itself.
//
// Ownership: the cluster owns the network, every backend and every Node. Threading: one thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "membership/node.hpp"
#include "src/sim/history_checker.hpp"
#include "transport/result.hpp"
#include "transport/sim/sim_network.hpp"

namespace rtotem::sim {

inline constexpr std::uint32_t kBurstMaxLimit = 64;
inline constexpr std::size_t kPendingMax = 4096;  // offered but unaccepted, per node: then the app waits
static_assert(kBurstMaxLimit <= kPendingMax);

// Everything a run is, resolved: one spec and its seed replay the run exactly.
struct SimSpec {
  std::uint64_t seed = 1;
  std::uint32_t nodes = 3;                 // ids 1..nodes
  Time duration_us = 2'000'000;            // the fault phase, with traffic
  transport::SimFaults faults;             // during the fault phase
  double rate_per_s = 200;                 // messages each node's application submits, on average
  std::uint32_t burst_max = 8;             // they come in bursts of 1..burst_max
  double safe_fraction = 0.5;              // the share submitted as Delivery::kSafe
  std::uint32_t message_size = 0;          // 0: drawn per message; else all this size (benchmarks)
  membership::TotemConfig totem = [] {
    membership::TotemConfig config;
    config.token_timeout_ms = 1000;        // virtual time is free; shorter keeps runs small
    return config;
  }();
  transport::BackendParams backend;        // local_node is set per node
  Time liveness_bound_us = 0;              // after the fault phase; 0: 20 x token_timeout
};

// Where a node stands at the end: enough to see which one is stuck, and why.
struct NodeSnapshot {
  NodeId id = transport::kNoNode;
  bool operational = false;
  Seq delivered_through = 0;
  std::size_t send_queue = 0;       // accepted, waiting for the token
  std::size_t pending = 0;          // refused, waiting in the application for a retry
  membership::NodeCounters counters;
};

struct SimResult {
  std::uint64_t violation_count = 0;
  std::vector<Violation> violations;       // the first kViolationsKept
  std::uint64_t messages_accepted = 0;
  std::uint64_t messages_delivered = 0;    // distinct messages delivered at some node
  std::uint64_t deliveries = 0;            // at all nodes
  std::uint64_t submit_refusals = 0;       // back-pressure (or any refusal), each retried later
  std::uint64_t rings_formed = 0;
  Time end_us = 0;                         // virtual time at the end of the run
  Time converged_us = 0;                   // liveness phase length: end_us - duration
  membership::NodeCounters counters;       // summed over the nodes
  std::vector<NodeSnapshot> nodes;
  transport::SimNetworkStats network;

  bool ok() const noexcept { return violation_count == 0; }
};

class SimCluster {
 public:
  // Errors: the spec's TotemConfig does not resolve, or a backend cannot be made.
  static Result<std::unique_ptr<SimCluster>> create(const SimSpec& spec);
  ~SimCluster();
  SimCluster(const SimCluster&) = delete;
  SimCluster& operator=(const SimCluster&) = delete;

  // Both phases, then the end-of-run checks. Once per cluster.
  SimResult run();

  const SimSpec& spec() const noexcept { return spec_; }
  const HistoryChecker& checker() const noexcept { return checker_; }
  const membership::Node& node(NodeId id) const;

 private:
  class Member;
  friend class Member;

  SimCluster(const SimSpec& spec, const membership::TotemConfig& totem);
  Result<void> attach_members();

  // The loop: false when nothing is due at or before `limit_us`.
  bool step(Time limit_us);
  std::optional<Time> next_event_us() const;
  void fire_due_timers(Time now);
  void run_due_traffic(Time now);

  // From inside a Member's Node calls.
  void on_deliver(NodeId node, const Delivered& message);
  void after_node_call(Member& member);

  // The traffic generator (one Member at a time).
  void generate_burst(Member& member, Time now);
  void submit_pending(Member& member, Time now);
  Time draw_gap_us();

  SimResult result() const;

  SimSpec spec_;
  membership::TotemConfig totem_;          // resolved
  std::vector<NodeId> ids_;                // 1..nodes: the ring's members
  transport::SimNetwork network_;          // first: outlives every backend
  HistoryChecker checker_;
  std::vector<std::unique_ptr<Member>> members_;  // by id; each owns its backend and Node
  bool generating_ = true;                 // false in the liveness phase
  Time same_instant_us_ = 0;               // the stall guard: steps without time moving
  std::uint64_t same_instant_steps_ = 0;
  bool stalled_ = false;
  std::vector<RingId> rings_;              // every ring a node has been operational in
  std::uint64_t submit_refusals_ = 0;
  using DueTimer = std::tuple<Time, NodeId, std::size_t>;  // deadline, node, timer index
  std::vector<DueTimer> due_timers_;
};

}  // namespace rtotem::sim
