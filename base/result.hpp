// Start-up errors with context (Result<T>) and hot-path outcomes (Status), kept apart so that the
// hot path never formats a string or allocates.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "base/assert.hpp"

namespace rtotem {

// What a data-path call answers. Every value but kOk is back-pressure or a refusal the caller
// handles; none of them is a bug.
enum class Status : std::uint8_t {
  kOk,
  kPoolExhausted,  // no free send buffer: wait for releases
  kQueueFull,      // the backend's transmit queue (a fixed array) is full: flush first
  kWouldBlock,     // the socket or send queue is full: retry when writable
  kTooLarge,       // payload exceeds the backend's MTU
  kUnknownNode,    // unicast to a node the backend has no address for
  kClosed,         // the backend was closed
};

std::string_view describe(Status status) noexcept;

class [[nodiscard]] Error {
 public:
  template <class... Args>
  static Error make(fmt::format_string<Args...> format, Args&&... args) {
    return Error(0, fmt::format(format, std::forward<Args>(args)...));
  }
  // An error from a system call: the message ends with strerror(errnum).
  template <class... Args>
  static Error sys(int errnum, fmt::format_string<Args...> format, Args&&... args) {
    return Error(errnum, fmt::format(format, std::forward<Args>(args)...), true);
  }

  const std::string& message() const noexcept { return message_; }
  int errnum() const noexcept { return errnum_; }

 private:
  Error(int errnum, std::string message, bool append_strerror = false);
  int errnum_;
  std::string message_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design, as std::expected
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & {
    RTOTEM_ASSERT(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    RTOTEM_ASSERT(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    RTOTEM_ASSERT(ok());
    return std::get<0>(std::move(v_));
  }
  const Error& error() const {
    RTOTEM_ASSERT(!ok());
    return std::get<1>(v_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return !error_; }
  explicit operator bool() const noexcept { return ok(); }
  const Error& error() const {
    RTOTEM_ASSERT(error_);
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

}  // namespace rtotem
