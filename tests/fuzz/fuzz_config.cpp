// The config file as rtotemd reads it at start-up (rtotemd.cpp prepare()): parse_config on any
// text, corosync.conf or rtotem's own, then for an accepted one what start-up derives from it: the
// node, the UDP configuration, the resolved totem values and their check against the backend.
// Checked, beyond "no crash, no bad read": every refusal and warning names the file (so a user
// finds the line); an accepted config has a cluster name and 1..kMembersMax nodes with unique ids
// in order, and access lists sorted and unique.
//
// Name lookups stay off the network: this binary's getaddrinfo takes numeric addresses only, so
// a run is repeatable and fast, and a host name the fuzzer makes up fails as an unknown one.
#include <dlfcn.h>
#include <netdb.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "src/daemon/config/daemon_config.hpp"
#include "base/assert.hpp"

extern "C" int getaddrinfo(const char* name, const char* service, const addrinfo* hints, addrinfo** found) {
  using Real = int (*)(const char*, const char*, const addrinfo*, addrinfo**);
  static const auto real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "getaddrinfo"));
  RTOTEM_ASSERT(real != nullptr);
  addrinfo numeric = hints != nullptr ? *hints : addrinfo{};
  numeric.ai_flags |= AI_NUMERICHOST;
  return real(name, service, &numeric, found);
}

namespace rtotem::config {
namespace {

constexpr std::string_view kOrigin = "fuzz.conf";

bool names_file(std::string_view message) { return message.starts_with(kOrigin); }

bool sorted_unique(const std::vector<std::uint32_t>& ids) {
  return std::ranges::adjacent_find(ids, std::greater_equal<>{}) == ids.end();
}

void check_accepted(const DaemonConfig& config) {
  RTOTEM_ASSERT(config.path == kOrigin);
  RTOTEM_ASSERT(!config.cluster_name.empty());
  RTOTEM_ASSERT(!config.nodes.empty() && config.nodes.size() <= membership::kMembersMax);
  membership::NodeId previous = membership::kNoNode;
  for (const NodeEntry& node : config.nodes) {
    RTOTEM_ASSERT(node.nodeid > previous);
    RTOTEM_ASSERT(!node.ring0_addr().empty());
    previous = node.nodeid;
  }
  // Link 0 first, each link once, in order, and an address on it for every node.
  RTOTEM_ASSERT(!config.links.empty() && config.links.size() <= transport::kLinksMax);
  RTOTEM_ASSERT(config.links.front().number == 0);
  for (std::size_t i = 0; i < config.links.size(); ++i) {
    RTOTEM_ASSERT(i == 0 || config.links[i - 1].number < config.links[i].number);
    for (const NodeEntry& node : config.nodes) RTOTEM_ASSERT(!node.ring_addrs[config.links[i].number].empty());
  }
  for (const std::string& warning : config.warnings) RTOTEM_ASSERT(names_file(warning));
  RTOTEM_ASSERT(sorted_unique(config.ipc.allow.uids));
  RTOTEM_ASSERT(sorted_unique(config.ipc.allow.gids));
}

// What start-up derives for the first node, as rtotemd -t --nodeid does.
void check_start_up(const DaemonConfig& config) {
  auto self = local_node(config, config.nodes.front().nodeid, {});
  RTOTEM_ASSERT(self && self->nodeid == config.nodes.front().nodeid);
  auto udp = udp_config_for(config, *self);
  if (!udp) {
    RTOTEM_ASSERT(names_file(udp.error().message()));
    return;
  }
  RTOTEM_ASSERT(udp->peers.size() == config.nodes.size());
  auto totem = config.totem_in_force().resolved();
  if (totem) (void)totem->check(udp->params);
}

}  // namespace
}  // namespace rtotem::config

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rtotem::config;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = parse_config(text, kOrigin);
  if (!config) {
    RTOTEM_ASSERT(names_file(config.error().message()));
    return 0;
  }
  check_accepted(*config);
  check_start_up(*config);
  return 0;
}
