// rtotemd's configuration: a corosync.conf-style file read into typed values, checked key by key
// with the file and line of every refusal, and turned into what the daemon opens.
//
// A corosync.conf loads as it is: a Corosync key rtotem does not implement (knet, system...) is
// warned about, and every key rtotem does not use, known or not, is kept in the key store as
// corosync keeps every key in cmap. Only what corosync itself refuses (a bad value, a node without
// ring0_addr) is an error. conf/rtotem.conf documents every key. Plain values: no function here
// keeps state or is tied to a thread.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "membership/packets.hpp"
#include "membership/totem_config.hpp"
#include "src/common/key_file.hpp"
#include "src/services/quorum/quorum_config.hpp"
#include "src/ipc/ipc_protocol.hpp"
#include "transport/links/link_monitor.hpp"
#include "transport/links/link_set.hpp"
#include "base/result.hpp"
#include "transport/rdma/rdma_config.hpp"
#include "transport/udp/inet_address.hpp"
#include "transport/udp/udp_config.hpp"

namespace rtotem::config {

enum class TransportKind : std::uint8_t {
  kUdp,   // IP multicast
  kUdpu,  // unicast to every node
  kRdma,
};

// A key of the file that rtotem does not use, under its cmap name ("totem.cluster_uuid",
// "nodelist.node.2.foo"; a node's index is its place in nodeid order, as config_keys numbers nodes).
struct StoredKey {
  std::string key;
  std::string value;
  int line = 0;

  bool operator==(const StoredKey&) const = default;
};

struct NodeEntry {
  membership::NodeId nodeid = membership::kNoNode;
  std::string name;  // empty if the file gives none
  // ring0_addr .. ring7_addr as written, an IPv4/IPv6 literal or a host name; empty: no such link.
  std::array<std::string, transport::kLinksMax> ring_addrs;
  std::uint32_t quorum_votes = 1;
  int line = 0;  // of the node's "node {"

  const std::string& ring0_addr() const noexcept { return ring_addrs[0]; }
};

// How packets use the links that are up: corosync.conf's totem.link_mode.
using transport::LinkMode;

// A link's UDP port unless its interface gives one: apart from the other links', as corosync's.
constexpr std::uint16_t default_link_port(transport::LinkId number) noexcept {
  return static_cast<std::uint16_t>(5405 + number);
}

// One link: a totem.interface section (or none: every value its default) and every node's
// ringN_addr for it. Every node has an address on every link.
struct LinkConfig {
  transport::LinkId number = 0;
  // Link 0: totem.transport. Another: the interface's own `transport`, else totem.transport.
  TransportKind transport = TransportKind::kUdpu;
  std::string bindnetaddr;  // optional
  std::string mcastaddr = "239.192.0.1";
  std::uint16_t mcastport = default_link_port(0);
  int ttl = 1;
  std::uint8_t priority = 1;  // passive mode: the up link of highest priority; ties: the lowest number
  // knet_ping_interval / knet_ping_timeout in ms; 0: derived from the token, as corosync does.
  std::uint32_t ping_interval_ms = 0;
  std::uint32_t ping_timeout_ms = 0;
  std::uint32_t pong_count = 2;
  std::uint32_t ping_precision = 2048;
  int line = 0;  // of its totem.interface; 0: it has none

  // The ping timing in force with a token of `token_ms` (the resolved one): corosync's, timeout
  // token / pong_count and interval half that, where the file gives none.
  transport::LinkTiming timing(std::uint32_t token_ms) const noexcept;
};

struct LoggingConfig {
  bool to_stderr = true;
  bool to_syslog = false;
  bool to_logfile = false;
  std::string logfile;  // required by to_logfile
  std::string syslog_facility = "daemon";
  bool debug = false;
  bool timestamp = true;
  bool blackbox = true;  // libqb's flight recorder, as corosync's logging.blackbox
};

// Who may connect besides root and the daemon's own user (sorted, unique). Checked against the
// client's effective uid and gid, as corosync does.
struct IpcAccess {
  std::vector<std::uint32_t> uids;
  std::vector<std::uint32_t> gids;
};

// A named constant, so the config reader can check it at compile time without building an
// IpcConfig (its std::string is not constexpr under clang 14 with libstdc++ 12, the fuzz build's).
inline constexpr std::uint32_t kClientQueueBytesDefault = 64u << 20;

struct IpcConfig {
  std::string name = ipc::kDefaultName;  // libqb IPC service name; clients connect to it
  std::uint32_t client_queue_bytes =
      kClientQueueBytesDefault;  // events queued for one slow client before it is disconnected
  // Memory the event queues of all clients may take together; 0: the default, total_queue_bytes().
  std::uint32_t total_queue_bytes = 0;
  std::uint32_t max_clients = 256;

  // The budget of all queues: as set, else 256 MiB or twice client_queue_bytes if that is more
  // (a queue's storage grows by doubling: one client at its own limit may hold twice its bytes).
  std::size_t queue_budget() const noexcept {
    if (total_queue_bytes != 0) return total_queue_bytes;
    return std::max<std::size_t>(std::size_t{256} << 20, std::size_t{2} * client_queue_bytes);
  }
  IpcAccess allow;  // ipc.allow_uid / allow_gid, uidgid sections, uidgid.d files
};

inline constexpr std::uint32_t kTokenCoefficientDefaultMs = 650;  // corosync's

struct DaemonConfig {
  std::string path;          // the file it came from
  std::string cluster_name;  // required
  // totem.transport: every link's, but where its interface names its own.
  TransportKind totem_transport = TransportKind::kUdpu;
  // totem.fallback: with transport rdma and no usable RDMA device, run on UDP multicast (true) or
  // refuse to start (false).
  bool rdma_fallback = true;
  membership::TotemConfig totem;  // as the file gives it, NOT resolved(): see totem_in_force()
  // totem.token_coefficient: ms the token grows by for each node of the nodelist beyond two.
  std::uint32_t token_coefficient_ms = kTokenCoefficientDefaultMs;
  bool token_coefficient_given = false;
  std::uint32_t netmtu = 1400;  // bytes of payload per packet (BackendParams::mtu)
  // Link 0 always; sorted by number, at most kLinksMax. Link 0's transport is totem.transport
  // (rtotemd sets it to the one it runs when RDMA falls back).
  std::vector<LinkConfig> links = {LinkConfig{}};
  LinkMode link_mode = LinkMode::kPassive;
  // totem.crypto: seal every packet with the cluster key in `keyfile` (off: packets travel in
  // the clear, unauthenticated). Corosync's crypto_cipher/crypto_hash set it too.
  bool crypto = false;
  std::string keyfile = kDefaultKeyFile;
  std::string crypto_key;  // the key that decided crypto ("totem.crypto", "totem.crypto_cipher"...); empty: default
  int crypto_line = 0;     // its line
  int keyfile_line = 0;    // of totem.keyfile; 0: the default path
  std::vector<NodeEntry> nodes;  // sorted by nodeid
  // quorum { provider: corosync_votequorum ... }, checked and resolved; not set: no quorum.
  std::optional<quorum::QuorumConfig> quorum;
  int quorum_line = 0;
  LoggingConfig logging;
  IpcConfig ipc;
  std::vector<StoredKey> stored_keys;  // sorted by key, each once (the file's last value)
  std::vector<std::string> warnings;   // "file:line: key ...: ignored (corosync key rtotem does not support)"

  const LinkConfig& link0() const noexcept { return links.front(); }
  LinkConfig& link0() noexcept { return links.front(); }
  // The totem timing the node runs with, as corosync computes it: with more than two nodes in the
  // nodelist, token is the file's token + (nodes - 2) x token_coefficient, and what derives from
  // the token (retransmit, hold, consensus...) derives from that. Still to be resolved().
  membership::TotemConfig totem_in_force() const noexcept;
};

// Parses and checks `text`; `origin` (a file name) opens every message. Resolves each ring0_addr.
Result<DaemonConfig> parse_config(std::string_view text, std::string_view origin);
// Reads the file at `path` (at most kConfigBytesMax bytes) and parses it, then every file of the
// uidgid.d directory next to it (corosync's: uidgid sections only); errors name the file. Without
// totem.keyfile the key file is kDefaultKeyFile where it exists, else /etc/corosync/authkey where
// that exists.
Result<DaemonConfig> load_config(const std::string& path);

// The node entry this daemon is: `nodeid` if given (it must be in the nodelist), else the one entry
// whose ring0_addr resolves to one of `local_addresses`. None or several: an error that says so
// and suggests --nodeid.
Result<NodeEntry> local_node(const DaemonConfig& config, std::optional<membership::NodeId> nodeid,
                             std::span<const transport::InetAddress> local_addresses);
// Every IPv4/IPv6 address configured on this host's interfaces (getifaddrs), ports 0.
Result<std::vector<transport::InetAddress>> host_addresses();

// What the UDP backend of node `self` opens for `link`, validated. udpu: unicast, bound to self's
// ringN_addr and the link's port, a peer per node. udp: the same, plus the link's group and port.
Result<transport::UdpConfig> udp_config_for(const DaemonConfig& config, const NodeEntry& self,
                                            transport::LinkId link = 0);

// What the RDMA backend of node `self` opens for `link` (transport rdma), validated: bound to self's
// ringN_addr, the link's group mcastaddr (IPv4: RoCE v2 GIDs carry IPv4), a peer per node; netmtu
// is the upper bound the backend lowers to its port's MTU. Logging is the caller's to set.
Result<transport::RdmaConfig> rdma_config_for(const DaemonConfig& config, const NodeEntry& self,
                                              transport::LinkId link = 0);

std::string_view describe(TransportKind kind) noexcept;

// Whether rtotemd can run the links with the token `token_ms` (the resolved one): each link's ping
// timing works.
Result<void> check_links(const DaemonConfig& config, std::uint32_t token_ms);

// The cluster key when totem.crypto is on (read_key_file's checks: the file exists, is exactly
// the key size, and group and others cannot access it); null when it is off. An error names the
// config file, the line and key that asked for the key, and what is wrong with the key file.
Result<std::shared_ptr<const transport::ClusterKey>> load_cluster_key(const DaemonConfig& config);
// Whether a kept key (StoredKey) is one rtotemd reads too: quorum.device's model, votes and
// timeouts, kept for corosync-qdevice and resolved into the QuorumConfig. A reload that changes one
// needs a restart; the other kept keys only change what the key store holds.
bool kept_key_in_use(std::string_view key) noexcept;

// The one warning line for a config with crypto off; empty when it is on.
std::string crypto_off_warning(const DaemonConfig& config);

// Which transport a node runs: the configured one, except that rdma on a node whose RDMA probe
// failed (`rdma_unusable` says why; empty when a device is usable) runs on udp with `warning` set,
// or is refused when totem.fallback is no. The caller sets transport to `kind` before
// udp_config_for. The same choice is made again, with the reason, when the RDMA backend fails to
// open on a usable device (a failed multicast join, say).
struct TransportChoice {
  TransportKind kind = TransportKind::kUdpu;
  std::string warning;  // one line for the log; empty when the configured transport runs
};
Result<TransportChoice> choose_transport(const DaemonConfig& config, std::string_view rdma_unusable);

}  // namespace rtotem::config
