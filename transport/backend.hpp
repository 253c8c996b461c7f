// The one interface every transport (UDP, RDMA, the simulator) implements, so the protocol never
// knows which it runs on. Shared behaviour lives here; a backend overrides a few hooks.
//
// Data path, one thread:
//   acquire()  -> a send buffer from this backend's pool, header stamped
//   multicast()/unicast() -> queue it (shared, not copied); the own node gets its multicasts
//                 through a local path, whatever the network does with multicast loopback
//   flush()    -> push the queue out in batches (sendmmsg, one chained ibv_post_send); with a
//                 cluster key each packet is sealed first, into the backend's seal slots
//   poll(sink) -> hand a batch of received packets to the sink; what it does not keep is re-posted;
//                 with a cluster key each is opened (or dropped and counted) before the sink sees it
//
// Lifetime: every Ref to this backend's buffers must be dropped before the backend is destroyed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transport/buffer.hpp"
#include "transport/buffer_arena.hpp"
#include "transport/cluster_key.hpp"
#include "transport/counters.hpp"
#include "transport/peer_address.hpp"
#include "transport/recv_ring.hpp"
#include "base/result.hpp"
#include "transport/send_pool.hpp"
#include "transport/tx_queue.hpp"
#include "transport/wire_crypto.hpp"

namespace rtotem::transport {

inline constexpr std::size_t kRxBatchMax = 32;  // packets one poll hands to the sink
inline constexpr std::size_t kLoopbackMax = kTxQueueMax;
inline constexpr std::uint32_t kMtuMin = 256;
inline constexpr std::uint32_t kMtuMax = 65000;  // fits a UDP datagram with our header
// Packets sealed per transmit call, each into its own seal slot: as many as a sendmmsg takes.
inline constexpr std::size_t kSealBatchMax = 64;
static_assert(kRxBatchMax <= kTxQueueMax);
static_assert(kSealBatchMax <= kTxQueueMax);

// Where a packet came from, as the device tells it (a datagram's source address, a GRH's source),
// asked once the header names its sender: a node id is taken only from that node's address.
class PacketSource {
 public:
  virtual bool is(NodeId sender) const noexcept = 0;

 protected:
  ~PacketSource() = default;
};

struct BackendParams {
  NodeId local_node = kNoNode;
  std::uint32_t cluster_id = 0;
  // Largest packet on the wire, our header not counted. With a key the protocol's share of it
  // (payload_mtu) is kSealOverhead less, so a sealed packet is still one datagram of this size.
  std::uint32_t mtu = 1400;
  std::uint32_t send_buffers = 1024;
  std::uint32_t recv_buffers = 1024;
  // The cluster key: every packet sealed and opened with it (WireCrypto). Null: in the clear.
  std::shared_ptr<const ClusterKey> key;
  // With a key: this start of the node, greater than any epoch it used before (replay windows
  // drop older epochs). The daemon takes the wall clock in ns (raised past the last one it
  // persisted); the simulator counts incarnations.
  std::uint64_t epoch = 0;
  // Whether multicast() also hands the packet to this node through the local path. Off for a
  // link of a LinkSet, which loops its multicasts back once itself.
  bool local_path = true;

  // The largest payload the protocol may put in one packet.
  std::uint32_t payload_mtu() const noexcept { return key ? mtu - static_cast<std::uint32_t>(kSealOverhead) : mtu; }
  Result<void> validate() const;
};

// Slot sizes and arena size for a backend's buffers. With a key the arena also holds the seal
// slots, where packets are sealed on their way out (a send buffer is shared with the retransmit
// queue and the local path, which want it in the clear: it is never sealed in place). In the
// arena, so an RDMA backend's one registration covers them too.
struct BufferLayout {
  std::uint32_t send_slot = 0;
  std::uint32_t recv_slot = 0;
  std::uint32_t seal_slot = 0;  // 0 without a key
  std::size_t send_bytes = 0;
  std::size_t recv_bytes = 0;
  std::size_t seal_bytes = 0;

  // `recv_wire`: the longest packet the device can put in a receive buffer, where that is more
  // than the configured mtu allows (RDMA: whatever the port carries); 0: the mtu's.
  static BufferLayout of(const BackendParams& params, std::uint32_t recv_headroom,
                         std::uint32_t recv_wire = 0) noexcept;
  std::size_t total_bytes() const noexcept {
    return align_up(send_bytes, kBufferAlign) + align_up(recv_bytes, kBufferAlign) + seal_bytes;
  }
};

struct InboundPacket {
  NodeId from = kNoNode;
  std::span<const std::byte> payload;
  BufferRef hold;  // keep (move) it to keep the bytes; when dropped the buffer goes home
};

class PacketSink {
 public:
  // `batch` is valid during the call only; move a packet's `hold` out to keep it.
  virtual void on_packets(std::span<InboundPacket> batch) = 0;

 protected:
  ~PacketSink() = default;
};

class Backend {
 public:
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual ~Backend();

  virtual std::string_view name() const noexcept = 0;
  virtual std::string local_address() const = 0;
  // Descriptors to watch for readability. None: the backend is driven by polling only (the
  // simulator).
  virtual std::span<const int> poll_fds() const noexcept { return {}; }
  // The descriptor to watch for writability while has_pending_tx(); -1 if none.
  virtual int tx_fd() const noexcept { return -1; }

  NodeId local_node() const noexcept { return params_.local_node; }
  // The largest payload the protocol may send (BackendParams::payload_mtu).
  std::uint32_t mtu() const noexcept { return params_.payload_mtu(); }
  // The largest packet on the wire, header included: what a receive must take whole.
  std::size_t wire_max() const noexcept { return params_.mtu + kWireHeaderSize; }
  bool sealed() const noexcept { return crypto_ != nullptr; }
  // What it runs with: a backend may lower the mtu it was opened with to what its link carries.
  const BackendParams& params() const noexcept { return params_; }
  std::uint32_t recv_buffers() const noexcept { return params_.recv_buffers; }
  const BackendCounters& counters() const noexcept { return counters_; }
  const SendPool& send_pool() const noexcept { return *send_pool_; }
  // The one region holding every send and receive buffer (what RDMA registers, once).
  std::span<const std::byte> buffer_region() const noexcept { return arena_.region(); }
  bool closed() const noexcept { return closed_; }
  // Why the link broke (the device or its port failed, the QP went to the error state); empty
  // while it works. A broken link neither sends nor receives again: the host gives up on this
  // backend (rtotemd retires it and goes on over UDP, or exits where it may not fall back).
  std::string_view link_failure() const noexcept { return link_failure_; }
  bool has_pending_tx() const noexcept { return !tx_.empty() || device_tx_pending(); }
  // Packets wait on the local path (own multicasts, unicasts to self), or in the device's own
  // staging: no descriptor turns readable for them, so the host must poll again before it waits.
  bool has_pending_rx() const noexcept { return loopback_count_ > 0 || device_rx_pending(); }
  // Room in the transmit queue, in packets.
  std::size_t tx_room() const noexcept { return kTxQueueMax - tx_.size(); }
  // A backend with timers of its own (a LinkSet's pings) does their work due at `now_us` and
  // returns when it must be called again; the host calls it at start and then when it asks. The
  // others never need it.
  virtual std::uint64_t on_timer(std::uint64_t now_us) noexcept {
    (void)now_us;
    return kNoTimer;
  }
  static constexpr std::uint64_t kNoTimer = ~std::uint64_t{0};
  // The cluster key changes with no ring change (WireCrypto::set_keys): seal with `seal_with`,
  // open what it or `also_open` sealed. Only on a backend opened with a key (sealed()).
  virtual void rekey(std::shared_ptr<const ClusterKey> seal_with, std::shared_ptr<const ClusterKey> also_open) noexcept;
  // The nodelist changed at run time (a reload of every node): `by_link[i]` is every node's
  // address on link i, this node's entry included (one list for a backend of one link). Peers
  // kept keep their state; a packet queued to a removed one goes nowhere. check_peers() says
  // whether set_peers() would take the lists, which it then must. By default a backend cannot.
  virtual Result<void> check_peers(std::span<const std::vector<PeerAddress>> by_link) const;
  virtual void set_peers(std::span<const std::vector<PeerAddress>> by_link);
  // A backend over several links (LinkSet) tells each link's state per peer; the others: null.
  virtual const class LinkSet* link_set() const noexcept { return nullptr; }
  // Another backend's buffer region (a LinkSet's), whose buffers this one is then given to send
  // as its own, without a copy. RDMA registers it (a second memory region); the others read
  // what they send through the kernel or the simulator and need nothing.
  virtual Result<void> adopt_send_region(std::span<const std::byte> region) {
    (void)region;
    return {};
  }

  Status acquire(SendBufferRef& out) noexcept;
  // `spread`: a backend over several links sends a kEveryLink packet on every live link (the
  // protocol's retransmissions: the copies a node missed must not wait for a failover).
  Status multicast(const SendBufferRef& buffer, Spread spread = Spread::kRoute) noexcept;
  Status unicast(NodeId dest, const SendBufferRef& buffer) noexcept;
  // kOk: queue empty. kWouldBlock: the rest stays queued; call again when writable.
  Status flush() noexcept;
  // Delivers at most kRxBatchMax packets; returns how many. Fewer than kRxBatchMax: nothing more is
  // waiting (or every receive buffer is held: see counters().rx_ring_empty).
  std::size_t poll(PacketSink& sink) noexcept;
  // Sends what can be sent without blocking, then stops. Idempotent.
  void close() noexcept;
  // The link failed for good and the host goes on with another backend: closes, and gives back
  // what this one made on its device at once (RDMA: every verbs and rdma_cm object), while every
  // buffer the protocol still holds stays valid until its Ref drops. Nothing is sent or received
  // again; own multicasts still on the local path are dropped (poll first).
  void retire() noexcept {
    close();
    on_retire();
  }

 protected:
  Backend(const BackendParams& params, BufferArena arena, const BufferLayout& layout);

  // Hooks. transmit: send items from the front, in order; return how many were fully handled
  // (sent, or dropped and counted as tx_errors). Fewer than items.size() means "device full".
  // Send each item's `wire` bytes: sealed ones live in a seal slot, one per item, taken in order.
  // A backend whose device is done with the bytes when transmit returns (sendmmsg copies; the
  // simulator copies) frees its slots at once; one that reads them later (RDMA) says so with
  // holds_sent_bytes and frees them, oldest first, with release_seal_slots as sends complete.
  virtual std::size_t transmit(std::span<TxItem> items) noexcept = 0;
  virtual bool holds_sent_bytes() const noexcept { return false; }
  // Called at the start of every flush: take back what the device finished sending (RDMA reaps
  // its send completions), so buffers and seal slots are free before the next transmit.
  virtual void reclaim_sent() noexcept {}
  // receive: fill `out` with validated packets (see accept); return the count. It stops only
  // when `out` is full or the device has nothing more: rejected packets do not use up the batch,
  // so a short batch always means "drained". Multicasts queued before a unicast are handed out
  // first where the device keeps them apart (tocssrp95: received messages before the token).
  virtual std::size_t receive(std::span<InboundPacket> out) noexcept = 0;
  // Whether unicast() can address `node`, and packets from `node` are accepted.
  virtual bool knows(NodeId) const noexcept { return true; }
  virtual void on_close() noexcept {}
  virtual void on_retire() noexcept {}
  // Packets the device holds that neither the transmit queue nor a descriptor shows (a LinkSet's
  // links).
  virtual bool device_tx_pending() const noexcept { return false; }
  virtual bool device_rx_pending() const noexcept { return false; }

  // For receive(): validates the `size` wire bytes the device put in `buffer` (`truncated`: the
  // packet did not fit), checks the sender it names against `source` where the device tells one
  // (the simulator does not), and opens them in place with a key. On success labels the buffer,
  // counts it, fills `out` and returns true; otherwise counts the reason and returns false (the
  // caller drops the Ref: re-posted). No byte of the payload is read before the header is valid,
  // its sender's address checked and, with a key, the packet authenticated.
  bool accept(RecvBufferRef buffer, std::size_t size, bool truncated, InboundPacket& out,
              const PacketSource* source = nullptr) noexcept;

  std::span<std::byte> recv_region() const noexcept { return recv_region_; }
  const BufferLayout& layout() const noexcept { return layout_; }
  // `count` more sends (each had one seal slot) are complete; a no-op without a key.
  void release_seal_slots(std::size_t count) noexcept;
  // Records the first reason the link broke (a rare path: it may allocate) and counts it.
  void set_link_failure(std::string reason) noexcept;
  BackendCounters counters_;

 private:
  Status enqueue(NodeId dest, const SendBufferRef& buffer, Spread spread = Spread::kRoute) noexcept;
  void loop_back(const SendBufferRef& buffer) noexcept;
  std::span<TxItem> seal_front(std::span<TxItem> items) noexcept;
  bool open_sealed(RecvBuffer& buffer, std::size_t size, const WireHeader& header, std::uint32_t& payload_len) noexcept;

  BackendParams params_;
  BufferLayout layout_;
  BufferArena arena_;
  std::span<std::byte> recv_region_;
  std::span<std::byte> seal_region_;    // kSealBatchMax slots of layout_.seal_slot; empty without a key
  std::uint64_t seals_taken_ = 0;       // slots handed out, ever: slot = count % kSealBatchMax
  std::uint64_t seals_released_ = 0;    // of which the device is done with this many (in order)
  std::unique_ptr<WireCrypto> crypto_;  // null without a key
  std::unique_ptr<SendPool> send_pool_;
  WireHeader header_template_;
  TxQueue tx_;
  std::array<SendBufferRef, kLoopbackMax> loopback_{};  // own multicasts awaiting local delivery
  std::size_t loopback_head_ = 0;
  std::size_t loopback_count_ = 0;
  std::array<InboundPacket, kRxBatchMax> rx_batch_{};
  bool closed_ = false;
  std::string link_failure_;
};

}  // namespace rtotem::transport
