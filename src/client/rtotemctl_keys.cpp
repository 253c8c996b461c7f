// rtotemctl's key store commands, in corosync-cmapctl's manner: get, set, delete, list, track.
// A key prints as "KEY (TYPE) = VALUE"; with --json, one object per key.
#include <cerrno>
#include <optional>

#include "src/client/rtotemctl_common.hpp"
#include "src/ipc/json_quote.hpp"
#include "src/ipc/key_value.hpp"

namespace rtotem::ctl {
namespace {

using ipc::KeyValue;

std::optional<KeyValue> value_of(const rtotem_key_value& c) {
  return ipc::from_native(static_cast<ipc::KeyType>(c.type), c.data, c.len);
}

std::string key_line(std::string_view key, const KeyValue& value, bool json) {
  if (json)
    return fmt::format(
        "{{\"key\": {}, \"type\": \"{}\", \"value\": {}}}", ipc::json_quoted(key), ipc::type_name(value.type),
        ipc::is_number(value.type) && value.type != ipc::KeyType::kFloat && value.type != ipc::KeyType::kDouble
            ? ipc::value_text(value)
            : ipc::json_quoted(ipc::value_text(value)));
  return fmt::format("{} ({}) = {}", key, ipc::type_name(value.type), ipc::value_text(value));
}

// The library's texts speak of groups: the key store's answers get their own.
int key_failed(std::string_view what, std::string_view key, int rc) {
  const char* why = rc == -ENOENT   ? "no such key"
                    : rc == -EACCES ? "not writable: totem, nodelist, quorum, logging, ipc and uidgid.config come "
                                      "from the config file (edit it, then rtotemctl reload), runtime.* is the "
                                      "daemon's, and only root writes uidgid.*"
                    : rc == -ENOSPC ? "the key store is full"
                    : rc == -EINVAL ? "not a key name (3 to 255 of a-z A-Z 0-9 . _ / - :) or a bad value"
                                    : nullptr;
  if (why == nullptr) return fail(fmt::format("{} {}", what, key), rc);
  fmt::print(stderr, "rtotemctl: {} {}: {}\n", what, key, why);
  return kExitFailed;
}

int get(const Options& o, const std::string& key) {
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  std::vector<char> buf(RTOTEM_KEY_VALUE_MAX + 1);
  std::size_t len = buf.size();
  rtotem_key_type type{};
  if (const int rc = rtotem_key_get(h.get(), key.c_str(), buf.data(), &len, &type); rc < 0)
    return key_failed("get", key, rc);
  const auto value = value_of({type, buf.data(), len});
  if (!value) return fail("reply", -EPROTO);
  fmt::print("{}\n", key_line(key, *value, o.json));
  return kExitOk;
}

int set(const Options& o, const std::string& key, const std::string& type_text, const std::string& text) {
  const std::optional<ipc::KeyType> type = ipc::type_named(type_text);
  if (!type) {
    fmt::print(stderr, "rtotemctl: set: unknown type '{}' (i8 u8 i16 u16 i32 u32 i64 u64 flt dbl str bin)\n",
               type_text);
    return kExitFailed;
  }
  const std::optional<KeyValue> value = ipc::parse_value(*type, text);
  if (!value) {
    fmt::print(stderr, "rtotemctl: set: '{}' is not a {} value\n", text, type_text);
    return kExitFailed;
  }
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  std::vector<std::byte> native(std::max<std::size_t>(8, value->data.size()));
  const std::size_t len = ipc::native_bytes(*value, native.data());
  if (const int rc = rtotem_key_set(h.get(), key.c_str(), static_cast<rtotem_key_type>(*type), native.data(), len);
      rc < 0)
    return key_failed("set", key, rc);
  return kExitOk;
}

int erase(const Options& o, const std::string& key) {
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  if (const int rc = rtotem_key_delete(h.get(), key.c_str()); rc < 0) return key_failed("delete", key, rc);
  return kExitOk;
}

int list(const Options& o, const std::string& prefix) {
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  struct State {
    bool json;
    bool bad = false;
  } state{o.json};
  const int rc = rtotem_key_list(
      h.get(), prefix.c_str(),
      [](const char* key, const rtotem_key_value* c, void* ctx) {
        auto& s = *static_cast<State*>(ctx);
        const auto value = value_of(*c);
        if (!value) return (s.bad = true), 1;
        fmt::print("{}\n", key_line(key, *value, s.json));
        return 0;
      },
      &state);
  if (rc < 0) return fail(fmt::format("list {}", prefix), rc);
  return state.bad ? fail("reply", -EPROTO) : kExitOk;
}

void print_change(rtotem_t*, std::uint64_t, int event, const char* key, const rtotem_key_value* now,
                  const rtotem_key_value* before, void* user) {
  const bool json = *static_cast<bool*>(user);
  const std::optional<KeyValue> after = now != nullptr ? value_of(*now) : std::nullopt;
  const std::optional<KeyValue> was = before != nullptr ? value_of(*before) : std::nullopt;
  const char* what = event == RTOTEM_TRACK_ADD ? "added" : event == RTOTEM_TRACK_MODIFY ? "changed" : "deleted";
  if (json) {
    fmt::print("{{\"event\": \"{}\", \"key\": {}, \"new\": {}, \"old\": {}}}\n", what, ipc::json_quoted(key),
               after ? key_line(key, *after, true) : "null", was ? key_line(key, *was, true) : "null");
  } else if (after) {
    fmt::print("{} {}{}\n", what, key_line(key, *after, false),
               was ? fmt::format(" (was {})", ipc::value_text(*was)) : "");
  } else {
    fmt::print("{} {}{}\n", what, key, was ? fmt::format(" (was {})", ipc::value_text(*was)) : "");
  }
  std::fflush(stdout);
}

int track(const Options& o, const std::string& prefix) {
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  bool json = o.json;
  std::uint64_t id = 0;
  const int flags = RTOTEM_TRACK_ADD | RTOTEM_TRACK_MODIFY | RTOTEM_TRACK_DELETE | RTOTEM_TRACK_PREFIX;
  if (const int rc = rtotem_key_track(h.get(), prefix.c_str(), flags, print_change, &json, &id); rc < 0)
    return fail(fmt::format("track {}", prefix), rc);
  return dispatch_until_interrupted(h.get());
}

}  // namespace

int key_command(const Options& o) {
  const auto& w = o.words;
  if (w[0] == "get" && w.size() == 2) return get(o, w[1]);
  if (w[0] == "set" && w.size() == 4) return set(o, w[1], w[2], w[3]);
  if (w[0] == "delete" && w.size() == 2) return erase(o, w[1]);
  if (w[0] == "list" && w.size() <= 2) return list(o, w.size() == 2 ? w[1] : "");
  if (w[0] == "track" && w.size() <= 2) return track(o, w.size() == 2 ? w[1] : "");
  return kExitUsage;
}

}  // namespace rtotem::ctl
