// The quorum device in the simulator: each node runs corosync-qdevice's part (it registers, then
// polls its QuorumService every half timeout, and soon after each new ring, with the vote the
// arbiter gives that ring), and the QuorumArbiter plays qnetd. Faults, drawn at half the
// partitions' rate in the fault phase: the arbiter stalls (no device hears from it: every vote
// runs out with its timeout), or one node's device is cut off from it. The QuorumChecker's
// "never two sides quorate" then judges that a vote for one ring never counts in another.
#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_cluster_member.hpp"

namespace rtotem::sim {
namespace {

constexpr const char* kDeviceName = "Qdevice";
// qdevice asks qnetd about a new ring and polls with the answer: a round trip on a LAN, or up to
// two token timeouts where qnetd waits for every partition's membership before it answers.
constexpr Time kAnswerMinUs = 200;
constexpr double kAnswerMaxTimeouts = 2;
// A stall or a cut lasts from half a device timeout (no vote lost) to three (every vote lost).
constexpr double kFaultMinTimeouts = 0.5;
constexpr double kFaultMaxTimeouts = 3;

}  // namespace

void SimCluster::start_device(Member& m, Time now) {
  const int rc = m.quorum->device_register(kDeviceName);
  RTOTEM_ASSERT(rc == 0);
  m.device_poll_us = now + device_timeout_us() / 2;
}

void SimCluster::device_saw_ring(Member& m, Time now) {
  const auto max_us = static_cast<Time>(kAnswerMaxTimeouts * static_cast<double>(totem_.token_timeout_ms) * 1000);
  m.device_poll_us = now + network_.rng().uniform_range(kAnswerMinUs, std::max(kAnswerMinUs, max_us));
}

void SimCluster::fire_due_device_polls(Time now) {
  if (!has_device()) return;
  auto held = [this](const RingId& ring) {
    return std::ranges::any_of(live_, [&](NodeId id) { return member(id)->quorum->state().ring_id == ring; });
  };
  for (NodeId id : live_) {
    Member& m = *member(id);
    if (!m.device_poll_us || *m.device_poll_us > now || !m.awake(now)) continue;
    m.device_poll_us = now + device_timeout_us() / 2;
    const quorum::QuorumState& state = m.quorum->state();
    // No answer (the arbiter stalled, or out of reach): the device does not poll, as qdevice
    // without a reply from qnetd. Nor before the node's first ring, which there is no vote for.
    if (now < arbiter_stalled_until_us_ || now < m.device_cut_until_us || state.members.empty()) continue;
    const RingId ring = state.ring_id;
    const bool v = arbiter_.vote(ring, held);
    const int rc = m.quorum->device_poll(kDeviceName, v, ring, m.now());
    RTOTEM_ASSERT(rc == 0);
    after_node_call(m);
  }
}

void SimCluster::device_fault(Time now) {
  Rng& rng = network_.rng();
  const double timeout_us = static_cast<double>(device_timeout_us());
  const Time length = rng.uniform_range(static_cast<Time>(kFaultMinTimeouts * timeout_us),
                                        static_cast<Time>(kFaultMaxTimeouts * timeout_us));
  ++device_faults_;
  if (rng.uniform(2) == 0 || live_.empty()) {
    arbiter_stalled_until_us_ = now + length;
    return;
  }
  member(live_[rng.uniform(live_.size())])->device_cut_until_us = now + length;
}

}  // namespace rtotem::sim
