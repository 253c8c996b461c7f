// The simulated cluster: making it, the discrete-event loop over virtual time, what the Nodes
// report (deliveries, rings), and the end of a run. Traffic: sim_cluster_traffic.cpp; faults:
// sim_cluster_faults.cpp; runtime quorum changes: sim_cluster_quorum.cpp; the quorum device:
// sim_cluster_device.cpp; nodes' traits and
// incarnations: sim_cluster_nodes.cpp; damaged packets: sim_cluster_damage.cpp.
#include "src/sim/sim_cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "src/sim/sim_cluster_member.hpp"

namespace rtotem::sim {
namespace {

using membership::TimerId;

// A buggy Node could re-arm a timer at `now` forever; virtual time would stop and the run hang.
constexpr std::uint64_t kStepsPerInstantMax = 100'000;
// The liveness phase's default length, in token timeouts: the ring must notice its token is lost,
// agree on its members (consensus timeout: 1.2 token timeouts), commit, recover and deliver.
constexpr Time kLivenessBoundTimeouts = 30;
// Past that bound, a ring of every live node still draining its backlog is given more time, a
// window at a time, while each window delivers more on that same ring: slow receivers or many
// nodes make a long backlog, not a stall. Up to this many bounds in all.
constexpr Time kLivenessDrainBounds = 10;
constexpr Time kDrainWindowTimeouts = 5;

Result<void> check_rate(std::string_view name, double per_s) {
  if (!(per_s >= 0 && per_s <= kFaultRateMax))
    return Error::make("{}: {} per second is outside [0, {}]", name, per_s, kFaultRateMax);
  return {};
}

bool valid_node(const SimSpec& spec, NodeId id) { return id >= 1 && id <= spec.nodes; }

// Faults in time order within the fault phase, naming nodes of the run, each in one group at most.
Result<void> check_script(const SimSpec& spec) {
  Time previous_us = 0;
  for (std::size_t i = 0; i < spec.script.size(); ++i) {
    const ScriptedFault& fault = spec.script[i];
    if (fault.at_us < previous_us || fault.at_us > spec.duration_us)
      return Error::make("script[{}]: at {} us is out of time order or past the fault phase ({} us)", i, fault.at_us,
                         spec.duration_us);
    previous_us = fault.at_us;
    const bool names_node = fault.kind == ScriptedFault::Kind::kCrash || fault.kind == ScriptedFault::Kind::kStop ||
                            fault.kind == ScriptedFault::Kind::kRestart ||
                            fault.kind == ScriptedFault::Kind::kCutLink || fault.kind == ScriptedFault::Kind::kPause ||
                            fault.kind == ScriptedFault::Kind::kDeaf || fault.kind == ScriptedFault::Kind::kPortDown;
    if (names_node && !valid_node(spec, fault.node))
      return Error::make("script[{}]: node {} is not one of 1..{}", i, fault.node, spec.nodes);
    if (fault.kind == ScriptedFault::Kind::kCutLink && (!valid_node(spec, fault.to) || fault.to == fault.node))
      return Error::make("script[{}]: a link from {} to {} is not between two of 1..{}", i, fault.node, fault.to,
                         spec.nodes);
    if (fault.kind == ScriptedFault::Kind::kPortDown && fault.link >= spec.links)
      return Error::make("script[{}]: link {} is not one of the run's {} links", i, fault.link, spec.links);
    std::vector<NodeId> seen;
    for (const auto& group : fault.groups)
      for (NodeId id : group) {
        if (!valid_node(spec, id) || std::find(seen.begin(), seen.end(), id) != seen.end())
          return Error::make("script[{}]: node {} is not one of 1..{}, or is in two groups", i, id, spec.nodes);
        seen.push_back(id);
      }
  }
  return {};
}

Result<void> check_spec(const SimSpec& spec) {
  if (spec.nodes < 1 || spec.nodes > membership::kMembersMax)
    return Error::make("nodes: {} is outside [1, {}]", spec.nodes, membership::kMembersMax);
  if (!(spec.rate_per_s > 0)) return Error::make("rate: {} messages/s must be above 0", spec.rate_per_s);
  if (spec.burst_max < 1 || spec.burst_max > kBurstMaxLimit)
    return Error::make("burst_max: {} is outside [1, {}]", spec.burst_max, kBurstMaxLimit);
  if (!(spec.safe_fraction >= 0 && spec.safe_fraction <= 1))
    return Error::make("safe_fraction: {} is outside [0, 1]", spec.safe_fraction);
  const transport::SimFaults& f = spec.faults;
  if (!(f.loss >= 0 && f.loss <= 1) || !(f.duplicate >= 0 && f.duplicate <= 1) || f.delay_min_us > f.delay_max_us)
    return Error::make("faults: loss {} and duplicate {} must be in [0, 1], delay {}..{} us ordered", f.loss,
                       f.duplicate, f.delay_min_us, f.delay_max_us);
  if (auto ok = check_rate("partitions", spec.partitions_per_s); !ok) return ok;
  if (auto ok = check_rate("crashes", spec.crashes_per_s); !ok) return ok;
  if (!(spec.lose_state >= 0 && spec.lose_state <= 1))
    return Error::make("lose_state: {} is outside [0, 1]", spec.lose_state);
  if (auto ok = check_rate("pauses", spec.pauses_per_s); !ok) return ok;
  if (spec.links < 1 || spec.links > kSimLinksMax)
    return Error::make("links: {} is outside [1, {}]", spec.links, kSimLinksMax);
  if (auto ok = check_rate("link_cuts", spec.link_cuts_per_s); !ok) return ok;
  if (auto ok = check_rate("vote_changes", spec.vote_changes_per_s); !ok) return ok;
  if (spec.vote_changes_per_s > 0 && !spec.quorum)
    return Error::make("vote_changes: {} a second needs quorum", spec.vote_changes_per_s);
  if (auto ok = check_rate("reloads", spec.reloads_per_s); !ok) return ok;
  if (spec.reloads_per_s > 0 && spec.clients == 0)
    return Error::make("reloads: {} a second needs clients (the node stack)", spec.reloads_per_s);
  if (spec.link_cuts_per_s > 0 && spec.links < 2)
    return Error::make("link_cuts: {} a second needs at least 2 links", spec.link_cuts_per_s);
  const bool shares_ok = spec.torn_share >= 0 && spec.torn_share <= 1 && spec.slow_share >= 0 && spec.slow_share <= 1 &&
                         spec.clock_skew >= 0 && spec.clock_skew <= kClockSkewMax;
  if (!shares_ok)
    return Error::make("torn {} and slow {} must be in [0, 1], clock skew {} in [0, {}]", spec.torn_share,
                       spec.slow_share, spec.clock_skew, kClockSkewMax);
  if (!(f.late >= 0 && f.late <= 1) || f.late_min_us > f.late_max_us || !(f.corrupt >= 0 && f.corrupt <= 1))
    return Error::make("faults: late {} and corrupt {} must be in [0, 1], late delay {}..{} us ordered", f.late,
                       f.corrupt, f.late_min_us, f.late_max_us);
  return check_script(spec);
}

}  // namespace

Result<std::unique_ptr<SimCluster>> SimCluster::create(const SimSpec& given) {
  if (auto ok = check_spec(given); !ok) return ok.error();
  SimSpec spec = given;
  if (spec.crypto && !spec.backend.key) {
    // Random, not drawn from the seed: the key changes the bytes on the wire, never the run.
    auto key = transport::ClusterKey::random();
    if (!key) return key.error();
    spec.backend.key = std::make_shared<const transport::ClusterKey>(std::move(key).value());
  }
  auto totem = spec.totem.resolved();
  if (!totem) return Error::make("totem: {}", totem.error().message());
  if (auto fits = totem->check(spec.backend); !fits) return Error::make("totem: {}", fits.error().message());
  std::unique_ptr<SimCluster> cluster(new SimCluster(spec, *totem));
  if (spec.clients > 0) {
    if (spec.groups || spec.quorum)
      return Error::make("clients: the node stack runs its own process groups; not with groups or quorum");
    if (totem->max_message_size < groups::kRingMessageSizeMin)
      return Error::make("clients: max_message_size {} is below the {} bytes process groups need",
                         totem->max_message_size, groups::kRingMessageSizeMin);
    cluster->client_world_ = std::make_unique<ClientWorld>();
  }
  if (spec.quorum) {
    if (!spec.quorum_votes.empty() && spec.quorum_votes.size() != spec.nodes)
      return Error::make("quorum: {} votes given for {} nodes", spec.quorum_votes.size(), spec.nodes);
    std::vector<quorum::NodeVotes> nodelist;
    for (NodeId id : cluster->ids_) nodelist.push_back({id, spec.quorum_votes.empty() ? 1 : spec.quorum_votes[id - 1]});
    auto config = quorum::resolve_quorum(*spec.quorum, nodelist);
    if (!config) return Error::make("quorum: {}", config.error().message());
    cluster->quorum_ = std::move(config).value();
    cluster->quorum_->sync_timeout_ms = quorum::kSyncTimeouts * totem->token_timeout_ms;
  }
  // Each further link draws from a seed of its own: link 0's draws stay those of a one-link run.
  for (std::uint32_t l = 1; l < spec.links; ++l)
    cluster->more_links_.push_back(
        std::make_unique<transport::SimNetwork>(spec.seed ^ (0x9e3779b97f4a7c15ULL * l), spec.faults));
  cluster->each_network([&](transport::SimNetwork& net) {
    net.set_damage(
        [sealed = spec.crypto](std::span<std::byte> wire, Rng& rng) { return damage_packet(wire, rng, sealed); });
    net.set_crashed_copies_land(spec.crashed_copies_land);
    net.set_drop_rule(spec.drop_rule);  // a copy between two nodes, on whichever link
  });
  cluster->draw_node_traits();
  for (Slot& slot : cluster->slots_) slot.file_totem = *totem;
  for (NodeId id : cluster->ids_) {
    auto made = cluster->make_member(id);
    if (!made) return made.error();
    cluster->slots_[id - 1].member = std::move(made).value();
  }
  cluster->live_ = cluster->ids_;
  return cluster;
}

SimCluster::SimCluster(const SimSpec& spec, const membership::TotemConfig& totem)
    : spec_(spec),
      totem_(totem),
      ids_([&] {
        std::vector<NodeId> ids(spec.nodes);
        for (std::uint32_t i = 0; i < spec.nodes; ++i) ids[i] = i + 1;
        return ids;
      }()),
      network_(spec.seed, spec.faults),
      checker_(ids_, progress_bound_us(totem, ids_.size())),
      group_checker_(ids_),
      quorum_checker_(ids_, spec.quorum && spec.quorum->wait_for_all.value_or(spec.quorum->two_node)),
      slots_(spec.nodes) {
  if (spec_.liveness_bound_us == 0) spec_.liveness_bound_us = kLivenessBoundTimeouts * totem_.token_timeout_ms * 1000;
  live_.reserve(ids_.size());
}

SimCluster::~SimCluster() = default;  // slots_ (Nodes, then backends) go before network_

SimCluster::Member* SimCluster::member(NodeId id) const {
  RTOTEM_ASSERT(id >= 1 && id <= slots_.size());
  return slots_[id - 1].member.get();
}

const membership::Node* SimCluster::node(NodeId id) const {
  const Member* m = member(id);
  return m ? m->node.get() : nullptr;
}

SimResult SimCluster::run() {
  RTOTEM_ASSERT(network_.now_us() == 0 && rings_.empty());  // once per cluster
  for (NodeId id : live_) {
    Member& m = *member(id);
    m.node->start(m.now());
    after_node_call(m);
    m.generate_at = draw_gap_us();
  }
  begin_faults(0);
  report_connectivity(0);
  while (step(spec_.duration_us)) {}
  if (!stalled_) {
    // Liveness phase: a healed, fault-free network, every node up, no new messages.
    if (network_.now_us() < spec_.duration_us) advance_to(spec_.duration_us);
    checker_.end_connectivity(network_.now_us());
    generating_ = false;
    end_faults(network_.now_us());
    Time bound_us = spec_.duration_us + spec_.liveness_bound_us;
    const Time drain_cap_us = spec_.duration_us + kLivenessDrainBounds * spec_.liveness_bound_us;
    Drain drain{.deliveries = checker_.deliveries()};  // the first look compares with the phase's start
    for (;;) {
      while (!converged() && step(bound_us)) {}
      if (converged() || stalled_ || bound_us >= drain_cap_us || !draining(drain)) break;
      bound_us = std::min(drain_cap_us, bound_us + kDrainWindowTimeouts * totem_.token_timeout_ms * 1000);
      ++drain_windows_;
    }
    // Nothing more was due before the bound: it ran out. The checker says what did not converge.
    if (!converged() && !stalled_ && network_.now_us() < bound_us) advance_to(bound_us);
  }
  judge_link_failover();
  for (NodeId id : live_)  // what the clients have not dispatched yet is judged too
    if (Member& m = *member(id); m.clients) m.clients->finish(network_.now_us());
  checker_.finish(network_.now_us(), live_);
  group_checker_.finish(network_.now_us(), live_);
  collect_reload_answers();
  reload_checker_.finish();
  return result();
}

bool SimCluster::step(Time limit_us) {
  const std::optional<Time> next = next_event_us();
  if (stalled_ || !next || *next > limit_us) return false;
  const Time now = *next;
  same_instant_steps_ = now == same_instant_us_ ? same_instant_steps_ + 1 : 0;
  same_instant_us_ = now;
  if (same_instant_steps_ == kStepsPerInstantMax) {
    stalled_ = true;
    checker_.record_stall(now, fmt::format("virtual time stopped: {} steps at this instant", kStepsPerInstantMax));
    return false;
  }
  advance_to(now);
  retire_stopped(now);
  const std::optional<Time> fault_us = next_fault_us();
  run_due_faults(now);
  // A pause ending changes who is connected too.
  const bool woke =
      std::any_of(live_.begin(), live_.end(), [&](NodeId id) { return member(id)->paused_until_us == now; });
  if (((fault_us && *fault_us <= now) || woke) && generating_) report_connectivity(now);
  // A node waking from a pause fires what came due while it slept before it reads what arrived
  // since: in time order, the timers went off first. (Only a pause leaves a timer overdue.)
  fire_due_timers(now, true);
  fire_due_link_timers(now);
  for (NodeId id : live_) {
    Member& m = *member(id);
    if (!m.may_poll(now)) continue;
    std::size_t polled = 0;
    for (std::size_t n = transport::kRxBatchMax; n == transport::kRxBatchMax && !m.dead; polled += n)
      n = m.backend->poll(m);
    // A slow receiver, once busy with a batch, looks again only after its poll gap.
    if (m.poll_gap_us > 0 && polled > 0) m.poll_at_us = now + m.poll_gap_us;
  }
  fire_due_timers(now, false);
  fire_due_quorum_windows(now);
  fire_due_device_polls(now);
  fire_due_stacks(now);
  run_due_traffic(now);
  // A torn crash takes its node down here, at no fault instant of its own: unreported, the
  // checker would hold the node connected until the next fault, and judge a majority that is gone.
  if (reap_torn(now) && generating_) report_connectivity(now);
  return true;
}

std::optional<Time> SimCluster::next_event_us() const {
  std::optional<Time> next = network_.next_delivery_us();
  auto consider = [&next](std::optional<Time> t) {
    if (t) next = std::min(next.value_or(*t), *t);
  };
  for (const auto& more : more_links_) consider(more->next_delivery_us());
  for (NodeId id : live_) {
    const Member& m = *member(id);
    // The local path: now. What arrived while a node was paused, or a slow receiver was busy,
    // waits in its receive ring unseen by the loop: the pause's end, the next poll are events.
    const Time now = network_.now_us();
    if (m.backend->has_pending_rx()) consider(m.awake_at(std::max(now, m.poll_at_us)));
    if (m.poll_at_us > now) consider(m.awake_at(m.poll_at_us));
    if (m.paused_until_us > now) consider(m.paused_until_us);
    for (const auto& deadline : m.timers) consider(m.awake_at(deadline));
    consider(m.awake_at(m.link_timer));
    consider(m.awake_at(m.quorum_deadline_us()));
    consider(m.awake_at(m.device_poll_us));
    consider(m.awake_at(m.stack_due_us()));
    if (m.exit_code) consider(now);
    consider(m.awake_at(m.next_traffic_us(generating_)));
  }
  consider(next_fault_us());
  return next;
}

void SimCluster::advance_to(Time t) {
  each_network([t](transport::SimNetwork& net) { net.advance_to(t); });
}

// A LinkSet's pings and link timeouts (Backend::on_timer), on virtual time; a paused node's wait.
void SimCluster::fire_due_link_timers(Time now) {
  for (NodeId id : live_) {
    Member& m = *member(id);
    if (!m.link_timer || *m.link_timer > now || !m.awake(now)) continue;
    const std::uint64_t next = m.backend->on_timer(now);
    m.link_timer = next == transport::Backend::kNoTimer ? std::nullopt : std::optional<Time>(std::max(next, now + 1));
    (void)m.backend->flush();
  }
}

// Deadline order, ties by node id then timer id. A timer armed while these fire waits for the
// next step, even if already due: the loop comes back at once, at the same instant.
void SimCluster::fire_due_timers(Time now, bool overdue_only) {
  std::vector<DueTimer>& due = due_timers_;  // kept: no allocation per step
  due.clear();
  for (NodeId id : live_) {
    const Member& m = *member(id);
    if (!m.awake(now)) continue;
    for (std::size_t t = 0; t < membership::kTimerCount; ++t)
      if (m.timers[t] && (*m.timers[t] < now || (!overdue_only && *m.timers[t] == now)))
        due.emplace_back(*m.timers[t], id, t);
  }
  std::sort(due.begin(), due.end());
  for (const auto& [deadline, id, t] : due) {
    Member& m = *member(id);                          // no crash happens while timers fire
    if (m.dead || m.timers[t] != deadline) continue;  // torn, or cancelled or re-armed by an earlier one
    m.timers[t].reset();
    if (deadline < now) ++timers_overdue_;
    m.node->on_timer(static_cast<TimerId>(t), m.now());
    after_node_call(m);
  }
}

void SimCluster::fire_due_quorum_windows(Time now) {
  for (NodeId id : live_) {
    Member& m = *member(id);
    const std::optional<Time> due = m.quorum_deadline_us();
    if (!due || *due > now || !m.awake(now)) continue;
    m.quorum->on_time(m.now());
    after_node_call(m);
  }
}

void SimCluster::fire_due_stacks(Time now) {
  std::vector<NodeId> exited;
  for (NodeId id : live_) {
    Member& m = *member(id);
    if (!m.stack || !m.awake(now)) continue;
    if (m.exit_code) {
      exited.push_back(id);
      continue;
    }
    if (m.stack_deadline && m.clock.global_at(*m.stack_deadline) <= now) {
      m.stack_deadline.reset();
      m.stack->on_time(m.now());
      after_node_call(m);
    }
    if (m.client_retry_at && *m.client_retry_at <= now && !m.dead) {
      m.client_retry_at.reset();
      m.stack->retry_clients();
      after_node_call(m);
    }
  }
  // rtotemd exits after the turn: a graceful stop, as its leave goes first.
  for (NodeId id : exited) crash(id, now, true);
}

// Safe delivery (tocssrp95 §2): a safe message is delivered on its ring only once every member
// holds it. Transitional deliveries, and those made outside the ring (Recovery), promise only
// what the transitional configuration says: the checker judges them by configuration. A crashed
// member, or one that has moved to another ring, cannot say what it holds: it is skipped.
// A group packet goes to the node's GroupService (and its checker), a stamped one to the checker.
void SimCluster::on_deliver(Member& m, const Delivered& message) {
  if (m.torn) ++m.call_deliveries;
  const Time now = network_.now_us();
  const NodeId node = m.id;
  if (m.quorum && ring_service_of(message.payload) == RingService::kQuorum) {
    m.quorum->on_deliver(message);
    return;
  }
  if (m.groups && is_group_packet(message.payload)) {
    group_checker_.record_delivery(now, node, message);
    m.groups->on_deliver(message);
  } else if (m.stack && ring_service_of(message.payload)) {
    if (is_group_packet(message.payload)) group_checker_.record_delivery(now, node, message);
    // The ReloadChecker's: a node control message is the only place a node's timing may change.
    const bool control = !message.transitional && ring_service_of(message.payload) == RingService::kNodeControl;
    const membership::TotemConfig before = control ? m.node->config() : membership::TotemConfig{};
    m.stack->deliver(message);
    if (control) {
      reload_checker_.record_control(now, node, m.node->members(), message, before, m.node->config());
      m.timing_seen = m.node->config();
    }
  } else {
    checker_.record_delivery(now, node, message);
  }
  if (message.delivery != Delivery::kSafe || message.transitional) return;
  const membership::Node& self = *member(node)->node;
  if (!self.operational() || !(self.ring_id() == message.ring_id)) return;
  lacking_.clear();
  for (NodeId id : self.members()) {
    const Member* other = member(id);
    if (other == nullptr) continue;
    const std::optional<bool> held = other->node->holds(message.ring_id, message.seq);
    if (held && !*held) lacking_.push_back(id);
  }
  checker_.check_safe(now, node, message, lacking_);
}

void SimCluster::after_node_call(Member& m) {
  // A torn crash strikes at the first call that queued packets (a token visit, a join, a
  // retransmission, a submission's hold cancel): they are never sent, while what the call
  // delivered, and the ring it may have installed, stand. Striking at a call that queued nothing
  // would make it a plain crash after that call. Every call starts on an empty queue: the flush below sends it all.
  const std::size_t queued = transport::kTxQueueMax - m.backend->tx_room();
  const bool strikes = m.torn && queued > 0;
  if (strikes) {
    m.dead = true;
    torn_unsent_ += queued;
    torn_deliveries_ += m.call_deliveries;
  } else {
    if (m.groups) m.groups->retry_pending();  // a join list the ring refused: after each call, as the daemon's turn
    if (m.quorum) m.quorum->retry_pending();
    if (m.stack) m.end_stack_turn();
    // The simulated device takes every packet at once; anything else is a bug in the backend.
    const Status flushed = m.backend->flush();
    RTOTEM_ASSERT(flushed == Status::kOk);
  }
  m.call_deliveries = 0;
  note_operational(m, m.node->operational());
  if (!m.node->operational() || m.node->ring_id() == m.ring_seen) return;
  m.ring_seen = m.node->ring_id();
  // An incarnation can only be operational in a ring formed since it started. One found in a ring
  // recorded earlier, or with other members, is on a reused ring id: it gets an entry of its own,
  // so that reuse shows as a ring id listed twice.
  const std::span<const NodeId> members = m.node->members();
  const bool known = std::any_of(rings_.begin(), rings_.end(), [&](const FormedRing& ring) {
    return ring.ring_id == m.ring_seen && std::ranges::equal(ring.members, members) && ring.formed_us >= m.started_us;
  });
  if (!known) rings_.push_back(FormedRing{m.ring_seen, {members.begin(), members.end()}, network_.now_us()});
}

void SimCluster::note_operational(Member& m, bool operational) {
  if (operational == m.operational_since.has_value()) return;
  const Time now = network_.now_us();
  if (operational)
    m.operational_since = now;
  else
    slots_[m.id - 1].operational.emplace_back(*std::exchange(m.operational_since, std::nullopt), now);
}

// Connected, for the checker's progress rule: both up, each reaching the other, neither deaf to
// multicasts, and a network that loses at most kProgressLossMax of the copies and at most
// kProgressRotationLossMax token hops a rotation. Above that, each lost token hop costs a token
// retransmit period (a quarter of a token timeout), so Recovery alone can outlast the bound: at
// 19.4 % loss on 4 nodes it took 4.9 s (seed 3 of 1..300, traced hop by hop), with every timer
// doing what it should. The chance grows with the ring: at 4.1 % on 8 nodes five hops of twelve
// were lost and one rotation outlasted the token timeout (seed 185001, traced). Those runs are
// judged by the liveness phase. Bit b - 1 of links[a - 1] for nodes a and b (self included: up).
void SimCluster::report_connectivity(Time now) {
  std::vector<std::uint64_t> links(ids_.size());
  const bool reliable = reliable_network();
  // A paused node hears no one; its pause's end is reported too.
  const auto awake = [&](NodeId id) { return member(id)->paused_until_us <= now; };
  for (NodeId a : live_)
    for (NodeId b : live_) {
      const bool hears =
          a == b || (reliable && awake(a) && awake(b) && !network_.multicast_deaf(a) && !network_.multicast_deaf(b));
      bool both_ways = network_.reachable(a, b) && network_.reachable(b, a);
      for (const auto& more : more_links_) both_ways = both_ways || (more->reachable(a, b) && more->reachable(b, a));
      if (hears && both_ways) links[a - 1] |= std::uint64_t{1} << (b - 1);
    }
  checker_.record_connectivity(now, links);
}

bool SimCluster::reliable_network() const noexcept {
  const double loss = spec_.faults.loss;
  return loss <= kProgressLossMax && loss * static_cast<double>(ids_.size()) <= kProgressRotationLossMax;
}

// One ring of every live node, nothing waiting anywhere, everything delivered: the run is done.
// Every live node operational on one ring of them all, the ring it was on at the last look, and
// more delivered since: a backlog draining, not a stall or a ring that keeps changing.
bool SimCluster::draining(Drain& last) const {
  const membership::Node& first = *member(live_.front())->node;
  for (NodeId id : live_) {
    const membership::Node& node = *member(id)->node;
    if (!node.operational() || !(node.ring_id() == first.ring_id())) return false;
  }
  if (!std::ranges::equal(first.members(), live_)) return false;
  // The first look asks for deliveries since the liveness phase began (on whatever ring); later
  // ones for deliveries on this same ring since the last look.
  const bool progressed = checker_.deliveries() > last.deliveries && (!last.looked || last.ring_id == first.ring_id());
  last = {first.ring_id(), checker_.deliveries(), true};
  return progressed;
}

bool SimCluster::converged() const {
  RTOTEM_ASSERT(!live_.empty());
  const membership::Node& first = *member(live_.front())->node;
  for (NodeId id : live_) {
    const Member& m = *member(id);
    if (!m.node->operational() || !(m.node->ring_id() == first.ring_id())) return false;
    if (m.node->send_queue_size() != 0 || !m.pending.empty()) return false;
  }
  return std::ranges::equal(first.members(), live_) && checker_.quiescent(live_);
}

SimResult SimCluster::result() const {
  SimResult r;
  const ClientChecker* clients = client_world_ ? &client_world_->checker : nullptr;
  r.violation_count = checker_.violation_count() + group_checker_.violation_count() +
                      quorum_checker_.violation_count() + reload_checker_.violation_count() +
                      (clients ? clients->violation_count() : 0);
  r.violations = checker_.violations();
  const auto keep = [&r](const std::vector<Violation>& more) {
    for (const Violation& v : more)
      if (r.violations.size() < kViolationsKept) r.violations.push_back(v);
  };
  keep(group_checker_.violations());
  keep(quorum_checker_.violations());
  keep(reload_checker_.violations());
  if (clients) keep(clients->violations());
  r.quorum_states = quorum_checker_.states();
  r.quorum_decisions_compared = quorum_checker_.decisions_compared();
  r.quorum_early_compared = quorum_checker_.early_compared();
  r.quorate_rings = quorum_checker_.quorate_rings();
  r.synced_rings = quorum_checker_.synced_rings();
  r.silent_rings = quorum_checker_.rings_with_silent();
  r.quorum_changes_asked = quorum_changes_asked_;
  r.quorum_changes_refused = quorum_changes_refused_;
  r.quorum_changes_dropped = quorum_changes_dropped_;
  r.reloads_asked = reloads_asked_;
  r.reload_answers = reload_answers_;
  r.reload_places = reload_checker_.applied();
  r.device_votes_given = arbiter_.votes_given();
  r.device_votes_refused = arbiter_.votes_refused();
  r.device_moves = arbiter_.moves();
  r.device_faults = device_faults_;
  for (NodeId id : live_)
    if (const Member* m = member(id); m->quorum) r.quorum_changes_dropped += m->quorum->changes_dropped();
  if (client_world_) {
    r.client_offers = client_world_->checker.offered();
    r.client_deliveries = client_world_->checker.deliveries();
    r.client_pieced = client_world_->checker.pieced_deliveries();
    r.client_refusals = client_world_->refusals;
    r.clients_cut_off = client_world_->cut_off;
  }
  r.group_changes = group_checker_.changes();
  r.group_messages = group_checker_.messages();
  r.group_views_compared = group_checker_.views_compared();
  r.messages_accepted = checker_.messages_accepted();
  r.messages_delivered = checker_.messages_delivered();
  r.deliveries = checker_.deliveries();
  r.submit_refusals = submit_refusals_;
  r.configurations = checker_.configurations();
  r.rings_formed = rings_.size();
  r.rings = rings_;
  r.crashes = crashes_;
  r.stops = stops_;
  r.states_lost = states_lost_;
  r.partitions = partitions_;
  r.link_cuts = link_cuts_;
  r.pauses = pauses_;
  r.torn = torn_;
  r.torn_unsent = torn_unsent_;
  r.torn_deliveries = torn_deliveries_;
  r.timers_overdue = timers_overdue_;
  r.end_us = network_.now_us();
  r.converged_us = r.end_us > spec_.duration_us ? r.end_us - spec_.duration_us : 0;
  r.drain_windows = drain_windows_;
  r.counters = crashed_counters_;
  for (NodeId id : ids_) {
    NodeSnapshot& n = r.nodes.emplace_back();
    n.id = id;
    n.restarts = slots_[id - 1].restarts;
    n.operational = slots_[id - 1].operational;
    const Member* m = member(id);
    if (m == nullptr) continue;
    if (m->operational_since) n.operational.emplace_back(*m->operational_since, r.end_us);
    n.alive = true;
    n.state = m->node->state();
    n.ring_id = m->node->ring_id();
    n.members.assign(m->node->members().begin(), m->node->members().end());
    n.delivered_through = m->node->delivered_through();
    n.send_queue = m->node->send_queue_size();
    n.pending = m->pending.size();
    n.counters = m->node->counters();
#define RTOTEM_SUM_COUNTER(name) r.counters.name += n.counters.name;
    RTOTEM_NODE_COUNTERS(RTOTEM_SUM_COUNTER)
#undef RTOTEM_SUM_COUNTER
  }
  each_network([&](const transport::SimNetwork& net) { r.network += net.stats(); });
  return r;
}

std::string counters_text(const membership::NodeCounters& counters) {
  std::string text;
  counters.for_each([&](std::string_view name, std::uint64_t value) {
    if (value != 0) text += fmt::format(" {}={}", name, value);
  });
  return text;
}

}  // namespace rtotem::sim
