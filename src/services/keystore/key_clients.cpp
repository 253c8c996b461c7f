#include "src/services/keystore/key_clients.hpp"

#include <qb/qblog.h>

#include <algorithm>
#include <bit>
#include <cerrno>

#include "src/services/keystore/config_keys.hpp"
#include "src/services/keystore/key_access.hpp"
#include "transport/links/link_set.hpp"

namespace rtotem::keystore {

using ipc::KeyValue;
using membership::NodeId;

KeyClients::KeyClients(NodeId self, stack::StackHost& host, stack::ClientTable& clients,
                       const config::DaemonConfig& config, const membership::TotemConfig& totem,
                       const std::map<NodeId, std::string>& addresses)
    : self_(self),
      host_(host),
      clients_(clients),
      config_(config),
      totem_(totem),
      links_token_ms_(totem.token_timeout_ms),
      addresses_(addresses),
      store_([this](const KeyChange& change) { changed(change); }),
      // Its tracker ids from the top half: a connection that untracks one and switches maps
      // never gets an id again whose late event is still on its way.
      stats_([this](const KeyChange& change) { changed(change); }, std::uint64_t{1} << 63) {
  assign_config();
  store_.set_own("runtime.votequorum.this_node_id", KeyValue::u32(self));
}

void KeyClients::configuration_reloaded() {
  assign_config();
  apply_access();
}

void KeyClients::assign_config() {
  std::vector<std::string> sections = kept_section_prefixes(config_);
  std::vector<std::string_view> prefixes(kConfigPrefixes.begin(), kConfigPrefixes.end());
  for (const auto* list : {&sections, &kept_sections_})
    for (const std::string& prefix : *list)
      if (std::ranges::find(prefixes, prefix) == prefixes.end()) prefixes.push_back(prefix);
  store_.assign(prefixes, config_keys(config_, totem_, links_token_ms_));
  kept_sections_ = std::move(sections);
}

void KeyClients::counter_keys(std::string_view asked) {
  link_keys(asked);
  constexpr std::string_view kPrefix = "runtime.totem.";
  if (!kPrefix.starts_with(asked) && !asked.starts_with(kPrefix)) return;
  host_.node().counters().for_each([&](std::string_view name, std::uint64_t value) {
    store_.set_own(fmt::format("runtime.totem.srp.{}", name), KeyValue::u64(value));
  });
  host_.backend().counters().for_each([&](std::string_view name, std::uint64_t value) {
    store_.set_own(fmt::format("runtime.totem.link.{}", name), KeyValue::u64(value));
  });
}

void KeyClients::link_keys(std::string_view asked) {
  constexpr std::string_view kPrefix = "runtime.links.";
  const transport::LinkSet* set = host_.backend().link_set();
  if (set == nullptr || (!kPrefix.starts_with(asked) && !asked.starts_with(kPrefix))) return;
  // Exactly the peers of now: a node the nodelist dropped has no keys left here.
  std::vector<std::pair<std::string, KeyValue>> entries;
  for (std::size_t l = 0; l < set->link_count(); ++l) {
    for (NodeId peer : set->monitor().peers()) {
      const transport::LinkStatus& s = *set->monitor().status(peer, static_cast<transport::LinkId>(l));
      const std::string prefix = fmt::format("runtime.links.{}.{}.", l, peer);
      entries.emplace_back(prefix + "connected", KeyValue::u8(s.up ? 1 : 0));
      entries.emplace_back(prefix + "latency_us", KeyValue::u64(s.latency));
    }
  }
  const std::string_view prefixes[] = {kPrefix};
  store_.assign(prefixes, std::move(entries));
}

// corosync's runtime.members.<nodeid>.*: joined or left, the address, how often it joined. Only
// nodes of the nodelist form a ring with this one.
void KeyClients::ring_changed(const membership::ConfigChange& change) {
  for (const auto& [n, address] : addresses_) {
    const std::string prefix = fmt::format("runtime.members.{}.", n);
    const KeyValue* status = store_.get(prefix + "status");
    const bool member = std::ranges::find(change.members, n) != change.members.end();
    // Joined: named so, or a member not yet shown as one (this node on its first ring).
    if (member &&
        (std::ranges::find(change.joined, n) != change.joined.end() || status == nullptr || status->data != "joined")) {
      const KeyValue* count = store_.get(prefix + "join_count");
      store_.set_own(prefix + "join_count",
                     KeyValue::u32(count != nullptr ? static_cast<std::uint32_t>(count->bits) + 1 : 1));
      store_.set_own(prefix + "status", KeyValue::string("joined"));
      store_.set_own(prefix + "ip", KeyValue::string(fmt::format("r(0) ip({}) ", address)));
    } else if (!member && status != nullptr) {
      store_.set_own(prefix + "status", KeyValue::string("left"));
    }
  }
}

void KeyClients::quorum_changed(const quorum::QuorumState& state) {
  const quorum::Decision& d = state.decision;
  store_.set_own("runtime.votequorum.quorate", KeyValue::u8(d.quorate ? 1 : 0));
  store_.set_own("runtime.votequorum.expected_votes", KeyValue::u32(d.expected_votes));
  store_.set_own("runtime.votequorum.total_votes", KeyValue::u32(d.total_votes));
  store_.set_own("runtime.votequorum.quorum", KeyValue::u32(d.quorum));
  store_.set_own("runtime.votequorum.two_node", KeyValue::u8(d.two_node ? 1 : 0));
  store_.set_own("runtime.votequorum.wait_for_all_status", KeyValue::u8(d.waiting_for_all ? 1 : 0));
  store_.set_own("runtime.votequorum.ring_id",
                 KeyValue::string(fmt::format("{}.{}", state.ring_id.rep, state.ring_id.seq)));
  if (!state.members.empty()) {
    store_.set_own("runtime.votequorum.lowest_node_id", KeyValue::u32(state.members.front()));
    store_.set_own("runtime.votequorum.highest_node_id", KeyValue::u32(state.members.back()));
  }
}

// Who may connect: the configuration's users and groups, and those uidgid.uid.N / uidgid.gid.N
// name with the value u8 1.
void KeyClients::apply_access() {
  std::vector<std::uint32_t> uids = config_.ipc.allow.uids;
  std::vector<std::uint32_t> gids = config_.ipc.allow.gids;
  store_.for_each("uidgid.", [&](std::string_view key, const KeyValue& value) {
    const auto named = uidgid_of(key);
    // As corosync: a u8 of 1 grants; anything else (0, a string "0"...) does not.
    if (!named || value.type != ipc::KeyType::kUint8 || value.bits != 1) return;
    (named->group ? gids : uids).push_back(named->id);
  });
  for (auto* ids : {&uids, &gids}) {
    std::ranges::sort(*ids);
    ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
  }
  host_.set_access(std::move(uids), std::move(gids));
}

// corosync-blackbox's two writes: dump_state logs the node's state (so that the flight data holds
// it), dump_flight_data writes the flight recorder's file for qb-blackbox.
void KeyClients::blackbox(const LocalClient& client, std::string_view key) {
  if (key == "runtime.blackbox.dump_state") {
    if (dump_state_) dump_state_();
    return;
  }
  const auto written = host_.dump_flight_data();
  if (written)
    qb_log(LOG_NOTICE, "flight data written to %s, asked by pid %d", written->c_str(), static_cast<int>(client.pid));
  else
    qb_log(LOG_WARNING, "flight data not written (asked by pid %d): %s", static_cast<int>(client.pid),
           written.error().message().c_str());
}

void KeyClients::changed(const KeyChange& change) {
  LocalClient* client = clients_.find_generation(change.owner);
  if (client == nullptr) return;
  ipc::BodyWriter body;
  body.u64(change.track);
  body.u32(change.event);
  body.string(change.key);
  for (const KeyValue* value : {change.new_value, change.old_value}) {
    body.u8(value != nullptr ? 1 : 0);
    if (value != nullptr) ipc::put_value(body, *value);
  }
  clients_.send_event(*client, ipc::EventId::kKeyChange, body.data());
}

int KeyClients::read(const KeyStore& store, const IpcRequest& request, ipc::BodyWriter& reply) {
  if (request.id == ipc::RequestId::kKeyGet) {
    const KeyValue* value = store.get(request.key);
    if (value == nullptr) return -ENOENT;
    ipc::put_value(reply, *value);
    return 0;
  }
  std::uint32_t count = 0;
  reply.u32(0);  // the count, filled in below
  store.for_each(request.key, [&](std::string_view key, const KeyValue& value) {
    reply.string(key);
    ipc::put_value(reply, value);
    ++count;
  });
  for (int i = 0; i < 4; ++i) reply.data()[i] = std::byte(count >> (8 * (3 - i)));
  return 0;
}

int KeyClients::track(KeyStore& store, const LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) {
  // The bounds over both maps (each store applies them to its own trackers).
  if (store_.tracker_count() + stats_.tracker_count() >= kTracksMax) return -ENOSPC;
  if (!stack::privileged(client) &&
      store_.tracks_of_user(client.uid) + stats_.tracks_of_user(client.uid) >= kTracksPerUserMax)
    return -ENOSPC;
  std::uint64_t id = 0;
  const int rc =
      store.track({client.generation, client.uid, stack::privileged(client)}, request.key, request.track_flags, id);
  if (rc == 0) reply.u64(id);
  return rc;
}

int KeyClients::request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) {
  if (request.id == ipc::RequestId::kKeyMap) {
    // A connection's trackers are all in one map: untracking goes to the store that holds them.
    if (request.flag != client.key_map &&
        (client.key_map == ipc::kKeyMapStats ? stats_ : store_).tracks_for(client.generation))
      return -EBUSY;
    client.key_map = request.flag;
    return 0;
  }
  if (client.key_map == ipc::kKeyMapStats) return stats_request(client, request, reply);
  switch (request.id) {
    case ipc::RequestId::kKeyGet:
    case ipc::RequestId::kKeyList: counter_keys(request.key); return read(store_, request, reply);
    case ipc::RequestId::kKeySet:
    case ipc::RequestId::kKeyDelete: {
      std::string_view why;
      if (const int rc = check_write(request.key, client.uid == 0, &why); rc != 0) {
        // The writer hears of each; the log of ever fewer, so that a client writing in a loop
        // does not flood it.
        if (std::has_single_bit(++writes_refused_))
          qb_log(LOG_NOTICE, "key store: pid %d (uid %u) may not write %.*s: %.*s (%llu refused so far)",
                 static_cast<int>(client.pid), static_cast<unsigned>(client.uid), static_cast<int>(request.key.size()),
                 request.key.data(), static_cast<int>(why.size()), why.data(),
                 static_cast<unsigned long long>(writes_refused_));
        return rc;
      }
      const int rc = request.id == ipc::RequestId::kKeyDelete
                         ? store_.erase(request.key)
                         : store_.set(request.key,
                                      KeyValue{request.value_type, request.value_bits, std::string(request.value_data)},
                                      stack::privileged(client));
      if (rc == 0 && request.key.starts_with("runtime.blackbox.")) blackbox(client, request.key);
      if (rc == 0 && request.key.starts_with("uidgid.")) {
        apply_access();
        qb_log(LOG_NOTICE, "key store: pid %d %s %.*s: who may connect changes", static_cast<int>(client.pid),
               request.id == ipc::RequestId::kKeyDelete ? "deletes" : "sets", static_cast<int>(request.key.size()),
               request.key.data());
      }
      return rc;
    }
    case ipc::RequestId::kKeyTrack: return track(store_, client, request, reply);
    case ipc::RequestId::kKeyUntrack: return store_.untrack(client.generation, request.track_id);
    default: return -EINVAL;
  }
}

}  // namespace rtotem::keystore
