// Parsing and checking of rtotem-ping's command line: every refusal names the argument at fault.
#include "src/tools/ping_options.hpp"

#include <algorithm>
#include <limits>

#include "base/cli_args.hpp"
#include "src/tools/ping_wire.hpp"

namespace rtotem::tools {
namespace {

using transport::InetAddress;
using transport::NodeId;
using transport::UdpMode;
using transport::UdpPeer;

constexpr std::string_view kDefaultGroupHost = "239.192.72.1";
constexpr std::uint16_t kDefaultGroupPort = 5406;

constexpr CliValue kValue = CliValue::kAny;
constexpr CliOption kOptions[] = {{"-h"},
                                  {"--help"},
                                  {"--node", kValue},
                                  {"--peer", kValue},
                                  {"--mode", kValue},
                                  {"--group", kValue},
                                  {"--interface", kValue},
                                  {"--count", kValue},
                                  {"--size", kValue},
                                  {"--cluster", kValue},
                                  {"--timeout-s", kValue},
                                  {"--mtu", kValue}};

constexpr std::string_view kUsage =
    "usage: rtotem-ping --node ID --peer ID=HOST:PORT --peer ID=HOST:PORT... [options]\n"
    "Run the same command on every node: each multicasts pings, answers the others' with\n"
    "pongs, and prints a report. Exit 0: every ping answered by every peer; 1: not; 2: bad usage.\n"
    "  --node ID                 this node's id (1 or more); it must be one of the --peer entries\n"
    "  --peer ID=HOST:PORT       a node and where it receives; repeat for every node, this one\n"
    "                            included; IPv6 as ID=[ADDR]:PORT\n"
    "  --mode unicast|multicast|rdma  one datagram per peer, IP multicast, or RDMA UD multicast and\n"
    "                            unicast on the device holding our address (default unicast)\n"
    "  --group ADDR:PORT         multicast and rdma modes: the group (default 239.192.72.1:5406)\n"
    "  --interface IF            multicast mode: the interface (default: the one holding our address)\n"
    "  --count N                 pings to multicast (default 10000)\n"
    "  --size N                  filler bytes after the 16-byte ping header (default 256)\n"
    "  --cluster NAME            cluster name; other clusters' packets are ignored (default rtotem-ping)\n"
    "  --timeout-s S             bound on the whole run, in seconds (default 20)\n"
    "  --mtu N                   largest payload per packet, in bytes (default 1400)\n"
    "  -h, --help                this text\n";

// "HOST:PORT", "[V6ADDR]:PORT" or "[V6ADDR%IF]:PORT".
Result<InetAddress> parse_endpoint(std::string_view option, std::string_view text) {
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || text.substr(close + 1, 1) != ":")
      return Error::make("{}: '{}' is not [ADDR]:PORT", option, text);
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return Error::make("{}: '{}' has no :PORT", option, text);
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return Error::make("{}: write an IPv6 address as [ADDR]:PORT", option);
  }
  if (host.empty()) return Error::make("{}: '{}' has no address", option, text);
  auto number = parse_number<std::uint16_t>(option, port, 1, 65535);
  if (!number) return number.error();
  auto address = InetAddress::parse(host, *number);
  if (!address) return Error::make("{}: {}", option, address.error().message());
  return address;
}

Result<UdpPeer> parse_peer(std::string_view text) {
  const std::string option = fmt::format("--peer '{}'", text);
  const auto equals = text.find('=');
  if (equals == std::string_view::npos) return Error::make("{}: expected ID=HOST:PORT", option);
  auto node = parse_number<NodeId>(option, text.substr(0, equals), 1, std::numeric_limits<NodeId>::max());
  if (!node) return node.error();
  auto address = parse_endpoint(option, text.substr(equals + 1));
  if (!address) return address.error();
  return UdpPeer{*node, *address};
}

Result<void> apply_option(PingOptions& options, std::string_view name, std::string_view value) {
  auto store = [](auto& field, auto parsed) -> Result<void> {
    if (!parsed) return parsed.error();
    field = std::move(*parsed);
    return {};
  };
  if (name == "--node")
    return store(options.node, parse_number<NodeId>(name, value, 0, std::numeric_limits<NodeId>::max()));
  if (name == "--peer") {
    auto peer = parse_peer(value);
    if (!peer) return peer.error();
    options.peers.push_back(*peer);
    return {};
  }
  if (name == "--mode") {
    if (value == "unicast")
      options.mode = UdpMode::kUnicast;
    else if (value == "multicast")
      options.mode = UdpMode::kMulticast;
    else if (value == "rdma")
      options.mode = UdpMode::kMulticast, options.rdma = true;
    else
      return Error::make("--mode: '{}' is not unicast, multicast or rdma", value);
    return {};
  }
  if (name == "--group") return store(options.group, parse_endpoint(name, value));
  if (name == "--interface") return store(options.interface, Result<std::string>(std::string(value)));
  if (name == "--count") return store(options.count, parse_number<std::uint32_t>(name, value, 1, kPingCountMax));
  if (name == "--size") return store(options.size, parse_number<std::uint32_t>(name, value, 0, transport::kMtuMax));
  if (name == "--cluster") return store(options.cluster, Result<std::string>(std::string(value)));
  if (name == "--timeout-s")
    return store(options.timeout_s, parse_number<std::uint32_t>(name, value, 1, kTimeoutSecondsMax));
  if (name == "--mtu")
    return store(options.mtu, parse_number<std::uint32_t>(name, value, transport::kMtuMin, transport::kMtuMax));
  return Error::make("unknown option '{}'", name);
}

Result<void> check_peers(const PingOptions& options) {
  if (options.node == transport::kNoNode) return Error::make("--node: node id 0 is not allowed; ids start at 1");
  std::vector<NodeId> ids;
  for (const UdpPeer& peer : options.peers) ids.push_back(peer.node);
  std::sort(ids.begin(), ids.end());
  if (auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end())
    return Error::make("--peer: node {} is listed twice", *dup);
  if (!std::binary_search(ids.begin(), ids.end(), options.node))
    return Error::make("--node: node {} is not in the --peer list", options.node);
  if (ids.size() < 2) return Error::make("--peer: list at least one node besides node {}", options.node);
  const InetAddress& own = options.self().address;
  for (const UdpPeer& peer : options.peers)
    if (peer.address.family() != own.family())
      return Error::make("--peer: node {} at {} and node {} at {} differ in address family", peer.node,
                         peer.address.to_string(), options.node, own.to_string());
  return {};
}

Result<void> check_multicast(PingOptions& options) {
  if (options.mode != UdpMode::kMulticast) {
    if (options.group.length() != 0) return Error::make("--group: applies to --mode multicast only");
    if (!options.interface.empty()) return Error::make("--interface: applies to --mode multicast only");
    return {};
  }
  if (options.group.length() == 0) {
    if (options.self().address.is_v6()) return Error::make("--group: required with IPv6 peers");
    auto group = InetAddress::parse(kDefaultGroupHost, kDefaultGroupPort);
    if (!group) return group.error();
    options.group = *group;
  }
  if (!options.group.is_multicast())
    return Error::make("--group: {} is not a multicast address", options.group.to_string());
  return {};
}

Result<void> check(PingOptions& options, bool node_given) {
  if (!node_given) return Error::make("--node: required");
  if (options.peers.empty()) return Error::make("--peer: required, once per node");
  if (auto ok = check_peers(options); !ok) return ok;
  if (auto ok = check_multicast(options); !ok) return ok;
  if (options.size > options.mtu - kPingHeaderSize)
    return Error::make("--size: {} bytes do not fit; at most {} with --mtu {} (a ping header takes {})", options.size,
                       options.mtu - kPingHeaderSize, options.mtu, kPingHeaderSize);
  const std::uint64_t samples = std::uint64_t{options.count} * (options.peers.size() - 1);
  if (samples > kRttSamplesMax)
    return Error::make("--count: {} pings to {} peers exceed {} RTT samples", options.count, options.peers.size() - 1,
                       kRttSamplesMax);
  if (options.cluster.empty()) return Error::make("--cluster: the name is empty");
  if (auto ok = options.rdma ? options.rdma_config().validate() : options.udp_config().validate(); !ok)
    return Error::make("--peer: {}", ok.error().message());
  return {};
}

}  // namespace

Result<PingOptions> parse_ping_options(std::span<char* const> args) {
  PingOptions options;
  bool node_given = false;
  for (CliReader reader(args, kOptions); !reader.done();) {
    auto option = reader.next();
    if (!option) return option.error();
    const auto [name, value] = *option;
    if (name == "-h" || name == "--help") {
      options.help = true;
      return options;
    }
    if (auto ok = apply_option(options, name, value); !ok) return ok.error();
    node_given = node_given || name == "--node";
  }
  if (auto ok = check(options, node_given); !ok) return ok.error();
  return options;
}

transport::UdpConfig PingOptions::udp_config() const {
  transport::UdpConfig config;
  config.params.local_node = node;
  config.params.cluster_id = transport::cluster_id_from_name(cluster);
  config.params.mtu = mtu;
  config.mode = mode;
  config.bind = self().address;
  config.group = group;
  config.interface = interface;
  config.peers = peers;
  return config;
}

transport::RdmaConfig PingOptions::rdma_config() const {
  transport::RdmaConfig config;
  config.params.local_node = node;
  config.params.cluster_id = transport::cluster_id_from_name(cluster);
  config.params.mtu = mtu;
  config.bind = self().address;
  config.group = group;
  for (const UdpPeer& peer : peers) config.peers.push_back(transport::RdmaPeer{peer.node, peer.address});
  config.log = [](std::string_view line) { fmt::print(stderr, "rtotem-ping: {}\n", line); };
  return config;
}

const transport::UdpPeer& PingOptions::self() const {
  auto it = std::find_if(peers.begin(), peers.end(), [&](const UdpPeer& peer) { return peer.node == node; });
  RTOTEM_ASSERT(it != peers.end());
  return *it;
}

std::string_view ping_usage() noexcept { return kUsage; }

std::string_view PingOptions::mode_name() const noexcept {
  if (rdma) return "rdma";
  return mode == UdpMode::kMulticast ? "multicast" : "unicast";
}

}  // namespace rtotem::tools
