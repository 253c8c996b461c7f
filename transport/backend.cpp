// The shared part of every backend: queueing, the local self-delivery path, header validation.
#include "transport/backend.hpp"

#include <algorithm>
#include <utility>

namespace rtotem::transport {

Result<void> BackendParams::validate() const {
  if (local_node == kNoNode) return Error::make("local node id must be 1 or more");
  if (mtu < kMtuMin || mtu > kMtuMax) return Error::make("mtu {} out of range [{}, {}]", mtu, kMtuMin, kMtuMax);
  if (send_buffers < kTxQueueMax)
    return Error::make("send_buffers {} is below the transmit queue depth {}", send_buffers, kTxQueueMax);
  if (recv_buffers < kRxBatchMax)
    return Error::make("recv_buffers {} is below the receive batch {}", recv_buffers, kRxBatchMax);
  if (key && epoch == 0) return Error::make("a sealing backend needs an epoch above 0");
  if (key && mtu < kMtuMin + kSealOverhead)
    return Error::make("mtu {} leaves {} bytes a packet once sealed ({} bytes of nonce and tag), below {}", mtu,
                       mtu - std::min<std::uint32_t>(mtu, kSealOverhead), kSealOverhead, kMtuMin);
  return {};
}

BufferLayout BufferLayout::of(const BackendParams& params, std::uint32_t recv_headroom,
                              std::uint32_t recv_wire) noexcept {
  BufferLayout layout;
  const std::uint32_t wire = params.mtu + static_cast<std::uint32_t>(kWireHeaderSize);
  layout.send_slot = static_cast<std::uint32_t>(align_up(wire, kBufferAlign));
  layout.recv_slot = RecvRing::slot_size(std::max(wire, recv_wire), recv_headroom);
  layout.send_bytes = SendPool::bytes_needed(params.send_buffers, layout.send_slot);
  layout.recv_bytes = std::size_t(params.recv_buffers) * layout.recv_slot;
  if (params.key) {  // a sealed packet is as long as the wire allows: payload_mtu + overhead == mtu
    layout.seal_slot = layout.send_slot;
    layout.seal_bytes = kSealBatchMax * layout.seal_slot;
  }
  return layout;
}

Backend::Backend(const BackendParams& params, BufferArena arena, const BufferLayout& layout)
    : params_(params), layout_(layout), arena_(std::move(arena)) {
  RTOTEM_ASSERT(arena_.region().size() >= layout_.total_bytes());
  auto send_region = arena_.carve(layout_.send_bytes);
  recv_region_ = arena_.carve(layout_.recv_bytes);
  if (params_.key) {
    seal_region_ = arena_.carve(layout_.seal_bytes);
    crypto_ = std::make_unique<WireCrypto>(params_.key, params_.epoch);
  }
  send_pool_ = std::make_unique<SendPool>(send_region, params_.send_buffers, layout_.send_slot);
  header_template_.cluster_id = params_.cluster_id;
  header_template_.sender = params_.local_node;
}

Backend::~Backend() = default;

void Backend::rekey(std::shared_ptr<const ClusterKey> seal_with, std::shared_ptr<const ClusterKey> also_open) noexcept {
  RTOTEM_ASSERT(crypto_ != nullptr);
  crypto_->set_keys(std::move(seal_with), std::move(also_open));
}

Result<void> Backend::check_peers(std::span<const std::vector<PeerAddress>> by_link) const {
  (void)by_link;
  return Error::make("{}: the nodelist cannot change while it runs", name());
}

void Backend::set_peers(std::span<const std::vector<PeerAddress>> by_link) {
  (void)by_link;
  RTOTEM_ASSERT(false);  // check_peers() refused
}

Status Backend::acquire(SendBufferRef& out) noexcept {
  const Status status = send_pool_->acquire(header_template_, out);
  if (status == Status::kPoolExhausted) ++counters_.tx_pool_exhausted;
  return status;
}

Status Backend::multicast(const SendBufferRef& buffer, Spread spread) noexcept {
  // Room on both paths first, so a multicast is never half-queued.
  if (loopback_count_ == kLoopbackMax) {
    ++counters_.tx_queue_full;
    return Status::kQueueFull;
  }
  const Status status = enqueue(kNoNode, buffer, spread);
  if (status == Status::kOk && params_.local_path) loop_back(buffer);
  return status;
}

Status Backend::unicast(NodeId dest, const SendBufferRef& buffer) noexcept {
  if (dest == params_.local_node) {
    if (closed_) return Status::kClosed;
    if (buffer->payload().size() > mtu()) {
      ++counters_.tx_too_large;
      return Status::kTooLarge;
    }
    if (loopback_count_ == kLoopbackMax) {
      ++counters_.tx_queue_full;
      return Status::kQueueFull;
    }
    loop_back(buffer);
    return Status::kOk;
  }
  if (!knows(dest)) {
    ++counters_.tx_unknown_node;
    return Status::kUnknownNode;
  }
  return enqueue(dest, buffer);
}

Status Backend::enqueue(NodeId dest, const SendBufferRef& buffer, Spread spread) noexcept {
  RTOTEM_ASSERT(buffer && buffer->kind() == BufferKind::kSend);
  if (closed_) return Status::kClosed;
  if (buffer->payload().size() > mtu()) {
    ++counters_.tx_too_large;
    return Status::kTooLarge;
  }
  if (tx_.full()) (void)flush();  // a full batch goes out now: the queue is a batch, not a backlog
  if (tx_.full()) {
    ++counters_.tx_queue_full;
    return Status::kQueueFull;
  }
  tx_.push(dest, buffer, spread);
  return Status::kOk;
}

void Backend::loop_back(const SendBufferRef& buffer) noexcept {
  RTOTEM_ASSERT(loopback_count_ < kLoopbackMax);
  loopback_[(loopback_head_ + loopback_count_) % kLoopbackMax] = buffer;
  ++loopback_count_;
}

Status Backend::flush() noexcept {
  if (closed_) return Status::kClosed;
  reclaim_sent();
  while (!tx_.empty()) {
    auto items = tx_.pending();
    if (crypto_) items = seal_front(items);
    const std::size_t done = items.empty() ? 0 : transmit(items);
    RTOTEM_ASSERT(done <= items.size());
    tx_.pop_front(done);
    if (crypto_) {
      seals_taken_ -= items.size() - done;  // unsent: sealed again, with a new counter, next time
      if (!holds_sent_bytes()) seals_released_ = seals_taken_;
    }
    if (done < items.size() || items.empty()) {  // device full, or every seal slot still in flight
      ++counters_.tx_would_block;
      return Status::kWouldBlock;
    }
  }
  return Status::kOk;
}

// Seals as many front items as there are free seal slots (at most kSealBatchMax), each into the
// next slot of the ring, and points their `wire` there. What transmit does not send now is sealed
// again on the next flush, with a new counter: no nonce is ever used twice, and no slot is
// rewritten while a packet in it waits or the device may still read it.
std::span<TxItem> Backend::seal_front(std::span<TxItem> items) noexcept {
  const std::size_t free = kSealBatchMax - static_cast<std::size_t>(seals_taken_ - seals_released_);
  items = items.first(std::min(items.size(), free));
  for (TxItem& item : items) {
    const std::size_t index = seals_taken_++ % kSealBatchMax;
    const auto slot = seal_region_.subspan(index * layout_.seal_slot, layout_.seal_slot);
    item.wire = crypto_->seal(item.buffer->wire(), slot);
  }
  return items;
}

void Backend::release_seal_slots(std::size_t count) noexcept {
  if (!crypto_) return;
  RTOTEM_ASSERT(count <= seals_taken_ - seals_released_);
  seals_released_ += count;
}

std::size_t Backend::poll(PacketSink& sink) noexcept {
  if (closed_) return 0;
  std::size_t n = 0;
  for (; n < kRxBatchMax && loopback_count_ > 0; ++n) {
    SendBufferRef& own = loopback_[loopback_head_];
    rx_batch_[n].from = params_.local_node;
    rx_batch_[n].payload = own->payload();
    rx_batch_[n].hold = std::move(own);
    loopback_head_ = (loopback_head_ + 1) % kLoopbackMax;
    --loopback_count_;
    ++counters_.rx_loopback;
  }
  if (n < kRxBatchMax) n += receive(std::span(rx_batch_).subspan(n));
  if (n == 0) return 0;
  sink.on_packets(std::span(rx_batch_.data(), n));
  for (std::size_t i = 0; i < n; ++i) rx_batch_[i].hold.reset();  // not kept: home it goes
  return n;
}

void Backend::close() noexcept {
  if (closed_) return;
  (void)flush();
  tx_.pop_front(tx_.size());
  for (; loopback_count_ > 0; --loopback_count_) {
    loopback_[loopback_head_].reset();
    loopback_head_ = (loopback_head_ + 1) % kLoopbackMax;
  }
  closed_ = true;
  on_close();
}

void Backend::set_link_failure(std::string reason) noexcept {
  ++counters_.link_failures;
  if (link_failure_.empty()) link_failure_ = std::move(reason);
}

bool Backend::accept(RecvBufferRef buffer, std::size_t size, bool truncated, InboundPacket& out,
                     const PacketSource* source) noexcept {
  if (truncated) {
    ++counters_.drop_truncated;
    return false;
  }
  RTOTEM_ASSERT(size <= buffer->capacity());
  WireHeader header;
  switch (decode_header(std::span(buffer->data(), size), params_.cluster_id, header)) {
    case HeaderCheck::kOk: break;
    case HeaderCheck::kShort: ++counters_.drop_short; return false;
    case HeaderCheck::kBadMagic: ++counters_.drop_bad_magic; return false;
    case HeaderCheck::kBadVersion: ++counters_.drop_bad_version; return false;
    case HeaderCheck::kForeignCluster: ++counters_.drop_foreign_cluster; return false;
    case HeaderCheck::kBadLength: ++counters_.drop_bad_length; return false;
    case HeaderCheck::kNoSender: ++counters_.drop_no_sender; return false;
  }
  if (header.sender == params_.local_node) {  // our multicast, echoed by the network
    ++counters_.drop_self_echo;
    return false;
  }
  if (!knows(header.sender)) {
    ++counters_.drop_unknown_sender;
    return false;
  }
  if (source != nullptr && !source->is(header.sender)) {  // spoofed, or a stray from off the cluster
    ++counters_.drop_wrong_source;
    return false;
  }
  std::uint32_t payload_len = header.payload_len;
  if (!open_sealed(*buffer, size, header, payload_len)) return false;
  buffer->set_received(static_cast<std::uint32_t>(kWireHeaderSize + payload_len), header.sender);
  ++counters_.rx_packets;
  counters_.rx_bytes += size;
  out.from = header.sender;
  out.payload = buffer->payload();
  out.hold = std::move(buffer);
  return true;
}

// Without a key, a sealed packet cannot be read: crypto is on at the sender only. With one, the
// packet must open (WireCrypto checks the replay window first, then authenticates, in place).
bool Backend::open_sealed(RecvBuffer& buffer, std::size_t size, const WireHeader& header,
                          std::uint32_t& payload_len) noexcept {
  if (!crypto_) {
    if ((header.flags & kFlagSealed) == 0) return true;
    ++counters_.drop_auth;
    return false;
  }
  switch (crypto_->open(std::span(buffer.data(), size), header.sender, payload_len)) {
    case OpenCheck::kOk: return true;
    case OpenCheck::kShort: ++counters_.drop_short; return false;
    case OpenCheck::kUnsealed:
    case OpenCheck::kAuth: ++counters_.drop_auth; return false;
    case OpenCheck::kReplay: ++counters_.drop_replay; return false;
  }
  return false;
}

}  // namespace rtotem::transport
