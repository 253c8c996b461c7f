// The calls every drop-in library makes the same way on a handle: T is the library's object, with
// a `connection` (Connection), a `self` (its handle) and, for the context calls, a `context`.
#pragma once

#include <cstdint>
#include <memory>

#include "src/corosync/shim/connection.hpp"
#include "src/corosync/shim/handle_table.hpp"

namespace rtotem::corosync {

// Gives `object` its handle in `table`, for *out.
template <class T>
cs_error_t publish(HandleTable<T>& table, std::shared_ptr<T> object, std::uint64_t* out) {
  T& raw = *object;
  raw.self = table.add(std::move(object));
  *out = raw.self;
  return CS_OK;
}

template <class T>
cs_error_t finalize(HandleTable<T>& table, std::uint64_t handle) {
  const std::shared_ptr<T> object = table.remove(handle);
  if (!object) return CS_ERR_BAD_HANDLE;
  object->connection.mark_finalized();  // closes once the last call holding it returns
  return CS_OK;
}

template <class T>
cs_error_t fd_get(const HandleTable<T>& table, std::uint64_t handle, int* fd) {
  const std::shared_ptr<T> object = table.get(handle);
  return object ? object->connection.fd(fd) : CS_ERR_BAD_HANDLE;
}

template <class T>
cs_error_t dispatch(const HandleTable<T>& table, std::uint64_t handle, int flags) {
  const std::shared_ptr<T> object = table.get(handle);
  return object ? object->connection.dispatch(flags) : CS_ERR_BAD_HANDLE;
}

template <class T, class Context>
cs_error_t context_get(const HandleTable<T>& table, std::uint64_t handle, Context* out) {
  const std::shared_ptr<T> object = table.get(handle);
  if (!object) return CS_ERR_BAD_HANDLE;
  if (out == nullptr) return CS_ERR_INVALID_PARAM;
  *out = object->context;
  return CS_OK;
}

template <class T, class Context>
cs_error_t context_set(const HandleTable<T>& table, std::uint64_t handle, Context context) {
  const std::shared_ptr<T> object = table.get(handle);
  if (!object) return CS_ERR_BAD_HANDLE;
  object->context = context;
  return CS_OK;
}

}  // namespace rtotem::corosync
