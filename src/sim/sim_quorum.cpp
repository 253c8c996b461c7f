#include "src/sim/sim_quorum.hpp"

#include <algorithm>
#include <charconv>

namespace rtotem::sim {
namespace {

// The device's timeout, in token timeouts: qdevice's 10 s against a 1 s token, scaled down.
constexpr std::uint32_t kDeviceTimeouts = 4;

}  // namespace

Result<SimQuorum> parse_quorum_features(std::string_view text, std::uint32_t nodes, std::uint32_t token_timeout_ms) {
  SimQuorum q;
  if (text == "majority") return q;
  while (!text.empty()) {
    const std::size_t comma = std::min(text.find(','), text.size());
    const std::string_view item = text.substr(0, comma);
    text.remove_prefix(std::min(comma + 1, text.size()));
    const std::size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (name == "votes" && value.empty()) {
      q.votes.clear();
      for (std::uint32_t id = 1; id <= nodes; ++id) q.votes.push_back(1 + id % 3);
    } else if (name == "two_node" && value.empty()) {
      q.options.two_node = true;
    } else if (name == "wait_for_all" && (value.empty() || value == "0")) {
      q.options.wait_for_all = value.empty();
    } else if (name == "last_man_standing" && value.empty()) {
      q.options.last_man_standing = true;
      q.options.last_man_standing_window_ms = token_timeout_ms / 2;
    } else if (name == "auto_tie_breaker") {
      q.options.auto_tie_breaker = true;
      std::string node(value.empty() ? "lowest" : value);
      std::ranges::replace(node, ':', ' ');
      q.options.auto_tie_breaker_node = node;
    } else if (name == "device") {
      q.options.device_model = "sim";
      q.options.device_timeout_ms = kDeviceTimeouts * token_timeout_ms;
      q.options.device_sync_timeout_ms = 2 * kDeviceTimeouts * token_timeout_ms;
      if (!value.empty()) {
        std::uint32_t votes = 0;
        const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), votes);
        if (ec != std::errc{} || ptr != value.data() + value.size() || votes == 0)
          return Error::make("--quorum: device={}: want the device's votes, a number above 0", value);
        q.options.device_votes = votes;
      }
    } else {
      return Error::make(
          "--quorum: '{}' is not a feature (majority, votes, two_node, wait_for_all[=0], "
          "last_man_standing, auto_tie_breaker[=lowest|highest|ID:ID...], device[=VOTES])",
          item);
    }
  }
  return q;
}

}  // namespace rtotem::sim
