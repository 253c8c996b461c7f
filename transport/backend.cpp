// The shared part of every backend: queueing, the local self-delivery path, header validation.
#include "transport/backend.hpp"

#include <utility>

namespace rtotem::transport {

Result<void> BackendParams::validate() const {
  if (local_node == kNoNode) return Error::make("local node id must be 1 or more");
  if (mtu < kMtuMin || mtu > kMtuMax)
    return Error::make("mtu {} out of range [{}, {}]", mtu, kMtuMin, kMtuMax);
  if (send_buffers < kTxQueueMax)
    return Error::make("send_buffers {} is below the transmit queue depth {}", send_buffers, kTxQueueMax);
  if (recv_buffers < kRxBatchMax)
    return Error::make("recv_buffers {} is below the receive batch {}", recv_buffers, kRxBatchMax);
  return {};
}

BufferLayout BufferLayout::of(const BackendParams& params, std::uint32_t recv_headroom) noexcept {
  BufferLayout layout;
  const std::uint32_t wire = params.mtu + static_cast<std::uint32_t>(kWireHeaderSize);
  layout.send_slot = static_cast<std::uint32_t>(align_up(wire, kBufferAlign));
  layout.recv_slot = RecvRing::slot_size(wire, recv_headroom);
  layout.send_bytes = SendPool::bytes_needed(params.send_buffers, layout.send_slot);
  layout.recv_bytes = std::size_t(params.recv_buffers) * layout.recv_slot;
  return layout;
}

Backend::Backend(const BackendParams& params, BufferArena arena, const BufferLayout& layout)
    : params_(params), layout_(layout), arena_(std::move(arena)) {
  RTOTEM_ASSERT(arena_.region().size() >= layout_.total_bytes());
  auto send_region = arena_.carve(layout_.send_bytes);
  recv_region_ = arena_.carve(layout_.recv_bytes);
  send_pool_ = std::make_unique<SendPool>(send_region, params_.send_buffers, layout_.send_slot);
  header_template_.cluster_id = params_.cluster_id;
  header_template_.sender = params_.local_node;
}

Backend::~Backend() = default;

Status Backend::acquire(SendBufferRef& out) noexcept {
  const Status status = send_pool_->acquire(header_template_, out);
  if (status == Status::kPoolExhausted) ++counters_.tx_pool_exhausted;
  return status;
}

Status Backend::multicast(const SendBufferRef& buffer) noexcept {
  // Room on both paths first, so a multicast is never half-queued.
  if (loopback_count_ == kLoopbackMax) {
    ++counters_.tx_queue_full;
    return Status::kQueueFull;
  }
  const Status status = enqueue(kNoNode, buffer);
  if (status == Status::kOk) loop_back(buffer);
  return status;
}

Status Backend::unicast(NodeId dest, const SendBufferRef& buffer) noexcept {
  if (dest == params_.local_node) {
    if (closed_) return Status::kClosed;
    if (buffer->payload().size() > params_.mtu) {
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

Status Backend::enqueue(NodeId dest, const SendBufferRef& buffer) noexcept {
  RTOTEM_ASSERT(buffer && buffer->kind() == BufferKind::kSend);
  if (closed_) return Status::kClosed;
  if (buffer->payload().size() > params_.mtu) {
    ++counters_.tx_too_large;
    return Status::kTooLarge;
  }
  if (tx_.full()) (void)flush();  // a full batch goes out now: the queue is a batch, not a backlog
  if (tx_.full()) {
    ++counters_.tx_queue_full;
    return Status::kQueueFull;
  }
  tx_.push(dest, buffer);
  return Status::kOk;
}

void Backend::loop_back(const SendBufferRef& buffer) noexcept {
  RTOTEM_ASSERT(loopback_count_ < kLoopbackMax);
  loopback_[(loopback_head_ + loopback_count_) % kLoopbackMax] = buffer;
  ++loopback_count_;
}

Status Backend::flush() noexcept {
  if (closed_) return Status::kClosed;
  while (!tx_.empty()) {
    auto items = tx_.pending();
    const std::size_t done = transmit(items);
    RTOTEM_ASSERT(done <= items.size());
    tx_.pop_front(done);
    if (done < items.size()) {
      ++counters_.tx_would_block;
      return Status::kWouldBlock;
    }
  }
  return Status::kOk;
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

bool Backend::accept(RecvBufferRef buffer, std::size_t size, bool truncated,
                     InboundPacket& out) noexcept {
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
  buffer->set_received(static_cast<std::uint32_t>(size), header.sender);
  ++counters_.rx_packets;
  counters_.rx_bytes += size;
  out.from = header.sender;
  out.payload = buffer->payload();
  out.hold = std::move(buffer);
  return true;
}

}  // namespace rtotem::transport
