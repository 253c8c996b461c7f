// libcmap.so.4 over librtotem's key store (rtotem_key_*), or its statistics map (CMAP_MAP_STATS,
// rtotem_key_map): the default map's keys are the ones `rtotemctl get/list` shows. Strings are stored by rtotemd
// without their terminator; here, as in cmap, a string's length counts it.
#include <corosync/cmap.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/corosync/shim/connection.hpp"
#include "src/corosync/shim/export.hpp"
#include "src/corosync/shim/handle_calls.hpp"

namespace {

using rtotem::corosync::Connection;
using rtotem::corosync::cs_error;
using rtotem::corosync::Service;

struct Tracker {
  Connection* connection = nullptr;  // its handle's, which runs the callback
  cmap_handle_t cmap = 0;
  cmap_track_handle_t self = 0;  // never one a deleted tracker had, as Corosync's are not
  cmap_notify_fn_t notify = nullptr;
  void* user = nullptr;
  std::optional<std::uint64_t> rtotem_id;  // none for a tracker of no event, which rtotemd refuses
};

struct KeyInfo {
  std::string name;
  size_t len;
  cmap_value_types_t type;
};

struct Iterator {
  std::vector<KeyInfo> keys;  // taken when the iteration starts, in name order
  std::size_t next = 0;
};

struct Cmap {
  Connection connection;
  const void* context = nullptr;
  std::map<cmap_iter_handle_t, Iterator> iterators;
  cmap_iter_handle_t iterators_made = 0;
  std::map<cmap_track_handle_t, std::unique_ptr<Tracker>> trackers;  // stable addresses: librtotem's user
  cmap_track_handle_t trackers_made = 0;
};

rtotem::corosync::HandleTable<Cmap>& handles() {
  static auto& table = *new rtotem::corosync::HandleTable<Cmap>;  // see handle_table.hpp: never destroyed
  return table;
}

// What a C caller sees of a value: a string's length counts its terminator.
size_t cmap_len(const rtotem_key_value& v) { return v.type == RTOTEM_KEY_STRING ? v.len + 1 : v.len; }

bool valid_type(int type) { return type >= CMAP_VALUETYPE_INT8 && type <= CMAP_VALUETYPE_BINARY; }

size_t width(cmap_value_types_t type) {
  switch (type) {
    case CMAP_VALUETYPE_INT8:
    case CMAP_VALUETYPE_UINT8: return 1;
    case CMAP_VALUETYPE_INT16:
    case CMAP_VALUETYPE_UINT16: return 2;
    case CMAP_VALUETYPE_INT32:
    case CMAP_VALUETYPE_UINT32:
    case CMAP_VALUETYPE_FLOAT: return 4;
    case CMAP_VALUETYPE_INT64:
    case CMAP_VALUETYPE_UINT64:
    case CMAP_VALUETYPE_DOUBLE: return 8;
    default: return 0;
  }
}

// A value as read: its type, and up to RTOTEM_KEY_VALUE_MAX bytes with room for a terminator.
struct Value {
  rtotem_key_type type{};
  size_t len = 0;
  char data[RTOTEM_KEY_VALUE_MAX + 1];
};

cs_error_t read_value(Cmap& c, const char* key, Value& out) {
  if (key == nullptr) return CS_ERR_INVALID_PARAM;
  out.len = sizeof out.data;
  std::lock_guard lock(c.connection.mutex());
  const int rc = rtotem_key_get(c.connection.handle(), key, out.data, &out.len, &out.type);
  if (rc == 0 && out.type == RTOTEM_KEY_STRING) out.data[out.len] = '\0';
  return cs_error(rc);
}

cs_error_t write_value(Cmap& c, const char* key, const void* value, size_t len, cmap_value_types_t type) {
  if (key == nullptr || value == nullptr || !valid_type(type)) return CS_ERR_INVALID_PARAM;
  if (type == CMAP_VALUETYPE_STRING)
    len = strnlen(static_cast<const char*>(value), len);
  else if (width(type) != 0 && len != width(type))
    return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(c.connection.mutex());
  return cs_error(rtotem_key_set(c.connection.handle(), key, static_cast<rtotem_key_type>(type), value, len));
}

template <class T>
cs_error_t get_typed(cmap_handle_t handle, const char* key, T* out, cmap_value_types_t type) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  if (out == nullptr) return CS_ERR_INVALID_PARAM;
  Value v;
  if (cs_error_t rc = read_value(*c, key, v); rc != CS_OK) return rc;
  // As cmap: a typed getter reads only a value of exactly its type.
  if (static_cast<int>(v.type) != type || v.len != sizeof(T)) return CS_ERR_INVALID_PARAM;
  std::memcpy(out, v.data, sizeof(T));
  return CS_OK;
}

template <class T>
cs_error_t set_typed(cmap_handle_t handle, const char* key, T value, cmap_value_types_t type) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  return write_value(*c, key, &value, sizeof value, type);
}

// A value as a tracker's callback gets it, kept past librtotem's event: its bytes (a string's with
// its terminator, which len counts). The missing side (old on an add, new on a delete) has type 0.
struct NotifyValue {
  cmap_value_types_t type{};
  std::vector<char> bytes;
  NotifyValue(const rtotem_key_value* v) {
    if (v == nullptr) return;
    type = static_cast<cmap_value_types_t>(v->type);
    const auto* p = static_cast<const char*>(v->data);
    bytes.assign(p, p + cmap_len(*v));  // a string's terminator follows its bytes in librtotem's event
  }
  // An empty value, or the missing side, is not NULL: Corosync's points into the event it read.
  cmap_notify_value get() const {
    static const char kNone = 0;
    return {type, bytes.size(), bytes.empty() ? &kNone : bytes.data()};
  }
};

// Inside rtotem_dispatch, under the mutex: the application's callback runs once it is released.
void key_changed(rtotem_t*, uint64_t, int event, const char* key, const rtotem_key_value* new_value,
                 const rtotem_key_value* old_value, void* user) {
  Tracker& t = *static_cast<Tracker*>(user);
  if (!t.notify) return;
  t.connection->defer([notify = t.notify, cmap = t.cmap, track = t.self, user_data = t.user, event,
                       name = std::string(key), now = NotifyValue(new_value), before = NotifyValue(old_value)] {
    notify(cmap, track, event, name.c_str(), now.get(), before.get(), user_data);
  });
}

// Adds to a number by its type (cmap_inc / cmap_dec): integers only, wrapping as cmap does.
cs_error_t add_to(cmap_handle_t handle, const char* key, int delta) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(c->connection.mutex());
  Value v;
  if (cs_error_t rc = read_value(*c, key, v); rc != CS_OK) return rc;
  const auto type = static_cast<cmap_value_types_t>(v.type);
  if (type > CMAP_VALUETYPE_UINT64 || v.len != width(type)) return CS_ERR_INVALID_PARAM;
  std::uint64_t n = 0;
  std::memcpy(&n, v.data, v.len);  // little-endian host: the low bytes are the value
  n += static_cast<std::uint64_t>(static_cast<std::int64_t>(delta));
  return write_value(*c, key, &n, v.len, type);
}

}  // namespace

CS_EXPORT cs_error_t cmap_initialize_map(cmap_handle_t* handle, cmap_map_t map) {
  if (handle == nullptr) return CS_ERR_INVALID_PARAM;
  if (map != CMAP_MAP_DEFAULT && map != CMAP_MAP_STATS) return CS_ERR_NOT_EXIST;  // as Corosync's service answers
  auto c = std::make_shared<Cmap>();
  if (cs_error_t rc = c->connection.open(Service::kCmap, nullptr, nullptr); rc != CS_OK) return rc;
  if (map == CMAP_MAP_STATS)
    if (cs_error_t rc = cs_error(rtotem_key_map(c->connection.handle(), RTOTEM_KEY_MAP_STATS)); rc != CS_OK) return rc;
  *handle = handles().add(std::move(c));
  return CS_OK;
}

CS_EXPORT cs_error_t cmap_initialize(cmap_handle_t* handle) { return cmap_initialize_map(handle, CMAP_MAP_DEFAULT); }

CS_EXPORT cs_error_t cmap_finalize(cmap_handle_t handle) { return rtotem::corosync::finalize(handles(), handle); }

CS_EXPORT cs_error_t cmap_fd_get(cmap_handle_t handle, int* fd) {
  return rtotem::corosync::fd_get(handles(), handle, fd);
}

CS_EXPORT cs_error_t cmap_dispatch(cmap_handle_t handle, cs_dispatch_flags_t flags) {
  return rtotem::corosync::dispatch(handles(), handle, flags);
}

CS_EXPORT cs_error_t cmap_context_get(cmap_handle_t handle, const void** context) {
  return rtotem::corosync::context_get(handles(), handle, context);
}

CS_EXPORT cs_error_t cmap_context_set(cmap_handle_t handle, const void* context) {
  return rtotem::corosync::context_set(handles(), handle, context);
}

CS_EXPORT cs_error_t cmap_set(cmap_handle_t handle, const char* key, const void* value, size_t value_len,
                              cmap_value_types_t type) {
  auto c = handles().get(handle);
  return c ? write_value(*c, key, value, value_len, type) : CS_ERR_BAD_HANDLE;
}

CS_EXPORT cs_error_t cmap_set_int8(cmap_handle_t h, const char* k, int8_t v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_INT8);
}
CS_EXPORT cs_error_t cmap_set_uint8(cmap_handle_t h, const char* k, uint8_t v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_UINT8);
}
CS_EXPORT cs_error_t cmap_set_int16(cmap_handle_t h, const char* k, int16_t v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_INT16);
}
CS_EXPORT cs_error_t cmap_set_uint16(cmap_handle_t h, const char* k, uint16_t v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_UINT16);
}
CS_EXPORT cs_error_t cmap_set_int32(cmap_handle_t h, const char* k, int32_t v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_INT32);
}
CS_EXPORT cs_error_t cmap_set_uint32(cmap_handle_t h, const char* k, uint32_t v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_UINT32);
}
CS_EXPORT cs_error_t cmap_set_int64(cmap_handle_t h, const char* k, int64_t v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_INT64);
}
CS_EXPORT cs_error_t cmap_set_uint64(cmap_handle_t h, const char* k, uint64_t v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_UINT64);
}
CS_EXPORT cs_error_t cmap_set_float(cmap_handle_t h, const char* k, float v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_FLOAT);
}
CS_EXPORT cs_error_t cmap_set_double(cmap_handle_t h, const char* k, double v) {
  return set_typed(h, k, v, CMAP_VALUETYPE_DOUBLE);
}

CS_EXPORT cs_error_t cmap_set_string(cmap_handle_t handle, const char* key, const char* value) {
  if (value == nullptr) return CS_ERR_INVALID_PARAM;
  return cmap_set(handle, key, value, std::strlen(value) + 1, CMAP_VALUETYPE_STRING);
}

CS_EXPORT cs_error_t cmap_delete(cmap_handle_t handle, const char* key) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  if (key == nullptr) return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(c->connection.mutex());
  return cs_error(rtotem_key_delete(c->connection.handle(), key));
}

CS_EXPORT cs_error_t cmap_get(cmap_handle_t handle, const char* key, void* value, size_t* value_len,
                              cmap_value_types_t* type) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  if (value != nullptr && value_len == nullptr) return CS_ERR_INVALID_PARAM;
  Value v;
  if (cs_error_t rc = read_value(*c, key, v); rc != CS_OK) return rc;
  const size_t len = v.type == RTOTEM_KEY_STRING ? v.len + 1 : v.len;
  if (value != nullptr) {
    if (*value_len < len) return CS_ERR_INVALID_PARAM;
    std::memcpy(value, v.data, len);
  }
  if (value_len != nullptr) *value_len = len;
  if (type != nullptr) *type = static_cast<cmap_value_types_t>(v.type);
  return CS_OK;
}

CS_EXPORT cs_error_t cmap_get_int8(cmap_handle_t h, const char* k, int8_t* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_INT8);
}
CS_EXPORT cs_error_t cmap_get_uint8(cmap_handle_t h, const char* k, uint8_t* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_UINT8);
}
CS_EXPORT cs_error_t cmap_get_int16(cmap_handle_t h, const char* k, int16_t* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_INT16);
}
CS_EXPORT cs_error_t cmap_get_uint16(cmap_handle_t h, const char* k, uint16_t* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_UINT16);
}
CS_EXPORT cs_error_t cmap_get_int32(cmap_handle_t h, const char* k, int32_t* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_INT32);
}
CS_EXPORT cs_error_t cmap_get_uint32(cmap_handle_t h, const char* k, uint32_t* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_UINT32);
}
CS_EXPORT cs_error_t cmap_get_int64(cmap_handle_t h, const char* k, int64_t* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_INT64);
}
CS_EXPORT cs_error_t cmap_get_uint64(cmap_handle_t h, const char* k, uint64_t* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_UINT64);
}
CS_EXPORT cs_error_t cmap_get_float(cmap_handle_t h, const char* k, float* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_FLOAT);
}
CS_EXPORT cs_error_t cmap_get_double(cmap_handle_t h, const char* k, double* v) {
  return get_typed(h, k, v, CMAP_VALUETYPE_DOUBLE);
}

CS_EXPORT cs_error_t cmap_get_string(cmap_handle_t handle, const char* key, char** str) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  if (str == nullptr) return CS_ERR_INVALID_PARAM;
  Value v;
  if (cs_error_t rc = read_value(*c, key, v); rc != CS_OK) return rc;
  if (v.type != RTOTEM_KEY_STRING) return CS_ERR_INVALID_PARAM;
  char* copy = static_cast<char*>(std::malloc(v.len + 1));
  if (copy == nullptr) return CS_ERR_NO_MEMORY;
  std::memcpy(copy, v.data, v.len + 1);
  *str = copy;
  return CS_OK;
}

CS_EXPORT cs_error_t cmap_inc(cmap_handle_t handle, const char* key) { return add_to(handle, key, 1); }
CS_EXPORT cs_error_t cmap_dec(cmap_handle_t handle, const char* key) { return add_to(handle, key, -1); }

CS_EXPORT cs_error_t cmap_iter_init(cmap_handle_t handle, const char* prefix, cmap_iter_handle_t* iter) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  if (iter == nullptr) return CS_ERR_INVALID_PARAM;
  Iterator it;
  std::lock_guard lock(c->connection.mutex());
  const int rc = rtotem_key_list(
      c->connection.handle(), prefix,
      [](const char* key, const rtotem_key_value* value, void* ctx) {
        static_cast<Iterator*>(ctx)->keys.push_back(
            {key, cmap_len(*value), static_cast<cmap_value_types_t>(value->type)});
        return 0;
      },
      &it);
  if (rc < 0) return rc == -EMSGSIZE ? CS_ERR_NO_RESOURCES : cs_error(rc);
  *iter = ++c->iterators_made;
  c->iterators.emplace(*iter, std::move(it));
  return CS_OK;
}

CS_EXPORT cs_error_t cmap_iter_next(cmap_handle_t handle, cmap_iter_handle_t iter, char key_name[], size_t* value_len,
                                    cmap_value_types_t* type) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  if (key_name == nullptr) return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(c->connection.mutex());
  auto it = c->iterators.find(iter);
  if (it == c->iterators.end()) return CS_ERR_BAD_HANDLE;
  Iterator& i = it->second;
  if (i.next == i.keys.size()) return CS_ERR_NO_SECTIONS;
  const KeyInfo& k = i.keys[i.next++];
  std::memcpy(key_name, k.name.c_str(), k.name.size() + 1);  // at most CMAP_KEYNAME_MAXLEN + 1
  if (value_len != nullptr) *value_len = k.len;
  if (type != nullptr) *type = k.type;
  return CS_OK;
}

CS_EXPORT cs_error_t cmap_iter_finalize(cmap_handle_t handle, cmap_iter_handle_t iter) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(c->connection.mutex());
  return c->iterators.erase(iter) == 1 ? CS_OK : CS_ERR_BAD_HANDLE;
}

CS_EXPORT cs_error_t cmap_track_add(cmap_handle_t handle, const char* key, int32_t track_type, cmap_notify_fn_t notify,
                                    void* user_data, cmap_track_handle_t* track) {
  // Checked in the order Corosync's library and service check them.
  if (track == nullptr || notify == nullptr) return CS_ERR_INVALID_PARAM;
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  if (key == nullptr) return CS_ERR_INVALID_PARAM;
  if (std::strlen(key) >= CS_MAX_NAME_LENGTH) return CS_ERR_NAME_TOO_LONG;
  constexpr int32_t kEvents = CMAP_TRACK_ADD | CMAP_TRACK_DELETE | CMAP_TRACK_MODIFY;
  if ((track_type & ~(kEvents | CMAP_TRACK_PREFIX)) != 0) return CS_ERR_INVALID_PARAM;
  auto tracker = std::make_unique<Tracker>();
  tracker->connection = &c->connection;
  tracker->cmap = handle;
  tracker->notify = notify;
  tracker->user = user_data;
  std::lock_guard lock(c->connection.mutex());
  // As Corosync's: a tracker of no event is made, and never called.
  if ((track_type & kEvents) != 0) {
    std::uint64_t id = 0;
    const int rc = rtotem_key_track(c->connection.handle(), key, track_type, key_changed, tracker.get(), &id);
    if (rc < 0) return cs_error(rc);
    tracker->rtotem_id = id;
  }
  tracker->self = ++c->trackers_made;
  *track = tracker->self;
  c->trackers.emplace(*track, std::move(tracker));
  return CS_OK;
}

CS_EXPORT cs_error_t cmap_track_delete(cmap_handle_t handle, cmap_track_handle_t track) {
  auto c = handles().get(handle);
  if (!c) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(c->connection.mutex());
  auto it = c->trackers.find(track);
  if (it == c->trackers.end()) return CS_ERR_BAD_HANDLE;  // as Corosync: the tracker's handle is not found
  if (const auto id = it->second->rtotem_id) {
    const int rc = rtotem_key_untrack(c->connection.handle(), *id);
    if (rc != 0 && rc != -ENOENT) return cs_error(rc);  // librtotem still holds the tracker
  }
  c->trackers.erase(it);
  return CS_OK;
}
