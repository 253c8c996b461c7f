// The simulated applications: each live node's makes bursts of messages and submits them to its
// Node, retrying the refused ones (back-pressure) later, oldest first; with spec.groups, its
// processes also join, leave and multicast to groups through the node's GroupService.
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "membership/chunks.hpp"
#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_cluster_member.hpp"

namespace rtotem::sim {
namespace {

// A refused submission is retried this much later: soon, as an application would, but not at the
// same instant (nothing there has changed) nor so often that retries swamp the event loop.
constexpr Time kRetryMinUs = 1'000;
constexpr Time kRetryMaxUs = 10'000;
// spec.clients: the node's processes act this often (about 100 times a virtual second).
constexpr Time kClientTurnMinUs = 1'000;
constexpr Time kClientTurnMaxUs = 20'000;
// A few processes in a few groups: enough for merges to bring back and NODEDOWN to take away
// several at once, and for every join list to fit one packet (group_checker.hpp relies on it).
constexpr std::uint32_t kGroupPids = 4;
constexpr std::array<std::string_view, 3> kGroupNames{"alpha", "beta", "gamma"};

}  // namespace

void SimCluster::run_due_traffic(Time now) {
  for (NodeId id : live_) {
    Member& m = *member(id);
    const std::optional<Time> due = m.next_traffic_us(generating_);
    if (!due || *due > now || !m.awake(now)) continue;  // a paused node's application is paused too
    if (generating_ && m.generate_at <= now) {
      generate_burst(m, now);
      if (spec_.groups) group_action(m);
      m.generate_at = now + draw_gap_us();
    }
    // The clients' processes take turns of their own, whatever the application's rate.
    if (generating_ && m.clients && m.clients_at <= now) {
      m.clients->step(now, network_.rng());
      m.clients_at = now + network_.rng().uniform_range(kClientTurnMinUs, kClientTurnMaxUs);
    }
    submit_pending(m, now);
  }
}

// A burst of 1..burst_max messages, each with a size in [kStampSize, one packet's] (the two ends
// drawn often, as edges hide bugs) or, for large_fraction of them, up to max_message_size(), and
// a delivery type. The application blocks (makes none) while kPendingMax wait: a closed loop, so
// back-pressure slows it instead of piling up.
void SimCluster::generate_burst(Member& m, Time now) {
  Rng& rng = network_.rng();
  std::uint64_t& next_counter = slots_[m.id - 1].next_counter;
  const std::uint64_t burst = rng.uniform_range(1, spec_.burst_max);
  const auto size_max = static_cast<std::uint32_t>(m.scratch.size());
  const auto packet_max =
      static_cast<std::uint32_t>(std::min<std::size_t>(size_max, membership::piece_max(spec_.backend.payload_mtu())));
  for (std::uint64_t i = 0; i < burst && m.pending.size() < kPendingMax; ++i) {
    Submission next{MessageId{m.id, next_counter++}, 0, Delivery::kAgreed};
    if (packet_max < size_max && rng.chance(spec_.large_fraction)) {
      next.size =
          rng.uniform(4) == 0 ? size_max : static_cast<std::uint32_t>(rng.uniform_range(packet_max + 1, size_max));
    } else {
      switch (rng.uniform(10)) {
        case 0: next.size = kStampSize; break;
        case 1: next.size = packet_max; break;
        default: next.size = static_cast<std::uint32_t>(rng.uniform_range(kStampSize, packet_max)); break;
      }
    }
    if (spec_.message_size != 0) {
      const std::uint32_t high = std::max(spec_.message_size, spec_.message_size_max);
      const auto size =
          high == spec_.message_size ? high : static_cast<std::uint32_t>(rng.uniform_range(spec_.message_size, high));
      next.size = std::clamp<std::uint32_t>(size, kStampSize, size_max);
    }
    if (rng.chance(spec_.safe_fraction)) next.delivery = Delivery::kSafe;
    checker_.record_offer(now, next.id, next.size, next.delivery);
    m.pending.push_back(next);
  }
}

// Oldest first, until one is refused: that one, and all behind it, wait for the retry. With quorum,
// nothing goes while the node's ring is not in sync (the daemon holds its clients then, as
// corosync's sync barrier does): the members' NODEINFOs must not queue behind a backlog that
// outlasts the ring.
void SimCluster::submit_pending(Member& m, Time now) {
  if (m.quorum && !m.quorum->state().synced && !m.pending.empty()) {
    m.retry_at = now + network_.rng().uniform_range(kRetryMinUs, kRetryMaxUs);
    return;
  }
  while (!m.pending.empty() && !m.dead) {
    const Submission& head = m.pending.front();
    const std::span<std::byte> payload(m.scratch.data(), head.size);
    write_payload(head.id, payload);
    const Status status = m.node->submit(payload, head.delivery, m.now());
    after_node_call(m);
    if (status != Status::kOk) {
      ++submit_refusals_;
      m.retry_at = now + network_.rng().uniform_range(kRetryMinUs, kRetryMaxUs);
      return;
    }
    checker_.record_accepted(now, head.id);
    m.pending.pop_front();
  }
}

// One request per burst, of a drawn process in a drawn group, as a client makes them: a process not
// in the group joins; one in it leaves (1 in 4) or multicasts, unless its leave is on its way. A
// refused request (back-pressure) is dropped: a client would retry, and nothing here is owed.
void SimCluster::group_action(Member& m) {
  Rng& rng = network_.rng();
  groups::GroupService& service = *m.groups;
  const auto pid = static_cast<std::uint32_t>(rng.uniform_range(1, kGroupPids));
  const std::string_view group = kGroupNames[rng.uniform(kGroupNames.size())];
  if (!std::ranges::binary_search(service.members(group), groups::ProcessId{m.id, pid})) {
    (void)service.join(group, pid);
  } else if (service.leave_in_flight(group, pid)) {
    return;
  } else if (rng.uniform(4) == 0) {
    (void)service.leave(group, pid, rng.uniform(2) == 0 ? groups::Reason::kLeave : groups::Reason::kProcDown);
  } else {
    const std::array<std::byte, 8> data{};
    (void)service.multicast(group, pid, data, rng.chance(spec_.safe_fraction) ? Delivery::kSafe : Delivery::kAgreed);
  }
  after_node_call(m);
}

// Uniform in [1, 2 x mean gap]: bursts of (1 + burst_max) / 2 messages on average, rate_per_s.
Time SimCluster::draw_gap_us() {
  const double mean_burst = (1.0 + spec_.burst_max) / 2;
  const double gap_max_us = std::max(1.0, std::round(2e6 * mean_burst / spec_.rate_per_s));
  return network_.rng().uniform_range(1, static_cast<Time>(gap_max_us));
}

}  // namespace rtotem::sim
