// The send WRs in flight on a QP: each slot keeps the buffer a zero-copy send reads from until the
// device is done with it. wr_ids count up; a UD send queue completes in order, so one signalled
// completion releases it and every unsignalled WR before it. A fixed array: nothing allocates
// after construction.
#pragma once

#include <cstdint>
#include <memory>

#include "transport/buffer.hpp"

namespace rtotem::transport {

class SendWindow {
 public:
  explicit SendWindow(std::uint32_t depth);

  std::uint32_t depth() const noexcept { return depth_; }
  std::uint32_t in_flight() const noexcept { return static_cast<std::uint32_t>(next_ - oldest_); }
  std::uint32_t room() const noexcept { return depth_ - in_flight(); }
  bool empty() const noexcept { return next_ == oldest_; }
  // The wr_id the next push gets.
  std::uint64_t next_id() const noexcept { return next_; }

  // One more WR posted; `buffer` is held until its completion (empty for an inline send, which
  // the device copied at post time). Returns its wr_id.
  std::uint64_t push(SendBufferRef buffer) noexcept;
  // A completion for `wr_id`: it and every earlier WR are done, their buffers released. Returns
  // how many WRs that retired (0 for an id already retired or never posted).
  std::uint32_t complete_through(std::uint64_t wr_id) noexcept;

 private:
  std::uint32_t depth_;
  std::unique_ptr<SendBufferRef[]> slots_;  // slots_[wr_id % depth_]
  std::uint64_t oldest_ = 0;                // the first wr_id not yet completed
  std::uint64_t next_ = 0;
};

}  // namespace rtotem::transport
