// The quorum section (corosync's votequorum keys) and the nodes' quorum_votes: read here, checked
// against votequorum.5's rules by resolve_quorum once the nodelist is known.
#include "src/daemon/config/config_sections.hpp"

namespace rtotem::config {
namespace {

constexpr std::uint32_t kVotesMax = 1'000'000;
constexpr std::uint32_t kWindowMaxMs = 3'600'000;
constexpr std::string_view kProviders[] = {"corosync_votequorum"};
// quorum.votes is for a cluster without a nodelist, which rtotem always has: its quorum_votes decide.
constexpr std::string_view kQuorumCorosyncKeys[] = {"votes"};
constexpr std::uint32_t kDeviceTimeoutMaxMs = 3'600'000;

// votequorum's switches are numbers, 0 or 1, in corosync.conf; yes/no as elsewhere reads too.
Result<void> read_switch(const Value& value, bool& out) {
  if (value.text() == "0" || value.text() == "1") {
    out = value.text() == "1";
    return {};
  }
  return value.read(out);
}

Result<bool> refuse_if_on(const Value& value, std::string_view what) {
  bool on = false;
  if (auto read = read_switch(value, on); !read) return read.error();
  if (on) return value.fail("{} is not supported by rtotem (remove it, or set it to 0)", what);
  return true;
}

Result<bool> read_quorum_key(const Value& value, QuorumSection& quorum) {
  const std::string_view key = value.key();
  quorum::QuorumOptions& o = quorum.options;
  if (key == "provider") {
    auto index = value.choice(kProviders);
    if (!index) return index.error();
    quorum.provider = true;
    return true;
  }
  if (key == "expected_votes") {
    std::uint32_t votes = 0;
    if (auto read = value.read(votes, 1, kVotesMax, ""); !read) return read.error();
    o.expected_votes = votes;
    return true;
  }
  if (key == "two_node") return known(read_switch(value, o.two_node));
  if (key == "wait_for_all") {
    bool on = false;
    if (auto read = read_switch(value, on); !read) return read.error();
    o.wait_for_all = on;
    return true;
  }
  if (key == "last_man_standing") return known(read_switch(value, o.last_man_standing));
  if (key == "last_man_standing_window") return known(value.read(o.last_man_standing_window_ms, 1, kWindowMaxMs, "ms"));
  if (key == "auto_tie_breaker") return known(read_switch(value, o.auto_tie_breaker));
  if (key == "auto_tie_breaker_node") return known(value.read(o.auto_tie_breaker_node));
  if (key == "allow_downscale") return refuse_if_on(value, "allow_downscale");
  if (key == "expected_votes_tracking") return refuse_if_on(value, "expected_votes_tracking");
  return false;
}

constexpr std::string_view kDeviceKeysInUse[] = {"model", "votes", "timeout", "sync_timeout"};

// quorum.device { }: what votequorum counts is read here; every key (net { }, heuristics { } and
// the rest, which corosync-qdevice reads from cmap) is kept in the key store as well.
Result<void> read_device(ParseContext& context, const ConfigSection& device, quorum::QuorumOptions& o) {
  auto read_key = [&](const Value& value) -> Result<bool> {
    const std::string_view key = value.key();
    Result<void> read;
    if (key == "model") read = value.read(o.device_model);
    if (key == "votes") {
      std::uint32_t votes = 0;
      read = value.read(votes, 1, kVotesMax, "");
      o.device_votes = votes;
    }
    if (key == "timeout") read = value.read(o.device_timeout_ms, 1, kDeviceTimeoutMaxMs, "ms");
    if (key == "sync_timeout") read = value.read(o.device_sync_timeout_ms, 1, kDeviceTimeoutMaxMs, "ms");
    if (!read) return read.error();
    context.keep(fmt::format("quorum.device.{}", key),
                 ConfigEntry{std::string(key), std::string(value.text()), value.line()}, false);
    return true;
  };
  if (auto ok = read_entries(context, device, "quorum.device", {}, read_key); !ok) return ok;
  for (const ConfigSection& inner : device.sections)
    context.keep_section(fmt::format("quorum.device.{}", inner.name), inner, false);
  if (o.device_model.empty())
    return context.fail(device.line, "quorum.device: no model (corosync-qdevice needs model: net)");
  return {};
}

}  // namespace

bool kept_key_in_use(std::string_view key) noexcept {
  constexpr std::string_view kDevice = "quorum.device.";
  return key.starts_with(kDevice) && matches_any(kDeviceKeysInUse, key.substr(kDevice.size()));
}

Result<void> read_quorum(ParseContext& context, const ConfigSection& section, DaemonConfig& config) {
  QuorumSection quorum;
  quorum.line = section.line;
  auto read_key = [&](const Value& value) { return read_quorum_key(value, quorum); };
  if (auto ok = read_entries(context, section, "quorum", kQuorumCorosyncKeys, read_key); !ok) return ok;
  for (const ConfigSection& inner : section.sections) {
    if (inner.name == "device") {
      if (auto ok = read_device(context, inner, quorum.options); !ok) return ok;
      continue;
    }
    context.keep_section(fmt::format("quorum.{}", inner.name), inner, true);
  }
  // Without a provider corosync has no quorum service at all: the other keys are then unused.
  if (!quorum.provider) {
    context.warn(section.line,
                 "quorum: no provider: the section is ignored (provider: corosync_votequorum turns "
                 "quorum on)");
    return {};
  }
  std::vector<quorum::NodeVotes> votes;
  for (const NodeEntry& node : config.nodes) votes.push_back({node.nodeid, node.quorum_votes});
  auto resolved = quorum::resolve_quorum(quorum.options, votes);
  if (!resolved) return context.fail(section.line, "{}", resolved.error().message());
  config.quorum = std::move(resolved).value();
  config.quorum_line = section.line;
  return {};
}

}  // namespace rtotem::config
