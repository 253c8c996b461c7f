// The logging section (corosync's keys) and the ipc section (rtotem's own): where the daemon
// writes its log, and how it serves local clients.
#include <algorithm>

#include "src/daemon/config/config_sections.hpp"

namespace rtotem::config {
namespace {

constexpr std::string_view kLoggingCorosyncKeys[] = {
    "fileline",
    "function_name",
    "logfile_priority",
    "syslog_priority",
};
constexpr std::string_view kLoggingCorosyncSections[] = {"logger_subsys"};
constexpr std::string_view kFacilities[] = {
    "daemon", "user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
};

constexpr std::size_t kIpcNameMax = 64;  // libqb makes socket and shared-memory names of it
constexpr std::uint32_t kClientQueueBytesMin = 64u << 10;
constexpr std::uint32_t kClientQueueBytesMax = 1u << 31;
constexpr std::uint32_t kMaxClientsMax = 4096;
static_assert(kClientQueueBytesDefault >= kClientQueueBytesMin && kClientQueueBytesDefault <= kClientQueueBytesMax);

// A boolean with one more word corosync has: "debug: trace" and "timestamp: hires", which rtotem
// accepts as "on" because it has one level of each (`why` says so in the warning).
Result<bool> read_boolean_or(ParseContext& context, const Value& value, std::string_view extra, std::string_view why,
                             bool& out) {
  if (value.text() == extra) {
    context.warn(value.line(), fmt::format("logging.{}: {}: accepted as on ({})", value.key(), extra, why));
    out = true;
    return true;
  }
  return known(value.read(out));
}

Result<bool> read_logging_key(ParseContext& context, const Value& value, LoggingConfig& logging) {
  const std::string_view key = value.key();
  if (key == "to_stderr") return known(value.read(logging.to_stderr));
  if (key == "to_syslog") return known(value.read(logging.to_syslog));
  if (key == "to_logfile") return known(value.read(logging.to_logfile));
  if (key == "logfile") return known(value.read(logging.logfile));
  if (key == "syslog_facility") {
    auto index = value.choice(kFacilities);
    if (!index) return index.error();
    logging.syslog_facility = std::string(kFacilities[*index]);
    return true;
  }
  if (key == "blackbox") return known(value.read(logging.blackbox));
  if (key == "debug") return read_boolean_or(context, value, "trace", "rtotem has no trace level", logging.debug);
  if (key == "timestamp")
    return read_boolean_or(context, value, "hires", "rtotem's timestamps have one precision", logging.timestamp);
  return false;
}

bool is_ipc_name_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

Result<bool> read_ipc_key(const Value& value, IpcConfig& ipc) {
  const std::string_view key = value.key();
  if (key == "name") {
    const std::string_view name = value.text();
    if (name.empty() || name.size() > kIpcNameMax || !std::all_of(name.begin(), name.end(), is_ipc_name_char))
      return value.fail("'{}': 1 to {} letters, digits, '_', '-' or '.'", name, kIpcNameMax);
    ipc.name = std::string(name);
    return true;
  }
  if (key == "client_queue_bytes")
    return known(value.read(ipc.client_queue_bytes, kClientQueueBytesMin, kClientQueueBytesMax, "bytes"));
  if (key == "total_queue_bytes")
    return known(value.read(ipc.total_queue_bytes, kClientQueueBytesMin, UINT32_MAX, "bytes"));
  if (key == "max_clients") return known(value.read(ipc.max_clients, 1, kMaxClientsMax, ""));
  if (key == "allow_uid") return known(read_id_list(value, ipc.allow, false));
  if (key == "allow_gid") return known(read_id_list(value, ipc.allow, true));
  return false;
}

// Where cmap keeps a logging subsection: logger_subsys under its subsys, as corosync does.
std::string logger_path(const ConfigSection& section) {
  if (section.name == "logger_subsys")
    for (const ConfigEntry& entry : section.entries)
      if (entry.key == "subsys") return fmt::format("logging.logger_subsys.{}", entry.value);
  return fmt::format("logging.{}", section.name);
}

}  // namespace

Result<void> read_logging(ParseContext& context, const ConfigSection& logging, DaemonConfig& config) {
  auto read_key = [&](const Value& value) { return read_logging_key(context, value, config.logging); };
  if (auto ok = read_entries(context, logging, "logging", kLoggingCorosyncKeys, read_key); !ok) return ok;
  for (const ConfigSection& section : logging.sections) {
    const bool corosync = matches_any(kLoggingCorosyncSections, section.name);
    if (corosync) context.warn_ignored_section("logging", section);
    context.keep_section(logger_path(section), section, !corosync);
  }
  if (config.logging.to_logfile && config.logging.logfile.empty())
    return context.fail(logging.line, "logging: to_logfile is on but no logfile is given");
  return {};
}

Result<void> read_ipc(ParseContext& context, const ConfigSection& ipc, DaemonConfig& config) {
  auto read_key = [&](const Value& value) { return read_ipc_key(value, config.ipc); };
  if (auto ok = read_entries(context, ipc, "ipc", {}, read_key); !ok) return ok;
  keep_sections(context, ipc, "ipc");
  return {};
}

}  // namespace rtotem::config
