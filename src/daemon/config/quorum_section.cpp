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
// corosync's keys whose behaviour rtotem does not have: refused when turned on, since a cluster
// that relies on them would get another quorum than it asked for.
constexpr std::string_view kQuorumUnsupportedSections[] = {"device"};

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

}  // namespace

Result<void> read_quorum(ParseContext& context, const ConfigSection& section, DaemonConfig& config) {
  QuorumSection quorum;
  quorum.line = section.line;
  auto read_key = [&](const Value& value) { return read_quorum_key(value, quorum); };
  if (auto ok = read_entries(context, section, "quorum", kQuorumCorosyncKeys, read_key); !ok) return ok;
  for (const ConfigSection& inner : section.sections) {
    // Left out, the device's votes would leave a two-node cluster without quorum after a cut.
    if (matches_any(kQuorumUnsupportedSections, inner.name))
      return context.fail(inner.line, "quorum.{}: quorum devices (corosync-qdevice) are not supported by rtotem",
                          inner.name);
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
