// The configuration as key store keys, in corosync's names and types: what the file says under
// totem.*, nodelist.node.N.*, quorum.*, logging.*, ipc.* (rtotem's own) and uidgid.config.*, and the totem timing in
// force (defaults and derived values resolved) under runtime.config.totem.*, as corosync-cmapctl
// shows them; and every key of the file rtotem does not use, as a string, as corosync's parser
// stores it. Loaded at start and again at each reload.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "membership/totem_config.hpp"
#include "src/daemon/config/daemon_config.hpp"
#include "src/ipc/key_value.hpp"

namespace rtotem::keystore {

// The prefixes config_keys() fills: every key under them is the configuration's.
inline constexpr std::array<std::string_view, 7> kConfigPrefixes{
    "totem.", "nodelist.", "quorum.", "logging.", "ipc.", "uidgid.config.", "runtime.config."};

// "name." of each top-level section outside kConfigPrefixes whose keys the file has rtotem keep
// (resources., system., or one rtotem does not know): config_keys fills those too.
std::vector<std::string> kept_section_prefixes(const config::DaemonConfig& config);

// `resolved`: the totem timing in force; `links_token_ms`: the token the links' ping timing was
// derived from when they opened (a reload that changes the token leaves their timing as it is).
std::vector<std::pair<std::string, ipc::KeyValue>> config_keys(const config::DaemonConfig& config,
                                                               const membership::TotemConfig& resolved,
                                                               std::uint32_t links_token_ms);

}  // namespace rtotem::keystore
