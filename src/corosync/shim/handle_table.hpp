// The uint64_t handles of Corosync's client API: a table from handle to the library's object.
// A handle is never 0 (every consumer's "no connection"), and a stale one is answered with
// CS_ERR_BAD_HANDLE rather than a crash: the high half is random per process, the low half counts.
// Objects are shared: a call keeps its object alive while another thread, or one of its own
// callbacks, finalizes the handle. Each library's table is made once and never destroyed: threads
// of the application may still call in while exit() runs static destructors.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <unordered_map>

namespace rtotem::corosync {

template <class T>
class HandleTable {
 public:
  std::uint64_t add(std::shared_ptr<T> object) {
    std::lock_guard lock(mutex_);
    if (salt_ == 0) salt_ = static_cast<std::uint64_t>(std::random_device{}()) << 32 | 1ULL << 63;
    const std::uint64_t handle = salt_ | (++count_ & 0xffffffffULL);
    objects_.emplace(handle, std::move(object));
    return handle;
  }
  std::shared_ptr<T> get(std::uint64_t handle) const {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(handle);
    return it == objects_.end() ? nullptr : it->second;
  }
  std::shared_ptr<T> remove(std::uint64_t handle) {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(handle);
    if (it == objects_.end()) return nullptr;
    std::shared_ptr<T> object = std::move(it->second);
    objects_.erase(it);
    return object;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, std::shared_ptr<T>> objects_;
  std::uint64_t salt_ = 0;
  std::uint64_t count_ = 0;
};

}  // namespace rtotem::corosync
