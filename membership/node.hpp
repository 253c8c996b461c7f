// A totem node, sans-I/O: packets, timer expirations and submissions in; packets (through the
// backend's queue), deliveries and timer requests out. No socket, clock or thread inside: time is
// an argument. The host flushes the backend after each call.
//
// Where things happen: a packet enters in on_packets (node.cpp), the token is handled and
// messages ordered in token.cpp, and messages are delivered from delivery.cpp.
//
// Ordering, retransmission, flow control, agreed and safe delivery: token.cpp, delivery.cpp
// (tocssrp95 §3). Forming rings: membership.cpp (Gather: join messages until consensus; Commit:
// the commit token goes round twice) and recovery.cpp (Recovery: the members that come from one
// old ring exchange its messages, then the transitional and the regular configuration are
// delivered, in the order extended virtual synchrony requires; tocssrp95 §4-§5, EVS 1994).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "membership/assembler.hpp"
#include "membership/chunks.hpp"
#include "membership/gather.hpp"
#include "membership/node_counters.hpp"
#include "membership/packets.hpp"
#include "membership/sort_queue.hpp"
#include "membership/strangers.hpp"
#include "membership/totem_config.hpp"
#include "transport/backend.hpp"
#include "base/rng.hpp"  // a plain seeded generator, not tied to the simulator

namespace rtotem::membership {

using Time = std::uint64_t;  // microseconds on the host's monotonic clock (or virtual time)
constexpr Time ms_to_time(std::uint32_t milliseconds) noexcept { return Time{milliseconds} * 1000; }

enum class TimerId : std::uint8_t {
  kTokenLoss,        // no token (or commit token) for token_timeout
  kTokenRetransmit,  // the successor shows no sign of the token we sent
  kTokenHold,        // an idle ring: pass the held token on
  kJoin,             // Gather: send our join again
  kConsensus,        // Gather: who has not agreed by now is declared failed
  kMergeDetect,      // the representative tells other rings this one exists (or a member, itself)
};
inline constexpr std::size_t kTimerCount = 6;

// kLeft: leave() was called; the node takes nothing more and sends nothing more.
enum class MemberState : std::uint8_t { kGather, kCommit, kRecovery, kOperational, kLeft };
const char* describe(MemberState state) noexcept;

struct Delivered {
  RingId ring_id;  // the ring that ordered it
  Seq seq = 0;     // its number on that ring
  NodeId sender = kNoNode;
  Delivery delivery = Delivery::kAgreed;
  // Delivered in the transitional configuration that closes ring_id, not in the regular one.
  bool transitional = false;
  std::uint16_t index = 0;             // its place among the messages packed into packet seq
  std::span<const std::byte> payload;  // valid during the call; copy `hold` to keep it
  // nullptr for a message put back together from pieces: copy the payload to keep it.
  const transport::BufferRef* hold = nullptr;
};

// A configuration change (EVS). On leaving ring A for ring B a node delivers: A's messages that
// some member delivered in A (regular), the transitional configuration (the members of B that
// come from A, and who of A left), A's remaining messages (transitional), then the regular
// configuration of B (its members, and who joined).
struct ConfigChange {
  bool transitional = false;
  RingId ring_id;                   // the new ring, B, in both
  std::span<const NodeId> members;  // sorted; valid during the call
  std::span<const NodeId> joined;   // regular only: members of B not in the transitional one
  std::span<const NodeId> left;     // transitional only: members of A not in B's
};

// What a node asks of its host. Called only from inside the node's own calls.
class NodeEvents {
 public:
  virtual void arm_timer(TimerId timer, Time deadline) = 0;  // replaces an armed one
  virtual void cancel_timer(TimerId timer) = 0;
  virtual void deliver(const Delivered& message) = 0;
  virtual void configuration(const ConfigChange& change) = 0;
  // The node is about to use ring sequence number `seq`: store it durably before returning, so a
  // restarted node never reuses one (handed back to the Node's constructor).
  virtual void persist_ring_seq(Seq seq) = 0;

 protected:
  ~NodeEvents() = default;
};

class Node {
 public:
  // `config` must be resolved(). The node sends through `backend` and lives no longer than it.
  // `ring_seq`: the ring sequence number to start above: the highest this node persisted, or the
  // wall clock's floor if that is higher (ring_seq_floor.hpp: unique ring ids without the file).
  Node(NodeId self, const TotemConfig& config, transport::Backend& backend, NodeEvents& events, Seq ring_seq = 0);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Enters Gather: the node forms a ring with whoever answers, or alone. Once, after construction.
  void start(Time now);
  // Operational on `ring` with `members` (sorted, unique, self included) without forming it: for
  // tests and benchmarks of the ordering protocol alone. No configuration change is delivered.
  void install_ring(const RingId& ring, std::span<const NodeId> members, Time now);

  // A graceful stop: multicasts a join that names this node failed, so the others form a ring
  // without it at once instead of after a token timeout, then ignores every input. Messages
  // still queued here are not sent. Once; the node is then only destroyed.
  void leave();

  // The host moved this node to another backend (its link failed for good): packets go out
  // through `backend` from now on, and the node gathers a new ring over it at once; what it holds
  // from the old backend stays valid (Backend::retire) and is sent again through the new one if
  // needed. Refused (nothing changes) when `backend` carries less than the node was sized for.
  Result<void> rebind(transport::Backend& backend, Time now);

  // The protocol's timing changed (a reload of every node, applied at one place in the order):
  // token, its retransmits, hold, join, send_join, consensus, merge and fail_recv from `timing`
  // (resolved()); flow control and sizes stay. Each timer armed from now on runs with it; one
  // already armed keeps its deadline.
  void set_timing(const TotemConfig& timing);

  // A batch of received packets: multicasts first, then tokens (tocssrp95: the messages received
  // before a token are handled before it). Moves out the `hold` of packets it keeps.
  void on_packets(std::span<transport::InboundPacket> batch, Time now);
  void on_timer(TimerId timer, Time now);
  // Queues a message for the next token visit on an operational ring (kept across membership
  // changes): packed with others or split into pieces (send_queue.cpp). kQueueFull /
  // kPoolExhausted: back-pressure; kTooLarge: above max_message_size().
  Status submit(const Gather& message, Delivery delivery, Time now);
  Status submit(std::span<const std::byte> message, Delivery delivery, Time now) {
    return submit(Gather{message, {}}, delivery, now);
  }
  std::size_t max_message_size() const noexcept;
  const TotemConfig& config() const noexcept { return config_; }
  NodeId id() const noexcept { return self_; }
  MemberState state() const noexcept { return state_; }
  bool operational() const noexcept { return state_ == MemberState::kOperational; }
  // The ring this node is operational on, or (in Gather, Commit) the last one it was.
  const RingId& ring_id() const noexcept { return ring_.id; }
  std::span<const NodeId> members() const noexcept { return ring_.members.view(); }
  Seq delivered_through() const noexcept { return ring_.delivered_through; }
  Seq ring_seq() const noexcept { return ring_seq_; }
  // Whether this node holds (or held, and discarded after every member had it) message `seq` of
  // `ring`: what safe delivery promises of every member. nullopt: it is not on that ring (any
  // more), so it cannot say.
  std::optional<bool> holds(const RingId& ring, Seq seq) const noexcept;
  std::size_t send_queue_size() const noexcept { return send_count_; }
  const NodeCounters& counters() const noexcept { return counters_; }

 private:
  struct Pending {  // one packet to send: whole messages, or a piece of one
    transport::SendBufferRef buffer;
    Delivery delivery = Delivery::kAgreed;
    ChunkKind kind = ChunkKind::kWhole;
  };

  // One ring's messages and what this node knows of them.
  struct RingState {
    explicit RingState(std::size_t capacity) : queue(capacity) {}
    void reset(const RingId& ring, std::span<const NodeId> members);
    RingId id;
    NodeList members;
    SortQueue queue;
    Seq delivered_through = 0;
    Seq safe_through = 0;          // every member holds all up to here
    Seq last_token_aru = 0;        // token aru at my previous visit (corosync's my_last_aru)
    NodeId last_sender = kNoNode;  // of the highest seq delivered (or consumed) here
  };

  // What Recovery needs from the commit token (fixed at entry).
  struct RecoveryPlan {
    NodeList trans;              // members of the new ring that come from my old ring
    Seq low_aru = 0;             // the lowest aru among them: above it someone may miss messages
    Seq high_delivered = 0;      // the highest seq one of them delivered in the old ring
    Seq old_high = 0;            // the highest old seq I held at entry
    Seq next_resend = 0;         // the next old seq to re-send
    std::uint32_t visits = 0;    // token visits in Recovery
    bool token_started = false;  // the representative: the new ring's token is out
  };

  // node.cpp
  void on_mcast(transport::InboundPacket& packet, Time now);
  void store_recovered(const transport::BufferRef& hold, std::span<const std::byte> inner_packet);
  NodeId successor() const noexcept;
  void cancel_token_timers();
  // token.cpp
  void on_token(transport::InboundPacket& packet, Time now);
  void handle_token(Time now);
  bool failing_to_receive(Time now) noexcept;
  void leave_ring_deaf(Time now);
  void retransmit_requested();
  bool retransmit(const StoredMessage& message);
  std::uint32_t transmits_allowed() const noexcept;
  std::uint32_t my_backlog() const noexcept;
  bool next_seq_free() noexcept;
  bool multicast_next(const transport::SendBufferRef& buffer, Delivery delivery, bool recovery);
  void request_missing();
  void update_aru();
  void forward_token(Time now);
  void send_token_buffer(transport::SendBufferRef buffer, NodeId to, const RingId& ring, Time now);
  bool ring_idle() const noexcept;
  NodeId rest_holder() const noexcept;
  void pass_token(Time now);
  void on_hold_cancel(transport::InboundPacket& packet, Time now);
  void send_hold_cancel();
  // send_queue.cpp
  bool pack(const Gather& message, Delivery delivery) noexcept;
  Status enqueue_pieces(const Gather& message, Delivery delivery) noexcept;
  // Bytes [at, at + size) of `message`, as a chunk of `kind` (a piece of split message `number`),
  // at the end of `buffer`'s payload.
  static void write_chunk(transport::SendBuffer& buffer, ChunkKind kind, std::uint32_t number, const Gather& message,
                          std::size_t at, std::size_t size) noexcept;
  std::uint32_t send_new_messages(std::uint32_t allowed);
  bool unshare(transport::SendBufferRef& buffer) noexcept;
  // delivery.cpp
  void deliver_ready();
  void deliver_packet(const RingId& ring, Seq seq, const StoredMessage& message, bool transitional);
  void release_stable(Seq token_aru);
  // membership.cpp
  void gather_enter(Time now);
  Time join_delay() noexcept;
  void send_join();
  void on_join(transport::InboundPacket& packet, Time now);
  bool join_is_stale(const Join& join) const noexcept;
  bool merge_join_sets(const Join& join) noexcept;
  void on_merge_detect(transport::InboundPacket& packet, Time now);
  void heard_foreign(NodeId sender, const RingId& ring, Time now);
  void check_consensus(Time now);
  void on_consensus_timeout(Time now);
  void send_merge_detect(Time now);
  void form_commit(Time now);
  void on_commit(transport::InboundPacket& packet, Time now);
  void forward_commit(Time now);
  void fill_commit_entry(CommitMember& entry) const noexcept;
  void originate_token(Time now);
  // merge_vote.cpp
  Time stranger_window() const noexcept;
  bool note_stranger(NodeId node, Time now) noexcept;
  bool vote_on_merge(Time now);
  void note_sender(NodeId sender) noexcept;
  void note_given_up(const NodeList& given_up) noexcept;
  void note_installed(Time now) noexcept;
  void note_merge_detect(const MergeDetect& merge_detect, Time now);
  bool announcing(Time now) const noexcept;
  NodeList published_unheard(Time now) const noexcept;
  Time unheard_word_window() const noexcept;
  // recovery.cpp
  void recovery_enter(Time now);
  void recovery_abort();
  std::uint32_t send_recovery_messages(std::uint32_t allowed);
  void track_recovery_end();
  void operational_enter(Time now);
  void deliver_old(Seq seq, bool transitional);

  NodeId self_;
  TotemConfig config_;
  transport::Backend* backend_;  // rebind() moves it to another
  NodeEvents& events_;

  // Messages held past the discard point: half the sort queue (Recovery may hold an old ring's
  // messages up to twice that far), and a quarter of the receive ring, so that however many the
  // queues hold, a token still finds a buffer to arrive in.
  Seq window_limit_;
  // Send buffers submit() leaves free: for copies of others' messages to retransmit.
  std::uint32_t submit_reserve_;
  // Retransmit requests a token may carry: kRtrMax, or fewer where the MTU is small.
  std::uint16_t rtr_max_;

  MemberState state_ = MemberState::kGather;
  bool started_ = false;
  Seq ring_seq_;        // the highest ring seq seen or used (persisted before use)
  RingState ring_;      // operational: the ring; before: the last one (or mine alone)
  RingState old_ring_;  // Recovery: the ring being closed
  RecoveryPlan recovery_;

  // Gather (tocssrp95 §4.2): who I hear from, who I gave up on, who agrees with both.
  NodeList proc_set_;
  NodeList failed_set_;
  NodeList consensus_;
  NodeList new_members_;     // Commit, Recovery: the members of the ring being formed
  Rng join_rng_;             // send_join's delays: seeded by node id, so a simulation replays
  Commit commit_;            // the commit token of the ring being formed
  Commit incoming_commit_;   // a received one, checked before it replaces commit_
  std::size_t members_max_;  // the most members a commit token holds at this MTU
  std::uint64_t last_token_seq_ = 0;

  // Flow control (corosync's fcc_token_update): what I sent at my last visit, my backlog then.
  std::uint32_t my_trc_ = 0;
  std::uint32_t my_pbl_ = 0;

  std::unique_ptr<Pending[]> send_queue_;  // submitted, waiting for the token: a ring
  std::size_t send_head_ = 0;
  std::size_t send_count_ = 0;
  std::size_t kept_ = 0;                  // pieces at the head already sent on kept_ring_: the message's start
  std::uint32_t next_split_message_ = 0;  // the number the next split message's pieces carry
  RingId kept_ring_;
  Assembler assembler_;  // others' split messages, as they are delivered

  Token token_;                                 // the token being handled (too big for the stack)
  Token incoming_;                              // a received token, checked before it replaces token_
  transport::SendBufferRef next_token_buffer_;  // taken before a token is handled: it must go on
  transport::SendBufferRef token_buffer_;       // the token (or commit token) sent last, to resend
  NodeId token_sent_to_ = kNoNode;
  RingId token_ring_;      // the ring it belongs to: the commit token's, in Commit
  Seq seq_forwarded_ = 0;  // its `seq`: a later mcast from the successor acks it
  bool holding_token_ = false;
  // The token left here with nothing of ours waiting, so another member may rest it (rest_holder);
  // the next submission asks that one to let go (one hold cancel a visit). hold_cancelled_: a
  // member asked while the token was on its way here, so we do not hold it on our next visit.
  bool token_may_rest_ = false;
  bool hold_cancelled_ = false;
  bool send_starved_ = false;  // the last visit found no buffer or no room to send in
  // Failure to receive: the aru this node has held the ring back at, since when, for how many visits.
  Seq stuck_aru_ = 0;
  Time stuck_since_ = 0;
  std::uint32_t stuck_visits_ = 0;
  // Left a ring for failing to receive: alone, we do not announce our ring (we would pull the
  // others into Gather, round after round, while we still cannot hear them); hearing theirs is
  // what shows our reception is back. Cleared once we are on a ring with others.
  bool deaf_ = false;
  StrangerLog strangers_;  // nodes outside our ring heard lately: the merge vote's evidence
  // merge_vote.cpp. Since the last Gather entry, and since we left our last ring: the senders of
  // any packet; since we left it, the nodes given up on at a consensus timeout without a packet
  // from them in that round. The nodes we say we do not hear, until one of their packets comes
  // (or unheard_until_, for one that is gone for good); and until when we announce ourselves to
  // a stranger that says it does not hear us.
  NodeList heard_in_round_;
  NodeList heard_in_formation_;
  NodeList given_up_unheard_;
  NodeList unheard_;
  Time unheard_until_ = 0;
  Time announce_until_ = 0;
  std::uint32_t retransmitted_this_visit_ = 0;
  NodeCounters counters_;
};

}  // namespace rtotem::membership
