// Who may write which keys of the key store. What the configuration file says (totem, nodelist,
// quorum, logging, uidgid.config) changes through the file and a reload; runtime.* is the daemon's
// own state. Everything else is the applications' (cmap's convention), except uidgid.*, which lets
// users connect to the daemon: root's alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rtotem::keystore {

// 0 if a client may set or delete `key`; -EACCES (with `why` set) if not.
int check_write(std::string_view key, bool root, std::string_view* why = nullptr) noexcept;

// The uid or gid a uidgid.uid.N / uidgid.gid.N key names (what Pacemaker writes for its
// haclient group); nullopt for any other key.
struct UidGid {
  bool group = false;
  std::uint32_t id = 0;
};
std::optional<UidGid> uidgid_of(std::string_view key) noexcept;

}  // namespace rtotem::keystore
