// The RDMA receive ring: released buffers collect and go back to the QP in batches.
#include "transport/rdma/rdma_recv_ring.hpp"

namespace rtotem::transport {

RdmaRecvRing::RdmaRecvRing(std::span<std::byte> memory, std::uint32_t count, std::uint32_t slot_size,
                           std::uint32_t headroom, std::uint32_t post_batch)
    : RecvRing(memory, count, slot_size, headroom),
      pending_(std::make_unique<RecvBuffer*[]>(count)),
      post_batch_(post_batch) {
  RTOTEM_ASSERT(post_batch > 0);
  for (std::uint32_t i = 0; i < count; ++i) pending_[pending_count_++] = &buffer(i);  // all posted at start-up
}

void RdmaRecvRing::repost(RecvBuffer& buffer) noexcept {
  RTOTEM_ASSERT(pending_count_ < capacity());
  pending_[pending_count_++] = &buffer;
  if (poster_ && pending_count_ >= post_batch_) poster_->post_pending();
}

}  // namespace rtotem::transport
