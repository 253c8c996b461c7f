// Parsing rtotemd's command line: every refusal names the argument at fault.
#include "src/daemon/daemon_options.hpp"

#include <filesystem>
#include <limits>
#include <system_error>

#include "base/cli_args.hpp"
#include "src/common/corosync_files.hpp"

namespace rtotem::daemon {

const char* daemon_usage() noexcept {
  return "usage: rtotemd [-c CONFIG] [-f] [--nodeid ID] [--ipc-name NAME] [--state-dir DIR] [-t] [-v]\n"
         "  -c CONFIG          the config file (default " RTOTEM_DEFAULT_CONFIG
         ")\n"
         "  -f                 stay in the foreground (systemd, tests); log to stderr too\n"
         "  --nodeid ID        which nodelist entry this daemon is, when several are local addresses\n"
         "  --ipc-name NAME    the name clients connect to (default: ipc.name, else \"rtotem\");\n"
         "                     clients use $RTOTEM_IPC or --ipc-name\n"
         "  --state-dir DIR    where the ring sequence number and the seal epoch are kept\n"
         "                     (default " RTOTEM_DEFAULT_STATE_DIR
         ")\n"
         "  -t                 check the config (and which node this is), print it, exit\n"
         "  -v                 print the version and exit\n"
         "  -h, --help         this text\n";
}

Result<DaemonOptions> parse_daemon_options(std::span<char* const> args) {
  constexpr CliValue kValue = CliValue::kNonEmpty;
  constexpr CliOption kOptions[] = {{"-f"},
                                    {"-t"},
                                    {"-v"},
                                    {"--version"},
                                    {"-h"},
                                    {"--help"},
                                    {"-c", kValue},
                                    {"--ipc-name", kValue},
                                    {"--state-dir", kValue},
                                    {"--nodeid", kValue}};
  DaemonOptions out;
  bool config_given = false;
  for (CliReader reader(args, kOptions); !reader.done();) {
    auto arg = reader.next();
    if (!arg) return arg.error();
    const auto [name, value] = *arg;
    if (name == "-f") {
      out.foreground = true;
    } else if (name == "-t") {
      out.check_only = true;
    } else if (name == "-v" || name == "--version") {
      out.version = true;
    } else if (name == "-h" || name == "--help") {
      out.help = true;
    } else if (name == "-c") {
      out.config_path = value;
      config_given = true;
    } else if (name == "--ipc-name") {
      out.ipc_name = value;
    } else if (name == "--state-dir") {
      out.state_dir = value;
    } else if (name == "--nodeid") {
      auto id = parse_number(name, value, membership::NodeId{1}, std::numeric_limits<membership::NodeId>::max());
      if (!id) return id.error();
      out.nodeid = *id;
    }
  }
  if (!config_given) out.config_path = first_existing({RTOTEM_DEFAULT_CONFIG, kCorosyncConfigFile});
  // Absolute: a detached daemon runs in / (and SIGHUP re-reads the config from there).
  for (std::string* path : {&out.config_path, &out.state_dir}) {
    std::error_code error;
    const auto absolute = std::filesystem::absolute(*path, error);
    if (error) return Error::make("{}: {}", *path, error.message());
    *path = absolute.string();
  }
  return out;
}

}  // namespace rtotem::daemon
