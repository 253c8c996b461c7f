// From the nodelist to sockets: which node this host is, its addresses, and what its UDP or RDMA
// backend opens.
#include <fmt/format.h>
#include <ifaddrs.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "src/daemon/config/config_sections.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::config {
namespace {

using transport::InetAddress;

constexpr std::string_view kChooseHint = "pass --nodeid to choose one";

std::string list_nodes(std::span<const NodeEntry* const> nodes) {
  std::string out;
  for (const NodeEntry* node : nodes)
    out += fmt::format("{}{} ({}, line {})", out.empty() ? "" : ", ", node->nodeid, node->ring0_addr(), node->line);
  return out;
}

Result<NodeEntry> node_by_id(const DaemonConfig& config, membership::NodeId nodeid) {
  const auto it = std::find_if(config.nodes.begin(), config.nodes.end(),
                               [nodeid](const NodeEntry& node) { return node.nodeid == nodeid; });
  if (it != config.nodes.end()) return *it;
  std::vector<const NodeEntry*> all;
  for (const NodeEntry& node : config.nodes) all.push_back(&node);
  return Error::make("{}: node {} is not in the nodelist: {}", config.path, nodeid, list_nodes(all));
}

// What every backend of this node starts from: who it is, in which cluster, with the configured mtu.
Result<transport::BackendParams> node_params(const DaemonConfig& config, const NodeEntry& self) {
  if (auto listed = node_by_id(config, self.nodeid); !listed) return listed.error();
  transport::BackendParams params;
  params.local_node = self.nodeid;
  params.cluster_id = transport::cluster_id_from_name(config.cluster_name);
  params.mtu = config.netmtu;
  return params;
}

}  // namespace

Result<InetAddress> resolve_ring_addr(std::string_view origin, const NodeEntry& node, transport::LinkId link,
                                      std::uint16_t port) {
  auto address = InetAddress::parse(node.ring_addrs[link], port);
  if (!address)
    return Error::make("{}:{}: node {}: ring{}_addr: {}", origin, node.line, node.nodeid, link,
                       address.error().message());
  return address;
}

Result<NodeEntry> local_node(const DaemonConfig& config, std::optional<membership::NodeId> nodeid,
                             std::span<const InetAddress> local_addresses) {
  if (nodeid) return node_by_id(config, *nodeid);
  std::vector<const NodeEntry*> all;
  std::vector<const NodeEntry*> mine;
  for (const NodeEntry& node : config.nodes) {
    auto address = resolve_ring_addr(config.path, node, 0, 0);
    if (!address) return address.error();
    all.push_back(&node);
    if (std::any_of(local_addresses.begin(), local_addresses.end(),
                    [&](const InetAddress& local) { return local.same_host(*address); }))
      mine.push_back(&node);
  }
  if (mine.size() == 1) return *mine.front();
  if (mine.empty())
    return Error::make("{}: no node's ring0_addr is an address of this host (nodes: {}); {}", config.path,
                       list_nodes(all), kChooseHint);
  return Error::make("{}: several nodes have a ring0_addr of this host ({}); {}", config.path, list_nodes(mine),
                     kChooseHint);
}

Result<std::vector<InetAddress>> host_addresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return Error::sys(errno, "getifaddrs");
  const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owner(list, &::freeifaddrs);
  std::vector<InetAddress> out;
  for (const ifaddrs* entry = list; entry; entry = entry->ifa_next) {
    const sockaddr* sa = entry->ifa_addr;
    if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) continue;
    const socklen_t length = sa->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    auto address = InetAddress::from_sockaddr(sa, length);
    if (!address) return address.error();
    out.push_back(*address);
  }
  return out;
}

Result<transport::UdpConfig> udp_config_for(const DaemonConfig& config, const NodeEntry& self,
                                            transport::LinkId number) {
  const auto it = std::ranges::find(config.links, number, &LinkConfig::number);
  if (it == config.links.end()) return Error::make("{}: no link {}", config.path, number);
  const LinkConfig& link = *it;
  if (link.transport == TransportKind::kRdma)
    return Error::make("{}: transport is {}, not udp or udpu", config.path, describe(link.transport));
  auto params = node_params(config, self);
  if (!params) return params.error();
  transport::UdpConfig udp;
  udp.params = *params;
  auto bind = resolve_ring_addr(config.path, self, link.number, link.mcastport);
  if (!bind) return bind.error();
  udp.bind = *bind;
  for (const NodeEntry& node : config.nodes) {
    auto address = resolve_ring_addr(config.path, node, link.number, link.mcastport);
    if (!address) return address.error();
    udp.peers.push_back(transport::UdpPeer{node.nodeid, *address});
  }
  udp.mode = transport::UdpMode::kUnicast;
  if (link.transport == TransportKind::kUdp) {
    auto group = InetAddress::parse(link.mcastaddr, link.mcastport);
    if (!group) return Error::make("{}: totem.interface.mcastaddr: {}", config.path, group.error().message());
    udp.mode = transport::UdpMode::kMulticast;
    udp.group = *group;
    udp.ttl = link.ttl;
  }
  if (auto ok = udp.validate(); !ok) return Error::make("{}: {}", config.path, ok.error().message());
  return udp;
}

Result<transport::RdmaConfig> rdma_config_for(const DaemonConfig& config, const NodeEntry& self,
                                              transport::LinkId number) {
  const auto it = std::ranges::find(config.links, number, &LinkConfig::number);
  if (it == config.links.end()) return Error::make("{}: no link {}", config.path, number);
  const LinkConfig& link = *it;
  if (link.transport != TransportKind::kRdma)
    return Error::make("{}: transport is {}, not rdma", config.path, describe(link.transport));
  auto params = node_params(config, self);
  if (!params) return params.error();
  transport::RdmaConfig rdma;
  rdma.params = *params;
  auto bind = resolve_ring_addr(config.path, self, link.number, 0);
  if (!bind) return bind.error();
  rdma.bind = *bind;
  for (const NodeEntry& node : config.nodes) {
    auto address = resolve_ring_addr(config.path, node, link.number, 0);
    if (!address) return address.error();
    rdma.peers.push_back(transport::RdmaPeer{node.nodeid, *address});
  }
  auto group = InetAddress::parse(link.mcastaddr, 0);
  if (!group) return Error::make("{}: totem.interface.mcastaddr: {}", config.path, group.error().message());
  rdma.group = *group;
  if (auto ok = rdma.validate(); !ok) return Error::make("{}: {}", config.path, ok.error().message());
  return rdma;
}

Result<TransportChoice> choose_transport(const DaemonConfig& config, std::string_view rdma_unusable) {
  const LinkConfig& link = config.link0();
  if (link.transport != TransportKind::kRdma || rdma_unusable.empty()) return TransportChoice{link.transport, {}};
  if (!config.rdma_fallback)
    return Error::make("{}: transport rdma: {}; not starting (totem.fallback is no)", config.path, rdma_unusable);
  // Multicast, as RDMA would have been: the same group and port, so the fallen-back nodes of a
  // cluster find each other. Nodes still on rdma cannot hear them: the warning says so.
  return TransportChoice{TransportKind::kUdp,
                         fmt::format("{}: transport rdma: {}; running on udp multicast {}:{} instead, in a ring "
                                     "only with nodes on udp: nodes on rdma do not hear this one "
                                     "(with totem.fallback: no it stops instead)",
                                     config.path, rdma_unusable, link.mcastaddr, link.mcastport)};
}

}  // namespace rtotem::config
