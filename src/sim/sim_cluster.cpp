// The simulated cluster: its members (backend + Node + host), the discrete-event loop over
// virtual time, and the application traffic that feeds the Nodes.
#include "src/sim/sim_cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <tuple>
#include <utility>

namespace rtotem::sim {
namespace {

using membership::Node;
using membership::TimerId;
using transport::InboundPacket;
using transport::SimBackend;

// A buggy Node could re-arm a timer at `now` forever; virtual time would stop and the run hang.
constexpr std::uint64_t kStepsPerInstantMax = 100'000;
// A refused submission is retried this much later: soon, as an application would, but not at the
// same instant (nothing there has changed) nor so often that retries swamp the event loop.
constexpr Time kRetryMinUs = 1'000;
constexpr Time kRetryMaxUs = 10'000;

std::size_t timer_index(TimerId timer) { return static_cast<std::size_t>(timer); }

struct Submission {
  MessageId id;
  std::uint32_t size = 0;
  Delivery delivery = Delivery::kAgreed;
};

}  // namespace

// One node: its backend, its Node, and the host side the Node talks to (timers, deliveries,
// received packets), plus its application's queue of messages not yet accepted.
class SimCluster::Member final : public membership::NodeEvents, public transport::PacketSink {
 public:
  Member(SimCluster& cluster, std::unique_ptr<SimBackend> backend_in, const membership::TotemConfig& totem)
      : owner(cluster),
        id(backend_in->local_node()),
        backend(std::move(backend_in)),
        node(std::make_unique<Node>(id, totem, *backend, *this)),
        scratch(node->max_message_size()) {}

  void arm_timer(TimerId timer, Time deadline) override { timers[timer_index(timer)] = deadline; }
  void cancel_timer(TimerId timer) override { timers[timer_index(timer)].reset(); }
  void deliver(const Delivered& message) override { owner.on_deliver(id, message); }

  void on_packets(std::span<InboundPacket> batch) override {
    node->on_packets(batch, owner.network_.now_us());
    owner.after_node_call(*this);
  }

  std::optional<Time> next_traffic_us(bool generating) const {
    std::optional<Time> next;
    if (generating) next = generate_at;
    if (!pending.empty()) next = std::min(next.value_or(retry_at), retry_at);
    return next;
  }

  SimCluster& owner;
  const NodeId id;
  std::unique_ptr<SimBackend> backend;
  std::array<std::optional<Time>, membership::kTimerCount> timers{};  // absolute deadlines
  std::unique_ptr<Node> node;  // after backend: goes first, dropping its buffer Refs
  // The application: messages made but not yet accepted, oldest first (retried in order).
  std::deque<Submission> pending;
  std::uint64_t next_counter = 0;
  Time generate_at = 0;
  Time retry_at = 0;
  std::vector<std::byte> scratch;  // one payload, rebuilt at each attempt
  RingId ring_seen;
};

Result<std::unique_ptr<SimCluster>> SimCluster::create(const SimSpec& spec) {
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
  auto totem = spec.totem.resolved();
  if (!totem) return Error::make("totem: {}", totem.error().message());
  if (auto fits = totem->check(spec.backend); !fits) return Error::make("totem: {}", fits.error().message());
  std::unique_ptr<SimCluster> cluster(new SimCluster(spec, *totem));
  if (auto attached = cluster->attach_members(); !attached) return attached.error();
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
      checker_(ids_) {
  if (spec_.liveness_bound_us == 0) spec_.liveness_bound_us = Time{20} * totem_.token_timeout_ms * 1000;
}

SimCluster::~SimCluster() = default;  // members_ (Nodes, then backends) go before network_

Result<void> SimCluster::attach_members() {
  for (NodeId id : ids_) {
    transport::BackendParams params = spec_.backend;
    params.local_node = id;
    auto backend = network_.attach(params);
    if (!backend) return Error::make("node {}: {}", id, backend.error().message());
    members_.push_back(std::make_unique<Member>(*this, std::move(backend).value(), totem_));
    if (members_.back()->node->max_message_size() < kStampSize)
      return Error::make("mtu {}: a message cannot hold the {}-byte stamp", params.mtu, kStampSize);
  }
  return {};
}

const membership::Node& SimCluster::node(NodeId id) const {
  RTOTEM_ASSERT(id >= 1 && id <= members_.size());
  return *members_[id - 1]->node;
}

SimResult SimCluster::run() {
  RTOTEM_ASSERT(network_.now_us() == 0 && rings_.empty());  // once per cluster
  // No membership yet: every node is told the ring (tocssrp95 §5 would form it by itself).
  for (auto& member : members_) {
    member->node->install_ring(RingId{1, 1}, ids_, 0);
    after_node_call(*member);
    member->generate_at = draw_gap_us();
  }
  while (step(spec_.duration_us)) {}
  // Liveness phase: a fault-free network, no new messages; the refused ones are still retried.
  network_.set_faults({});
  generating_ = false;
  const Time bound_us = spec_.duration_us + spec_.liveness_bound_us;
  while (!checker_.quiescent() && step(bound_us)) {}
  if (!checker_.quiescent() && !stalled_ && network_.now_us() < bound_us)
    network_.advance_to(bound_us);  // nothing more was due before the bound: it ran out
  checker_.finish(network_.now_us());
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
  network_.advance_to(now);
  for (auto& member : members_)
    while (member->backend->poll(*member) == transport::kRxBatchMax) {}
  fire_due_timers(now);
  run_due_traffic(now);
  return true;
}

std::optional<Time> SimCluster::next_event_us() const {
  std::optional<Time> next = network_.next_delivery_us();
  auto consider = [&next](std::optional<Time> t) {
    if (t) next = std::min(next.value_or(*t), *t);
  };
  for (const auto& member : members_) {
    if (member->backend->has_pending_rx()) consider(network_.now_us());  // the local path: now
    for (const auto& deadline : member->timers) consider(deadline);
    consider(member->next_traffic_us(generating_));
  }
  return next;
}

// Deadline order, ties by node id then timer id. A timer armed while these fire waits for the
// next step, even if already due: the loop comes back at once, at the same instant.
void SimCluster::fire_due_timers(Time now) {
  std::vector<DueTimer>& due = due_timers_;  // kept: no allocation per step
  due.clear();
  for (const auto& member : members_)
    for (std::size_t t = 0; t < membership::kTimerCount; ++t)
      if (member->timers[t] && *member->timers[t] <= now) due.emplace_back(*member->timers[t], member->id, t);
  std::sort(due.begin(), due.end());
  for (const auto& [deadline, id, t] : due) {
    Member& member = *members_[id - 1];
    if (member.timers[t] != deadline) continue;  // cancelled or re-armed by an earlier one
    member.timers[t].reset();
    member.node->on_timer(static_cast<TimerId>(t), now);
    after_node_call(member);
  }
}

void SimCluster::run_due_traffic(Time now) {
  for (auto& member : members_) {
    const std::optional<Time> due = member->next_traffic_us(generating_);
    if (!due || *due > now) continue;
    if (generating_ && member->generate_at <= now) {
      generate_burst(*member, now);
      member->generate_at = now + draw_gap_us();
    }
    submit_pending(*member, now);
  }
}

// A burst of 1..burst_max messages, each with a size in [kStampSize, max_message_size()] (the
// two ends drawn often, as edges hide bugs) and a delivery type. The application blocks (makes
// none) while kPendingMax wait: a closed loop, so back-pressure slows it instead of piling up.
void SimCluster::generate_burst(Member& member, Time now) {
  transport::Rng& rng = network_.rng();
  const std::uint64_t burst = rng.uniform_range(1, spec_.burst_max);
  const std::uint32_t size_max = static_cast<std::uint32_t>(member.scratch.size());
  for (std::uint64_t i = 0; i < burst && member.pending.size() < kPendingMax; ++i) {
    Submission next{MessageId{member.id, member.next_counter++}, 0, Delivery::kAgreed};
    switch (rng.uniform(10)) {
      case 0: next.size = kStampSize; break;
      case 1: next.size = size_max; break;
      default: next.size = static_cast<std::uint32_t>(rng.uniform_range(kStampSize, size_max)); break;
    }
    if (spec_.message_size != 0)
      next.size = std::clamp<std::uint32_t>(spec_.message_size, kStampSize, size_max);
    if (rng.chance(spec_.safe_fraction)) next.delivery = Delivery::kSafe;
    checker_.record_offer(now, next.id, next.size, next.delivery);
    member.pending.push_back(next);
  }
}

// Oldest first, until one is refused: that one, and all behind it, wait for the retry.
void SimCluster::submit_pending(Member& member, Time now) {
  while (!member.pending.empty()) {
    const Submission& head = member.pending.front();
    const std::span<std::byte> payload(member.scratch.data(), head.size);
    write_payload(head.id, payload);
    const Status status = member.node->submit(payload, head.delivery, now);
    after_node_call(member);
    if (status != Status::kOk) {
      ++submit_refusals_;
      member.retry_at = now + network_.rng().uniform_range(kRetryMinUs, kRetryMaxUs);
      return;
    }
    checker_.record_accepted(now, head.id);
    member.pending.pop_front();
  }
}

// Uniform in [1, 2 x mean gap]: bursts of (1 + burst_max) / 2 messages on average, rate_per_s.
Time SimCluster::draw_gap_us() {
  const double mean_burst = (1.0 + spec_.burst_max) / 2;
  const double gap_max_us = std::max(1.0, std::round(2e6 * mean_burst / spec_.rate_per_s));
  return network_.rng().uniform_range(1, static_cast<Time>(gap_max_us));
}

// Safe delivery (tocssrp95 §2): at the moment a safe message is delivered anywhere, every member
// of its ring holds it. A member on another ring does not hold it.
void SimCluster::on_deliver(NodeId node, const Delivered& message) {
  const Time now = network_.now_us();
  checker_.record_delivery(now, node, message);
  if (message.delivery != Delivery::kSafe) return;
  std::vector<NodeId> lacking;
  for (const auto& member : members_)
    if (!(member->node->ring_id() == message.ring_id) || !member->node->has_received(message.seq))
      lacking.push_back(member->id);
  checker_.check_safe(now, node, message, lacking);
}

void SimCluster::after_node_call(Member& member) {
  // The simulated device takes every packet at once; anything else is a bug in the backend.
  const Status flushed = member.backend->flush();
  RTOTEM_ASSERT(flushed == Status::kOk);
  if (!member.node->operational() || member.node->ring_id() == member.ring_seen) return;
  member.ring_seen = member.node->ring_id();
  if (std::find(rings_.begin(), rings_.end(), member.ring_seen) == rings_.end()) rings_.push_back(member.ring_seen);
}

SimResult SimCluster::result() const {
  SimResult r;
  r.violation_count = checker_.violation_count();
  r.violations = checker_.violations();
  r.messages_accepted = checker_.messages_accepted();
  r.messages_delivered = checker_.messages_delivered();
  r.deliveries = checker_.deliveries();
  r.submit_refusals = submit_refusals_;
  r.rings_formed = rings_.size();
  r.end_us = network_.now_us();
  r.converged_us = r.end_us > spec_.duration_us ? r.end_us - spec_.duration_us : 0;
  for (const auto& member : members_) {
    const membership::NodeCounters& c = member->node->counters();
    r.nodes.push_back(NodeSnapshot{member->id, member->node->operational(), member->node->delivered_through(),
                                   member->node->send_queue_size(), member->pending.size(), c});
#define RTOTEM_SUM_COUNTER(name) r.counters.name += c.name;
    RTOTEM_NODE_COUNTERS(RTOTEM_SUM_COUNTER)
#undef RTOTEM_SUM_COUNTER
  }
  r.network = network_.stats();
  return r;
}

}  // namespace rtotem::sim
