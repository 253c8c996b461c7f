// The nodelist: one node section per cluster member, each with a unique id and a unique address,
// resolved now so that a typo in a host name stops the daemon at start, naming the node's line.
#include <algorithm>
#include <limits>

#include "src/daemon/config/config_sections.hpp"

namespace rtotem::config {
namespace {

constexpr std::uint32_t kNodeIdMax = std::numeric_limits<std::int32_t>::max();  // corosync's 2^31 - 1
constexpr std::string_view kNodeCorosyncKeys[] = {
    "ring1_addr", "ring2_addr", "ring3_addr", "ring4_addr", "ring5_addr", "ring6_addr", "ring7_addr",
};

Result<bool> read_node_key(const Value& value, NodeEntry& node) {
  const std::string_view key = value.key();
  if (key == "nodeid") return known(value.read(node.nodeid, 1, kNodeIdMax, ""));
  if (key == "name") return known(value.read(node.name));
  if (key == "ring0_addr") return known(value.read(node.ring0_addr));
  if (key == "quorum_votes") return known(value.read(node.quorum_votes, 0, 1'000'000, ""));
  return false;
}

Result<NodeEntry> read_node(ParseContext& context, const ConfigSection& section) {
  NodeEntry node;
  node.line = section.line;
  auto read_key = [&](const Value& value) { return read_node_key(value, node); };
  if (auto ok = read_entries(context, section, "nodelist.node", kNodeCorosyncKeys, read_key); !ok) return ok.error();
  if (auto ok = refuse_sections(context, section, "nodelist.node"); !ok) return ok.error();
  // Corosync derives a missing nodeid from an IPv4 ring0_addr; an explicit id cannot change under
  // a renumbered network.
  if (node.nodeid == membership::kNoNode) return context.fail(section.line, "nodelist.node: nodeid is required");
  if (node.ring0_addr.empty())
    return context.fail(section.line, "nodelist.node (nodeid {}): ring0_addr is required", node.nodeid);
  return node;
}

// Every pair of nodes differs in id, name and address; all addresses share a family, as one
// socket reaches them all. `nodes` is in file order.
Result<void> check_distinct(const ParseContext& context, const std::vector<NodeEntry>& nodes) {
  std::vector<transport::InetAddress> addresses;
  for (const NodeEntry& node : nodes) {
    auto address = resolve_ring0(context.origin(), node, 0);
    if (!address) return address.error();
    for (std::size_t i = 0; i < addresses.size(); ++i) {
      const NodeEntry& other = nodes[i];
      if (node.nodeid == other.nodeid)
        return context.fail(node.line, "nodelist.node: nodeid {} is also the node on line {}", node.nodeid, other.line);
      if (!node.name.empty() && node.name == other.name)
        return context.fail(node.line, "nodelist.node (nodeid {}): name '{}' is also node {}'s (line {})", node.nodeid,
                            node.name, other.nodeid, other.line);
      if (address->same_host(addresses[i]))
        return context.fail(node.line, "nodelist.node (nodeid {}): ring0_addr {} is also node {}'s (line {})",
                            node.nodeid, node.ring0_addr, other.nodeid, other.line);
      if (address->family() != addresses[i].family())
        return context.fail(node.line, "nodelist.node (nodeid {}): ring0_addr {} is not of the address family of node "
                            "{} (line {}): every node must be IPv4, or every node IPv6",
                            node.nodeid, node.ring0_addr, other.nodeid, other.line);
    }
    addresses.push_back(*address);
  }
  return {};
}

}  // namespace

Result<void> read_nodelist(ParseContext& context, const ConfigSection& nodelist, DaemonConfig& config) {
  if (!nodelist.entries.empty())
    return context.fail(nodelist.entries.front().line, "nodelist.{}: unknown key (nodelist holds node sections)",
                        nodelist.entries.front().key);
  std::vector<NodeEntry> nodes;
  for (const ConfigSection& section : nodelist.sections) {
    if (section.name != "node") return context.fail(section.line, "unknown section 'nodelist.{}'", section.name);
    if (nodes.size() == membership::kMembersMax)
      return context.fail(section.line, "nodelist: more than {} nodes, the most one ring holds", membership::kMembersMax);
    auto node = read_node(context, section);
    if (!node) return node.error();
    nodes.push_back(std::move(*node));
  }
  if (nodes.empty()) return context.fail(nodelist.line, "nodelist: no node (at least one is required)");
  if (auto ok = check_distinct(context, nodes); !ok) return ok;
  std::sort(nodes.begin(), nodes.end(), [](const NodeEntry& a, const NodeEntry& b) { return a.nodeid < b.nodeid; });
  config.nodes = std::move(nodes);
  return {};
}

}  // namespace rtotem::config
