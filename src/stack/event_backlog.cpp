#include "src/stack/event_backlog.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "base/assert.hpp"

namespace rtotem::stack {
namespace {

using Length = std::uint32_t;
constexpr Length kWrapMark = std::numeric_limits<Length>::max();
constexpr std::size_t kAlign = 8;
constexpr std::size_t kInitialBytes = 64 * 1024;
// A record by reference: [u32 size | kSharedFlag][u32 unused][SharedEvent*].
constexpr Length kSharedFlag = Length{1} << 31;
constexpr std::size_t kSharedPointerOffset = 8;
constexpr std::size_t kSharedRecordPayload = kSharedPointerOffset + sizeof(SharedEvent*) - sizeof(Length);

std::size_t record_bytes(std::size_t size) noexcept { return (sizeof(Length) + size + kAlign - 1) / kAlign * kAlign; }

Length length_at(const std::byte* storage, std::size_t at) noexcept {
  Length length;
  std::memcpy(&length, storage + at, sizeof length);
  return length;
}

// The bytes of the record at `at`, whichever its kind.
std::size_t record_at(const std::byte* storage, std::size_t at) noexcept {
  const Length length = length_at(storage, at);
  return record_bytes((length & kSharedFlag) != 0 ? kSharedRecordPayload : length);
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

std::size_t EventBacklog::capacity_after_push_shared() const noexcept {
  return capacity_after_push(kSharedRecordPayload);
}

std::size_t EventBacklog::place(std::size_t record) {
  if (count_ == 0) head_ = tail_ = 0;
  std::size_t at = slot_for(record);
  if (at == kNoRoom) {
    grow(record);
    at = tail_;
  } else if (at < tail_ && capacity_ - tail_ >= sizeof(Length)) {  // wrapping: say so at the old end
    std::memcpy(storage_.get() + tail_, &kWrapMark, sizeof kWrapMark);
  }
  tail_ = at + record;
  ++count_;
  stored_ += record;
  return at;
}

void EventBacklog::push(std::span<const iovec> iov, std::size_t size) {
  RTOTEM_ASSERT(size < kSharedFlag);
  const std::size_t at = place(record_bytes(size));
  write(at, iov, size);
  bytes_ += size;
}

void EventBacklog::push_shared(SharedEvent& event) {
  const std::size_t size = event.bytes().size();
  RTOTEM_ASSERT(size < kSharedFlag);
  const std::size_t at = place(record_bytes(kSharedRecordPayload));
  const auto length = static_cast<Length>(size | kSharedFlag);
  SharedEvent* pointer = &event;
  std::memcpy(storage_.get() + at, &length, sizeof length);
  std::memcpy(storage_.get() + at + kSharedPointerOffset, &pointer, sizeof pointer);
  event.retain();
  bytes_ += size;
}

SharedEvent* EventBacklog::shared_at(std::size_t at) const noexcept {
  if ((length_at(storage_.get(), at) & kSharedFlag) == 0) return nullptr;
  SharedEvent* event = nullptr;
  std::memcpy(&event, storage_.get() + at + kSharedPointerOffset, sizeof event);
  return event;
}

std::span<const std::byte> EventBacklog::front() const noexcept {
  RTOTEM_ASSERT(count_ > 0);
  if (const SharedEvent* event = shared_at(head_)) return event->bytes();
  return {storage_.get() + head_ + sizeof(Length), length_at(storage_.get(), head_)};
}

void EventBacklog::pop() noexcept {
  RTOTEM_ASSERT(count_ > 0);
  const Length length = length_at(storage_.get(), head_);
  const std::size_t record = record_at(storage_.get(), head_);
  if (SharedEvent* event = shared_at(head_)) event->release();
  --count_;
  bytes_ -= length & ~kSharedFlag;
  stored_ -= record;
  head_ += record;
  if (count_ == 0)
    head_ = tail_ = 0;
  else
    head_ = unwrapped(storage_.get(), capacity_, head_);
}

void EventBacklog::clear() noexcept {
  while (count_ > 0) pop();  // releases what is held by reference
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
    const std::size_t bytes = record_at(storage_.get(), at);
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

}  // namespace rtotem::stack
