// A totem node, sans-I/O: packets, timer expirations and submissions in; packets (through the
// backend's queue), deliveries and timer requests out. No socket, clock or thread inside: time is
// an argument. The host flushes the backend after each call.
//
// Where things happen: a packet enters in on_packets (node.cpp), the token is handled and
// messages ordered in token.cpp, and messages are delivered from delivery.cpp.
//
// This is the operational state of tocssrp95 (ordering, retransmission, flow control, agreed and
// safe delivery) on a ring given to install_ring(); the membership protocol that forms rings by
// itself (Gather, Commit, Recovery) builds on it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "membership/node_counters.hpp"
#include "membership/packets.hpp"
#include "membership/sort_queue.hpp"
#include "membership/totem_config.hpp"
#include "transport/backend.hpp"

namespace rtotem::membership {

using Time = std::uint64_t;  // microseconds on the host's monotonic clock (or virtual time)
constexpr Time ms_to_time(std::uint32_t milliseconds) noexcept { return Time{milliseconds} * 1000; }

enum class TimerId : std::uint8_t {
  kTokenLoss,        // no token for token_timeout
  kTokenRetransmit,  // the successor shows no sign of the token we sent
  kTokenHold,        // an idle ring: pass the held token on
};
inline constexpr std::size_t kTimerCount = 3;

struct Delivered {
  RingId ring_id;
  Seq seq = 0;
  NodeId sender = kNoNode;
  Delivery delivery = Delivery::kAgreed;
  std::span<const std::byte> payload;   // valid during the call; copy `hold` to keep it
  const transport::BufferRef* hold = nullptr;
};

// What a node asks of its host. Called only from inside the node's own calls.
class NodeEvents {
 public:
  virtual void arm_timer(TimerId timer, Time deadline) = 0;  // replaces an armed one
  virtual void cancel_timer(TimerId timer) = 0;
  virtual void deliver(const Delivered& message) = 0;

 protected:
  ~NodeEvents() = default;
};

class Node {
 public:
  // `config` must be resolved(). The node sends through `backend` and lives no longer than it.
  Node(NodeId self, const TotemConfig& config, transport::Backend& backend, NodeEvents& events);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Enters the operational state on `ring` with `members` (sorted, unique, self included). The
  // representative (ring.rep, the smallest id) originates the first token.
  void install_ring(const RingId& ring, std::span<const NodeId> members, Time now);

  // A batch of received packets: multicasts first, then tokens (tocssrp95: the messages received
  // before a token are handled before it). Moves out the `hold` of packets it keeps.
  void on_packets(std::span<transport::InboundPacket> batch, Time now);
  void on_timer(TimerId timer, Time now);
  // Queues a message for the next token visit. kQueueFull / kPoolExhausted: back-pressure;
  // kTooLarge: above max_message_size().
  Status submit(std::span<const std::byte> message, Delivery delivery, Time now);

  std::size_t max_message_size() const noexcept;
  NodeId id() const noexcept { return self_; }
  const RingId& ring_id() const noexcept { return ring_id_; }
  bool operational() const noexcept { return operational_; }
  Seq delivered_through() const noexcept { return delivered_through_; }
  // Whether this node holds (or held, and discarded after every member had it) message `seq` of
  // the current ring: what safe delivery promises of every member.
  bool has_received(Seq seq) const noexcept { return seq <= queue_.base() || queue_.holds(seq); }
  std::size_t send_queue_size() const noexcept { return send_count_; }
  const NodeCounters& counters() const noexcept { return counters_; }

 private:
  struct Pending {
    transport::SendBufferRef buffer;
    Delivery delivery = Delivery::kAgreed;
  };

  // node.cpp
  void on_mcast(transport::InboundPacket& packet);
  NodeId successor() const noexcept;
  // token.cpp
  void on_token(transport::InboundPacket& packet, Time now);
  void handle_token(Time now);
  void retransmit_requested();
  bool retransmit(const StoredMessage& message);
  std::uint32_t transmits_allowed() const noexcept;
  std::uint32_t send_new_messages(std::uint32_t allowed);
  void request_missing();
  void update_aru();
  void forward_token(Time now);
  bool ring_idle() const noexcept;
  void pass_token(Time now);
  // delivery.cpp
  void deliver_ready();
  void release_stable(Seq token_aru);

  NodeId self_;
  TotemConfig config_;
  transport::Backend& backend_;
  NodeEvents& events_;

  // Messages held past the discard point: the sort queue's capacity, and less than the receive
  // ring, so that however many the queue holds, a token still finds a buffer to arrive in.
  Seq window_limit_;
  // Send buffers submit() leaves free: for copies of others' messages to retransmit.
  std::uint32_t submit_reserve_;
  // Retransmit requests a token may carry: kRtrMax, or fewer where the MTU is small.
  std::uint16_t rtr_max_;

  bool operational_ = false;
  RingId ring_id_;
  NodeList members_;
  SortQueue queue_;
  Seq delivered_through_ = 0;
  Seq safe_through_ = 0;       // every member holds all up to here
  Seq last_token_aru_ = 0;     // token aru at my previous visit (corosync's my_last_aru)
  std::uint64_t last_token_seq_ = 0;

  // Flow control (corosync's fcc_token_update): what I sent at my last visit, my backlog then.
  std::uint32_t my_trc_ = 0;
  std::uint32_t my_pbl_ = 0;

  std::unique_ptr<Pending[]> send_queue_;  // submitted, waiting for the token: a ring
  std::size_t send_head_ = 0;
  std::size_t send_count_ = 0;

  Token token_;                               // the token being handled (too big for the stack)
  Token incoming_;                            // a received token, checked before it replaces token_
  transport::SendBufferRef next_token_buffer_;  // taken before a token is handled: it must go on
  transport::SendBufferRef token_buffer_;     // the one forwarded last, kept to retransmit
  Seq seq_forwarded_ = 0;                     // its `seq`: a later mcast from the successor acks it
  bool holding_token_ = false;
  std::uint32_t retransmitted_this_visit_ = 0;
  NodeCounters counters_;
};

}  // namespace rtotem::membership
