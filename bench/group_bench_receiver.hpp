// What one group bench member makes of the group's events: the members, and per delivered message
// the counts, the order hash, the per-sender FIFO check, the end markers and (for its own
// messages, when asked) the latency samples. Allocates only on group changes, never per message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench/group_bench_payload.hpp"
#include "rtotem/rtotem.h"

namespace rtotem::bench {

struct SenderId {
  std::uint32_t nodeid = 0;
  std::uint32_t pid = 0;
  friend bool operator==(const SenderId&, const SenderId&) = default;
};

struct DeliveryStats {
  std::uint64_t data_delivered = 0;  // data messages of tracked senders
  std::uint64_t bytes_delivered = 0;
  std::uint64_t first_ns = 0;  // CLOCK_MONOTONIC of the first and last data delivery
  std::uint64_t last_ns = 0;
  std::uint64_t max_gap_ns = 0;  // the longest time between two data deliveries
  std::uint64_t order_hash = 0;
  std::uint64_t fifo_violations = 0;  // a sender's seq (or run id) not the one expected
  std::uint64_t foreign = 0;          // not ours (no bench header), or senders past kSendersMax
  std::uint64_t latency_dropped = 0;  // own messages past the preallocated sample space
};

class BenchReceiver {
 public:
  // `latency_samples_max` > 0: this member's own data messages are timed, up to that many.
  explicit BenchReceiver(std::size_t latency_samples_max);
  void set_self(SenderId self) noexcept { self_ = self; }  // before joining

  void on_deliver(const rtotem_message& m, std::uint64_t now_ns);
  void on_group_change(const rtotem_group_change& c);

  std::size_t members() const noexcept { return members_.size(); }
  // From now on, the run ends when every present member's end marker came (or it left).
  void await_end_markers_of_members();
  bool end_markers_complete() const noexcept;
  // Members still awaited; and those awaited who left the group without an end marker.
  std::size_t end_markers_missing() const noexcept;
  std::size_t left_without_end_marker() const noexcept { return left_early_; }

  const DeliveryStats& stats() const noexcept { return stats_; }
  std::vector<std::uint64_t>& latency_samples_ns() noexcept { return latency_ns_; }

 private:
  struct SenderState {
    SenderId id;
    std::uint64_t run_id = 0;
    bool run_known = false;  // awaited before its first message: the run id comes with it
    std::uint64_t next_seq = 0;
    bool ended = false;
    bool awaited = false;
  };
  SenderState* sender(SenderId id, std::uint64_t run_id);
  void on_data(SenderState& s, const rtotem_message& m, const PayloadHeader& h, std::uint64_t now_ns);

  SenderId self_;
  std::vector<SenderId> members_;
  std::vector<SenderState> senders_;  // capacity kSendersMax, reserved once
  std::vector<std::uint64_t> latency_ns_;
  std::size_t latency_samples_max_;
  std::size_t left_early_ = 0;
  OrderHash hash_;
  DeliveryStats stats_;
};

}  // namespace rtotem::bench
