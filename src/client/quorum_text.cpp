#include "src/client/quorum_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <ctime>

namespace rtotem::client {
namespace {

// The daemon writes the document in one fixed shape: a key's value follows `"key": ` and ends at
// the next ',', ']' or '}' (strings: at their closing quote; names never hold a quote, json_quoted
// escapes them). Enough to read it back without a JSON library.
std::optional<std::string_view> field(std::string_view json, std::string_view key, std::size_t from = 0) {
  const std::string needle = fmt::format("\"{}\": ", key);
  const std::size_t at = json.find(needle, from);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = json.substr(at + needle.size());
  if (rest.starts_with('"')) {
    const std::size_t end = rest.find('"', 1);
    return end == std::string_view::npos ? std::nullopt : std::optional(rest.substr(1, end - 1));
  }
  return rest.substr(0, rest.find_first_of(",]}"));
}

std::string yes_no(std::string_view boolean) { return boolean == "true" ? "Yes" : "No"; }

}  // namespace

std::optional<QuorumText> quorum_text(std::string_view json) {
  QuorumText out;
  const auto configured = field(json, "configured");
  if (!configured) return std::nullopt;
  out.configured = *configured == "true";
  if (!out.configured) {
    out.text = "Quorum provider:  not configured (no quorum { provider: corosync_votequorum } in the config)\n";
    return out;
  }
  const auto nodeid = field(json, "nodeid");
  const auto rep = field(json, "rep");
  const auto seq = field(json, "seq");
  const auto quorate = field(json, "quorate");
  const auto expected = field(json, "expected_votes");
  const auto highest = field(json, "highest_expected");
  const auto total = field(json, "total_votes");
  const auto quorum = field(json, "quorum");
  const auto synced = field(json, "synced");
  const std::size_t flags_at = json.find("\"flags\": [");
  const std::size_t nodes_at = json.find("\"nodes\": [");
  if (!nodeid || !rep || !seq || !quorate || !expected || !highest || !total || !quorum || !synced ||
      flags_at == std::string_view::npos || nodes_at == std::string_view::npos)
    return std::nullopt;
  out.quorate = *quorate == "true";
  std::string flags;
  const std::string_view flag_list = json.substr(flags_at + 10, json.find(']', flags_at) - flags_at - 10);
  for (std::size_t at = 0; (at = flag_list.find('"', at)) != std::string_view::npos;) {
    const std::size_t end = flag_list.find('"', at + 1);
    flags += fmt::format("{}{}", flags.empty() ? "" : " ", flag_list.substr(at + 1, end - at - 1));
    at = end + 1;
  }
  // As corosync-quorumtool: a Qdevice column once any member's device registered, and the device's row.
  const std::size_t device_at = json.find("\"device\": {\"model\"");
  const bool show_device =
      device_at != std::string_view::npos && (json.find("\"device\": \"A") != std::string_view::npos ||
                                              json.find("\"device\": \"NA") != std::string_view::npos);
  std::string members;
  std::size_t count = 0;
  for (std::size_t at = nodes_at; (at = json.find("{\"nodeid\": ", at)) != std::string_view::npos; ++at) {
    const auto id = field(json, "nodeid", at);
    const auto votes = field(json, "votes", at);
    const auto name = field(json, "name", at);
    const auto local = field(json, "local", at);
    const auto device = field(json, "device", at);
    if (!id || !votes || !name || !local || !device) return std::nullopt;
    members += fmt::format("{:>10} {:>10} {}{}{}\n", *id, *votes,
                           show_device ? fmt::format("{:>10} ", *device) : std::string(),
                           name->empty() ? fmt::format("node{}", *id) : *name, *local == "true" ? " (local)" : "");
    ++count;
  }
  std::string header = "    Nodeid      Votes Name\n";
  if (show_device) {
    const auto votes = field(json, "votes", device_at);
    const auto name = field(json, "name", device_at);
    const auto counted = field(json, "counted", device_at);
    if (!votes || !name || !counted) return std::nullopt;
    header = "    Nodeid      Votes    Qdevice Name\n";
    members += fmt::format("{:>10} {:>10}            {}{}\n", 0, *counted == "true" ? *votes : "0", *name,
                           *counted == "true" ? "" : fmt::format(" (votes {})", *votes));
  }
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y", std::localtime(&now));
  out.text = fmt::format(
      "Quorum information\n------------------\n"
      "Date:             {}\nQuorum provider:  corosync_votequorum\nNodes:            {}\nNode ID:          {}\n"
      "Ring ID:          {}.{}\nQuorate:          {}{}\n\n"
      "Votequorum information\n----------------------\n"
      "Expected votes:   {}\nHighest expected: {}\nTotal votes:      {}\nQuorum:           {}\nFlags:            {}\n\n"
      "Membership information\n----------------------\n{}{}",
      date, count, *nodeid, *rep, *seq, yes_no(*quorate), *synced == "true" ? "" : " (ring not in sync yet)", *expected,
      *highest, *total, *quorum, flags, header, members);
  return out;
}

}  // namespace rtotem::client
