#include "src/services/control/reload_plan.hpp"

#include <map>
#include <string_view>

namespace rtotem::control {
namespace {

using Keys = std::map<std::string, ipc::KeyValue, std::less<>>;

// The nodelist.node.N prefix of the entry whose nodeid is `node`, if any.
std::optional<std::string> node_prefix(const Keys& keys, membership::NodeId node) {
  for (const auto& [key, value] : keys)
    if (key.starts_with("nodelist.node.") && key.ends_with(".nodeid") && value.bits == node)
      return key.substr(0, key.size() - std::string_view("nodeid").size());
  return std::nullopt;
}

}  // namespace

ReloadPlan plan_reload(const KeyList& running_list, const KeyList& file_list, membership::NodeId self,
                       const std::set<std::string, std::less<>>& kept) {
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

}  // namespace rtotem::control
