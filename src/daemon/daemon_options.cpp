#include "src/daemon/daemon_options.hpp"

#include <charconv>
#include <filesystem>
#include <system_error>
#include <string_view>

namespace rtotem::daemon {

const char* daemon_usage() noexcept {
  return "usage: rtotemd [-c CONFIG] [-f] [--nodeid ID] [--ipc-name NAME] [--state-dir DIR] [-t] [-v]\n"
         "  -c CONFIG          the config file (default " RTOTEM_DEFAULT_CONFIG ")\n"
         "  -f                 stay in the foreground (systemd, tests); log to stderr too\n"
         "  --nodeid ID        which nodelist entry this daemon is, when several are local addresses\n"
         "  --ipc-name NAME    the name clients connect to (default: ipc.name, else \"rtotem\");\n"
         "                     clients use $RTOTEM_IPC or --ipc-name\n"
         "  --state-dir DIR    where the ring sequence number and the seal epoch are kept\n"
         "                     (default " RTOTEM_DEFAULT_STATE_DIR ")\n"
         "  -t                 check the config (and which node this is), print it, exit\n"
         "  -v                 print the version and exit\n"
         "  -h, --help         this text\n";
}

Result<DaemonOptions> parse_daemon_options(std::span<char* const> args) {
  DaemonOptions out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    auto value = [&]() -> Result<std::string_view> {
      if (i + 1 >= args.size()) return Error::make("{}: missing value", arg);
      return std::string_view(args[++i]);
    };
    if (arg == "-f") {
      out.foreground = true;
    } else if (arg == "-t") {
      out.check_only = true;
    } else if (arg == "-v" || arg == "--version") {
      out.version = true;
    } else if (arg == "-h" || arg == "--help") {
      out.help = true;
    } else if (arg == "-c" || arg == "--ipc-name" || arg == "--state-dir" || arg == "--nodeid") {
      auto v = value();
      if (!v) return v.error();
      if (v->empty()) return Error::make("{}: empty value", arg);
      if (arg == "-c") out.config_path = *v;
      if (arg == "--ipc-name") out.ipc_name = *v;
      if (arg == "--state-dir") out.state_dir = *v;
      if (arg == "--nodeid") {
        membership::NodeId id = 0;
        const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), id);
        if (ec != std::errc{} || end != v->data() + v->size() || id == 0)
          return Error::make("--nodeid: '{}' is not a node id (1..4294967295)", *v);
        out.nodeid = id;
      }
    } else {
      return Error::make("unknown argument '{}'", arg);
    }
  }
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
