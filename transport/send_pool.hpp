// The fixed set of send buffers of one backend, made once at start-up. An empty pool is
// back-pressure (Status::kPoolExhausted), never an allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "transport/buffer.hpp"
#include "transport/buffer_arena.hpp"
#include "base/result.hpp"

namespace rtotem::transport {

class SendPool final : public BufferOwner {
 public:
  // `memory` holds `count` slots of `slot_size` bytes (slot_size a multiple of kBufferAlign).
  SendPool(std::span<std::byte> memory, std::uint32_t count, std::uint32_t slot_size);
  SendPool(const SendPool&) = delete;
  SendPool& operator=(const SendPool&) = delete;
  ~SendPool();

  static constexpr std::size_t bytes_needed(std::uint32_t count, std::uint32_t slot_size) noexcept {
    return std::size_t(count) * slot_size;
  }

  // Hands out an unshared buffer with `header` stamped (payload_len 0), or kPoolExhausted.
  Status acquire(const WireHeader& header, SendBufferRef& out) noexcept;

  std::uint32_t capacity() const noexcept { return static_cast<std::uint32_t>(buffers_.size()); }
  std::uint32_t available() const noexcept { return free_count_; }
  std::uint64_t exhausted_count() const noexcept { return exhausted_; }

 private:
  void on_released(Buffer& buffer) noexcept override;

  std::vector<SendBuffer> buffers_;
  std::unique_ptr<SendBuffer*[]> free_;  // a stack: the most recently freed buffer is warm in cache
  std::uint32_t free_count_ = 0;
  std::uint64_t exhausted_ = 0;
};

}  // namespace rtotem::transport
