#include "src/services/keystore/config_keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <set>

#include "src/daemon/config/config_sections.hpp"

namespace rtotem::keystore {

using ipc::KeyValue;

namespace {

std::string_view yes_no(bool on) { return on ? "yes" : "no"; }
std::string_view on_off(bool on) { return on ? "on" : "off"; }

std::string tie_breaker_text(const quorum::QuorumConfig& q) {
  switch (q.tie_breaker) {
    case quorum::TieBreaker::kHighest: return "highest";
    case quorum::TieBreaker::kList: {
      std::string list;
      for (membership::NodeId n : q.tie_breaker_nodes) list += fmt::format("{}{}", list.empty() ? "" : " ", n);
      return list;
    }
    default: return "lowest";
  }
}

// A kept key as corosync's parser stores it: a string, but for the numbers corosync-qdevice and
// pcs read as numbers (totem.config_version; the device's votes, timeouts and master_wins).
KeyValue kept_value(const config::StoredKey& k) {
  std::uint64_t number = 0;
  const char* end = k.value.data() + k.value.size();
  const auto [ptr, ec] = std::from_chars(k.value.data(), end, number);
  if (ec != std::errc{} || ptr != end || k.value.empty()) return KeyValue::string(k.value);
  if (k.key == "totem.config_version") return KeyValue::u64(number);
  const bool device_u32 =
      k.key == "quorum.device.votes" || k.key == "quorum.device.timeout" || k.key == "quorum.device.sync_timeout";
  if (device_u32 && number <= UINT32_MAX) return KeyValue::u32(static_cast<std::uint32_t>(number));
  if (k.key == "quorum.device.master_wins" && number <= UINT8_MAX)
    return KeyValue::u8(static_cast<std::uint8_t>(number));
  return KeyValue::string(k.value);
}

}  // namespace

std::vector<std::pair<std::string, KeyValue>> config_keys(const config::DaemonConfig& c,
                                                          const membership::TotemConfig& resolved,
                                                          std::uint32_t links_token_ms) {
  std::vector<std::pair<std::string, KeyValue>> keys;
  auto add = [&](std::string key, KeyValue value) { keys.emplace_back(std::move(key), std::move(value)); };

  add("totem.version", KeyValue::u32(2));
  add("totem.cluster_name", KeyValue::string(c.cluster_name));
  add("totem.transport", KeyValue::string(config::describe(c.totem_transport)));
  add("totem.link_mode", KeyValue::string(c.link_mode == config::LinkMode::kActive ? "active" : "passive"));
  add("totem.crypto", KeyValue::string(on_off(c.crypto)));
  add("totem.keyfile", KeyValue::string(c.keyfile));
  add("totem.netmtu", KeyValue::u32(c.netmtu));
  add("totem.fallback", KeyValue::string(yes_no(c.rdma_fallback)));
  for (const config::LinkConfig& link : c.links) {
    const std::string prefix = fmt::format("totem.interface.{}.", link.number);
    add(prefix + "mcastaddr", KeyValue::string(link.mcastaddr));
    add(prefix + "mcastport", {ipc::KeyType::kUint16, link.mcastport, {}});
    add(prefix + "ttl", KeyValue::u8(static_cast<std::uint8_t>(link.ttl)));
    if (!link.bindnetaddr.empty()) add(prefix + "bindnetaddr", KeyValue::string(link.bindnetaddr));
    add(prefix + "knet_link_priority", KeyValue::u8(link.priority));
    add(prefix + "knet_pong_count", KeyValue::u32(link.pong_count));
    // As corosync's: what is in force, derived from the token where the file gives none.
    const transport::LinkTiming timing = link.timing(links_token_ms);
    add(fmt::format("runtime.config.{}knet_ping_interval", prefix),
        KeyValue::u32(static_cast<std::uint32_t>(timing.ping_interval / 1000)));
    add(fmt::format("runtime.config.{}knet_ping_timeout", prefix),
        KeyValue::u32(static_cast<std::uint32_t>(timing.ping_timeout / 1000)));
  }
  // The file's totem numbers (0: not given, derived), then what is in force.
  if (c.token_coefficient_given) add("totem.token_coefficient", KeyValue::u32(c.token_coefficient_ms));
  for (const config::TotemNumber& t : config::totem_numbers()) {
    if (c.totem.*t.field != 0) add(fmt::format("totem.{}", t.key), KeyValue::u32(c.totem.*t.field));
    add(fmt::format("runtime.config.totem.{}", t.key), KeyValue::u32(resolved.*t.field));
  }

  for (std::size_t i = 0; i < c.nodes.size(); ++i) {
    const config::NodeEntry& n = c.nodes[i];
    add(fmt::format("nodelist.node.{}.nodeid", i), KeyValue::u32(n.nodeid));
    if (!n.name.empty()) add(fmt::format("nodelist.node.{}.name", i), KeyValue::string(n.name));
    for (const config::LinkConfig& link : c.links)
      add(fmt::format("nodelist.node.{}.ring{}_addr", i, link.number), KeyValue::string(n.ring_addrs[link.number]));
    add(fmt::format("nodelist.node.{}.quorum_votes", i), KeyValue::u32(n.quorum_votes));
  }

  if (c.quorum) {
    const quorum::QuorumConfig& q = *c.quorum;
    add("quorum.provider", KeyValue::string("corosync_votequorum"));
    // As corosync's cmap: only when the file gives it (runtime.votequorum.expected_votes is in force).
    if (q.expected_votes_configured) add("quorum.expected_votes", KeyValue::u32(q.expected_votes));
    add("quorum.two_node", KeyValue::u8(q.two_node ? 1 : 0));
    add("quorum.wait_for_all", KeyValue::u8(q.wait_for_all ? 1 : 0));
    add("quorum.last_man_standing", KeyValue::u8(q.last_man_standing ? 1 : 0));
    add("quorum.last_man_standing_window", KeyValue::u32(q.last_man_standing_window_ms));
    add("quorum.auto_tie_breaker", KeyValue::u8(q.tie_breaker != quorum::TieBreaker::kNone ? 1 : 0));
    if (q.tie_breaker != quorum::TieBreaker::kNone)
      add("quorum.auto_tie_breaker_node", KeyValue::string(tie_breaker_text(q)));
  }

  const config::LoggingConfig& l = c.logging;
  add("logging.to_stderr", KeyValue::string(yes_no(l.to_stderr)));
  add("logging.to_syslog", KeyValue::string(yes_no(l.to_syslog)));
  add("logging.to_logfile", KeyValue::string(yes_no(l.to_logfile)));
  if (!l.logfile.empty()) add("logging.logfile", KeyValue::string(l.logfile));
  add("logging.syslog_facility", KeyValue::string(l.syslog_facility));
  add("logging.debug", KeyValue::string(on_off(l.debug)));
  add("logging.timestamp", KeyValue::string(on_off(l.timestamp)));
  add("logging.blackbox", KeyValue::string(on_off(l.blackbox)));

  add("ipc.name", KeyValue::string(c.ipc.name));
  add("ipc.client_queue_bytes", KeyValue::u32(c.ipc.client_queue_bytes));
  if (c.ipc.total_queue_bytes != 0) add("ipc.total_queue_bytes", KeyValue::u32(c.ipc.total_queue_bytes));
  add("ipc.max_clients", KeyValue::u32(c.ipc.max_clients));
  for (std::uint32_t uid : c.ipc.allow.uids) add(fmt::format("uidgid.config.uid.{}", uid), KeyValue::u8(1));
  for (std::uint32_t gid : c.ipc.allow.gids) add(fmt::format("uidgid.config.gid.{}", gid), KeyValue::u8(1));

  // A kept key is never one of the above, but for a file that names a section as rtotem names a
  // key ("totem.interface { 0 { mcastaddr: ... } }"): what rtotem uses wins.
  std::set<std::string_view> used;
  for (const auto& [key, value] : keys) used.insert(key);
  std::vector<std::pair<std::string, KeyValue>> kept;
  for (const config::StoredKey& k : c.stored_keys)
    if (!used.contains(k.key)) kept.emplace_back(k.key, kept_value(k));
  std::move(kept.begin(), kept.end(), std::back_inserter(keys));
  return keys;
}

std::vector<std::string> kept_section_prefixes(const config::DaemonConfig& config) {
  std::vector<std::string> out;
  for (const config::StoredKey& k : config.stored_keys) {
    if (std::ranges::any_of(kConfigPrefixes, [&](std::string_view p) { return k.key.starts_with(p); })) continue;
    std::string prefix = k.key.substr(0, k.key.find('.') + 1);
    if (std::ranges::find(out, prefix) == out.end()) out.push_back(std::move(prefix));
  }
  return out;
}

}  // namespace rtotem::keystore
