// The receive ring of the RDMA backend. "Posted" means on the QP's receive queue, where the device
// fills it; a buffer the protocol releases waits in a fixed re-post list and goes back to the QP
// in a chained ibv_post_recv (the backend's `post` hook) once a batch is ready or the backend next
// receives. Nothing here allocates after construction.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "transport/recv_ring.hpp"

namespace rtotem::transport {

class RecvPoster {
 public:
  virtual void post_pending() noexcept = 0;

 protected:
  ~RecvPoster() = default;
};

class RdmaRecvRing final : public RecvRing {
 public:
  // Every buffer starts pending: the backend posts them all once its QP exists.
  RdmaRecvRing(std::span<std::byte> memory, std::uint32_t count, std::uint32_t slot_size, std::uint32_t headroom,
               std::uint32_t post_batch);

  // Who posts a full batch (it posts pending() and clears it); until set, and after
  // set_poster(nullptr), released buffers only collect.
  void set_poster(RecvPoster* poster) noexcept { poster_ = poster; }
  // The device filled `buffer` (a completion's wr_id is its index): this is its first Ref.
  RecvBufferRef take(std::uint32_t index) noexcept {
    RTOTEM_ASSERT(posted_count_ > 0);
    --posted_count_;
    return adopt(buffer(index));
  }
  // Released buffers not posted yet; the caller posts them and then calls clear_pending().
  std::span<RecvBuffer* const> pending() const noexcept { return {pending_.get(), pending_count_}; }
  void clear_pending() noexcept {
    posted_count_ += pending_count_;
    pending_count_ = 0;
  }
  // Receive WRs on the QP, their completions not yet taken.
  std::uint32_t posted_count() const noexcept { return posted_count_; }
  // Every buffer is with the protocol: none on the QP and none waiting to go back. The device
  // drops what arrives meanwhile (UDP's socket would queue it): counted as rx_ring_empty.
  bool all_held() const noexcept { return posted_count_ == 0 && pending_count_ == 0; }

 private:
  void repost(RecvBuffer& buffer) noexcept override;

  std::unique_ptr<RecvBuffer*[]> pending_;  // room for every buffer: the ring never overflows it
  std::uint32_t pending_count_ = 0;
  std::uint32_t posted_count_ = 0;
  std::uint32_t post_batch_;
  RecvPoster* poster_ = nullptr;
};

}  // namespace rtotem::transport
