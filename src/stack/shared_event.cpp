#include "src/stack/shared_event.hpp"

#include <cstring>
#include <new>

#include "base/assert.hpp"

namespace rtotem::stack {

std::size_t SharedEvent::footprint(std::size_t size) noexcept { return sizeof(SharedEvent) + size; }

SharedEvent::SharedEvent(std::size_t size, std::size_t& live) noexcept : live_(live), size_(size) {
  live_ += footprint(size_);
}

SharedEvent::Handle SharedEvent::copy_of(std::span<const iovec> iov, std::size_t size, std::size_t& live) {
  void* memory = ::operator new(footprint(size));
  auto* event = new (memory) SharedEvent(size, live);
  auto* out = reinterpret_cast<std::byte*>(event + 1);
  for (const iovec& part : iov) {
    if (part.iov_len == 0) continue;  // an empty tail may come with a null base
    std::memcpy(out, part.iov_base, part.iov_len);
    out += part.iov_len;
  }
  RTOTEM_ASSERT(out == reinterpret_cast<std::byte*>(event + 1) + size);
  return Handle(event);
}

std::span<const std::byte> SharedEvent::bytes() const noexcept {
  return {reinterpret_cast<const std::byte*>(this + 1), size_};
}

void SharedEvent::release() noexcept {
  RTOTEM_ASSERT(refs_ > 0);
  if (--refs_ > 0) return;
  live_ -= footprint(size_);
  this->~SharedEvent();
  ::operator delete(static_cast<void*>(this));
}

}  // namespace rtotem::stack
