// One contiguous, pre-faulted mapping that holds every packet buffer of a backend, so an RDMA
// backend registers all of it with a single ibv_reg_mr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/result.hpp"

namespace rtotem::transport {

inline constexpr std::size_t kBufferAlign = 64;  // a cache line: no two slots share one

constexpr std::size_t align_up(std::size_t n, std::size_t align) noexcept { return (n + align - 1) / align * align; }

class BufferArena {
 public:
  static Result<BufferArena> map(std::size_t bytes);

  BufferArena(BufferArena&& other) noexcept;
  BufferArena& operator=(BufferArena&& other) noexcept;
  BufferArena(const BufferArena&) = delete;
  BufferArena& operator=(const BufferArena&) = delete;
  ~BufferArena();

  std::span<std::byte> region() const noexcept { return {base_, size_}; }
  // Hands out the next `bytes` of the region (aligned); asserts that it fits.
  std::span<std::byte> carve(std::size_t bytes) noexcept;

 private:
  BufferArena(std::byte* base, std::size_t size) noexcept : base_(base), size_(size) {}
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t carved_ = 0;
};

}  // namespace rtotem::transport
