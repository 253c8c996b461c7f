// A thin header-only C++ wrapper over librtotem's C API (rtotem.h): RAII for the connection and
// std::function callbacks. Errors are the C API's negative errno values (see rtotem::strerror).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rtotem/rtotem.h"

namespace rtotem {

inline const char *strerror(int err) { return rtotem_strerror(err); }

// Why a member joined or left, as rtotemctl prints it.
inline const char *reason_name(rtotem_reason r) {
  switch (r) {
    case RTOTEM_JOIN: return "join";
    case RTOTEM_LEAVE: return "leave";
    case RTOTEM_NODEDOWN: return "nodedown";
    case RTOTEM_PROCDOWN: return "procdown";
    case RTOTEM_NODEUP: return "nodeup";
  }
  return "?";
}

class Client {
 public:
  struct Callbacks {
    std::function<void(const rtotem_message &)> deliver;
    std::function<void(const rtotem_group_change &)> group_change;
    std::function<void(const rtotem_ring_change &)> ring_change;
    std::function<void(const rtotem_quorum &)> quorum;  // after quorum_track(true)
    std::function<void(int flags)> shutdown_asked;      // after shutdown_track(true): answer with shutdown_reply
  };
  // A tracked key's change: event is RTOTEM_TRACK_ADD, _MODIFY or _DELETE; now/before may be null.
  using KeyChanged =
      std::function<void(int event, const char *key, const rtotem_key_value *now, const rtotem_key_value *before)>;

  // 0 on success, else a negative errno (the Client is then not connected).
  int connect(Callbacks callbacks, const char *ipc_name = nullptr) {
    callbacks_ = std::make_unique<Callbacks>(std::move(callbacks));
    static const rtotem_callbacks table{
        [](rtotem_t *, const rtotem_message *m, void *ctx) { call(static_cast<Callbacks *>(ctx)->deliver, *m); },
        [](rtotem_t *, const rtotem_group_change *c, void *ctx) {
          call(static_cast<Callbacks *>(ctx)->group_change, *c);
        },
        [](rtotem_t *, const rtotem_ring_change *c, void *ctx) {
          call(static_cast<Callbacks *>(ctx)->ring_change, *c);
        },
    };
    rtotem_callbacks asked = table;
    if (!callbacks_->ring_change) asked.ring_change = nullptr;  // then no ring changes are sent
    rtotem_t *h = nullptr;
    const int rc = rtotem_connect(&h, ipc_name, &asked, callbacks_.get());
    handle_.reset(h);
    return rc;
  }
  bool connected() const noexcept { return handle_ != nullptr; }
  int join(const std::string &group) { return rtotem_join(handle_.get(), group.c_str()); }
  int leave(const std::string &group) { return rtotem_leave(handle_.get(), group.c_str()); }
  int mcast(const std::string &group, std::span<const std::byte> data, rtotem_order order = RTOTEM_AGREED) {
    return rtotem_mcast(handle_.get(), group.c_str(), data.data(), data.size(), order);
  }
  int mcast_sync(const std::string &group, std::span<const std::byte> data, rtotem_order order = RTOTEM_AGREED) {
    return rtotem_mcast_sync(handle_.get(), group.c_str(), data.data(), data.size(), order);
  }
  int flush() { return rtotem_flush(handle_.get()); }
  int fd() { return rtotem_fd(handle_.get()); }
  int dispatch(int flags = RTOTEM_DISPATCH_ALL) { return rtotem_dispatch(handle_.get(), flags); }
  int local_nodeid(std::uint32_t &out) { return rtotem_local_nodeid(handle_.get(), &out); }
  int max_message_size(std::size_t &out) { return rtotem_max_message_size(handle_.get(), &out); }
  int messages_dropped(std::uint64_t &out) { return rtotem_messages_dropped(handle_.get(), &out); }
  void disconnect() {
    handle_.reset();
    trackers_.clear();
  }

  // Quorum (rtotem.h: rtotem_quorum_*).
  int quorum_track(bool on) {
    return rtotem_quorum_track(handle_.get(), on ? [](rtotem_t *, const rtotem_quorum *q,
                                                      void *ctx) { call(static_cast<Callbacks *>(ctx)->quorum, *q); }
                                                 : rtotem_quorum_fn{});
  }
  int quorum_set_votes(std::uint32_t nodeid, std::uint32_t votes) {
    return rtotem_quorum_set_votes(handle_.get(), nodeid, votes);
  }
  int quorum_set_expected(std::uint32_t votes) { return rtotem_quorum_set_expected(handle_.get(), votes); }

  // Key store (rtotem.h: rtotem_key_*). A value is its type and its bytes as C holds them.
  int key_get(const std::string &key, rtotem_key_type &type, std::vector<std::byte> &value) {
    value.resize(RTOTEM_KEY_VALUE_MAX + 1);
    std::size_t len = value.size();
    const int rc = rtotem_key_get(handle_.get(), key.c_str(), value.data(), &len, &type);
    value.resize(rc == 0 ? len : 0);
    return rc;
  }
  int key_set(const std::string &key, rtotem_key_type type, std::span<const std::byte> value) {
    return rtotem_key_set(handle_.get(), key.c_str(), type, value.data(), value.size());
  }
  int key_set(const std::string &key, std::string_view text) {
    return rtotem_key_set(handle_.get(), key.c_str(), RTOTEM_KEY_STRING, text.data(), text.size());
  }
  int key_delete(const std::string &key) { return rtotem_key_delete(handle_.get(), key.c_str()); }
  // each(key, value) for every key under `prefix`, until it returns false.
  int key_list(const std::string &prefix, const std::function<bool(const char *, const rtotem_key_value &)> &each) {
    return rtotem_key_list(
        handle_.get(), prefix.c_str(),
        [](const char *key, const rtotem_key_value *v, void *ctx) {
          return (*static_cast<const std::function<bool(const char *, const rtotem_key_value &)> *>(ctx))(key, *v) ? 0
                                                                                                                   : 1;
        },
        const_cast<void *>(static_cast<const void *>(&each)));
  }
  int key_track(const std::string &key, int flags, KeyChanged changed, std::uint64_t &id) {
    auto held = std::make_unique<KeyChanged>(std::move(changed));
    const int rc = rtotem_key_track(
        handle_.get(), key.c_str(), flags,
        [](rtotem_t *, std::uint64_t, int event, const char *k, const rtotem_key_value *now,
           const rtotem_key_value *before, void *user) { (*static_cast<KeyChanged *>(user))(event, k, now, before); },
        held.get(), &id);
    if (rc == 0) trackers_[id] = std::move(held);
    return rc;
  }
  int key_untrack(std::uint64_t id) {
    const int rc = rtotem_key_untrack(handle_.get(), id);
    if (rc == 0) trackers_.erase(id);
    return rc;
  }

  // Node control (rtotem.h).
  int shutdown_track(bool on) {
    return rtotem_shutdown_track(
        handle_.get(),
        on ? [](rtotem_t *, int flags, void *ctx) { call(static_cast<Callbacks *>(ctx)->shutdown_asked, flags); }
           : rtotem_shutdown_fn{});
  }
  int shutdown_reply(bool agree) { return rtotem_shutdown_reply(handle_.get(), agree ? 1 : 0); }
  int shutdown(int flags = RTOTEM_SHUTDOWN_REQUEST) { return rtotem_shutdown(handle_.get(), flags); }
  int kill_node(std::uint32_t nodeid, const std::string &reason) {
    return rtotem_kill_node(handle_.get(), nodeid, reason.c_str());
  }
  int reload(std::string &message) {
    char text[4096];
    const int rc = rtotem_reload(handle_.get(), text, sizeof text);
    message = text;
    return rc;
  }

 private:
  template <class F, class A>
  static void call(const F &f, const A &a) {
    if (f) f(a);
  }
  struct Disconnect {
    void operator()(rtotem_t *h) const noexcept { rtotem_disconnect(h); }
  };
  std::unique_ptr<Callbacks> callbacks_;  // stable address: the C library's ctx
  std::unique_ptr<rtotem_t, Disconnect> handle_;
  std::map<std::uint64_t, std::unique_ptr<KeyChanged>> trackers_;  // stable addresses: the C library's user pointers
};

}  // namespace rtotem
