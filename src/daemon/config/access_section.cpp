// Who may use the daemon's IPC besides root and the daemon's own user: ipc.allow_uid and
// ipc.allow_gid (lists of names or numbers), and corosync's uidgid { uid: gid: } sections, in the
// file itself or one per file in the uidgid.d directory next to it. Names are resolved now, so
// `rtotemd -t` reports a user that does not exist.
#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <vector>

#include "src/daemon/config/config_sections.hpp"

namespace rtotem::config {
namespace {

enum class IdKind { kUser, kGroup };

// A name or a decimal id; ids need not exist (as chown allows), names must.
Result<std::uint32_t> resolve_id(const Value& value, std::string_view item, IdKind kind) {
  std::uint32_t id = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
  if (ec == std::errc() && end == item.data() + item.size()) return id;
  const std::string name(item);
  std::vector<char> scratch(16384);
  if (kind == IdKind::kUser) {
    passwd entry{};
    passwd* found = nullptr;
    const int rc = getpwnam_r(name.c_str(), &entry, scratch.data(), scratch.size(), &found);
    if (found != nullptr) return static_cast<std::uint32_t>(found->pw_uid);
    return rc != 0 ? value.fail("user '{}': {}", name, std::strerror(rc)) : value.fail("no user '{}'", name);
  }
  group entry{};
  group* found = nullptr;
  const int rc = getgrnam_r(name.c_str(), &entry, scratch.data(), scratch.size(), &found);
  if (found != nullptr) return static_cast<std::uint32_t>(found->gr_gid);
  return rc != 0 ? value.fail("group '{}': {}", name, std::strerror(rc)) : value.fail("no group '{}'", name);
}

void insert_sorted(std::vector<std::uint32_t>& ids, std::uint32_t id) {
  const auto at = std::lower_bound(ids.begin(), ids.end(), id);
  if (at == ids.end() || *at != id) ids.insert(at, id);
}

}  // namespace

Result<void> read_id_list(const Value& value, IpcAccess& access, bool groups) {
  std::string_view rest = value.text();
  std::size_t count = 0;
  while (!rest.empty()) {
    const std::size_t cut = rest.find_first_of(", \t");
    const std::string_view item = rest.substr(0, cut);
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
    if (item.empty()) continue;
    auto id = resolve_id(value, item, groups ? IdKind::kGroup : IdKind::kUser);
    if (!id) return id.error();
    insert_sorted(groups ? access.gids : access.uids, *id);
    ++count;
  }
  if (count == 0) return value.fail("a list of user or group names or ids, separated by ',' or spaces");
  return {};
}

Result<void> read_uidgid(ParseContext& context, const ConfigSection& section, IpcAccess& access) {
  for (const ConfigEntry& entry : section.entries) {
    const Value value(context, "uidgid", entry);
    if (entry.key == "uid") {
      if (auto ok = read_id_list(value, access, false); !ok) return ok;
    } else if (entry.key == "gid") {
      if (auto ok = read_id_list(value, access, true); !ok) return ok;
    } else {
      return value.fail("unknown key (uidgid holds uid and gid)");
    }
  }
  return refuse_sections(context, section, "uidgid");
}

}  // namespace rtotem::config
