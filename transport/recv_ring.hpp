// Receive rings: the fixed set of receive buffers of one backend, each tagged with this ring as its
// owner. A buffer the protocol releases is re-posted here (to the device's receive queue), never
// put in a send pool.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "transport/buffer.hpp"
#include "transport/buffer_arena.hpp"
#include "base/result.hpp"

namespace rtotem::transport {

class RecvRing : public BufferOwner {
 public:
  RecvRing(const RecvRing&) = delete;
  RecvRing& operator=(const RecvRing&) = delete;

  // Slot size for `wire_capacity` bytes of packet behind `headroom` bytes that the device writes
  // first (RDMA UD: the 40-byte GRH).
  static constexpr std::uint32_t slot_size(std::uint32_t wire_capacity, std::uint32_t headroom) noexcept {
    return static_cast<std::uint32_t>(align_up(std::size_t(headroom) + wire_capacity, kBufferAlign));
  }

  std::uint32_t capacity() const noexcept { return static_cast<std::uint32_t>(buffers_.size()); }
  std::uint32_t headroom() const noexcept { return headroom_; }
  std::uint64_t reposts() const noexcept { return reposts_; }
  RecvBuffer& buffer(std::uint32_t index) noexcept { return buffers_[index]; }
  // The device-visible start of a slot (headroom included), for posting.
  std::byte* slot_start(const RecvBuffer& buffer) const noexcept { return buffer.data() - headroom_; }

 protected:
  RecvRing(std::span<std::byte> memory, std::uint32_t count, std::uint32_t slot_size, std::uint32_t headroom);
  ~RecvRing() = default;

  // The first Ref to a buffer the device just filled.
  static RecvBufferRef adopt(RecvBuffer& buffer) noexcept {
    RTOTEM_ASSERT(buffer.refs() == 0);
    return RecvBufferRef(&buffer);
  }
  // Gives a released buffer back to the device.
  virtual void repost(RecvBuffer& buffer) noexcept = 0;

 private:
  void on_released(Buffer& buffer) noexcept final;

  std::vector<RecvBuffer> buffers_;
  std::uint32_t headroom_;
  std::uint64_t reposts_ = 0;
};

// The ring of socket-style backends (UDP, the simulator): "posted" means on the ready stack, from
// which the next receive call takes its buffers (LIFO: the last released is still warm in cache).
class SocketRecvRing final : public RecvRing {
 public:
  SocketRecvRing(std::span<std::byte> memory, std::uint32_t count, std::uint32_t slot_size);
  ~SocketRecvRing();

  std::uint32_t posted_count() const noexcept { return posted_count_; }
  // Fills `out` with up to out.size() posted buffers, which stay posted; returns how many. A
  // receive call fills them in this order.
  std::uint32_t peek_posted(std::span<RecvBuffer*> out) const noexcept;
  // `buffer`, the next peeked one, was filled: it leaves the ring; this is its first Ref.
  RecvBufferRef take(RecvBuffer& buffer) noexcept;

 private:
  void repost(RecvBuffer& buffer) noexcept override;

  std::unique_ptr<RecvBuffer*[]> posted_;  // a stack; the top is filled first
  std::uint32_t posted_count_ = 0;
};

}  // namespace rtotem::transport
