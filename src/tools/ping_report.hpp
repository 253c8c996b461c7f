// What one rtotem-ping run measured, and how it is printed: one plain-text block on stdout.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "transport/counters.hpp"
#include "transport/udp/udp_config.hpp"

namespace rtotem::tools {

enum class PingPhase : std::uint8_t {
  kHello,   // multicasting hellos until everyone heard everyone
  kPing,    // multicasting our pings, at most kWindowMax unsettled
  kLinger,  // ours settled: serving the peers' pings until every peer is done
  kFinished,
};

enum class PingEnd : std::uint8_t { kComplete, kTimedOut, kInterrupted };

// One peer as this node saw it.
struct PeerTally {
  transport::NodeId node = transport::kNoNode;
  std::string address;
  std::uint64_t pongs = 0;           // our pings it answered in time
  std::uint64_t lost = 0;            // our pings it left unanswered for kPingLossNs
  std::uint64_t late = 0;            // pongs for pings already settled, or duplicates
  std::uint64_t pings_answered = 0;  // its pings we answered with a pong
  bool heard = false;                // any packet from it arrived
  bool heard_all = false;            // it said it heard every node
  bool done = false;                 // it said its pings are settled
};

struct PingReport {
  transport::NodeId node = transport::kNoNode;
  std::string address;
  std::string_view mode;                // unicast, multicast or rdma
  std::uint32_t count = 0;              // pings asked for
  std::uint32_t ping_bytes = 0;         // payload of one ping, its header included
  PingPhase phase = PingPhase::kHello;  // where the run stopped
  PingEnd end = PingEnd::kComplete;
  std::vector<PeerTally> peers;
  std::uint64_t hellos_sent = 0;
  std::uint64_t pings_sent = 0;
  std::uint64_t pongs_sent = 0;
  std::uint64_t dones_sent = 0;
  std::uint64_t unsettled = 0;        // our pings neither answered by all nor lost when the run stopped
  std::uint64_t pongs_dropped = 0;    // owed pongs refused: more unanswered pings than we queue
  std::uint64_t bad_messages = 0;     // payloads that are no rtotem-ping message
  std::uint64_t strangers = 0;        // packets from nodes not in --peer
  std::vector<std::uint32_t> rtt_ns;  // one sample per pong in time, pre-sized
  std::int64_t ping_phase_ns = 0;
  transport::BackendCounters counters;

  // Every ping was sent and answered in time by every peer.
  bool all_answered() const noexcept;
};

// Prints the block; sorts the RTT samples in place.
void print_report(PingReport& report, std::FILE* out);

}  // namespace rtotem::tools
