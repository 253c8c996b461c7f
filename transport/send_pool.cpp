// Send pool: a free stack over a fixed array of SendBuffers.
#include "transport/send_pool.hpp"

namespace rtotem::transport {

SendPool::SendPool(std::span<std::byte> memory, std::uint32_t count, std::uint32_t slot_size)
    : free_(std::make_unique<SendBuffer*[]>(count)) {
  RTOTEM_ASSERT(count > 0);
  RTOTEM_ASSERT(slot_size % kBufferAlign == 0);
  RTOTEM_ASSERT(memory.size() >= bytes_needed(count, slot_size));
  buffers_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i)
    buffers_.emplace_back(*this, memory.subspan(std::size_t(i) * slot_size, slot_size), i);
  for (std::uint32_t i = count; i > 0; --i) free_[free_count_++] = &buffers_[i - 1];
}

SendPool::~SendPool() {
  // Every Ref must be gone before its pool: a live one would point into unmapped memory.
  RTOTEM_ASSERT(free_count_ == buffers_.size());
}

Status SendPool::acquire(const WireHeader& header, SendBufferRef& out) noexcept {
  if (free_count_ == 0) {
    ++exhausted_;
    return Status::kPoolExhausted;
  }
  SendBuffer* buffer = free_[--free_count_];
  RTOTEM_ASSERT(buffer->refs() == 0);
  out = SendBufferRef(buffer);
  WireHeader stamped = header;
  stamped.payload_len = 0;
  buffer->stamp_header(stamped);
  return Status::kOk;
}

void SendPool::on_released(Buffer& buffer) noexcept {
  RTOTEM_ASSERT(buffer.kind() == BufferKind::kSend);
  RTOTEM_ASSERT(&buffer.owner() == this);
  RTOTEM_ASSERT(free_count_ < buffers_.size());
  free_[free_count_++] = &buffers_[buffer.index()];
}

}  // namespace rtotem::transport
