// rtotemd's command line.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "membership/packets.hpp"
#include "transport/result.hpp"

namespace rtotem::daemon {

struct DaemonOptions {
  std::string config_path = "/etc/rtotem/rtotem.conf";
  bool foreground = false;
  std::optional<membership::NodeId> nodeid;
  std::string ipc_name;  // empty: the config's ipc.name
  std::string state_dir = "/var/lib/rtotem";
  bool check_only = false;
  bool version = false;
  bool help = false;
};

Result<DaemonOptions> parse_daemon_options(std::span<char* const> args);
const char* daemon_usage() noexcept;

}  // namespace rtotem::daemon
