// librtotem's key store calls (rtotem.h: rtotem_key_*), over the daemon's kKey* requests and
// kKeyChange events. Values cross in key_value.hpp's wire form and reach C in host order.
#include <cerrno>
#include <cstring>

#include "src/client/librtotem_handle.hpp"
#include "src/ipc/key_value.hpp"

using rtotem::WireReader;
using rtotem::client::Reply;
using rtotem::ipc::KeyType;
using rtotem::ipc::KeyValue;
using rtotem::ipc::RequestId;

namespace {

bool valid_type(int type) { return type >= RTOTEM_KEY_INT8 && type <= RTOTEM_KEY_BINARY; }

// A value as C sees it, its bytes in `storage` (8 bytes at least, or the data), a string's
// followed by a terminator that len does not count, as C code reads it as a string.
rtotem_key_value c_value(const KeyValue& value, std::vector<std::byte>& storage) {
  storage.assign(std::max<std::size_t>(8, value.data.size() + 1), std::byte{0});
  const std::size_t size = rtotem::ipc::native_bytes(value, storage.data());
  return {static_cast<rtotem_key_type>(value.type), storage.data(), size};
}

// A request whose body is the key (or prefix) alone.
int key_call(rtotem_t* h, RequestId id, const char* key, Reply& reply) {
  if (h == nullptr || key == nullptr || std::strlen(key) > RTOTEM_KEY_NAME_MAX) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.string(key);
  return rtotem::client::call(h, id, body.data(), reply);
}

}  // namespace

int rtotem::client::key_event(rtotem_t* h, WireReader& in) {
  const std::uint64_t track = in.get_u64();
  const std::uint32_t event = in.get_u32();
  const auto key = ipc::read_string(in, ipc::kKeyNameMax);
  if (!key) return -EPROTO;
  std::optional<KeyValue> values[2];
  for (auto& v : values) {
    const std::uint8_t has = in.get_u8();
    if (in.short_read() || has > 1) return -EPROTO;
    if (has == 1 && !(v = ipc::read_value(in))) return -EPROTO;
  }
  if (!in.at_end()) return -EPROTO;
  const auto found = h->key_trackers.find(track);
  if (found == h->key_trackers.end()) return 0;  // untracked while the event was on its way
  const rtotem_handle::KeyTracker tracker = found->second;
  std::vector<std::byte> storage[2];
  rtotem_key_value c[2];
  for (int i = 0; i < 2; ++i)
    if (values[i]) c[i] = c_value(*values[i], storage[i]);
  const std::string name(*key);
  tracker.changed(h, track, static_cast<int>(event), name.c_str(), values[0] ? &c[0] : nullptr,
                  values[1] ? &c[1] : nullptr, tracker.user);
  return 0;
}

int rtotem_key_get(rtotem_t* h, const char* key, void* buf, size_t* len, rtotem_key_type* type) {
  if (len == nullptr || (buf == nullptr && *len > 0)) return -EINVAL;
  Reply reply;
  if (const int rc = key_call(h, RequestId::kKeyGet, key, reply); rc != 0) return rc;
  WireReader in(reply.body);
  const std::optional<KeyValue> value = rtotem::ipc::read_value(in);
  if (!value || !in.at_end()) return -EPROTO;
  const std::size_t size = rtotem::ipc::is_number(value->type)
                               ? *rtotem::ipc::width_of(static_cast<std::uint8_t>(value->type))
                               : value->data.size();
  if (type != nullptr) *type = static_cast<rtotem_key_type>(value->type);
  const std::size_t room = *len;
  *len = size;
  if (room < size) return -ENOBUFS;
  std::vector<std::byte> storage;
  const rtotem_key_value c = c_value(*value, storage);
  std::memcpy(buf, c.data, c.len);
  if (value->type == KeyType::kString && room > size) static_cast<char*>(buf)[size] = '\0';
  return 0;
}

int rtotem_key_set(rtotem_t* h, const char* key, rtotem_key_type type, const void* data, size_t len) {
  if (h == nullptr || key == nullptr || !valid_type(type) || !rtotem::ipc::valid_key_name(key)) return -EINVAL;
  const std::optional<KeyValue> value = rtotem::ipc::from_native(static_cast<KeyType>(type), data, len);
  if (!value) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.string(key);
  rtotem::ipc::put_value(body, *value);
  Reply reply;
  return rtotem::client::call(h, RequestId::kKeySet, body.data(), reply);
}

int rtotem_key_delete(rtotem_t* h, const char* key) {
  Reply reply;
  return key_call(h, RequestId::kKeyDelete, key, reply);
}

int rtotem_key_list(rtotem_t* h, const char* prefix, rtotem_key_fn each, void* ctx) {
  if (each == nullptr) return -EINVAL;
  Reply reply;
  if (const int rc = key_call(h, RequestId::kKeyList, prefix != nullptr ? prefix : "", reply); rc != 0) return rc;
  // The answer is copied out first: the callback may make calls of its own on this handle.
  const std::vector<std::byte> answer(reply.body.begin(), reply.body.end());
  WireReader in(answer);
  std::uint32_t count = in.get_u32();
  std::vector<std::byte> storage;
  for (; count > 0; --count) {
    const auto key = rtotem::ipc::read_string(in, rtotem::ipc::kKeyNameMax);
    if (!key) return -EPROTO;
    const std::optional<KeyValue> value = rtotem::ipc::read_value(in);
    if (!value) return -EPROTO;
    const std::string name(*key);
    const rtotem_key_value c = c_value(*value, storage);
    if (each(name.c_str(), &c, ctx) != 0) return 0;
  }
  return in.short_read() || !in.at_end() ? -EPROTO : 0;
}

int rtotem_key_track(rtotem_t* h, const char* key, int flags, rtotem_key_changed_fn changed, void* user,
                     uint64_t* track) {
  if (h == nullptr || key == nullptr || changed == nullptr || track == nullptr ||
      std::strlen(key) > RTOTEM_KEY_NAME_MAX)
    return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.string(key);
  body.u32(static_cast<std::uint32_t>(flags));
  Reply reply;
  if (const int rc = rtotem::client::call(h, RequestId::kKeyTrack, body.data(), reply); rc != 0) return rc;
  WireReader in(reply.body);
  *track = in.get_u64();
  if (in.short_read()) return -EPROTO;
  h->key_trackers[*track] = {changed, user};
  return 0;
}

int rtotem_key_map(rtotem_t* h, enum rtotem_key_map map) {
  if (h == nullptr || (map != RTOTEM_KEY_MAP_DEFAULT && map != RTOTEM_KEY_MAP_STATS)) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(static_cast<std::uint8_t>(map));
  Reply reply;
  return rtotem::client::call(h, RequestId::kKeyMap, body.data(), reply);
}

int rtotem_key_untrack(rtotem_t* h, uint64_t track) {
  if (h == nullptr) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u64(track);
  Reply reply;
  const int rc = rtotem::client::call(h, RequestId::kKeyUntrack, body.data(), reply);
  if (rc == 0) h->key_trackers.erase(track);
  return rc;
}
