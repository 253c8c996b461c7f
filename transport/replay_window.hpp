// Replay protection for sealed packets: per sender, the newest boot epoch seen and a sliding
// window over the packet counters of that epoch (a bitmap, as IPsec's RFC 6479 and WireGuard
// keep). A packet is new if its epoch is newer, or its epoch is current and its counter is right
// of the window or in it and not seen yet.
//
// Why a window and not "counter > highest": a sender's packets reach a receiver on two sockets
// (multicast group, unicast) and a network may reorder; a packet that arrives late but inside the
// window is still taken, and the protocol never has to retransmit for it.
//
// Only authenticated packets are recorded (WireCrypto checks first, opens, then records), so a
// forger can neither move a window nor take a table slot. The table is fixed-size, made at start-up.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/wire_header.hpp"

namespace rtotem::transport {

// Packets a sender may be overtaken by and still be taken late: 1024 (128 bytes a sender),
// beyond the 256 a backend's transmit queue holds at once.
inline constexpr std::uint64_t kReplayWindowBits = 1024;
static_assert(kReplayWindowBits % 64 == 0);

class ReplayWindow {
 public:
  // Whether (epoch, counter) may be a packet not seen before. Epoch 0 is never sent: a fresh
  // window takes any epoch.
  bool fresh(std::uint64_t epoch, std::uint64_t counter) const noexcept;
  // Records an authenticated packet that fresh() accepted: a newer epoch restarts the window.
  void record(std::uint64_t epoch, std::uint64_t counter) noexcept;

  std::uint64_t epoch() const noexcept { return epoch_; }
  std::uint64_t top() const noexcept { return top_; }

 private:
  bool seen(std::uint64_t counter) const noexcept;
  void mark(std::uint64_t counter, bool on) noexcept;

  std::uint64_t epoch_ = 0;
  std::uint64_t top_ = 0;                                     // highest counter recorded in epoch_
  std::array<std::uint64_t, kReplayWindowBits / 64> bits_{};  // counter c at bit c % kReplayWindowBits
};

// One window per sender, at most `senders_max` senders (the nodes of the cluster), kept sorted by
// node id; nothing allocates after construction.
class ReplayTable {
 public:
  explicit ReplayTable(std::size_t senders_max);

  // The window of `sender`; null if none has been added.
  ReplayWindow* find(NodeId sender) noexcept;
  const ReplayWindow* find(NodeId sender) const noexcept;
  // A fresh window for `sender`, which has none; null when the table is full.
  ReplayWindow* add(NodeId sender) noexcept;
  bool full() const noexcept { return entries_.size() == senders_max_; }

 private:
  struct Entry {
    NodeId sender;
    ReplayWindow window;
  };
  std::vector<Entry>::iterator lower_bound(NodeId sender) noexcept;

  std::size_t senders_max_;
  std::vector<Entry> entries_;  // reserved to senders_max_: insert never reallocates
};

}  // namespace rtotem::transport
