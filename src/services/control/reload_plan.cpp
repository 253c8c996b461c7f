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

// The nodelist's entries by node id: each entry's fields ("ring0_addr" -> value) and its key
// prefix ("nodelist.node.N."), N being its place in nodeid order.
struct NodeEntryKeys {
  std::string prefix;
  std::map<std::string, ipc::KeyValue, std::less<>> fields;
};
std::map<membership::NodeId, NodeEntryKeys> nodes_of(const Keys& keys) {
  std::map<std::string, NodeEntryKeys, std::less<>> by_prefix;
  for (const auto& [key, value] : keys) {
    if (!key.starts_with("nodelist.node.")) continue;
    const std::size_t dot = key.find('.', std::string_view("nodelist.node.").size());
    if (dot == std::string::npos) continue;
    NodeEntryKeys& entry = by_prefix[key.substr(0, dot + 1)];
    entry.prefix = key.substr(0, dot + 1);
    entry.fields.emplace(key.substr(dot + 1), value);
  }
  std::map<membership::NodeId, NodeEntryKeys> nodes;
  for (auto& [prefix, entry] : by_prefix)
    if (const auto id = entry.fields.find("nodeid"); id != entry.fields.end())
      nodes.emplace(static_cast<membership::NodeId>(id->second.bits), std::move(entry));
  return nodes;
}

}  // namespace

// The nodelist, node by node (an entry's place, and so its keys' N, moves as others come and go):
// an entry's votes change at run time (this node's applied here, another's by that node), a node
// comes or goes in a reload of every node, and any other change of an entry needs a restart.
void plan_nodelist(const std::map<membership::NodeId, NodeEntryKeys>& running,
                   const std::map<membership::NodeId, NodeEntryKeys>& file, membership::NodeId self, bool cluster_wide,
                   ReloadPlan& plan) {
  for (const auto& [node, entry] : file) {
    const auto before = running.find(node);
    if (before == running.end()) {
      const std::string what = fmt::format("nodelist: node {} added", node);
      plan.changed.push_back(what);
      if (cluster_wide)
        plan.nodes_added.push_back(node);
      else
        plan.cluster_only.push_back(what);
      continue;
    }
    std::set<std::string, std::less<>> fields;
    for (const auto* each : {&entry.fields, &before->second.fields})
      for (const auto& [field, value] : *each) fields.insert(field);
    for (const std::string& field : fields) {
      const auto now = entry.fields.find(field);
      const auto was = before->second.fields.find(field);
      if (now != entry.fields.end() && was != before->second.fields.end() && now->second == was->second) continue;
      const std::string key = (now != entry.fields.end() ? entry.prefix : before->second.prefix) + field;
      plan.changed.push_back(key);
      if (field == "quorum_votes" && now != entry.fields.end() && was != before->second.fields.end()) {
        if (node == self) plan.own_votes = static_cast<std::uint32_t>(now->second.bits);
      } else {
        plan.refused.push_back(key);
      }
    }
  }
  for (const auto& [node, entry] : running) {
    if (file.contains(node)) continue;
    const std::string what = fmt::format("nodelist: node {} removed", node);
    plan.changed.push_back(what);
    if (node == self)
      plan.refused.push_back(fmt::format("{} (this node: stop it instead)", what));
    else if (cluster_wide)
      plan.nodes_removed.push_back(node);
    else
      plan.cluster_only.push_back(what);
  }
}

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
  for (const auto& [key, unused] : keys) {
    if (key.starts_with("nodelist.node.") || !differs(key)) continue;  // the nodelist: by node, below
    plan.changed.push_back(key);
    const auto now = file.find(key);
    if (kept.contains(key)) {
      // Used by nothing in rtotem: the store holds the file's value.
    } else if (key.starts_with("logging.")) {
      plan.logging = true;
    } else if (timing_key(key) || key == "totem.keyfile") {  // the key file's key: the node stack compares it
      if (!cluster_wide)
        plan.cluster_only.push_back(key);
      else if (key != "totem.keyfile")
        plan.timing = true;
    } else if (key.starts_with("uidgid.config.")) {
      plan.access = true;
    } else if (key == "quorum.expected_votes" && now != file.end()) {
      plan.expected_votes = static_cast<std::uint32_t>(now->second.bits);
    } else {
      plan.refused.push_back(key);
    }
  }
  plan_nodelist(nodes_of(running), nodes_of(file), self, cluster_wide, plan);
  std::ranges::sort(plan.changed);
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
