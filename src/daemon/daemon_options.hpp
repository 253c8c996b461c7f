// rtotemd's command line.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "rtotemd_paths.h"  // generated: the defaults of this installation
#include "membership/packets.hpp"
#include "base/result.hpp"

namespace rtotem::daemon {

struct DaemonOptions {
  // -c, else RTOTEM_DEFAULT_CONFIG where it exists, else /etc/corosync/corosync.conf where that
  // exists (a node moved from Corosync as it is), else RTOTEM_DEFAULT_CONFIG.
  std::string config_path = RTOTEM_DEFAULT_CONFIG;
  bool foreground = false;
  std::optional<membership::NodeId> nodeid;
  std::string ipc_name;  // empty: the config's ipc.name
  std::string state_dir = RTOTEM_DEFAULT_STATE_DIR;
  bool check_only = false;
  bool version = false;
  bool help = false;
};

Result<DaemonOptions> parse_daemon_options(std::span<char* const> args);
const char* daemon_usage() noexcept;

}  // namespace rtotem::daemon
