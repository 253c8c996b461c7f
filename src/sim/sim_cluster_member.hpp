// One incarnation of a simulated node: its backend, its Node, and the host side the Node talks to
// (timers, deliveries, configurations, the ring seq store, received packets), plus its
// application's queue of messages not yet accepted. Private to the SimCluster's files.
#pragma once

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "src/services/groups/group_service.hpp"
#include "src/services/quorum/quorum_service.hpp"
#include "src/sim/sim_clients.hpp"
#include "src/sim/sim_cluster.hpp"
#include "src/stack/node_stack.hpp"

namespace rtotem::sim {

// A node's monotonic clock: from `offset_us` at virtual time 0, running ppm parts per million fast
// (negative: slow), as an unsynchronised oscillator does. The Node sees only this time; the
// simulator schedules on virtual time, so a timer armed for a local deadline fires at the first
// virtual instant whose local time reaches it.
struct NodeClock {
  Time offset_us = 0;
  std::int64_t ppm = 0;

  Time local(Time global) const {
    const auto scaled = static_cast<std::int64_t>(global) * ppm;
    // Rounded down, also below zero: local() never decreases as `global` grows.
    const std::int64_t drift = scaled >= 0 ? scaled / kMillion : -((-scaled + kMillion - 1) / kMillion);
    return offset_us + static_cast<Time>(static_cast<std::int64_t>(global) + drift);
  }
  // The first virtual instant at which local() reaches `deadline`.
  Time global_at(Time deadline) const {
    if (deadline <= local(0)) return 0;
    const auto wanted = static_cast<std::int64_t>(deadline - offset_us);
    Time global = static_cast<Time>(wanted * kMillion / (kMillion + ppm));
    while (local(global) < deadline) ++global;
    while (global > 0 && local(global - 1) >= deadline) --global;
    return global;
  }

  static constexpr std::int64_t kMillion = 1'000'000;
};

// An application message made but not yet accepted by its Node.
struct Submission {
  MessageId id;
  std::uint32_t size = 0;
  Delivery delivery = Delivery::kAgreed;
};

// The setup of node `id`'s NodeStack (spec.clients): the nodelist 1..nodes, as a config file
// would give it (sim_cluster_nodes.cpp).
stack::StackSetup stack_setup(const SimSpec& spec, const membership::TotemConfig& totem, NodeId id);

// With spec.clients the Member hosts a NodeStack, as rtotemd does (its Host), and the checkers
// watch the stack's services (StackObserver); else it runs the bare services.
class SimCluster::Member final : public membership::NodeEvents,
                                 public transport::PacketSink,
                                 public groups::GroupEvents,
                                 public quorum::QuorumEvents,
                                 public stack::StackObserver {
 public:
  Member(SimCluster& cluster, std::unique_ptr<transport::Backend> backend_in, const membership::TotemConfig& totem,
         Seq stored_ring_seq, Time now, NodeClock clock_in)
      : owner(cluster),
        id(backend_in->local_node()),
        started_us(now),
        clock(clock_in),
        backend(std::move(backend_in)),
        node(std::make_unique<membership::Node>(id, totem, *backend, *this, stored_ring_seq)),
        scratch(node->max_message_size()) {
    if (owner.quorum_) {
      quorum = std::make_unique<quorum::QuorumService>(
          id, *owner.quorum_,
          [this](std::span<const std::byte> packet, Delivery order) {
            return node->submit(packet, order, this->now());
          },
          *this);
      owner.quorum_checker_.record_start(id);
      if (owner.has_device()) owner.start_device(*this, now);
    }
    if (owner.spec_.clients > 0) {
      auto made = stack::NodeStack::create(stack_setup(owner.spec_, totem, id), host, this);
      RTOTEM_ASSERT(made);  // SimCluster::create checked the totem config against what the stack needs
      stack = std::move(made).value();
      clients = std::make_unique<NodeClients>(
          id, owner.spec_.clients, *stack, *owner.client_world_, [this] { owner.after_node_call(*this); },
          [this] { return !dead && !gone; });
      owner.group_checker_.record_start(id);
      return;
    }
    if (!owner.spec_.groups) return;
    // Submits as the daemon does, straight to the Node (flushed by the caller's after_node_call).
    groups = std::make_unique<groups::GroupService>(
        id, node->max_message_size(),
        [this](const membership::Gather& packet, Delivery order) {
          owner.group_checker_.record_submit(id, packet.head);
          const Status status = node->submit(packet, order, this->now());
          if (status != Status::kOk) owner.group_checker_.record_refused(id, packet.head);
          return status;
        },
        *this);
    owner.group_checker_.record_start(id);
  }

  // A crash: the node's process is gone, and its clients' connections with it.
  ~Member() {
    gone = true;
    if (clients) clients->host_gone();
  }
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;

  // Timers are kept in virtual time, so the loop can compare them across nodes.
  void arm_timer(membership::TimerId timer, Time deadline) override {
    // Never before now: a slow clock can read the same at an earlier instant.
    timers[index(timer)] = std::max(clock.global_at(deadline), owner.network_.now_us());
  }
  void cancel_timer(membership::TimerId timer) override { timers[index(timer)].reset(); }
  void deliver(const Delivered& message) override { owner.on_deliver(*this, message); }
  void configuration(const membership::ConfigChange& change) override {
    const Time now = owner.network_.now_us();
    owner.checker_.record_configuration(now, id, change);
    owner.reload_checker_.record_configuration(id);
    if (quorum && !change.transitional) {
      quorum->on_configuration(change, this->now());
      owner.quorum_checker_.record_state(now, id, quorum->state());
      if (owner.has_device()) owner.device_saw_ring(*this, now);
    }
    if (!groups && !stack) return;
    owner.group_checker_.begin_configuration(now, id, change);
    if (stack) {
      stack->configuration(change);
    } else {
      groups->on_configuration(change);
    }
    owner.group_checker_.end_configuration(now, id);
  }
  void group_message(const groups::GroupMessage& message) override {
    owner.group_checker_.record_message(owner.network_.now_us(), id, message);
  }
  void group_change(const groups::GroupChange& change) override {
    owner.group_checker_.record_change(owner.network_.now_us(), id, change);
  }
  void quorum_changed(const quorum::QuorumState& state) override {
    owner.quorum_checker_.record_state(owner.network_.now_us(), id, state);
  }
  // The quorum service's deadline in virtual time, if armed.
  std::optional<Time> quorum_deadline_us() const {
    if (!quorum || !quorum->next_deadline()) return std::nullopt;
    return std::max(clock.global_at(*quorum->next_deadline()), owner.network_.now_us());
  }
  // The stack's host (spec.clients): its submissions go to the Node as the daemon's do, and its
  // timers and posted jobs run on virtual time.
  class Host final : public stack::StackHost {
   public:
    explicit Host(Member& member) : m_(member) {}
    Status submit(const membership::Gather& packet, Delivery order) override {
      const bool group = is_group_packet(packet.head);
      if (group) m_.owner.group_checker_.record_submit(m_.id, packet.head);
      const Status status = m_.node->submit(packet, order, m_.now());
      if (group && status != Status::kOk) m_.owner.group_checker_.record_refused(m_.id, packet.head);
      return status;
    }
    const membership::Node& node() const override { return *m_.node; }
    void set_timing(const membership::TotemConfig& timing) override { m_.node->set_timing(timing); }
    Result<void> can_change_nodes(const config::DaemonConfig&) const override {
      return Error::make("the simulator's nodes are fixed");
    }
    void change_nodes(const config::DaemonConfig&) override {}
    void rekey(std::shared_ptr<const transport::ClusterKey> seal_with,
               std::shared_ptr<const transport::ClusterKey> also_open) override {
      m_.backend->rekey(std::move(seal_with), std::move(also_open));
    }
    const transport::Backend& backend() const override { return *m_.backend; }
    Time now() const override { return m_.now(); }
    void arm_timer(std::optional<Time> deadline) override { m_.stack_deadline = deadline; }
    void arm_client_retry() override { m_.client_retry_at = m_.owner.network_.now_us() + kClientRetryUs; }
    void post(std::function<void()> job) override { m_.posted.push_back(std::move(job)); }
    void set_access(std::vector<std::uint32_t>, std::vector<std::uint32_t>) override {}  // its clients are root
    bool loading() const override { return m_.loading; }
    // The node's file as it is now (the operator's reloads change it), read by the end of the turn.
    Result<void> load_config(std::function<void(Result<config::DaemonConfig>)> done) override {
      m_.loading = true;
      post([this, done = std::move(done)] {
        m_.loading = false;
        done(m_.owner.file_of(m_.id));
      });
      return {};
    }
    Result<void> apply_logging(const config::LoggingConfig&) override { return {}; }
    Result<std::string> dump_flight_data() override { return Error::make("the simulator keeps no flight recorder"); }
    void exit(int code) override { m_.exit_code = code; }
    stack::HostStats host_stats() const override { return {}; }

   private:
    Member& m_;
  };

  // After each call into the Node, as after each of rtotemd's turns: this turn's deliveries go to
  // the clients, the stack retries what the ring refused, and posted jobs run.
  void end_stack_turn() {
    stack->deliveries_done();
    stack->after_turn();
    std::vector<std::function<void()>> jobs = std::exchange(posted, {});
    for (auto& job : jobs) job();
    owner.reload_checker_.record_turn(owner.network_.now_us(), id, timing_seen, node->config());
    timing_seen = node->config();
  }
  // When the stack wants to be called next (its timer, its clients' retry), in virtual time.
  std::optional<Time> stack_due_us() const {
    std::optional<Time> due = client_retry_at;
    if (stack_deadline) {
      const Time at = std::max(clock.global_at(*stack_deadline), owner.network_.now_us());
      due = std::min(due.value_or(at), at);
    }
    return due;
  }

  // The store survives this Member: a crash keeps it, as a file on disk would.
  void persist_ring_seq(Seq seq) override { owner.slots_[id - 1].stored_ring_seq = seq; }

  void on_packets(std::span<transport::InboundPacket> batch) override {
    if (dead) return;  // torn: the process is gone, the batch goes back unread
    node->on_packets(batch, now());
    owner.after_node_call(*this);
  }

  // The time the Node (and the stack) is told: its own clock's.
  Time now() const { return clock.local(owner.network_.now_us()); }
  // Neither paused nor dead: it may be called into at `now` (virtual time).
  bool awake(Time now) const { return !dead && now >= paused_until_us; }
  bool may_poll(Time now) const { return awake(now) && now >= poll_at_us; }
  // When something due at `t` can run: not before the pause ends.
  std::optional<Time> awake_at(std::optional<Time> t) const {
    return t ? std::optional<Time>(std::max(*t, paused_until_us)) : t;
  }

  std::optional<Time> next_traffic_us(bool generating) const {
    std::optional<Time> next;
    if (generating) next = clients ? std::min(generate_at, clients_at) : generate_at;
    if (!pending.empty()) next = std::min(next.value_or(retry_at), retry_at);
    return next;
  }

  static std::size_t index(membership::TimerId timer) { return static_cast<std::size_t>(timer); }
  static constexpr Time kClientRetryUs = 5'000;  // rtotemd's retry of full client channels

  SimCluster& owner;
  const NodeId id;
  const Time started_us;
  const NodeClock clock;
  // A SimBackend, or a LinkSet over one per link (spec.links > 1).
  std::unique_ptr<transport::Backend> backend;
  std::array<std::optional<Time>, membership::kTimerCount> timers{};  // absolute deadlines
  std::optional<Time> link_timer;                 // a LinkSet's pings: Backend::on_timer is due then (virtual)
  std::unique_ptr<membership::Node> node;         // after backend: goes first, dropping its buffer Refs
  std::unique_ptr<groups::GroupService> groups;   // spec.groups only; submits to node
  std::unique_ptr<quorum::QuorumService> quorum;  // spec.quorum only; submits to node
  std::optional<Time> device_poll_us;             // a quorum device: it polls then (virtual)
  Time device_cut_until_us = 0;                   // its device hears nothing from the arbiter until then
  Host host{*this};
  std::unique_ptr<stack::NodeStack> stack;  // spec.clients only; submits to node through host
  std::unique_ptr<NodeClients> clients;     // after stack: its connections close first
  // spec.reloads_per_s: the operator's connection, which asks the reloads. After stack, and closed
  // by ~Member only after clients->host_gone() has closed the table (no leave goes to the ring).
  std::unique_ptr<SimConnection> operator_link;
  bool loading = false;  // the host is reading the file for the stack
  // The timing it ran after its last node control message (or its start): the ReloadChecker's.
  membership::TotemConfig timing_seen = node->config();
  std::optional<Time> stack_deadline;         // the stack's timer, by the node's clock
  std::optional<Time> client_retry_at;        // virtual
  std::vector<std::function<void()>> posted;  // StackHost::post's jobs, run after the call
  std::optional<int> exit_code;               // StackHost::exit: the node stops at the next step
  bool gone = false;                          // being destroyed: its clients make no calls
  // The application: messages made but not yet accepted, oldest first (retried in order).
  std::deque<Submission> pending;
  Time generate_at = 0;
  Time clients_at = 0;  // spec.clients: the processes' next turn
  Time retry_at = 0;
  std::vector<std::byte> scratch;         // one payload, rebuilt at each attempt
  RingId ring_seen;                       // the ring it was last seen operational in
  std::optional<Time> operational_since;  // operational since then, as last seen
  Time paused_until_us = 0;               // paused (no poll, no timer, no traffic) before this instant
  Time poll_gap_us = 0;                   // a slow receiver: polls at most this often; 0: at every step
  Time poll_at_us = 0;                    // it may poll again from this instant
  bool torn = false;                      // its next call into the Node that sends is its last: no flush
  std::uint64_t call_deliveries = 0;      // made by the call under way, while torn
  bool dead = false;                      // that call was made: nothing more until the crash is run
};

}  // namespace rtotem::sim
