// rtotemd's key store, in the manner of corosync's cmap: typed values under dotted names, local to
// this node. Writes tell the trackers whose key or prefix they touch (an add, a change, a delete).
// Sans-I/O: who may write what is key_access's business, and what the keys hold is the daemon's
// (config_keys, runtime keys).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/ipc/key_value.hpp"

namespace rtotem::keystore {

using ipc::KeyValue;

// cmap's CMAP_TRACK_* values: what a tracker is told of; kTrackPrefix makes its key a prefix.
inline constexpr std::uint32_t kTrackDelete = 1;
inline constexpr std::uint32_t kTrackModify = 2;
inline constexpr std::uint32_t kTrackAdd = 4;
inline constexpr std::uint32_t kTrackPrefix = 8;

// Bounds, so that no client can make the daemon hold unbounded memory. Unprivileged clients'
// writes (of all but root and the daemon's own user) may fill the store only so far: the rest is
// for the privileged clients' (Pacemaker's uidgid.gid.N at its start), whoever wrote first.
inline constexpr std::size_t kKeysMax = 65536;
inline constexpr std::size_t kBytesMax = 16u << 20;  // names and values together
inline constexpr std::size_t kKeysUnprivilegedMax = kKeysMax / 4 * 3;
inline constexpr std::size_t kBytesUnprivilegedMax = kBytesMax / 4 * 3;
// Trackers are bounded in all (each change is matched against every one) and per connection.
// So that no user the configuration lets in takes them from the others, unprivileged users (all
// but root and the daemon's own) are bounded each and together too: the rest is the privileged
// clients' (Pacemaker's).
inline constexpr std::size_t kTracksPerOwnerMax = 1024;       // one connection
inline constexpr std::size_t kTracksPerUserMax = 4096;        // one unprivileged user's connections
inline constexpr std::size_t kTracksUnprivilegedMax = 12288;  // every unprivileged user's together
inline constexpr std::size_t kTracksMax = 16384;              // every tracker
static_assert(kTracksPerOwnerMax <= kTracksPerUserMax && kTracksPerUserMax <= kTracksUnprivilegedMax);
static_assert(kTracksMax - kTracksUnprivilegedMax >= kTracksPerOwnerMax);  // the reserve holds a connection's share

// Who asks for a tracker: the owner is told of its changes (the daemon's client); its user and
// whether that user is privileged say which bounds apply.
struct TrackOwner {
  std::uint64_t owner = 0;
  std::uint32_t uid = 0;
  bool privileged = false;
};

struct KeyChange {
  std::uint64_t owner = 0;  // the tracker's owner (the daemon's client)
  std::uint64_t track = 0;  // the tracker's id, as track() returned it
  std::uint32_t event = 0;  // kTrackAdd, kTrackModify or kTrackDelete
  std::string_view key;
  const KeyValue* new_value = nullptr;  // null on delete
  const KeyValue* old_value = nullptr;  // null on add
};

class KeyStore {
 public:
  using Notify = std::function<void(const KeyChange&)>;
  // `first_track`: the first tracker id; two stores a connection may use give ids apart.
  explicit KeyStore(Notify notify, std::uint64_t first_track = 1)
      : notify_(std::move(notify)), next_track_(first_track) {}

  const KeyValue* get(std::string_view key) const;
  // Adds or changes `key` and tells its trackers; setting the value it holds tells no one.
  // 0, or -ENOSPC if it would grow the store past kKeysMax or kBytesMax (kKeysUnprivilegedMax or
  // kBytesUnprivilegedMax for an unprivileged writer). The name is the caller's to check
  // (valid_key_name).
  int set(std::string_view key, KeyValue value, bool privileged) {
    return privileged ? put(key, std::move(value), {kKeysMax, kBytesMax})
                      : put(key, std::move(value), {kKeysUnprivilegedMax, kBytesUnprivilegedMax});
  }
  // The same, without the bounds: the daemon's own keys (runtime.*), which a client that filled
  // the store must not hold back. Few: bounded by the nodes and counters there are.
  void set_own(std::string_view key, KeyValue value) { (void)put(key, std::move(value), {SIZE_MAX, SIZE_MAX}); }
  int erase(std::string_view key);  // 0, or -ENOENT
  // Makes the keys under each of `prefixes` exactly `entries` (a reloaded configuration): those
  // missing are deleted, the others set; trackers hear of what changed. Bounds are not applied:
  // the entries are the daemon's own.
  void assign(std::span<const std::string_view> prefixes, std::vector<std::pair<std::string, KeyValue>> entries);
  // f(key, value) for each key that starts with `prefix`, in name order.
  template <class F>
  void for_each(std::string_view prefix, F&& f) const {
    for (auto it = keys_.lower_bound(prefix); it != keys_.end() && it->first.starts_with(prefix); ++it)
      f(std::string_view(it->first), it->second);
  }

  // Tracks `key` (a prefix with kTrackPrefix) for the events in `flags`, on behalf of `who`: 0
  // and the tracker's id in `id`, -EINVAL if flags name no event, -ENOSPC past kTracksPerOwnerMax
  // or kTracksMax, or (unprivileged) kTracksPerUserMax or kTracksUnprivilegedMax.
  int track(const TrackOwner& who, std::string_view key, std::uint32_t flags, std::uint64_t& id);
  int untrack(std::uint64_t owner, std::uint64_t id);  // 0, or -ENOENT (not that owner's)
  void untrack_all(std::uint64_t owner);

  std::size_t size() const noexcept { return keys_.size(); }
  std::size_t tracker_count() const noexcept { return trackers_.size(); }
  bool tracks_for(std::uint64_t owner) const noexcept { return tracks_of_owner_.contains(owner); }
  std::size_t tracks_of_user(std::uint32_t uid) const noexcept {
    const auto it = tracks_of_user_.find(uid);
    return it != tracks_of_user_.end() ? it->second : 0;
  }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct Tracker {
    std::uint64_t id = 0;
    TrackOwner who;
    std::string key;
    std::uint32_t flags = 0;
  };
  struct Room {
    std::size_t keys = 0;
    std::size_t bytes = 0;
  };
  int put(std::string_view key, KeyValue value, Room room);  // -ENOSPC if the store grows past `room`
  void tally(const TrackOwner& who, bool made);              // a tracker of `who` made, or gone
  void tell(std::uint32_t event, std::string_view key, const KeyValue* now, const KeyValue* before) const;
  static std::size_t cost(std::string_view key, const KeyValue& value) noexcept {
    return key.size() + value.data.size() + sizeof(KeyValue);
  }

  Notify notify_;
  std::map<std::string, KeyValue, std::less<>> keys_;
  std::size_t bytes_ = 0;
  std::vector<Tracker> trackers_;
  std::map<std::uint64_t, std::size_t> tracks_of_owner_;  // owners with trackers
  std::map<std::uint32_t, std::size_t> tracks_of_user_;   // unprivileged users with trackers
  std::size_t tracks_unprivileged_ = 0;
  std::uint64_t next_track_;
};

}  // namespace rtotem::keystore
