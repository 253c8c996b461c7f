// One rtotem-ping node's run over a backend: hello, ping, linger. The loop and the phases live in
// ping_session.cpp, the inbound path in ping_session_rx.cpp.
//
// Threading: one thread drives the session and its backend. `stop` is the only thing another
// context (a signal handler) touches.
#pragma once

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <span>
#include <vector>

#include "src/tools/ping_options.hpp"
#include "src/tools/ping_report.hpp"
#include "src/tools/ping_wire.hpp"
#include "transport/backend.hpp"

namespace rtotem::tools {

inline constexpr std::uint32_t kWindowMax = 64;             // our pings not yet settled (answered or lost)
inline constexpr std::int64_t kHelloEveryNs = 100'000'000;  // hellos, and done messages
inline constexpr std::int64_t kPingLossNs = 1'000'000'000;  // unanswered this long: lost
inline constexpr std::int64_t kDoneGraceNs = 500'000'000;   // waiting for peers to hear our done
inline constexpr int kWaitMaxMs = 100;
inline constexpr int kRxRoundsMax = 64;  // receive batches per turn, so sending keeps its share
static_assert(kWindowMax <= transport::kTxQueueMax);
static_assert(kWaitMaxMs * 1'000'000LL <= kHelloEveryNs);

// steady_clock, in nanoseconds: what pings carry and RTTs are measured with.
std::int64_t steady_ns() noexcept;

class PingSession final : private transport::PacketSink {
 public:
  // `options` and `backend` must outlive the session.
  PingSession(const PingOptions& options, transport::Backend& backend);

  // Runs until the peers are all done, the timeout, or `stop` turns non-zero.
  void run(const volatile std::sig_atomic_t& stop);
  // The tallies of the run; call once, after run().
  PingReport take_report();

 private:
  struct Peer {
    PeerTally tally;
    bool done_all = false;   // it said every node is done
    bool owe_hello = false;  // it sent a hello after we left the hello phase: answer it
  };
  struct PingSlot {  // one of our pings in flight: slots_[seq % kWindowMax]
    std::uint32_t seq = 0;
    std::int64_t sent_ns = 0;
    std::uint32_t answered = 0;  // peers that answered it
    bool settled = true;         // answered by all, or counted lost
  };
  struct OwedPong {
    std::size_t peer = 0;  // index into peers_
    std::uint32_t seq = 0;
    std::uint64_t sent_ns = 0;
  };

  // ping_session.cpp
  void receive();
  void turn(std::int64_t now);
  void step_hello(std::int64_t now);
  void step_ping(std::int64_t now);
  void step_linger(std::int64_t now);
  void send_pings();
  void expire_pings(std::int64_t now);
  void send_owed();
  bool send_control(PingType type, std::uint8_t flags, transport::NodeId dest);
  bool accepted(Status status);
  void wait(std::int64_t now);
  int wait_ms(std::int64_t now) const;
  void drain_tx();
  template <class Pred>
  bool all_peers(Pred pred) const {
    return std::all_of(peers_.begin(), peers_.end(), pred);
  }

  // ping_session_rx.cpp
  void on_packets(std::span<transport::InboundPacket> batch) override;
  void on_message(Peer& peer, std::size_t index, const PingMessage& message, std::int64_t now);
  void on_pong(Peer& peer, std::size_t index, const PingMessage& message, std::int64_t now);
  void owe_pong(std::size_t index, const PingMessage& ping);
  void settle_front();
  Peer* find_peer(transport::NodeId node, std::size_t& index);

  const PingOptions& options_;
  transport::Backend& backend_;
  std::vector<Peer> peers_;  // every node but this one, sorted by node id
  PingPhase phase_ = PingPhase::kHello;
  PingEnd end_ = PingEnd::kComplete;
  bool blocked_ = false;    // this turn met back-pressure: wait, then retry
  bool announced_ = false;  // this phase's hello or done went out with kHeardAll

  std::int64_t deadline_ns_ = 0;
  std::int64_t next_control_ns_ = 0;  // the next hello, or done
  std::int64_t ping_start_ns_ = 0;
  std::int64_t ping_end_ns_ = 0;
  std::int64_t all_done_ns_ = 0;  // when the last peer said done; 0: not yet

  std::vector<PingSlot> slots_;
  std::vector<std::uint8_t> answered_by_;  // [slot * peers + peer]
  std::uint32_t front_ = 0;                // oldest unsettled seq
  std::uint32_t next_ = 0;                 // next seq to send; next_ - front_ <= kWindowMax

  std::vector<OwedPong> owed_;  // a ring, sized for every peer's full window twice
  std::size_t owed_head_ = 0;
  std::size_t owed_count_ = 0;

  PingReport report_;
};

}  // namespace rtotem::tools
