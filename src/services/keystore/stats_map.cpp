// The statistics map (cmap's CMAP_MAP_STATS): corosync's stats.* keys, under its names where rtotem
// has the same fact, built from the node's counters, its links and its clients. A store of its own,
// refreshed before each request on it and, while it has trackers, every kStatsPollMs as corosync's
// stats timer does: trackers hear of a key added, changed or gone at a refresh.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "src/services/keystore/key_clients.hpp"
#include "transport/links/link_set.hpp"

namespace rtotem::keystore {

using ipc::KeyValue;
using membership::NodeId;

namespace {

// corosync's stats.srp.<name> and the counter of rtotem's that counts the same thing.
struct SrpKey {
  std::string_view name;
  std::uint64_t membership::NodeCounters::*counter;
};
constexpr SrpKey kSrpKeys[] = {
    {"orf_token_rx", &membership::NodeCounters::tokens_received},
    {"mcast_tx", &membership::NodeCounters::messages_sent},
    {"mcast_retx", &membership::NodeCounters::retransmits_sent},
    {"mcast_rx", &membership::NodeCounters::mcasts_received},
    {"memb_join_tx", &membership::NodeCounters::joins_sent},
    {"memb_merge_detect_tx", &membership::NodeCounters::merge_detects_sent},
    {"token_hold_cancel_tx", &membership::NodeCounters::hold_cancels_sent},
    {"operational_entered", &membership::NodeCounters::rings_installed},
    {"operational_token_lost", &membership::NodeCounters::token_losses},
    {"gather_entered", &membership::NodeCounters::gathers},
    {"consensus_timeouts", &membership::NodeCounters::consensus_timeouts},
};

// stats.ipcs.serviceN.PID.HANDLE.*, as Corosync names a connection's keys; HANDLE is the
// connection's generation where Corosync prints its connection's address, unique as that is.
void add_connection_keys(const stack::LocalClient& client, std::vector<std::pair<std::string, KeyValue>>& keys) {
  const std::string prefix =
      fmt::format("stats.ipcs.service{}.{}.{:#x}.", client.service, client.pid, client.generation);
  const stack::ChannelCounts channel = client.channel.counts();
  const stack::ClientIpcCounts& own = client.ipc_counts;
  const auto add = [&](std::string_view name, KeyValue value) {
    keys.emplace_back(prefix + std::string(name), std::move(value));
  };
  add("queueing", KeyValue::i32(client.backlog.empty() ? 0 : 1));
  add("queued", KeyValue::u32(static_cast<std::uint32_t>(client.backlog.count())));
  add("invalid_request", KeyValue::u64(own.invalid_requests));
  add("overload", KeyValue::u64(own.overloads));
  add("sent", KeyValue::u32(own.sent));
  add("procname", KeyValue::string(client.process_name));
  add("requests", KeyValue::u64(channel.requests));
  add("responses", KeyValue::u64(channel.responses));
  add("dispatched", KeyValue::u64(channel.events));
  add("send_retries", KeyValue::u64(channel.send_retries));
  add("recv_retries", KeyValue::u64(channel.recv_retries));
  add("flow_control", KeyValue::u32(channel.flow_control));
  add("flow_control_count", KeyValue::u64(channel.flow_control_count));
}

// A counter, which a clear zeroes (the rest are states: connected, mtu, latency, active).
bool counts(std::string_view key) {
  return key.starts_with("stats.srp.") || key.ends_with(".down_count") || key.ends_with(".up_count") ||
         key.ends_with(".latency_samples") || key == "stats.ipcs.global.closed";
}

// What corosync's stats.clear.<what> zeroes, matched by prefix as corosync matches it; nullopt:
// no such clear. schedmiss clears nothing here: rtotemd records no scheduling misses.
std::optional<std::vector<std::string_view>> cleared_by(std::string_view what) {
  using List = std::vector<std::string_view>;
  if (what.starts_with("totem")) return List{"stats.srp."};
  if (what.starts_with("knet")) return List{"stats.knet."};
  if (what.starts_with("ipc")) return List{"stats.ipcs."};
  if (what.starts_with("schedmiss")) return List{};
  if (what.starts_with("all")) return List{"stats."};
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<std::string, KeyValue>> KeyClients::stats_keys() const {
  std::vector<std::pair<std::string, KeyValue>> keys;
  const membership::NodeCounters& srp = host_.node().counters();
  for (const SrpKey& k : kSrpKeys)
    keys.emplace_back(fmt::format("stats.srp.{}", k.name), KeyValue::u64(srp.*k.counter));

  // stats.knet.node<N>.link<M>: each node of the nodelist on each link, as corosync adds them. With
  // several links, what the link's pings say; with one, a member of the ring is connected.
  const transport::Backend& backend = host_.backend();
  const transport::LinkSet* set = backend.link_set();
  const std::size_t links = set != nullptr ? set->link_count() : 1;
  const auto members = host_.node().members();
  for (const auto& [node, address] : addresses_) {
    for (std::size_t l = 0; l < (node == self_ ? 1 : links); ++l) {  // this node: its link 0, as knet's loopback
      const std::string prefix = fmt::format("stats.knet.node{}.link{}.", node, l);
      const auto link = static_cast<transport::LinkId>(l);
      const transport::LinkStatus* status =
          set != nullptr && node != self_ ? set->monitor().status(node, link) : nullptr;
      const bool member = std::ranges::find(members, node) != members.end();
      const bool connected = node == self_ || (status != nullptr ? status->up : member);
      const transport::Backend* carrier = set != nullptr ? set->link(link) : &backend;
      keys.emplace_back(prefix + "connected", KeyValue::u8(connected ? 1 : 0));
      keys.emplace_back(prefix + "enabled", KeyValue::u8(carrier != nullptr ? 1 : 0));
      keys.emplace_back(prefix + "mtu", KeyValue::u32(carrier != nullptr ? carrier->mtu() : 0));
      if (status != nullptr) {
        keys.emplace_back(prefix + "latency_ave", KeyValue::u32(static_cast<std::uint32_t>(status->latency)));
        keys.emplace_back(prefix + "down_count", KeyValue::u32(static_cast<std::uint32_t>(status->went_down)));
        keys.emplace_back(prefix + "up_count", KeyValue::u32(static_cast<std::uint32_t>(status->went_up)));
        keys.emplace_back(prefix + "latency_samples", KeyValue::u32(status->samples));
      }
    }
  }

  std::uint64_t active = 0;  // not those closing, whose connection has gone already
  clients_.for_each_client([&](const LocalClient& client) {
    ++active;
    add_connection_keys(client, keys);
  });
  keys.emplace_back("stats.ipcs.global.active", KeyValue::u64(active));
  keys.emplace_back("stats.ipcs.global.closed", KeyValue::u64(clients_.connections_made() - active));
  std::ranges::sort(keys, {}, &std::pair<std::string, KeyValue>::first);
  return keys;
}

void KeyClients::refresh_stats() {
  constexpr std::string_view kPrefixes[] = {"stats."};
  auto keys = stats_keys();
  for (auto& [key, value] : keys)  // rtotemd's counters only grow: a clear counts from where it was
    if (const auto base = stats_cleared_.find(key); base != stats_cleared_.end())
      value.bits -= std::min(value.bits, base->second);
  stats_.assign(kPrefixes, std::move(keys));
  stats_refreshed_ = host_.now();
}

int KeyClients::clear_stats(const LocalClient& client, std::string_view what) {
  const auto prefixes = cleared_by(what);
  if (!prefixes) return -ENOTSUP;
  // Monitoring reads these: a user the configuration lets in may not hide what they show.
  if (!stack::privileged(client)) return -EACCES;
  for (const auto& [key, value] : stats_keys())
    for (std::string_view prefix : *prefixes)
      if (key.starts_with(prefix) && counts(key)) stats_cleared_[key] = value.bits;
  // A connection's counts are zeroed where they are kept, as Corosync has libqb clear its own.
  if (std::ranges::any_of(*prefixes, [](std::string_view p) { return std::string_view("stats.ipcs.").starts_with(p); }))
    clients_.for_each_client([](LocalClient& c) {
      c.channel.clear_counts();
      c.ipc_counts = {};
    });
  refresh_stats();
  return 0;
}

std::optional<membership::Time> KeyClients::deadline() const {
  if (stats_.tracker_count() == 0) return std::nullopt;
  return stats_refreshed_ + membership::Time{kStatsPollMs} * 1000;
}

void KeyClients::on_time(membership::Time now) {
  if (const auto due = deadline(); due && now >= *due) refresh_stats();
}

// Reads and tracking as on the key store; writes refused as corosync refuses them, but
// stats.clear.*, which zeroes the counters.
int KeyClients::stats_request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) {
  switch (request.id) {
    case ipc::RequestId::kKeyGet:
    case ipc::RequestId::kKeyList: refresh_stats(); return read(stats_, request, reply);
    case ipc::RequestId::kKeySet:
      if (constexpr std::string_view kClear = "stats.clear."; request.key.starts_with(kClear))
        return clear_stats(client, request.key.substr(kClear.size()));
      return -EACCES;
    case ipc::RequestId::kKeyDelete: return request.key.starts_with("stats.clear.") ? -ENOTSUP : -EACCES;
    case ipc::RequestId::kKeyTrack: {
      // As corosync's: a prefix tracker must ask for adds and deletes, and is told of nothing else.
      IpcRequest asked = request;
      if ((asked.track_flags & kTrackPrefix) != 0) {
        if ((asked.track_flags & kTrackAdd) == 0 || (asked.track_flags & kTrackDelete) == 0) return -ENOTSUP;
        asked.track_flags &= ~kTrackModify;
      }
      refresh_stats();  // what this tracker compares with, as corosync takes it at track_add
      return track(stats_, client, asked, reply);
    }
    case ipc::RequestId::kKeyUntrack: return stats_.untrack(client.generation, request.track_id);
    default: return -EINVAL;
  }
}

}  // namespace rtotem::keystore
