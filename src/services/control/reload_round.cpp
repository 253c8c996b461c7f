#include "src/services/control/reload_round.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <cerrno>
#include <string_view>

#include "base/assert.hpp"

namespace rtotem::control {
namespace {

// A cluster part's "key=value" lines by key.
std::map<std::string_view, std::string_view> by_key(std::string_view text) {
  std::map<std::string_view, std::string_view> lines;
  while (!text.empty()) {
    const std::string_view line = text.substr(0, text.find('\n'));
    lines.emplace(line.substr(0, line.find('=')), line);
    text.remove_prefix(std::min(text.size(), line.size() + 1));
  }
  return lines;
}

// Where two cluster parts differ: the keys, then what each node reads (at most kShown keys).
std::string differences(membership::NodeId node_a, std::string_view a, membership::NodeId node_b, std::string_view b) {
  constexpr std::size_t kShown = 4;
  const auto lines_a = by_key(a);
  const auto lines_b = by_key(b);
  std::vector<std::string_view> keys;
  for (const auto& [key, line] : lines_a)
    if (const auto other = lines_b.find(key); other == lines_b.end() || other->second != line) keys.push_back(key);
  for (const auto& [key, line] : lines_b)
    if (!lines_a.contains(key)) keys.push_back(key);
  std::ranges::sort(keys);
  std::string names;
  std::string reads_a;
  std::string reads_b;
  for (std::size_t i = 0; i < keys.size() && i < kShown; ++i) {
    const std::string_view sep = i == 0 ? "" : ", ";
    names += fmt::format("{}{}", sep, keys[i]);
    const auto in_a = lines_a.find(keys[i]);
    const auto in_b = lines_b.find(keys[i]);
    reads_a +=
        fmt::format("{}{}", sep, in_a == lines_a.end() ? fmt::format("no {}", keys[i]) : std::string(in_a->second));
    reads_b +=
        fmt::format("{}{}", sep, in_b == lines_b.end() ? fmt::format("no {}", keys[i]) : std::string(in_b->second));
  }
  if (keys.size() > kShown) names += fmt::format(" and {} more", keys.size() - kShown);
  return fmt::format("{}: node {} reads {}; node {} reads {}", names, node_a, reads_a, node_b, reads_b);
}

}  // namespace

ReloadRound::ReloadRound(ReloadId id, std::vector<membership::NodeId> members) : id_(id), members_(std::move(members)) {
  std::ranges::sort(members_);
  RTOTEM_ASSERT(!members_.empty());
}

std::optional<ReloadDecision> ReloadRound::report(ReloadReport report) {
  if (!std::ranges::binary_search(members_, report.node) || reports_.contains(report.node)) return std::nullopt;
  const membership::NodeId node = report.node;
  reports_.emplace(node, std::move(report));
  if (reports_.size() < members_.size()) return std::nullopt;
  RTOTEM_ASSERT(reports_.size() == members_.size());
  return decide();
}

ReloadDecision ReloadRound::ended(const std::string& why) const {
  std::string waiting;
  for (membership::NodeId n : members_)
    if (!reports_.contains(n)) waiting += fmt::format("{}{}", waiting.empty() ? "" : " ", n);
  return {false, -EAGAIN,
          fmt::format("nothing changed on any node: {} (no report yet from node(s) {})\n", why, waiting)};
}

ReloadDecision ReloadRound::decide() const {
  ReloadDecision d;
  std::string failures;
  for (const auto& [node, r] : reports_) {
    if (r.error == 0) continue;
    if (d.error == 0) d.error = r.error;
    failures += fmt::format("node {}: {}\n", node, r.summary);
  }
  if (!failures.empty()) {
    d.text = "nothing changed on any node:\n" + failures;
    return d;
  }
  const ReloadReport& first = reports_.begin()->second;
  for (const auto& [node, r] : reports_) {
    if (r.cluster == first.cluster) continue;
    d.error = -EINVAL;
    d.text = fmt::format(
        "nothing changed on any node: the nodes' files disagree about {}; the nodelist and the totem timing must "
        "be the same in every node's file\n",
        differences(first.node, first.cluster, node, r.cluster));
    return d;
  }
  d.apply = true;
  for (const auto& [node, r] : reports_) d.text += fmt::format("node {}: {}\n", node, r.summary);
  return d;
}

}  // namespace rtotem::control
