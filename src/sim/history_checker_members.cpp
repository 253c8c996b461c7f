// What a configuration owes each of its members, judged on the whole histories at the end of the
// run (EVS 1994 §3): a safe message delivered in it reaches every member that moves on without
// crashing, and every member a transitional configuration lists that installs the new ring does
// so through that configuration.
#include <fmt/format.h>

#include <map>
#include <utility>

#include "src/sim/history_checker.hpp"

namespace rtotem::sim {

// EVS safe delivery: when a node delivers safe message m in configuration C, every member of C
// holds m, so each one that installed C and did not crash delivers m in C, or in the transitional
// configuration that follows C at it (which may differ from the deliverer's: a partition), and
// one that delivers m in a transitional configuration T is matched by every member of T. The
// check on the ring (SimCluster::on_deliver) sees regular deliveries while their ring runs; this
// one sees Recovery's and the transitional configuration's too, and members that went elsewhere.
// A message has one ring, and a node delivers that ring's messages only in its regular
// configuration and the transitional one after it, so "delivered at all" means "delivered there".
void HistoryChecker::finish_safe_delivery() {
  // Per configuration, the members that left it for good without crashing, and when.
  std::vector<std::vector<std::pair<std::size_t, Time>>> moved_on(configs_.size());
  // Each safe message per configuration it was delivered in: the first node seen to, and when.
  std::map<std::pair<std::uint32_t, MessageId>, std::pair<NodeId, Time>> delivered_in;
  for (std::size_t at = 0; at < nodes_.size(); ++at) {
    const std::vector<Installed>& installed = node_states_[at].installed;
    for (std::size_t position = 0; position < installed.size(); ++position) {
      const std::uint32_t config = installed[position].config;
      // The last configuration m may still come in: the transitional one after a regular one.
      const std::size_t last = position + (configs_[config].transitional ? 0 : 1);
      bool crashed = false;
      for (std::size_t i = position; i <= last && i < installed.size(); ++i) crashed |= installed[i].crashed;
      if (!crashed && last + 1 < installed.size()) moved_on[config].emplace_back(at, installed[last + 1].time_us);
      for (const Record& record : deliveries_in(at, position))
        if (find(record.id)->delivery == Delivery::kSafe)
          delivered_in.try_emplace({config, record.id}, nodes_[at], record.time_us);
    }
  }
  for (const auto& [key, first] : delivered_in) {
    const auto& [config, id] = key;
    const std::uint64_t mask = find(id)->delivered_mask;
    for (const auto& [at, left_us] : moved_on[config]) {
      if ((mask >> at) & 1) continue;
      report(Property::kSafeDelivery, std::max(left_us, first.second), {nodes_[at], first.first}, id,
             fmt::format("node {} delivered it as safe in {} at t={} us; node {} installed that configuration and "
                         "left it at t={} us without delivering it there{}",
                         first.first, config_text(config), first.second, nodes_[at], left_us,
                         configs_[config].transitional ? "" : " or in the transitional configuration after it"));
    }
  }
}

// EVS: a transitional configuration lists the members that go together from the ring it closes to
// the new one; each that installs the new ring does so through that same transitional
// configuration. A listed member may not install the new ring at all: it was last to learn that
// Recovery ended, and was cut off (or crashed) before it could. No protocol can rule that out
// (someone always learns last), so it is not judged here; what it delivered is, by the safe
// delivery check, and the others see it leave at their next configuration.
void HistoryChecker::finish_transitional_members() {
  for (std::uint32_t config = 0; config < configs_.size(); ++config) {
    const Config& transitional = configs_[config];
    if (!transitional.transitional) continue;
    const auto regular = config_indexes_.find(ConfigKey{false, kNoRing, transport::kNoNode, transitional.ring});
    if (regular == config_indexes_.end()) continue;
    for (NodeId member : transitional.members) {
      const std::size_t at = index_of(member);
      const std::optional<std::size_t> position = position_of(at, regular->second);
      if (!position) continue;
      const std::vector<Installed>& installed = node_states_[at].installed;
      if (*position > 0 && installed[*position - 1].config == config) continue;
      report(Property::kConfiguration, installed[*position].time_us, {member, transitional.first_node}, std::nullopt,
             *position == 0
                 ? fmt::format("{} (installed by node {}) lists node {}, which installed {} with no transitional "
                               "configuration before it",
                               config_text(config), transitional.first_node, member, config_text(regular->second))
                 : fmt::format("{} (installed by node {}) lists node {}, which came into {} through {} instead",
                               config_text(config), transitional.first_node, member, config_text(regular->second),
                               config_text(installed[*position - 1].config)));
    }
  }
}

// Where node `at` installed `config`, if it did (once at most: a ring left is never installed again).
std::optional<std::size_t> HistoryChecker::position_of(std::size_t at, std::uint32_t config) const {
  const std::vector<Installed>& installed = node_states_[at].installed;
  for (std::size_t position = 0; position < installed.size(); ++position)
    if (installed[position].config == config) return position;
  return std::nullopt;
}

}  // namespace rtotem::sim
