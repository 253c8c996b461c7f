// The key store (corosync's cmap) as local clients use it: get, set, delete, list and track; the
// runtime keys the node keeps there (runtime.members.*, runtime.votequorum.*, runtime.totem.*,
// runtime.links.*); and what a write does: uidgid.uid.N / uidgid.gid.N let that user or group
// connect from then on.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "src/services/keystore/key_store.hpp"
#include "src/services/quorum/quorum_service.hpp"
#include "src/stack/client_table.hpp"
#include "src/stack/stack_host.hpp"

namespace rtotem::keystore {

using stack::IpcRequest;
using stack::LocalClient;

class KeyClients {
 public:
  // `config`, `totem`: the running configuration, whose keys the store holds (and a reload
  // replaces; the links keep the ping timing of the token `totem` has now); `addresses`: each node's ring0 address, for
  // runtime.members.
  KeyClients(membership::NodeId self, stack::StackHost& host, stack::ClientTable& clients,
             const config::DaemonConfig& config, const membership::TotemConfig& totem,
             const std::map<membership::NodeId, std::string>& addresses);

  // kKeyGet, kKeySet, kKeyDelete, kKeyList, kKeyTrack, kKeyUntrack, on the map the client chose
  // with kKeyMap: the key store, or the statistics (stats_map.cpp).
  int request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply);
  void client_gone(const LocalClient& client) {
    store_.untrack_all(client.generation);
    stats_.untrack_all(client.generation);
  }
  // The statistics map's next refresh for its trackers (corosync polls every 1.5 s), if any tracks.
  std::optional<membership::Time> deadline() const;
  void on_time(membership::Time now);
  // The configuration's keys again (a reload), and who may connect.
  void configuration_reloaded();
  void apply_access();

  void ring_changed(const membership::ConfigChange& change);  // runtime.members.*
  void quorum_changed(const quorum::QuorumState& state);      // runtime.votequorum.*

  const KeyStore& store() const noexcept { return store_; }
  // What runtime.blackbox.dump_state logs: the node stack's state, which this does not see.
  void on_dump_state(std::function<void()> dump) { dump_state_ = std::move(dump); }

 private:
  static constexpr std::uint32_t kStatsPollMs = 1500;  // corosync's stats timer

  void changed(const KeyChange& change);                           // to the tracker's owner
  void blackbox(const LocalClient& client, std::string_view key);  // a runtime.blackbox.* write
  static int read(const KeyStore& store, const IpcRequest& request, ipc::BodyWriter& reply);  // kKeyGet, kKeyList
  int track(KeyStore& store, const LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply);
  int stats_request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply);
  std::vector<std::pair<std::string, KeyValue>> stats_keys() const;
  void refresh_stats();
  int clear_stats(const LocalClient& client, std::string_view what);  // stats.clear.<what>
  // Counters change on every packet: copied in when a client reads under runtime.totem; so is
  // each link's state per node (several links), under runtime.links.<link>.<nodeid>.
  void counter_keys(std::string_view asked);
  void link_keys(std::string_view asked);
  // The configuration's keys into the store, replacing every key under its prefixes and under
  // those the running file had before.
  void assign_config();

  membership::NodeId self_;
  stack::StackHost& host_;
  stack::ClientTable& clients_;
  const config::DaemonConfig& config_;
  const membership::TotemConfig& totem_;
  std::uint32_t links_token_ms_;
  const std::map<membership::NodeId, std::string>& addresses_;
  KeyStore store_;
  KeyStore stats_;  // the statistics map: stats.* only
  std::function<void()> dump_state_;
  membership::Time stats_refreshed_ = 0;
  std::map<std::string, std::uint64_t, std::less<>> stats_cleared_;  // each counter's value at its last clear
  std::vector<std::string> kept_sections_;                           // kept_section_prefixes of the last assign_config
  std::uint64_t writes_refused_ = 0;                                 // by key_access: logged at the 1st, 2nd, 4th...
};

}  // namespace rtotem::keystore
