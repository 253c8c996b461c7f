#include "src/sim/reload_checker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace rtotem::sim {

ReloadChecker::Timing ReloadChecker::timing_of(const membership::TotemConfig& t) noexcept {
  return {t.token_timeout_ms,
          t.token_retransmits_before_loss,
          t.token_retransmit_ms,
          t.token_hold_ms,
          t.join_ms,
          t.send_join_ms,
          t.consensus_ms,
          t.merge_ms,
          t.fail_recv_const,
          t.fail_recv_ms};
}

void ReloadChecker::record_configuration(NodeId node) { reported_.erase(node); }

void ReloadChecker::record_control(Time now, NodeId node, std::span<const NodeId> members, const Delivered& message,
                                   const membership::TotemConfig& before, const membership::TotemConfig& after) {
  const Timing was = timing_of(before);
  const Timing is = timing_of(after);
  places_[{message.ring_id.rep, message.ring_id.seq, message.seq, message.index}].push_back({now, node, was != is, is});
  const std::optional<control::ReloadMessage> reload = control::decode_reload(message.payload);
  const auto* report = reload ? std::get_if<control::ReloadReportMessage>(&*reload) : nullptr;
  if (report != nullptr && report->report.node == message.sender) reported_[node][report->id].insert(message.sender);
  if (was == is) return;
  const auto lacking = [&] {
    if (report == nullptr) return std::string("it is no reload report");
    const std::set<NodeId>& from = reported_[node][report->id];
    for (NodeId member : members)
      if (!from.contains(member)) return fmt::format("node {}'s report of that reload was not delivered yet", member);
    return std::string();
  }();
  if (!lacking.empty())
    violations_.push_back(
        {Property::kReloadOrder,
         now,
         {node},
         std::nullopt,
         fmt::format("node {} went from token {} ms to {} ms at ring {}/{} message {}.{}, where {}", node, was[0],
                     is[0], message.ring_id.rep, message.ring_id.seq, message.seq, message.index, lacking)});
}

void ReloadChecker::record_turn(Time now, NodeId node, const membership::TotemConfig& last_seen,
                                const membership::TotemConfig& now_running) {
  const Timing was = timing_of(last_seen);
  const Timing is = timing_of(now_running);
  if (was == is) return;
  violations_.push_back({Property::kReloadOrder,
                         now,
                         {node},
                         std::nullopt,
                         fmt::format("node {} went from token {} ms to {} ms outside the delivery of a node control "
                                     "message",
                                     node, was[0], is[0])});
}

void ReloadChecker::finish() {
  for (const auto& [place, seen] : places_) {
    const auto changed = std::ranges::find_if(seen, &Seen::changed);
    if (changed == seen.end()) continue;
    ++applied_;
    for (const Seen& other : seen) {
      if (other.after == changed->after) continue;
      violations_.push_back(
          {Property::kReloadOrder,
           other.now,
           {other.node, changed->node},
           std::nullopt,
           fmt::format("at ring {}/{} message {}.{}, node {} took token {} ms, node {} runs token {} ms after it",
                       std::get<0>(place), std::get<1>(place), std::get<2>(place), std::get<3>(place), changed->node,
                       changed->after[0], other.node, other.after[0])});
    }
  }
}

}  // namespace rtotem::sim
