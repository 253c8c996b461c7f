// The section readers parse_config is made of, the totem keys' table, and the one way a node's
// ringN_addr becomes an address. Internal to rtotemd: the key store lists the totem keys from the
// same table, the daemon resolves addresses the same way.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "src/daemon/config/config_reader.hpp"
#include "src/daemon/config/daemon_config.hpp"

namespace rtotem::config {

// Each fills its part of `config` from its top-level section and checks what lies within it;
// checks across sections are parse_config's.
Result<void> read_totem(ParseContext& context, const ConfigSection& totem, DaemonConfig& config);
// The numeric totem keys: corosync's name, the TotemConfig field, the range read_totem accepts.
struct TotemNumber {
  std::string_view key;
  std::uint32_t membership::TotemConfig::*field;
  std::uint32_t min;
  std::uint32_t max;
  std::string_view unit;
};
std::span<const TotemNumber> totem_numbers() noexcept;
Result<void> read_nodelist(ParseContext& context, const ConfigSection& nodelist, DaemonConfig& config);
Result<void> read_logging(ParseContext& context, const ConfigSection& logging, DaemonConfig& config);
Result<void> read_ipc(ParseContext& context, const ConfigSection& ipc, DaemonConfig& config);
// quorum_section.cpp: after the nodelist, whose votes it counts.
Result<void> read_quorum(ParseContext& context, const ConfigSection& quorum, DaemonConfig& config);

// The quorum section as read, before resolve_quorum checks it.
struct QuorumSection {
  quorum::QuorumOptions options;
  bool provider = false;  // provider: corosync_votequorum
  int line = 0;
};
// access_section.cpp: a list of user (or, `groups`, group) names or ids into `access`; a corosync
// uidgid { uid: gid: } section.
Result<void> read_id_list(const Value& value, IpcAccess& access, bool groups);
Result<void> read_uidgid(ParseContext& context, const ConfigSection& section, IpcAccess& access);

// getaddrinfo on the node's address on `link` (ringN_addr), the first answer, with `port`; a failure
// names the file (`origin`), the node, its line and the key.
Result<transport::InetAddress> resolve_ring_addr(std::string_view origin, const NodeEntry& node, transport::LinkId link,
                                                 std::uint16_t port);

}  // namespace rtotem::config
