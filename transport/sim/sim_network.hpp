// The simulated network under SimBackends: virtual time, one seeded PRNG, injected faults (loss,
// duplication, delay jitter, partitions, cut links) and the packets in flight. One seed and the
// same calls replay the same run exactly.
//
// A multicast goes to every other attached node (the sender gets its own through the Backend's
// loopback path); a unicast to its destination. Each copy may be lost, duplicated, and is delayed
// uniformly in [delay_min_us, delay_max_us] (or, for a `late` share, [late_min_us, late_max_us]); a
// `corrupt` share of the copies is damaged on arrival. Reachability is checked when a copy is sent and again
// when it arrives, so a partition cuts packets in flight. A copy in flight holds a Ref to the
// sender's buffer (zero copy, as a NIC reading the sender's memory); on arrival its bytes are
// copied into a posted receive buffer of the receiver, or dropped if none is posted (ring_full).
// A sealed packet (a backend with a key) lives in a seal slot the sender rewrites at its next
// flush: its copies in flight share one copy of the sealed bytes instead.
//
// Determinism: no wall clock, no threads, no hash-map iteration, no pointer-ordered containers.
// Endpoints are kept sorted by node id; in-flight copies are ordered by (deliver time, send seq).
//
// Lifetime: the network must outlive every backend it attached (asserted on destruction).
// Threading: one thread, the simulator's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "transport/backend.hpp"
#include "base/result.hpp"
#include "transport/sim/sim_backend.hpp"
#include "base/rng.hpp"

namespace rtotem::transport {

struct SimFaults {
  double loss = 0;       // probability that a copy is lost
  double duplicate = 0;  // probability that a copy arrives twice (each with its own delay)
  std::uint64_t delay_min_us = 5;
  std::uint64_t delay_max_us = 50;  // a range wider than the gap between sends reorders them
  // The heavy tail: this share of the copies is delayed late_min_us..late_max_us instead (a
  // queue behind a stalled switch port, a retransmitting link layer). The faults below draw
  // nothing while they are 0, so a run without them draws as it did before they existed.
  double late = 0;
  std::uint64_t late_min_us = 0;
  std::uint64_t late_max_us = 0;
  double corrupt = 0;  // the share of delivered copies damaged first (by the network's Damage)
};

// Every copy sent ends in exactly one of: delivered, lost, cut, no_receiver, ring_full, crashed,
// or is still in flight. Copies = sent + duplicated.
struct SimNetworkStats {
  std::uint64_t sent = 0;         // copies handed to the network: one per destination
  std::uint64_t delivered = 0;    // copies written into a receiver's buffer
  std::uint64_t lost = 0;         // dropped by the loss fault, or by a scripted DropRule
  std::uint64_t duplicated = 0;   // extra copies made by the duplicate fault
  std::uint64_t cut = 0;          // dropped by a partition or a down link, when sent or in flight
  std::uint64_t no_receiver = 0;  // addressed to a node that is not attached, or closed
  std::uint64_t ring_full = 0;    // the receiver had no posted receive buffer (an RNR drop)
  std::uint64_t crashed = 0;      // in flight from or to a backend when it was destroyed
  // Not end states: of the copies above, those the late fault delayed and those delivered damaged.
  std::uint64_t late = 0;
  std::uint64_t corrupted = 0;
  // Delivered from a destroyed backend (set_crashed_copies_land) while its node, restarted, was
  // attached again: a dead incarnation's packets reaching the living.
  std::uint64_t from_dead_incarnation = 0;

  bool operator==(const SimNetworkStats&) const = default;
  SimNetworkStats& operator+=(const SimNetworkStats& other) noexcept;  // two networks' counts
};

class SimNetwork {
 public:
  explicit SimNetwork(std::uint64_t seed, SimFaults faults = {});
  SimNetwork(const SimNetwork&) = delete;
  SimNetwork& operator=(const SimNetwork&) = delete;
  ~SimNetwork();

  // A backend for params.local_node; an error if the params are invalid or the node is attached.
  Result<std::unique_ptr<SimBackend>> attach(const BackendParams& params);

  void set_faults(const SimFaults& faults);
  // How a corrupted copy is damaged: rewrites the bytes in place and returns how many remain
  // (at most wire.size()). Without one, SimFaults::corrupt does nothing.
  using Damage = std::function<std::size_t(std::span<std::byte> wire, Rng& rng)>;
  void set_damage(Damage damage) { damage_ = std::move(damage); }
  // true: a destroyed backend's copies already in flight still land (they left its host before
  // the crash); they hold copies of their bytes, not the sender's buffers. false (the default):
  // they are dropped with it.
  void set_crashed_copies_land(bool land) noexcept { crashed_copies_land_ = land; }
  const SimFaults& faults() const noexcept { return faults_; }

  // Nodes in different groups cannot reach each other; a node in no group reaches no one. Replaces
  // the previous partition; links set down with set_link stay down.
  void partition(std::span<const std::vector<NodeId>> groups);
  // Everyone reaches everyone: the partition is gone and every link is up.
  void heal();
  // One direction only: from -> to.
  void set_link(NodeId from, NodeId to, bool up);
  // The node's port on this network goes down (both ways) or comes back: one link of a node with
  // several (a NIC or switch port failing). heal() leaves ports as they are: a port is the
  // hardware of one link, a partition the state of the network between nodes.
  void set_port(NodeId node, bool up);
  bool port_up(NodeId node) const { return !ports_down_.contains(node); }
  // A node that no multicast reaches while unicasts still do: a switch that dropped its group
  // membership (IGMP snooping), corosync's classic "failed to receive". heal() ends it too.
  void set_multicast_deaf(NodeId node, bool deaf);
  bool multicast_deaf(NodeId node) const { return multicast_deaf_.contains(node); }
  // The node's device fails for good, as an RDMA device removed or a QP in the error state: its
  // backend reports the link failure and neither sends nor receives again.
  void break_device(NodeId node, std::string reason);
  // The node's device stops draining its send queue (a hung port, a pause storm) while it still
  // receives: its backend's transmit takes nothing until the stall ends.
  void stall_device(NodeId node, bool stalled);
  bool reachable(NodeId from, NodeId to) const;
  // A scripted loss, for scenarios that need one exact packet gone: called for each copy with the
  // sender's packet as the protocol wrote it (before sealing), true loses that copy (counted as
  // lost). Never drawn: a run replays only with the code that set it.
  using DropRule = std::function<bool(std::uint64_t now_us, NodeId from, NodeId to, std::span<const std::byte> packet)>;
  void set_drop_rule(DropRule rule) { drop_rule_ = std::move(rule); }

  std::uint64_t now_us() const noexcept { return now_us_; }
  std::optional<std::uint64_t> next_delivery_us() const noexcept;
  // Delivers every copy due at or before t_us, in time order (ties in send order), then sets now.
  void advance_to(std::uint64_t t_us);
  std::size_t in_flight() const noexcept { return in_flight_.size(); }

  // The run's one PRNG: the simulator draws its own choices from it too, so one seed drives all.
  Rng& rng() noexcept { return rng_; }
  const SimNetworkStats& stats() const noexcept { return stats_; }

 private:
  friend class SimBackend;

  struct Endpoint {
    NodeId node;
    SimBackend* backend;  // not owned: the backend detaches itself when destroyed
  };
  // What the copies of one send carry: the sender's buffer (zero copy), or the sealed bytes.
  struct Payload {
    SendBufferRef buffer;
    std::shared_ptr<const std::vector<std::byte>> sealed;

    std::span<const std::byte> wire() const noexcept {
      return sealed ? std::span<const std::byte>(*sealed) : buffer->wire();
    }
  };
  struct Copy {
    std::uint64_t deliver_us;
    std::uint64_t seq;  // send order, unique: breaks ties between copies due at the same time
    NodeId from;
    NodeId to;
    Payload payload;
    bool orphan = false;  // its sender's backend was destroyed after sending it
  };

  // For SimBackend: `dest` kNoNode is a multicast; `wire` the bytes to deliver, the buffer's own
  // or a sealed copy.
  void send(NodeId from, NodeId dest, const SendBufferRef& buffer, std::span<const std::byte> wire);
  // For ~SimBackend: forgets the backend and drops its copies in flight, both ways.
  void detach(const SimBackend& backend);

  void send_copy(NodeId from, NodeId to, const Payload& payload, std::span<const std::byte> packet);
  void launch(NodeId from, NodeId to, const Payload& payload);
  void deliver(const Copy& copy);
  // The heap's order: std::push_heap keeps the greatest on top, so "greater" is "due later".
  static bool later(const Copy& a, const Copy& b) noexcept;
  std::vector<Endpoint>::const_iterator lower_bound(NodeId node) const noexcept;
  SimBackend* find(NodeId node) const noexcept;

  Rng rng_;
  SimFaults faults_;
  DropRule drop_rule_;
  std::uint64_t now_us_ = 0;
  std::uint64_t next_seq_ = 0;
  std::vector<Endpoint> endpoints_;  // sorted by node id: multicast fans out in that order
  std::vector<Copy> in_flight_;      // a min-heap on (deliver_us, seq)
  bool partitioned_ = false;
  std::map<NodeId, std::size_t> group_of_;  // while partitioned_: each grouped node's group
  std::set<std::pair<NodeId, NodeId>> down_links_;
  std::set<NodeId> multicast_deaf_;
  std::set<NodeId> ports_down_;
  Damage damage_;
  bool crashed_copies_land_ = false;
  std::vector<std::byte> damaged_;  // scratch: the copy being damaged
  SimNetworkStats stats_;
};

}  // namespace rtotem::transport
