// Receive rings: buffer set-up, the release-to-repost path, and the socket ring's stack.
#include "transport/recv_ring.hpp"

namespace rtotem::transport {

RecvRing::RecvRing(std::span<std::byte> memory, std::uint32_t count, std::uint32_t slot_size, std::uint32_t headroom)
    : headroom_(headroom) {
  RTOTEM_ASSERT(count > 0);
  RTOTEM_ASSERT(slot_size % kBufferAlign == 0 && slot_size > headroom + kWireHeaderSize);
  RTOTEM_ASSERT(memory.size() >= std::size_t(count) * slot_size);
  buffers_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    auto slot = memory.subspan(std::size_t(i) * slot_size, slot_size);
    buffers_.emplace_back(*this, slot.subspan(headroom), i);
  }
}

void RecvRing::on_released(Buffer& buffer) noexcept {
  RTOTEM_ASSERT(buffer.kind() == BufferKind::kRecv);
  RTOTEM_ASSERT(&buffer.owner() == this);
  ++reposts_;
  repost(buffers_[buffer.index()]);
}

SocketRecvRing::SocketRecvRing(std::span<std::byte> memory, std::uint32_t count, std::uint32_t slot_size)
    : RecvRing(memory, count, slot_size, 0), posted_(std::make_unique<RecvBuffer*[]>(count)) {
  for (std::uint32_t i = count; i > 0; --i) posted_[posted_count_++] = &buffer(i - 1);
}

SocketRecvRing::~SocketRecvRing() {
  // A Ref outliving its ring would re-post into freed memory.
  RTOTEM_ASSERT(posted_count_ == capacity());
}

std::uint32_t SocketRecvRing::peek_posted(std::span<RecvBuffer*> out) const noexcept {
  const std::uint32_t n = std::min<std::uint32_t>(static_cast<std::uint32_t>(out.size()), posted_count_);
  for (std::uint32_t i = 0; i < n; ++i) out[i] = posted_[posted_count_ - 1 - i];
  return n;
}

RecvBufferRef SocketRecvRing::take(RecvBuffer& buffer) noexcept {
  RTOTEM_ASSERT(posted_count_ > 0 && posted_[posted_count_ - 1] == &buffer);
  --posted_count_;
  return adopt(buffer);
}

void SocketRecvRing::repost(RecvBuffer& buffer) noexcept {
  RTOTEM_ASSERT(posted_count_ < capacity());
  posted_[posted_count_++] = &buffer;
}

}  // namespace rtotem::transport
