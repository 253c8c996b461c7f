#include "src/services/control/reload_plan.hpp"

#include <fmt/format.h>

#include <map>
#include <string_view>

namespace rtotem::control {
namespace {

using Keys = std::map<std::string, ipc::KeyValue, std::less<>>;

// totem's keys that time the protocol: the node takes new values while it runs.
constexpr std::string_view kTimingKeys[] = {
    "token",
    "token_coefficient",
    "token_retransmits_before_loss_const",
    "token_retransmit",
    "hold",
    "join",
    "send_join",
    "consensus",
    "merge",
    "fail_recv_const",
    "fail_recv_ms",
};

// totem.KEY (the file's) or runtime.config.totem.KEY (in force), KEY a timing key.
bool timing_key(std::string_view key) {
  for (std::string_view prefix : {"runtime.config.totem.", "totem."}) {
    if (!key.starts_with(prefix)) continue;
    const std::string_view rest = key.substr(prefix.size());
    for (std::string_view t : kTimingKeys)
      if (rest == t) return true;
  }
  return false;
}

// The nodelist.node.N prefix of the entry whose nodeid is `node`, if any.
std::optional<std::string> node_prefix(const Keys& keys, membership::NodeId node) {
  for (const auto& [key, value] : keys)
    if (key.starts_with("nodelist.node.") && key.ends_with(".nodeid") && value.bits == node)
      return key.substr(0, key.size() - std::string_view("nodeid").size());
  return std::nullopt;
}

}  // namespace

ReloadPlan plan_reload(const KeyList& running_list, const KeyList& file_list, membership::NodeId self,
                       const std::set<std::string, std::less<>>& kept, bool cluster_wide) {
  const Keys running(running_list.begin(), running_list.end());
  const Keys file(file_list.begin(), file_list.end());
  ReloadPlan plan;
  auto differs = [&](const std::string& key) {
    const auto a = running.find(key);
    const auto b = file.find(key);
    return (a == running.end()) != (b == file.end()) || (a != running.end() && !(a->second == b->second));
  };
  std::map<std::string, bool> keys;
  for (const auto& [key, value] : running) keys[key] = true;
  for (const auto& [key, value] : file) keys[key] = true;
  const std::optional<std::string> own_before = node_prefix(running, self);
  const std::optional<std::string> own_after = node_prefix(file, self);
  for (const auto& [key, unused] : keys) {
    if (!differs(key)) continue;
    plan.changed.push_back(key);
    const auto now = file.find(key);
    if (kept.contains(key)) {
      // Used by nothing in rtotem: the store holds the file's value.
    } else if (key.starts_with("logging.")) {
      plan.logging = true;
    } else if (timing_key(key) || key == "totem.keyfile") {  // the key file's key: the node stack compares it
      if (cluster_wide)
        plan.timing = true;
      else
        plan.cluster_only.push_back(key);
    } else if (key.starts_with("uidgid.config.")) {
      plan.access = true;
    } else if (key == "quorum.expected_votes" && now != file.end()) {
      plan.expected_votes = static_cast<std::uint32_t>(now->second.bits);
    } else if (key.ends_with(".quorum_votes") && own_before && own_before == own_after &&
               key == *own_after + "quorum_votes" && now != file.end()) {
      plan.own_votes = static_cast<std::uint32_t>(now->second.bits);
    } else if (key.starts_with("nodelist.") && key.ends_with(".quorum_votes") && now != file.end() &&
               running.contains(key)) {
      // Another node's votes: that node applies them when it reloads its own file.
    } else {
      plan.refused.push_back(key);
    }
  }
  return plan;
}

std::string cluster_part(const KeyList& file) {
  const Keys keys(file.begin(), file.end());
  std::string out;
  for (const auto& [key, value] : keys)
    if (key.starts_with("nodelist.") || (key.starts_with("runtime.config.totem.") && timing_key(key)))
      out += fmt::format("{}={}\n", key, ipc::value_text(value));
  return out;
}

}  // namespace rtotem::control
