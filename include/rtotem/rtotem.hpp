// A thin header-only C++ wrapper over librtotem's C API (rtotem.h): RAII for the connection and
// std::function callbacks. Errors are the C API's negative errno values (see rtotem::strerror).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "rtotem/rtotem.h"

namespace rtotem {

inline const char* strerror(int err) { return rtotem_strerror(err); }

class Client {
 public:
  struct Callbacks {
    std::function<void(const rtotem_message&)> deliver;
    std::function<void(const rtotem_group_change&)> group_change;
    std::function<void(const rtotem_ring_change&)> ring_change;
  };

  // 0 on success, else a negative errno (the Client is then not connected).
  int connect(Callbacks callbacks, const char* ipc_name = nullptr) {
    callbacks_ = std::make_unique<Callbacks>(std::move(callbacks));
    static const rtotem_callbacks table{
        [](rtotem_t*, const rtotem_message* m, void* ctx) { call(static_cast<Callbacks*>(ctx)->deliver, *m); },
        [](rtotem_t*, const rtotem_group_change* c, void* ctx) { call(static_cast<Callbacks*>(ctx)->group_change, *c); },
        [](rtotem_t*, const rtotem_ring_change* c, void* ctx) { call(static_cast<Callbacks*>(ctx)->ring_change, *c); },
    };
    rtotem_t* h = nullptr;
    const int rc = rtotem_connect(&h, ipc_name, &table, callbacks_.get());
    handle_.reset(h);
    return rc;
  }
  bool connected() const noexcept { return handle_ != nullptr; }
  int join(const std::string& group) { return rtotem_join(handle_.get(), group.c_str()); }
  int leave(const std::string& group) { return rtotem_leave(handle_.get(), group.c_str()); }
  int mcast(const std::string& group, std::span<const std::byte> data, rtotem_order order = RTOTEM_AGREED) {
    return rtotem_mcast(handle_.get(), group.c_str(), data.data(), data.size(), order);
  }
  int mcast_sync(const std::string& group, std::span<const std::byte> data, rtotem_order order = RTOTEM_AGREED) {
    return rtotem_mcast_sync(handle_.get(), group.c_str(), data.data(), data.size(), order);
  }
  int flush() { return rtotem_flush(handle_.get()); }
  int fd() { return rtotem_fd(handle_.get()); }
  int dispatch(int flags = RTOTEM_DISPATCH_ALL) { return rtotem_dispatch(handle_.get(), flags); }
  int local_nodeid(std::uint32_t& out) { return rtotem_local_nodeid(handle_.get(), &out); }
  int max_message_size(std::size_t& out) { return rtotem_max_message_size(handle_.get(), &out); }
  void disconnect() { handle_.reset(); }

 private:
  template <class F, class A>
  static void call(const F& f, const A& a) {
    if (f) f(a);
  }
  struct Disconnect {
    void operator()(rtotem_t* h) const noexcept { rtotem_disconnect(h); }
  };
  std::unique_ptr<Callbacks> callbacks_;  // stable address: the C library's ctx
  std::unique_ptr<rtotem_t, Disconnect> handle_;
};

}  // namespace rtotem
