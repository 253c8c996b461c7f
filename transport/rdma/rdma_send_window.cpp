// The send window: WRs in, completions out, buffers held in between.
#include "transport/rdma/rdma_send_window.hpp"

namespace rtotem::transport {

SendWindow::SendWindow(std::uint32_t depth) : depth_(depth), slots_(std::make_unique<SendBufferRef[]>(depth)) {
  RTOTEM_ASSERT(depth > 0);
}

std::uint64_t SendWindow::push(SendBufferRef buffer) noexcept {
  RTOTEM_ASSERT(room() > 0);
  slots_[next_ % depth_] = std::move(buffer);
  return next_++;
}

std::uint32_t SendWindow::complete_through(std::uint64_t wr_id) noexcept {
  if (wr_id < oldest_ || wr_id >= next_) return 0;
  std::uint32_t retired = 0;
  for (; oldest_ <= wr_id; ++oldest_, ++retired) slots_[oldest_ % depth_].reset();
  return retired;
}

}  // namespace rtotem::transport
