#include "src/services/keystore/key_store.hpp"

#include <algorithm>
#include <cerrno>
#include <set>

namespace rtotem::keystore {

const KeyValue* KeyStore::get(std::string_view key) const {
  const auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &it->second;
}

int KeyStore::put(std::string_view key, KeyValue value, Room room) {
  const auto it = keys_.find(key);
  if (it == keys_.end()) {
    if (keys_.size() >= room.keys || bytes_ + cost(key, value) > room.bytes) return -ENOSPC;
    bytes_ += cost(key, value);
    const auto added = keys_.emplace(std::string(key), std::move(value)).first;
    tell(kTrackAdd, added->first, &added->second, nullptr);
    return 0;
  }
  if (it->second == value) return 0;
  // A value that shrinks always may: the store may be past `room` by others' writes.
  if (cost(key, value) > cost(key, it->second) && bytes_ - cost(key, it->second) + cost(key, value) > room.bytes)
    return -ENOSPC;
  bytes_ = bytes_ - cost(key, it->second) + cost(key, value);
  const KeyValue before = std::exchange(it->second, std::move(value));
  tell(kTrackModify, it->first, &it->second, &before);
  return 0;
}

int KeyStore::erase(std::string_view key) {
  const auto it = keys_.find(key);
  if (it == keys_.end()) return -ENOENT;
  const std::string name = it->first;
  const KeyValue before = std::move(it->second);
  bytes_ -= cost(name, before);
  keys_.erase(it);
  tell(kTrackDelete, name, nullptr, &before);
  return 0;
}

void KeyStore::assign(std::span<const std::string_view> prefixes,
                      std::vector<std::pair<std::string, KeyValue>> entries) {
  std::set<std::string, std::less<>> kept;
  for (const auto& [key, value] : entries) kept.insert(key);
  std::vector<std::string> gone;
  for (std::string_view prefix : prefixes)
    for_each(prefix, [&](std::string_view key, const KeyValue&) {
      if (!kept.contains(key)) gone.emplace_back(key);
    });
  for (const std::string& key : gone) (void)erase(key);
  for (auto& [key, value] : entries) {
    auto [it, added] = keys_.try_emplace(key, value);
    if (added) {
      bytes_ += cost(key, value);
      tell(kTrackAdd, it->first, &it->second, nullptr);
    } else if (!(it->second == value)) {
      bytes_ = bytes_ - cost(key, it->second) + cost(key, value);
      const KeyValue before = std::exchange(it->second, std::move(value));
      tell(kTrackModify, it->first, &it->second, &before);
    }
  }
}

int KeyStore::track(const TrackOwner& who, std::string_view key, std::uint32_t flags, std::uint64_t& id) {
  if ((flags & (kTrackAdd | kTrackModify | kTrackDelete)) == 0 ||
      (flags & ~(kTrackAdd | kTrackModify | kTrackDelete | kTrackPrefix)) != 0)
    return -EINVAL;
  const auto held = [](const auto& counts, auto of) {
    const auto found = counts.find(of);
    return found == counts.end() ? std::size_t{0} : found->second;
  };
  if (trackers_.size() >= kTracksMax || held(tracks_of_owner_, who.owner) >= kTracksPerOwnerMax) return -ENOSPC;
  if (!who.privileged &&
      (tracks_unprivileged_ >= kTracksUnprivilegedMax || held(tracks_of_user_, who.uid) >= kTracksPerUserMax))
    return -ENOSPC;
  id = next_track_++;
  trackers_.push_back({id, who, std::string(key), flags});
  tally(who, true);
  return 0;
}

int KeyStore::untrack(std::uint64_t owner, std::uint64_t id) {
  const auto it = std::ranges::find_if(trackers_, [&](const Tracker& t) { return t.id == id && t.who.owner == owner; });
  if (it == trackers_.end()) return -ENOENT;
  tally(it->who, false);
  trackers_.erase(it);
  return 0;
}

void KeyStore::untrack_all(std::uint64_t owner) {
  std::erase_if(trackers_, [&](const Tracker& t) {
    if (t.who.owner != owner) return false;
    tally(t.who, false);
    return true;
  });
}

void KeyStore::tally(const TrackOwner& who, bool made) {
  const auto step = [made](std::size_t& n) { n = made ? n + 1 : n - 1; };
  const auto step_entry = [&](auto& counts, auto of) {  // an entry at 0 goes
    const auto it = counts.try_emplace(of, 0).first;
    step(it->second);
    if (it->second == 0) counts.erase(it);
  };
  step_entry(tracks_of_owner_, who.owner);
  if (who.privileged) return;
  step_entry(tracks_of_user_, who.uid);
  step(tracks_unprivileged_);
}

// The hits are found first: a tracker's owner may go (and untrack) while it is told.
void KeyStore::tell(std::uint32_t event, std::string_view key, const KeyValue* now, const KeyValue* before) const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> hits;
  for (const Tracker& t : trackers_) {
    if ((t.flags & event) == 0) continue;
    if ((t.flags & kTrackPrefix) != 0 ? key.starts_with(t.key) : key == t.key) hits.emplace_back(t.who.owner, t.id);
  }
  for (const auto& [owner, id] : hits) notify_(KeyChange{owner, id, event, key, now, before});
}

}  // namespace rtotem::keystore
