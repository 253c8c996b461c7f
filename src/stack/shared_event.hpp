// One event's bytes, held once by every client queue that waits to send it: a delivery to many
// local members that have all fallen behind is copied once, not once a member. Refcounted by
// hand (the queues keep a pointer in their byte rings); `live` counts the bytes of every block
// alive, so the daemon's budget for queued events sees them.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace rtotem::stack {

class SharedEvent {
 public:
  // Owns one reference: the block goes with the last.
  class Handle {
   public:
    Handle() noexcept = default;
    explicit Handle(SharedEvent* event) noexcept : event_(event) {}
    Handle(Handle&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
    Handle& operator=(Handle&& other) noexcept {
      std::swap(event_, other.event_);
      return *this;
    }
    ~Handle() {
      if (event_ != nullptr) event_->release();
    }
    SharedEvent* get() const noexcept { return event_; }
    explicit operator bool() const noexcept { return event_ != nullptr; }

   private:
    SharedEvent* event_ = nullptr;
  };

  // A copy of the event made of `iov`, `size` bytes in all.
  static Handle copy_of(std::span<const iovec> iov, std::size_t size, std::size_t& live);
  // The memory a block of an event of `size` bytes takes.
  static std::size_t footprint(std::size_t size) noexcept;

  SharedEvent(const SharedEvent&) = delete;
  SharedEvent& operator=(const SharedEvent&) = delete;

  std::span<const std::byte> bytes() const noexcept;
  void retain() noexcept { ++refs_; }
  void release() noexcept;

 private:
  SharedEvent(std::size_t size, std::size_t& live) noexcept;
  ~SharedEvent() = default;

  std::size_t& live_;
  std::size_t size_;
  std::uint32_t refs_ = 1;
};

}  // namespace rtotem::stack
