// The file as a whole: reading it, its top-level sections in a fixed order, checks across
// sections, and the names of transports.
#include "src/daemon/config/daemon_config.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <filesystem>
#include <numeric>
#include <system_error>

#include "src/common/corosync_files.hpp"
#include "src/daemon/config/config_sections.hpp"
#include "base/fd.hpp"

namespace rtotem::config {
namespace {

using SectionReader = Result<void> (*)(ParseContext&, const ConfigSection&, DaemonConfig&);

struct TopSection {
  std::string_view name;
  SectionReader read;
  std::string_view required_because;  // empty: the section may be left out
};

// Read in this order whatever the file's: later readers may rely on earlier ones.
constexpr std::array<TopSection, 5> kSections = {{
    {"totem", read_totem, "cluster_name is required"},
    {"nodelist", read_nodelist, "at least one node is required"},
    {"quorum", read_quorum, ""},
    {"logging", read_logging, ""},
    {"ipc", read_ipc, ""},
}};
constexpr std::size_t kTotem = 0;
constexpr std::size_t kIpc = 4;

constexpr std::string_view kCorosyncSections[] = {"system", "resources", "qb", "nozzle"};
constexpr std::string_view kUidGid = "uidgid";  // any number of them: who may use the IPC

using FoundSections = std::array<const ConfigSection*, kSections.size()>;

// Each of rtotem's sections at most once; any other kept for the key store (corosync's warned
// about), but runtime, whose keys are the daemon's own.
Result<FoundSections> find_sections(ParseContext& context, const ConfigSection& top) {
  if (!top.entries.empty())
    return context.fail(top.entries.front().line, "key '{}' outside any section", top.entries.front().key);
  FoundSections found{};
  for (const ConfigSection& section : top.sections) {
    if (section.name == kUidGid) continue;  // read after the others, into ipc.allow
    const auto it =
        std::find_if(kSections.begin(), kSections.end(), [&](const TopSection& s) { return s.name == section.name; });
    if (it == kSections.end()) {
      if (section.name == "runtime")
        return context.fail(section.line, "section runtime: runtime.* keys are the running daemon's, not the file's");
      const bool corosync = matches_any(kCorosyncSections, section.name);
      if (corosync) context.warn_ignored_section("", section);
      context.keep_section(section.name, section, !corosync);
      continue;
    }
    const ConfigSection*& slot = found[static_cast<std::size_t>(it - kSections.begin())];
    if (slot) return context.fail(section.line, "second {} section (first on line {})", section.name, slot->line);
    slot = &section;
  }
  return found;
}

// A slow client must be able to hold one delivery of the largest message, or every such message
// would disconnect it.
// The budget of all queues must hold one client's queue at its limit.
Result<void> check_client_queue(const ParseContext& context, const DaemonConfig& config, int line) {
  const std::uint64_t event_max = std::uint64_t{config.totem.max_message_size} + ipc::kBufferOverhead;
  if (config.ipc.client_queue_bytes < event_max)
    return context.fail(line,
                        "ipc.client_queue_bytes {} cannot hold one event of totem.max_message_size {} (+{} "
                        "bytes of headers)",
                        config.ipc.client_queue_bytes, config.totem.max_message_size, ipc::kBufferOverhead);
  if (config.ipc.queue_budget() < config.ipc.client_queue_bytes)
    return context.fail(line,
                        "ipc.total_queue_bytes {} is below ipc.client_queue_bytes {}: it must hold one "
                        "client's queue (twice that lets a client reach its own limit)",
                        config.ipc.total_queue_bytes, config.ipc.client_queue_bytes);
  return {};
}

Result<std::string> read_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::sys(errno, "config file {}", path);
  std::string text;
  char block[16 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd.get(), block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::sys(errno, "read config file {}", path);
    if (n == 0) return text;
    text.append(block, static_cast<std::size_t>(n));
    if (text.size() > kConfigBytesMax)
      return Error::make("config file {}: larger than {} bytes; is it the right file?", path, kConfigBytesMax);
  }
}

}  // namespace

Result<DaemonConfig> parse_config(std::string_view text, std::string_view origin) {
  auto tree = parse_config_tree(text, origin);
  if (!tree) return tree.error();
  ParseContext context(origin);
  auto found = find_sections(context, *tree);
  if (!found) return found.error();
  DaemonConfig config;
  config.path = std::string(origin);
  for (std::size_t i = 0; i < kSections.size(); ++i) {
    const TopSection& kind = kSections[i];
    if (const ConfigSection* section = (*found)[i]) {
      if (auto ok = kind.read(context, *section, config); !ok) return ok.error();
    } else if (!kind.required_because.empty()) {
      return Error::make("{}: no {} section ({})", origin, kind.name, kind.required_because);
    }
  }
  for (const ConfigSection& section : tree->sections)
    if (section.name == kUidGid)
      if (auto ok = read_uidgid(context, section, config.ipc.allow); !ok) return ok.error();
  const ConfigSection* blamed = (*found)[kIpc] ? (*found)[kIpc] : (*found)[kTotem];
  if (auto ok = check_client_queue(context, config, blamed->line); !ok) return ok.error();
  // The k-th node section of the file is the k-th node by line; config.nodes is in nodeid order.
  std::vector<std::size_t> order(config.nodes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::ranges::sort(order, {}, [&](std::size_t i) { return config.nodes[i].line; });
  config.stored_keys = context.take_stored(order);
  config.warnings = context.take_warnings();
  return config;
}

namespace {

// Corosync's uidgid.d: one file per package that needs the IPC, each with uidgid sections only.
// Read in name order; a missing directory is no error.
Result<void> read_uidgid_dir(const std::filesystem::path& dir, IpcAccess& access) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return {};
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error))
    if (entry.is_regular_file(error)) files.push_back(entry.path());
  if (error) return Error::make("{}: {}", dir.string(), error.message());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const std::string name = file.string();
    auto text = read_file(name);
    if (!text) return text.error();
    auto tree = parse_config_tree(*text, name);
    if (!tree) return tree.error();
    ParseContext context(name);
    if (!tree->entries.empty())
      return context.fail(tree->entries.front().line, "key '{}' outside any section", tree->entries.front().key);
    for (const ConfigSection& section : tree->sections) {
      if (section.name != kUidGid)
        return context.fail(section.line, "section '{}': a uidgid.d file holds uidgid sections only", section.name);
      if (auto ok = read_uidgid(context, section, access); !ok) return ok;
    }
  }
  return {};
}

}  // namespace

Result<DaemonConfig> load_config(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto config = parse_config(*text, path);
  if (!config) return config;
  // No totem.keyfile: rtotem's own key where it exists, else an existing cluster's Corosync key.
  if (config->keyfile_line == 0) config->keyfile = first_existing({kDefaultKeyFile, kCorosyncKeyFile});
  if (auto ok = read_uidgid_dir(std::filesystem::path(path).parent_path() / "uidgid.d", config->ipc.allow); !ok)
    return ok.error();
  return config;
}

membership::TotemConfig DaemonConfig::totem_in_force() const noexcept {
  membership::TotemConfig in_force = totem;
  if (nodes.size() > 2) {
    // In 64 bits, then capped: a nodelist long enough to pass 32 bits means no timeout anyone wants.
    const std::uint64_t token =
        std::uint64_t{totem.token_timeout_ms} + (nodes.size() - 2) * std::uint64_t{token_coefficient_ms};
    in_force.token_timeout_ms = static_cast<std::uint32_t>(std::min<std::uint64_t>(token, UINT32_MAX));
  }
  return in_force;
}

transport::LinkTiming LinkConfig::timing(std::uint32_t token_ms) const noexcept {
  transport::LinkTiming timing;
  timing.pong_count = pong_count;
  timing.precision = ping_precision;
  const std::uint32_t timeout_ms = ping_timeout_ms != 0 ? ping_timeout_ms : token_ms / pong_count;
  const std::uint32_t interval_ms = ping_interval_ms != 0 ? ping_interval_ms : token_ms / (2 * pong_count);
  timing.ping_timeout = transport::Micros{timeout_ms} * 1000;
  timing.ping_interval = transport::Micros{interval_ms} * 1000;
  return timing;
}

Result<void> check_links(const DaemonConfig& config, std::uint32_t token_ms) {
  for (const LinkConfig& link : config.links) {
    const std::string where =
        link.line == 0 ? fmt::format("{}: link {}", config.path, link.number)
                       : fmt::format("{}:{}: totem.interface (link {})", config.path, link.line, link.number);
    if (auto valid = link.timing(token_ms).validate(); !valid)
      return Error::make("{}: {}", where, valid.error().message());
  }
  return {};
}

std::string_view describe(TransportKind kind) noexcept {
  switch (kind) {
    case TransportKind::kUdp: return "udp";
    case TransportKind::kUdpu: return "udpu";
    case TransportKind::kRdma: return "rdma";
  }
  return "unknown transport";
}

}  // namespace rtotem::config
