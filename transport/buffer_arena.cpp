// mmap-backed arena: page aligned (what ibv_reg_mr likes) and populated up front, so the hot path
// takes no page faults.
#include "transport/buffer_arena.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <utility>

namespace rtotem::transport {

Result<BufferArena> BufferArena::map(std::size_t bytes) {
  if (bytes == 0) return Error::make("buffer arena: zero bytes requested");
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) return Error::sys(errno, "buffer arena: mmap of {} bytes", bytes);
  return BufferArena(static_cast<std::byte*>(p), bytes);
}

BufferArena::BufferArena(BufferArena&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      carved_(std::exchange(other.carved_, 0)) {}

BufferArena& BufferArena::operator=(BufferArena&& other) noexcept {
  if (this != &other) {
    if (base_) ::munmap(base_, size_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    carved_ = std::exchange(other.carved_, 0);
  }
  return *this;
}

BufferArena::~BufferArena() {
  if (base_) ::munmap(base_, size_);
}

std::span<std::byte> BufferArena::carve(std::size_t bytes) noexcept {
  const std::size_t start = align_up(carved_, kBufferAlign);
  RTOTEM_ASSERT(start + bytes <= size_);
  carved_ = start + bytes;
  return {base_ + start, bytes};
}

}  // namespace rtotem::transport
