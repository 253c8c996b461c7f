// The nodelist: one node section per cluster member, each with a unique id and a unique address
// on each link,
// resolved now so that a typo in a host name stops the daemon at start, naming the node's line.
#include <algorithm>
#include <limits>
#include <optional>

#include "src/daemon/config/config_sections.hpp"

namespace rtotem::config {
namespace {

constexpr std::uint32_t kNodeIdMax = std::numeric_limits<std::int32_t>::max();  // corosync's 2^31 - 1

// ring0_addr .. ring7_addr: the link's number, or none.
std::optional<transport::LinkId> ring_addr_link(std::string_view key) {
  if (key.size() != 10 || !key.starts_with("ring") || !key.ends_with("_addr") || key[4] < '0' ||
      key[4] >= '0' + static_cast<int>(transport::kLinksMax))
    return std::nullopt;
  return static_cast<transport::LinkId>(key[4] - '0');
}

Result<bool> read_node_key(const Value& value, NodeEntry& node) {
  const std::string_view key = value.key();
  if (key == "nodeid") return known(value.read(node.nodeid, 1, kNodeIdMax, ""));
  if (key == "name") return known(value.read(node.name));
  if (const auto link = ring_addr_link(key)) return known(value.read(node.ring_addrs[*link]));
  if (key == "quorum_votes") return known(value.read(node.quorum_votes, 0, 1'000'000, ""));
  return false;
}

// `index`: its place among the file's node sections, which names its kept keys until
// parse_config numbers them in nodeid order.
Result<NodeEntry> read_node(ParseContext& context, const ConfigSection& section, std::size_t index) {
  NodeEntry node;
  node.line = section.line;
  auto read_key = [&](const Value& value) { return read_node_key(value, node); };
  const std::string stored = fmt::format("nodelist.node.{}", index);
  if (auto ok = read_entries(context, section, "nodelist.node", {}, read_key, stored); !ok) return ok.error();
  keep_sections(context, section, stored);
  // Corosync derives a missing nodeid from an IPv4 ring0_addr; an explicit id cannot change under
  // a renumbered network.
  if (node.nodeid == membership::kNoNode) return context.fail(section.line, "nodelist.node: nodeid is required");
  if (node.ring0_addr().empty())
    return context.fail(section.line, "nodelist.node (nodeid {}): ring0_addr is required", node.nodeid);
  return node;
}

// Every pair of nodes differs in id and name, and on each link in address; on a link all
// addresses share a family, as one socket reaches them all. `nodes` is in file order.
Result<void> check_distinct(const ParseContext& context, const std::vector<NodeEntry>& nodes,
                            std::span<const LinkConfig> links) {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (nodes[i].nodeid == nodes[j].nodeid)
        return context.fail(nodes[i].line, "nodelist.node: nodeid {} is also the node on line {}", nodes[i].nodeid,
                            nodes[j].line);
      if (!nodes[i].name.empty() && nodes[i].name == nodes[j].name)
        return context.fail(nodes[i].line, "nodelist.node (nodeid {}): name '{}' is also node {}'s (line {})",
                            nodes[i].nodeid, nodes[i].name, nodes[j].nodeid, nodes[j].line);
    }
  }
  for (const LinkConfig& each : links) {
    const transport::LinkId link = each.number;
    std::vector<transport::InetAddress> addresses;
    for (const NodeEntry& node : nodes) {
      auto address = resolve_ring_addr(context.origin(), node, link, 0);
      if (!address) return address.error();
      for (std::size_t i = 0; i < addresses.size(); ++i) {
        const NodeEntry& other = nodes[i];
        if (address->same_host(addresses[i]))
          return context.fail(node.line, "nodelist.node (nodeid {}): ring{}_addr {} is also node {}'s (line {})",
                              node.nodeid, link, node.ring_addrs[link], other.nodeid, other.line);
        if (address->family() != addresses[i].family())
          return context.fail(node.line,
                              "nodelist.node (nodeid {}): ring{}_addr {} is not of the address family of "
                              "node {} (line {}): on a link every node must be IPv4, or every node IPv6",
                              node.nodeid, link, node.ring_addrs[link], other.nodeid, other.line);
      }
      addresses.push_back(*address);
    }
  }
  return {};
}

// The links are those with an interface or an address: every node has an address on each, and a
// link with an address but no interface gets one of defaults (as corosync's nodelist does).
Result<void> resolve_links(const ParseContext& context, const std::vector<NodeEntry>& nodes, DaemonConfig& config) {
  for (std::size_t n = 0; n < transport::kLinksMax; ++n) {
    const auto number = static_cast<transport::LinkId>(n);
    const auto has = [&](const NodeEntry& node) { return !node.ring_addrs[n].empty(); };
    const auto with = std::ranges::find_if(nodes, has);
    const auto without = std::ranges::find_if_not(nodes, has);
    const auto link = std::ranges::find(config.links, number, &LinkConfig::number);
    if (with == nodes.end()) {
      if (link != config.links.end() && link->line != 0)
        return context.fail(link->line, "totem.interface: link {}: no node has a ring{}_addr", n, n);
      continue;
    }
    if (without != nodes.end())
      return context.fail(without->line,
                          "nodelist.node (nodeid {}): no ring{}_addr, which node {} has (line {}): "
                          "every node needs an address on every link",
                          without->nodeid, n, with->nodeid, with->line);
    if (link == config.links.end()) {
      LinkConfig added;
      added.number = number;
      added.transport = config.totem_transport;
      added.mcastport = default_link_port(number);
      config.links.push_back(std::move(added));
    }
  }
  std::ranges::sort(config.links, {}, &LinkConfig::number);
  return {};
}

}  // namespace

Result<void> read_nodelist(ParseContext& context, const ConfigSection& nodelist, DaemonConfig& config) {
  for (const ConfigEntry& entry : nodelist.entries) context.keep(fmt::format("nodelist.{}", entry.key), entry, true);
  std::vector<NodeEntry> nodes;
  for (const ConfigSection& section : nodelist.sections) {
    if (section.name != "node") {
      context.keep_section(fmt::format("nodelist.{}", section.name), section, true);
      continue;
    }
    if (nodes.size() == membership::kMembersMax)
      return context.fail(section.line, "nodelist: more than {} nodes, the most one ring holds",
                          membership::kMembersMax);
    auto node = read_node(context, section, nodes.size());
    if (!node) return node.error();
    nodes.push_back(std::move(*node));
  }
  if (nodes.empty()) return context.fail(nodelist.line, "nodelist: no node (at least one is required)");
  if (auto ok = resolve_links(context, nodes, config); !ok) return ok;
  if (auto ok = check_distinct(context, nodes, config.links); !ok) return ok;
  std::sort(nodes.begin(), nodes.end(), [](const NodeEntry& a, const NodeEntry& b) { return a.nodeid < b.nodeid; });
  config.nodes = std::move(nodes);
  return {};
}

}  // namespace rtotem::config
