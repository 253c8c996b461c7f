// The simulated operator's reloads of every node (spec.reloads_per_s, with the node stack): the
// token in the nodes' files changes, as an operator edits corosync.conf on every node, and a drawn
// node's operator asks for a reload as `rtotemctl reload` does, over a connection of its own to the
// node's stack; the answer comes once the ring has decided. In one reload of kSomeFilesOneIn each
// file changes on a coin flip: they may disagree, and the reload must then change nothing anywhere. Each host reads
// its node's file for the stack (Member::Host::load_config), and a restarted node runs what its
// file says. The ReloadChecker judges where each change took effect.
#include <fmt/format.h>

#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_cluster_member.hpp"

namespace rtotem::sim {
namespace {

constexpr std::uint64_t kSomeFilesOneIn = 4;
// The tokens a file is given, as shares of the run's (in quarters): shorter, the same, longer.
constexpr std::uint32_t kTokenQuarters[] = {3, 4, 5};

}  // namespace

config::DaemonConfig SimCluster::file_of(NodeId id) const {
  return stack_setup(spec_, slots_[id - 1].file_totem, id).config;
}

void SimCluster::reload(Time now) {
  Rng& rng = network_.rng();
  collect_reload_answers();
  membership::TotemConfig edited = spec_.totem;
  edited.token_timeout_ms = spec_.totem.token_timeout_ms * kTokenQuarters[rng.uniform(std::size(kTokenQuarters))] / 4;
  const bool some = rng.uniform(kSomeFilesOneIn) == 0;
  // A short token may leave no room for two joins within consensus: that file keeps its timing.
  if (auto resolved = edited.resolved()) {
    for (Slot& slot : slots_)
      if (!some || rng.uniform(2) == 0) slot.file_totem = *resolved;
  }
  if (live_.empty()) return;
  Member& m = *member(live_[rng.uniform(live_.size())]);
  if (!m.awake(now) || !m.stack) return;
  if (m.operator_link && m.operator_link->cut_off()) {  // it did not read: the stack let it go
    collect_reload_answers(m);
    m.operator_link.reset();
  }
  if (!m.operator_link && m.stack->accept_client() == 0)
    m.operator_link = std::make_unique<SimConnection>(
        m.stack->clients(), static_cast<pid_t>(client_world_->next_pid++), ipc::kBufferOverhead, kClientChannelBytes,
        [this, &m] { after_node_call(m); }, [&m] { return !m.dead && !m.gone; });
  if (!m.operator_link || m.operator_link->send(ipc::RequestId::kReload, {}, {}) != 0) return;
  ++reloads_asked_;
}

void SimCluster::collect_reload_answers() {
  for (NodeId id : live_) collect_reload_answers(*member(id));
}

// Also as the node goes down: a reload asked there and not answered by then never is (its
// operator saw the connection fail, as rtotemctl does).
void SimCluster::collect_reload_answers(Member& m) {
  if (!m.operator_link) return;
  while (const std::optional<int> error = m.operator_link->take_late_answer()) ++reload_answers_[*error];
  client::Event event;  // ring changes it is told of, read so that its channel never fills
  while (m.operator_link->next_event(event, 0) > 0) {}
}

}  // namespace rtotem::sim
