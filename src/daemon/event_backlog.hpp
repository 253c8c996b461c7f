// Events a client's shared-memory ring had no room for, kept in order until it has. One
// contiguous byte ring per client: a client that keeps falling behind (large messages at full
// speed) costs no heap allocation per event once the ring has grown to its high-water mark.
// The storage stays at that mark (at most about twice ipc.client_queue_bytes) until the client
// disconnects or is evicted, or the daemon needs the memory back (clear() once it is empty).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace rtotem::daemon {

class EventBacklog {
 public:
  bool empty() const noexcept { return count_ == 0; }
  std::size_t count() const noexcept { return count_; }
  // Bytes of the events held (what ipc.client_queue_bytes limits), not of the storage.
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t capacity() const noexcept { return capacity_; }
  // What capacity() would be after push() of an event of `size` bytes: the memory it would take,
  // known before it is taken.
  std::size_t capacity_after_push(std::size_t size) const noexcept;

  // Appends one event made of `iov`, `size` bytes in all, growing the storage if it must.
  void push(std::span<const iovec> iov, std::size_t size);
  // The oldest event, contiguous (libqb sends it as one buffer). Not empty().
  std::span<const std::byte> front() const noexcept;
  void pop() noexcept;
  // Forgets every event and gives the storage back.
  void clear() noexcept;

 private:
  static constexpr std::size_t kNoRoom = ~std::size_t{0};
  std::size_t slot_for(std::size_t record) const noexcept;
  std::size_t grown_capacity(std::size_t record) const noexcept;
  void grow(std::size_t record);
  void write(std::size_t at, std::span<const iovec> iov, std::size_t size) noexcept;

  std::unique_ptr<std::byte[]> storage_;
  std::size_t capacity_ = 0;
  // Records [u32 size][bytes][pad to 8] from head_ to tail_, wrapping once at the end of the
  // storage (a wrap mark there, or fewer than 4 bytes left). tail_ == head_ only when empty.
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
  std::size_t count_ = 0;
  std::size_t bytes_ = 0;
  std::size_t stored_ = 0;  // bytes of the records, padding included
};

}  // namespace rtotem::daemon
