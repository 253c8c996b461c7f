// Judges what the simulated clients (sim_clients.hpp) are handed by the real librtotem: each
// message a client's deliver callback gets must be one message some client sent, whole and byte
// for byte, from the sender it names, in its group (kClientMessage: pieces of two messages joined
// into one break it); and each client gets a sender's messages in a group once each, in the order
// they were sent (kClientFifo). A message's bytes say which it is: a stamp (node, pid, counter),
// then bytes that follow from the stamp and their place, so that any byte from another message
// shows.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "rtotem/rtotem.h"
#include "src/sim/history_checker.hpp"

namespace rtotem::sim {

// A client message: the node and pid of the handle that sent it, and a counter unique in the run.
struct ClientMessageId {
  NodeId node = transport::kNoNode;
  std::uint32_t pid = 0;
  std::uint64_t counter = 0;
};

inline constexpr std::size_t kClientStampSize = 16;

// The message `id` of `out.size()` bytes (at least kClientStampSize).
void write_client_message(std::span<std::byte> out, ClientMessageId id);

class ClientChecker {
 public:
  // A client offers a message to the library (before the call: its pieces may be delivered to
  // other clients before an error comes back for a later piece).
  void record_offer(ClientMessageId id, std::string_view group, std::size_t size);
  // The library handed handle `handle` (unique in the run) of node `node` this message.
  void record_delivery(Time now, NodeId node, std::uint64_t handle, const rtotem_message& message);

  const std::vector<Violation>& violations() const noexcept { return violations_; }
  std::uint64_t violation_count() const noexcept { return violation_count_; }
  std::uint64_t offered() const noexcept { return offered_.size(); }
  std::uint64_t deliveries() const noexcept { return deliveries_; }
  std::uint64_t pieced_deliveries() const noexcept { return pieced_deliveries_; }  // larger than one multicast

  // Deliveries of at least this many bytes count as pieced (the caller knows the data_max).
  void set_piece_threshold(std::size_t bytes) noexcept { piece_threshold_ = bytes; }

 private:
  struct Offer {
    std::string group;
    std::size_t size = 0;
  };
  void report(Property property, Time now, std::vector<NodeId> nodes, std::string detail);

  std::map<std::tuple<NodeId, std::uint32_t, std::uint64_t>, Offer> offered_;
  // The last counter each handle got of each sender in each group.
  std::map<std::tuple<std::uint64_t, NodeId, std::uint32_t, std::string>, std::uint64_t, std::less<>> last_;
  std::vector<Violation> violations_;
  std::uint64_t violation_count_ = 0;
  std::uint64_t deliveries_ = 0;
  std::uint64_t pieced_deliveries_ = 0;
  std::size_t piece_threshold_ = SIZE_MAX;
};

}  // namespace rtotem::sim
