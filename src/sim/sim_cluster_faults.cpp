// The membership faults of the fault phase: network splits (a partition, or one-way links cut)
// and their heals, crashes (torn ones too) and restarts, and pauses; drawn from the run's Rng at
// the spec's rates, or scripted. The liveness phase ends them all: the network heals and every
// crashed node restarts.
//
// A scripted fault and a drawn one act on the same network: a drawn heal also ends a scripted
// partition, and the other way round. Scenarios script, sweeps draw; mixing them is allowed.
#include <algorithm>
#include <cmath>
#include <utility>

#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_cluster_member.hpp"

namespace rtotem::sim {
namespace {

// How long a drawn fault lasts, in token timeouts. A split as short as a fifth of one is often
// over before the token is missed; one of four outlasts the token loss and the consensus timeout,
// so the groups form rings of their own before they merge again. A crashed node is down from half
// a token timeout (its ring has not noticed yet) to five (it has re-formed without it).
constexpr double kSplitMinTimeouts = 0.2;
constexpr double kSplitMaxTimeouts = 4;
constexpr double kDownMinTimeouts = 0.5;
constexpr double kDownMaxTimeouts = 5;
// A pause from a tenth of a token timeout (the ring never notices) to three (it re-forms without
// the node, which then wakes to a token loss and every other timer overdue).
constexpr double kPauseMinTimeouts = 0.1;
constexpr double kPauseMaxTimeouts = 3;
constexpr std::uint64_t kLinkCutOneIn = 3;  // of the drawn splits, one in 3 cuts links instead
constexpr std::uint64_t kDeafOneIn = 6;     // and one in 6 makes a node deaf to multicasts
constexpr std::uint64_t kLinksCutMax = 3;

// The gap to the next fault of a kind: uniform in [1, 2 x mean], as the traffic's gaps are (no
// libm in a draw, so every platform draws the same).
Time draw_fault_gap_us(Rng& rng, double per_s) {
  const double gap_max_us = std::max(1.0, std::round(2e6 / per_s));
  return rng.uniform_range(1, static_cast<Time>(gap_max_us));
}

}  // namespace

void SimCluster::begin_faults(Time now) {
  Rng& rng = network_.rng();
  if (spec_.partitions_per_s > 0) split_at_us_ = now + draw_fault_gap_us(rng, spec_.partitions_per_s);
  if (spec_.crashes_per_s > 0) crash_at_us_ = now + draw_fault_gap_us(rng, spec_.crashes_per_s);
  if (spec_.pauses_per_s > 0) pause_at_us_ = now + draw_fault_gap_us(rng, spec_.pauses_per_s);
  if (spec_.link_cuts_per_s > 0) link_cut_at_us_ = now + draw_fault_gap_us(rng, spec_.link_cuts_per_s);
  if (spec_.vote_changes_per_s > 0) vote_change_at_us_ = now + draw_fault_gap_us(rng, spec_.vote_changes_per_s);
  if (spec_.reloads_per_s > 0) reload_at_us_ = now + draw_fault_gap_us(rng, spec_.reloads_per_s);
  if (has_device() && spec_.partitions_per_s > 0)
    device_fault_at_us_ = now + draw_fault_gap_us(rng, spec_.partitions_per_s / 2);
}

// The liveness phase: nothing new, nothing in force. Packets are no longer lost or duplicated but
// keep the spec's delays: SimFaults{}'s own would reorder a network the spec keeps in order.
void SimCluster::end_faults(Time now) {
  transport::SimFaults delays_only = spec_.faults;
  delays_only.loss = 0;
  delays_only.duplicate = 0;
  delays_only.late = 0;
  delays_only.corrupt = 0;
  each_network([&](transport::SimNetwork& net) {
    net.heal();
    net.set_faults(delays_only);
    for (NodeId id : ids_) net.set_port(id, true);
  });
  heal_port();
  split_at_us_.reset();
  heal_at_us_.reset();
  link_cut_at_us_.reset();
  link_heal_at_us_.reset();
  crash_at_us_.reset();
  pause_at_us_.reset();  // a pause in force runs out: it is bounded
  vote_change_at_us_.reset();
  reload_at_us_.reset();
  device_fault_at_us_.reset();
  arbiter_stalled_until_us_ = 0;
  for (NodeId id : live_) member(id)->device_cut_until_us = 0;
  for (NodeId id : live_) member(id)->torn = false;
  script_next_ = spec_.script.size();
  for (NodeId id : ids_)
    if (member(id) == nullptr) restart(id, now);
}

std::optional<Time> SimCluster::next_fault_us() const {
  std::optional<Time> next;
  auto consider = [&next](std::optional<Time> t) {
    if (t) next = std::min(next.value_or(*t), *t);
  };
  consider(split_at_us_);
  consider(heal_at_us_);
  consider(crash_at_us_);
  consider(pause_at_us_);
  consider(link_cut_at_us_);
  consider(link_heal_at_us_);
  consider(vote_change_at_us_);
  consider(reload_at_us_);
  consider(device_fault_at_us_);
  if (script_next_ < spec_.script.size()) consider(spec_.script[script_next_].at_us);
  for (const Slot& slot : slots_) consider(slot.restart_at_us);
  return next;
}

// Heals before splits, so a split due with a heal stays in force; restarts before crashes.
void SimCluster::run_due_faults(Time now) {
  while (script_next_ < spec_.script.size() && spec_.script[script_next_].at_us <= now)
    run_scripted(spec_.script[script_next_++], now);
  if (heal_at_us_ && *heal_at_us_ <= now) {
    heal_at_us_.reset();
    each_network([](transport::SimNetwork& net) { net.heal(); });
  }
  if (link_heal_at_us_ && *link_heal_at_us_ <= now) {
    heal_port();  // one cut at a time: the next is drawn from here
    link_cut_at_us_ = now + draw_fault_gap_us(network_.rng(), spec_.link_cuts_per_s);
  }
  if (link_cut_at_us_ && *link_cut_at_us_ <= now) {
    link_cut_at_us_.reset();
    cut_port(now);
  }
  if (split_at_us_ && *split_at_us_ <= now) {
    split_network(now);
    split_at_us_ = now + draw_fault_gap_us(network_.rng(), spec_.partitions_per_s);
  }
  for (NodeId id : ids_) {
    const std::optional<Time> due = slots_[id - 1].restart_at_us;
    if (due && *due <= now) restart(id, now);
  }
  if (crash_at_us_ && *crash_at_us_ <= now) {
    crash_drawn(now);
    crash_at_us_ = now + draw_fault_gap_us(network_.rng(), spec_.crashes_per_s);
  }
  if (pause_at_us_ && *pause_at_us_ <= now) {
    const NodeId id = live_[network_.rng().uniform(live_.size())];
    pause(id, now, draw_between_us(kPauseMinTimeouts, kPauseMaxTimeouts));
    pause_at_us_ = now + draw_fault_gap_us(network_.rng(), spec_.pauses_per_s);
  }
  if (vote_change_at_us_ && *vote_change_at_us_ <= now) {
    vote_change(now);
    vote_change_at_us_ = now + draw_fault_gap_us(network_.rng(), spec_.vote_changes_per_s);
  }
  if (reload_at_us_ && *reload_at_us_ <= now) {
    reload(now);
    reload_at_us_ = now + draw_fault_gap_us(network_.rng(), spec_.reloads_per_s);
  }
  if (device_fault_at_us_ && *device_fault_at_us_ <= now) {
    device_fault(now);
    device_fault_at_us_ = now + draw_fault_gap_us(network_.rng(), spec_.partitions_per_s / 2);
  }
}

void SimCluster::run_scripted(const ScriptedFault& fault, Time now) {
  switch (fault.kind) {
    case ScriptedFault::Kind::kPartition:
      ++partitions_;
      each_network([&](transport::SimNetwork& net) { net.partition(fault.groups); });
      return;
    case ScriptedFault::Kind::kHeal: each_network([](transport::SimNetwork& net) { net.heal(); }); return;
    case ScriptedFault::Kind::kCrash: crash(fault.node, now); return;
    case ScriptedFault::Kind::kStop: crash(fault.node, now, true); return;
    case ScriptedFault::Kind::kRestart: restart(fault.node, now); return;
    case ScriptedFault::Kind::kCutLink:
      ++partitions_;
      each_network([&](transport::SimNetwork& net) { net.set_link(fault.node, fault.to, false); });
      return;
    case ScriptedFault::Kind::kPause: pause(fault.node, now, fault.length_us); return;
    case ScriptedFault::Kind::kDeaf:
      ++partitions_;
      each_network([&](transport::SimNetwork& net) { net.set_multicast_deaf(fault.node, true); });
      return;
    case ScriptedFault::Kind::kPortDown:
      ++link_cuts_;
      (fault.link == 0 ? network_ : *more_links_[fault.link - 1]).set_port(fault.node, false);
      ports_split_ = ports_split_ || !ports_keep_every_pair();
      return;
  }
}

// Replaces the split in force: a partition of every node (alive or not) into 2 or 3 non-empty
// groups, or, one time in kLinkCutOneIn, a few one-way links down (asymmetric loss), or, one time
// in kDeafOneIn, one node no multicast reaches (it hears tokens, not messages: it must fail to
// receive and leave the ring rather than hold it back for ever).
void SimCluster::split_network(Time now) {
  const std::size_t n = ids_.size();
  if (n < 2) return;  // one node: nothing to split
  Rng& rng = network_.rng();
  ++partitions_;
  each_network([](transport::SimNetwork& net) { net.heal(); });
  heal_at_us_ = now + draw_between_us(kSplitMinTimeouts, kSplitMaxTimeouts);
  if (rng.uniform(kLinkCutOneIn) == 0) {
    cut_links();
    return;
  }
  if (rng.uniform(kDeafOneIn) == 0) {
    const NodeId deaf = ids_[rng.uniform(n)];
    each_network([&](transport::SimNetwork& net) { net.set_multicast_deaf(deaf, true); });
    return;
  }
  std::vector<NodeId> order = ids_;
  for (std::size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.uniform(i + 1)]);  // Fisher-Yates
  const std::size_t groups = n >= 3 ? rng.uniform_range(2, 3) : 2;
  const std::size_t first_end = rng.uniform_range(1, n - groups + 1);
  const std::size_t second_end = groups == 3 ? rng.uniform_range(first_end + 1, n - 1) : n;
  std::vector<std::vector<NodeId>> split;
  split.emplace_back(order.begin(), order.begin() + first_end);
  split.emplace_back(order.begin() + first_end, order.begin() + second_end);
  if (groups == 3) split.emplace_back(order.begin() + second_end, order.end());
  for (auto& group : split) std::sort(group.begin(), group.end());
  each_network([&](transport::SimNetwork& net) { net.partition(split); });
}

// 1..kLinksCutMax links, each one way: `to` no longer hears `from`, though `from` still hears `to`.
void SimCluster::cut_links() {
  Rng& rng = network_.rng();
  const std::size_t n = ids_.size();
  const std::uint64_t links = rng.uniform_range(1, kLinksCutMax);
  for (std::uint64_t i = 0; i < links; ++i) {
    const std::size_t from = rng.uniform(n);
    std::size_t to = rng.uniform(n - 1);
    if (to >= from) ++to;
    each_network([&](transport::SimNetwork& net) { net.set_link(ids_[from], ids_[to], false); });
  }
}

// One node's port on one link goes down: a NIC or switch port, not the node's connectivity. One
// at a time, so every two nodes keep a link up between them; beside a scripted port down, a cut
// that would leave two nodes no common link is not made (the next is drawn instead).
void SimCluster::cut_port(Time now) {
  Rng& rng = network_.rng();
  const std::size_t link = rng.uniform(spec_.links);
  const NodeId node = ids_[rng.uniform(ids_.size())];
  transport::SimNetwork& net = link == 0 ? network_ : *more_links_[link - 1];
  const bool was_up = net.port_up(node);  // if down, the script's: its heal is not ours
  net.set_port(node, false);
  if (!was_up || !ports_keep_every_pair()) {
    net.set_port(node, was_up);
    link_cut_at_us_ = now + draw_fault_gap_us(rng, spec_.link_cuts_per_s);
    return;
  }
  port_down_ = {link, node};
  link_heal_at_us_ = now + draw_between_us(kSplitMinTimeouts, kSplitMaxTimeouts);
  ++link_cuts_;
}

void SimCluster::heal_port() {
  link_heal_at_us_.reset();
  const auto [link, node] = std::exchange(port_down_, {0, transport::kNoNode});
  if (node != transport::kNoNode) (link == 0 ? network_ : *more_links_[link - 1]).set_port(node, true);
}

bool SimCluster::ports_keep_every_pair() const {
  for (std::size_t a = 0; a < ids_.size(); ++a)
    for (std::size_t b = a + 1; b < ids_.size(); ++b) {
      bool shared = false;
      each_network(
          [&](const transport::SimNetwork& net) { shared = shared || (net.port_up(ids_[a]) && net.port_up(ids_[b])); });
      if (!shared) return false;
    }
  return true;
}

// Link cuts the only membership faults (no partition, crash, stop or pause, drawn or scripted):
// once a ring of every node has formed, another ring means a link's failure reached the
// membership, which failover below the token timeout must prevent. Judged only where the progress
// rule counts the nodes connected at all (reliable_network): on a lossier network the
// token is lost for want of luck, whatever the links do.
void SimCluster::judge_link_failover() {
  if (spec_.links < 2 || link_cuts_ == 0 || ports_split_ || partitions_ + crashes_ + pauses_ != 0) return;
  if (!reliable_network()) return;
  const auto whole = std::find_if(rings_.begin(), rings_.end(), [&](const FormedRing& r) { return r.members == ids_; });
  if (whole == rings_.end() || whole + 1 == rings_.end()) return;  // never whole: liveness says so
  const FormedRing& after = *(whole + 1);
  checker_.record_link_failover(
      after.formed_us, after.members,
      fmt::format("ring {}/{} formed at t={} us after ring {}/{} of every node, while every two nodes kept a "
                  "link up ({} link cuts, {} links, {} mode)",
                  after.ring_id.rep, after.ring_id.seq, after.formed_us, whole->ring_id.rep, whole->ring_id.seq,
                  link_cuts_, spec_.links, spec_.link_mode == transport::LinkMode::kActive ? "active" : "passive"));
}

// A random live node, never the last one: a cluster with no node left has nothing to check (a
// torn node counts as gone already). A torn crash waits for the node's next call that sends.
void SimCluster::crash_drawn(Time now) {
  const auto torn = std::count_if(live_.begin(), live_.end(), [&](NodeId id) { return member(id)->torn; });
  if (live_.size() <= static_cast<std::size_t>(torn) + 1) return;
  Rng& rng = network_.rng();
  const NodeId id = live_[rng.uniform(live_.size())];
  const bool graceful = spec_.stop_share > 0 && rng.chance(spec_.stop_share);
  if (!graceful && spec_.torn_share > 0 && rng.chance(spec_.torn_share)) {
    member(id)->torn = true;
    return;
  }
  crash(id, now, graceful);
  slots_[id - 1].restart_at_us = now + draw_between_us(kDownMinTimeouts, kDownMaxTimeouts);
}

bool SimCluster::reap_torn(Time now) {
  bool reaped = false;
  for (std::size_t i = 0; i < live_.size();) {
    const NodeId id = live_[i];
    if (!member(id)->dead) {
      ++i;
      continue;
    }
    ++torn_;
    crash(id, now);  // erases it from live_
    slots_[id - 1].restart_at_us = now + draw_between_us(kDownMinTimeouts, kDownMaxTimeouts);
    reaped = true;
  }
  return reaped;
}

// Paused from now: the network keeps filling its receive ring (and drops what overflows it), its
// clock runs on, and at the end every timer that came due meanwhile fires at once.
void SimCluster::pause(NodeId id, Time now, Time length_us) {
  Member* m = member(id);
  if (m == nullptr) return;
  ++pauses_;
  m->paused_until_us = std::max(m->paused_until_us, now + length_us);
}

// The Node, then its backend (which drops its packets in flight, both ways), its timers and its
// application's unaccepted messages: all gone. The slot keeps the stored ring seq and the
// application's counter. A graceful stop first sends the node's leave (the daemon's SIGTERM).
void SimCluster::crash(NodeId id, Time now, bool graceful) {
  Slot& slot = slots_[id - 1];
  if (!slot.member) return;
  // A crash of any kind takes the place of a torn one drawn for the node (its leave is flushed); a
  // process already struck cannot leave.
  graceful = graceful && !slot.member->dead;
  slot.member->torn = false;
  if (graceful) {
    ++stops_;
    slot.member->node->leave();
    after_node_call(*slot.member);
  }
  ++crashes_;
  collect_reload_answers(*slot.member);
  note_operational(*slot.member, false);
  checker_.record_crash(now, id);
  if (slot.member->quorum) {
    quorum_checker_.record_down(id);
    quorum_changes_dropped_ += slot.member->quorum->changes_dropped();
  }
  const membership::NodeCounters& c = slot.member->node->counters();
#define RTOTEM_SUM_COUNTER(name) crashed_counters_.name += c.name;
  RTOTEM_NODE_COUNTERS(RTOTEM_SUM_COUNTER)
#undef RTOTEM_SUM_COUNTER
  if (graceful)
    stopping_.push_back({std::move(slot.member), now + spec_.faults.delay_max_us + 1});
  else
    slot.member.reset();
  live_.erase(std::find(live_.begin(), live_.end(), id));
}

void SimCluster::retire_stopped(Time now, NodeId id) {
  std::erase_if(stopping_, [&](const Stopping& s) { return s.gone_at_us <= now || s.member->id == id; });
}

// A new incarnation: a fresh backend and Node (with the ring seq it stored, unless its state is
// lost), started now.
void SimCluster::restart(NodeId id, Time now) {
  Slot& slot = slots_[id - 1];
  slot.restart_at_us.reset();
  if (slot.member) return;
  // Drawn only when asked for: the runs without it stay as they were.
  if (spec_.lose_state > 0 && network_.rng().chance(spec_.lose_state)) {
    slot.stored_ring_seq = 0;  // what RingSeqFile::load reads from a missing file
    ++states_lost_;
  }
  retire_stopped(now, id);  // one backend per node id on the network
  auto made = make_member(id);
  RTOTEM_ASSERT(made);  // the same parameters made its first incarnation
  slot.member = std::move(made).value();
  ++slot.restarts;
  live_.insert(std::upper_bound(live_.begin(), live_.end(), id), id);
  Member& m = *slot.member;
  m.node->start(m.now());
  after_node_call(m);
  if (generating_) m.generate_at = now + draw_gap_us();
}

Time SimCluster::draw_between_us(double low_timeouts, double high_timeouts) {
  const double timeout_us = static_cast<double>(totem_.token_timeout_ms) * 1000;
  return network_.rng().uniform_range(static_cast<Time>(std::llround(low_timeouts * timeout_us)),
                                      static_cast<Time>(std::llround(high_timeouts * timeout_us)));
}

}  // namespace rtotem::sim
