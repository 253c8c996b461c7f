#include "src/services/keystore/key_access.hpp"

#include <array>
#include <cerrno>
#include <charconv>

namespace rtotem::keystore {

int check_write(std::string_view key, bool root, std::string_view* why) noexcept {
  constexpr std::array<std::string_view, 7> kFromFile{"totem.", "nodelist.",      "quorum.", "logging.",
                                                      "ipc.",   "uidgid.config.", "runtime."};
  // What corosync-blackbox writes to have the flight data dumped: root's, as a shutdown is.
  if (key == "runtime.blackbox.dump_flight_data" || key == "runtime.blackbox.dump_state") {
    if (root) return 0;
    if (why != nullptr) *why = "only root may dump the flight recorder (runtime.blackbox.*)";
    return -EACCES;
  }
  for (std::string_view prefix : kFromFile) {
    if (!key.starts_with(prefix)) continue;
    if (why != nullptr)
      *why = prefix == "runtime." ? "runtime.* is the daemon's state"
                                  : "it comes from the configuration file: edit the file, then rtotemctl reload";
    return -EACCES;
  }
  if (key.starts_with("uidgid.") && !root) {
    if (why != nullptr) *why = "only root may change who may connect (uidgid.*)";
    return -EACCES;
  }
  return 0;
}

std::optional<UidGid> uidgid_of(std::string_view key) noexcept {
  UidGid out;
  if (key.starts_with("uidgid.uid."))
    key.remove_prefix(11);
  else if (key.starts_with("uidgid.gid.")) {
    key.remove_prefix(11);
    out.group = true;
  } else {
    return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), out.id);
  if (ec != std::errc{} || end != key.data() + key.size() || key.empty()) return std::nullopt;
  return out;
}

}  // namespace rtotem::keystore
