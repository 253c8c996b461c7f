// Events a client's shared-memory ring had no room for, kept in order until it has. One
// contiguous byte ring per client: a client that keeps falling behind (large messages at full
// speed) costs no heap allocation per event once the ring has grown to its high-water mark.
// The storage stays at that mark (at most about twice ipc.client_queue_bytes) until the client
// disconnects or is evicted, or the daemon needs the memory back (clear() once it is empty).
// An event may also be held by reference (push_shared): a block that other queues hold too (one
// allocation per delivery while some of its local members are behind, however many they are).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "src/stack/shared_event.hpp"

namespace rtotem::stack {

class EventBacklog {
 public:
  EventBacklog() noexcept = default;
  EventBacklog(const EventBacklog&) = delete;
  EventBacklog& operator=(const EventBacklog&) = delete;
  ~EventBacklog() { clear(); }

  bool empty() const noexcept { return count_ == 0; }
  std::size_t count() const noexcept { return count_; }
  // Bytes of the events held, by copy or by reference (what ipc.client_queue_bytes limits), not
  // of the storage.
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t capacity() const noexcept { return capacity_; }
  // What capacity() would be after push() of an event of `size` bytes: the memory it would take,
  // known before it is taken.
  std::size_t capacity_after_push(std::size_t size) const noexcept;
  std::size_t capacity_after_push_shared() const noexcept;

  // Appends one event made of `iov`, `size` bytes in all, growing the storage if it must.
  void push(std::span<const iovec> iov, std::size_t size);
  // Appends one event held by reference (one more reference to `event`, until it is popped).
  void push_shared(SharedEvent& event);
  // The oldest event, contiguous (libqb sends it as one buffer). Not empty().
  std::span<const std::byte> front() const noexcept;
  void pop() noexcept;
  // Forgets every event (releasing those held by reference) and gives the storage back.
  void clear() noexcept;

 private:
  static constexpr std::size_t kNoRoom = ~std::size_t{0};
  std::size_t slot_for(std::size_t record) const noexcept;
  std::size_t grown_capacity(std::size_t record) const noexcept;
  void grow(std::size_t record);
  // Where a record of `record` bytes goes: found, made by wrapping, or made by growing.
  std::size_t place(std::size_t record);
  void write(std::size_t at, std::span<const iovec> iov, std::size_t size) noexcept;
  SharedEvent* shared_at(std::size_t at) const noexcept;

  std::unique_ptr<std::byte[]> storage_;
  std::size_t capacity_ = 0;
  // Records [u32 size][bytes][pad to 8] from head_ to tail_, wrapping once at the end of the
  // storage (a wrap mark there, or fewer than 4 bytes left). tail_ == head_ only when empty. A
  // record by reference has the size's top bit set and a SharedEvent* at offset 8.
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
  std::size_t count_ = 0;
  std::size_t bytes_ = 0;
  std::size_t stored_ = 0;  // bytes of the records, padding included
};

}  // namespace rtotem::stack
