#include "src/services/quorum/quorum_config.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace rtotem::quorum {

namespace {

// votequorum's ceiling on expected votes and on one node's votes: far above any real cluster,
// low enough that sums of 64 nodes' votes never overflow.
constexpr std::uint32_t kVotesMax = 1'000'000;

Result<std::vector<NodeId>> parse_node_ids(std::string_view text, std::span<const NodeVotes> nodelist) {
  std::vector<NodeId> ids;
  while (!text.empty()) {
    const std::size_t start = text.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const std::size_t end = std::min(text.find_first_of(" \t"), text.size());
    const std::string_view word = text.substr(0, end);
    NodeId id = 0;
    const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (ec != std::errc{} || ptr != word.data() + word.size() || id == 0)
      return Error::make("quorum.auto_tie_breaker_node: '{}' is not a node id (want lowest, highest or node ids)",
                         word);
    if (std::ranges::find(ids, id) != ids.end())
      return Error::make("quorum.auto_tie_breaker_node: node {} is listed twice", id);
    if (!nodelist.empty() && std::ranges::none_of(nodelist, [id](const NodeVotes& n) { return n.node == id; }))
      return Error::make("quorum.auto_tie_breaker_node: node {} is not in the nodelist", id);
    ids.push_back(id);
    text.remove_prefix(end);
  }
  if (ids.empty()) return Error::make("quorum.auto_tie_breaker_node is empty (want lowest, highest or node ids)");
  return ids;
}

// votequorum.5's rules for quorum.device, against the rest of the resolved section.
Result<DeviceConfig> resolve_device(const QuorumOptions& options, const QuorumConfig& config) {
  constexpr std::string_view kWhy = "(votequorum.5)";
  if (config.two_node)
    return Error::make("quorum.two_node and quorum.device cannot both be set: the device breaks the tie {}", kWhy);
  if (config.last_man_standing)
    return Error::make("quorum.device is not compatible with quorum.last_man_standing {}", kWhy);
  if (options.auto_tie_breaker)
    return Error::make("quorum.device is not compatible with quorum.auto_tie_breaker {}", kWhy);
  DeviceConfig device{.model = options.device_model,
                      .timeout_ms = options.device_timeout_ms,
                      .sync_timeout_ms = options.device_sync_timeout_ms};
  if (options.device_votes) {
    if (*options.device_votes == 0 || *options.device_votes > kVotesMax)
      return Error::make("quorum.device.votes is {} (want 1..{})", *options.device_votes, kVotesMax);
    device.votes = *options.device_votes;
    if (config.expected_votes_configured && config.expected_votes < device.votes + 2)
      return Error::make("quorum.device.votes {} is too high for quorum.expected_votes {} {}", device.votes,
                         config.expected_votes, kWhy);
    return device;
  }
  if (config.expected_votes_configured)
    return Error::make("quorum.device.votes must be given when quorum.expected_votes is {}", kWhy);
  const bool one_each = std::ranges::all_of(config.nodes, [](const NodeVotes& n) { return n.votes == 1; });
  if (!one_each) return Error::make("quorum.device.votes must be given when a node has other than one vote {}", kWhy);
  if (config.nodes.size() < 2) return Error::make("quorum.device needs a nodelist of at least two nodes {}", kWhy);
  device.votes = static_cast<std::uint32_t>(config.nodes.size() - 1);
  return device;
}

}  // namespace

std::uint32_t QuorumConfig::votes_of(NodeId node) const noexcept {
  const auto it = std::ranges::lower_bound(nodes, node, {}, &NodeVotes::node);
  return it != nodes.end() && it->node == node ? it->votes : 1;
}

Result<QuorumConfig> resolve_quorum(const QuorumOptions& options, std::span<const NodeVotes> nodelist) {
  QuorumConfig config;
  config.nodes.assign(nodelist.begin(), nodelist.end());
  std::ranges::sort(config.nodes, {}, &NodeVotes::node);
  std::uint64_t sum = 0;
  for (const NodeVotes& node : config.nodes) {
    if (node.votes > kVotesMax)
      return Error::make("nodelist: node {} has quorum_votes {} (at most {})", node.node, node.votes, kVotesMax);
    sum += node.votes;
  }
  if (options.expected_votes) {
    if (*options.expected_votes == 0 || *options.expected_votes > kVotesMax)
      return Error::make("quorum.expected_votes is {} (want 1..{})", *options.expected_votes, kVotesMax);
    config.expected_votes = *options.expected_votes;
    config.expected_votes_configured = true;
  } else if (!config.nodes.empty()) {
    config.expected_votes = static_cast<std::uint32_t>(std::min<std::uint64_t>(sum, kVotesMax));
  } else {
    return Error::make("quorum needs expected_votes or a nodelist to count votes from (votequorum.5)");
  }
  config.two_node = options.two_node;
  config.wait_for_all = options.wait_for_all.value_or(options.two_node);
  config.last_man_standing = options.last_man_standing;
  config.last_man_standing_window_ms = options.last_man_standing_window_ms;
  if (config.last_man_standing && config.last_man_standing_window_ms == 0)
    return Error::make("quorum.last_man_standing_window must be above 0 ms");
  if (config.last_man_standing) {
    for (const NodeVotes& node : config.nodes)
      if (node.votes != 1)
        return Error::make(
            "quorum.last_man_standing needs every node to have one vote; node {} has quorum_votes {} (votequorum.5)",
            node.node, node.votes);
  }
  if (options.auto_tie_breaker) {
    if (config.two_node)
      return Error::make(
          "quorum.two_node and quorum.auto_tie_breaker cannot both be set: two_node already "
          "keeps both halves quorate and relies on fencing (votequorum.5)");
    if (options.auto_tie_breaker_node == "lowest") {
      config.tie_breaker = TieBreaker::kLowest;
    } else if (options.auto_tie_breaker_node == "highest") {
      config.tie_breaker = TieBreaker::kHighest;
    } else {
      Result<std::vector<NodeId>> ids = parse_node_ids(options.auto_tie_breaker_node, config.nodes);
      if (!ids) return ids.error();
      config.tie_breaker = TieBreaker::kList;
      config.tie_breaker_nodes = std::move(ids.value());
    }
  }
  if (!options.device_model.empty()) {
    auto device = resolve_device(options, config);
    if (!device) return device.error();
    config.device = std::move(device).value();
    if (!config.expected_votes_configured)
      config.expected_votes = std::min(config.expected_votes + config.device->votes, kVotesMax);
  }
  return config;
}

}  // namespace rtotem::quorum
