#include "src/daemon/event_backlog.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "transport/assert.hpp"

namespace rtotem::daemon {
namespace {

using Length = std::uint32_t;
constexpr Length kWrapMark = std::numeric_limits<Length>::max();
constexpr std::size_t kAlign = 8;
constexpr std::size_t kInitialBytes = 64 * 1024;

std::size_t record_bytes(std::size_t size) noexcept {
  return (sizeof(Length) + size + kAlign - 1) / kAlign * kAlign;
}

Length length_at(const std::byte* storage, std::size_t at) noexcept {
  Length length;
  std::memcpy(&length, storage + at, sizeof length);
  return length;
}

// Where the record at or after `at` starts: `at`, or 0 where the writer wrapped.
std::size_t unwrapped(const std::byte* storage, std::size_t capacity, std::size_t at) noexcept {
  if (capacity - at < sizeof(Length) || length_at(storage, at) == kWrapMark) return 0;
  return at;
}

}  // namespace

// Where a record of `record` bytes goes without growing the storage: after the last one, at the
// start (the writer wraps), or nowhere.
std::size_t EventBacklog::slot_for(std::size_t record) const noexcept {
  if (count_ == 0) return capacity_ >= record ? 0 : kNoRoom;
  if (tail_ > head_) {
    if (capacity_ - tail_ >= record) return tail_;
    return head_ > record ? 0 : kNoRoom;  // strictly before head_: tail_ == head_ means empty
  }
  return head_ - tail_ > record ? tail_ : kNoRoom;
}

std::size_t EventBacklog::grown_capacity(std::size_t record) const noexcept {
  return std::max({kInitialBytes, 2 * (stored_ + record), capacity_});
}

std::size_t EventBacklog::capacity_after_push(std::size_t size) const noexcept {
  const std::size_t record = record_bytes(size);
  return slot_for(record) != kNoRoom ? capacity_ : grown_capacity(record);
}

void EventBacklog::push(std::span<const iovec> iov, std::size_t size) {
  RTOTEM_ASSERT(size < kWrapMark);
  const std::size_t record = record_bytes(size);
  if (count_ == 0) head_ = tail_ = 0;
  std::size_t at = slot_for(record);
  if (at == kNoRoom) {
    grow(record);
    at = tail_;
  } else if (at < tail_ && capacity_ - tail_ >= sizeof(Length)) {  // wrapping: say so at the old end
    std::memcpy(storage_.get() + tail_, &kWrapMark, sizeof kWrapMark);
  }
  write(at, iov, size);
  tail_ = at + record;
  ++count_;
  bytes_ += size;
  stored_ += record;
}

std::span<const std::byte> EventBacklog::front() const noexcept {
  RTOTEM_ASSERT(count_ > 0);
  return {storage_.get() + head_ + sizeof(Length), length_at(storage_.get(), head_)};
}

void EventBacklog::pop() noexcept {
  RTOTEM_ASSERT(count_ > 0);
  const std::size_t size = length_at(storage_.get(), head_);
  const std::size_t record = record_bytes(size);
  --count_;
  bytes_ -= size;
  stored_ -= record;
  head_ += record;
  if (count_ == 0) head_ = tail_ = 0;
  else head_ = unwrapped(storage_.get(), capacity_, head_);
}

void EventBacklog::clear() noexcept {
  storage_.reset();
  capacity_ = head_ = tail_ = count_ = bytes_ = stored_ = 0;
}

// The records move, in order, to the start of a larger storage; the next one goes after them.
void EventBacklog::grow(std::size_t record) {
  const std::size_t capacity = grown_capacity(record);
  auto storage = std::make_unique_for_overwrite<std::byte[]>(capacity);
  std::size_t at = head_;
  std::size_t out = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    if (i > 0) at = unwrapped(storage_.get(), capacity_, at);
    const std::size_t bytes = record_bytes(length_at(storage_.get(), at));
    std::memcpy(storage.get() + out, storage_.get() + at, bytes);
    out += bytes;
    at += bytes;
  }
  storage_ = std::move(storage);
  capacity_ = capacity;
  head_ = 0;
  tail_ = out;
}

void EventBacklog::write(std::size_t at, std::span<const iovec> iov, std::size_t size) noexcept {
  const auto length = static_cast<Length>(size);
  std::memcpy(storage_.get() + at, &length, sizeof length);
  std::byte* out = storage_.get() + at + sizeof length;
  for (const iovec& part : iov) {
    if (part.iov_len == 0) continue;  // an empty tail may come with a null base
    std::memcpy(out, part.iov_base, part.iov_len);
    out += part.iov_len;
  }
  RTOTEM_ASSERT(out == storage_.get() + at + sizeof length + size);
}

}  // namespace rtotem::daemon
