// RDMA backend datapath: queued items out as chained UD sends (zero-copy or inline, the last of a
// chain signalled), completions reaped in batches, receives turned into packets and their buffers
// re-posted in batches. Work requests live in fixed arrays: nothing here allocates.
#include "transport/rdma/rdma_backend.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rtotem::transport {

bool RdmaBackend::knows(NodeId node) const noexcept {
  const RdmaPeerEntry* peer = peers_.by_node(node);
  return peer && peer->reachable();
}

std::size_t RdmaBackend::transmit(std::span<TxItem> items) noexcept {
  std::size_t done = 0;  // flush reclaimed completed sends first (reclaim_sent)
  while (done < items.size() && link_failure().empty()) {
    const std::size_t posted = post_chain(items.subspan(done));
    if (posted == 0) return done;  // the send queue is full: back-pressure until a completion
    done += posted;
  }
  if (done < items.size()) {  // the link broke: the host gives up on it, what is queued is lost
    counters_.tx_errors += items.size() - done;
    return items.size();
  }
  return done;
}

// Fills send WR `slot` for `item`; returns whether it goes inline.
bool RdmaBackend::fill_send_wr(const TxItem& item, std::size_t slot) noexcept {
  const auto wire = item.wire;  // the buffer's bytes, or their sealed copy in a seal slot
  const bool inline_send = wire.size() <= max_inline_;
  send_sges_[slot] =
      ibv_sge{reinterpret_cast<std::uintptr_t>(wire.data()), static_cast<std::uint32_t>(wire.size()), lkey_of(wire)};
  ibv_send_wr& wr = send_wrs_[slot];
  wr = ibv_send_wr{};
  wr.wr_id = window_.next_id() + slot;
  wr.sg_list = &send_sges_[slot];
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = inline_send ? IBV_SEND_INLINE : 0;
  if (item.dest == kNoNode) {
    wr.wr.ud.ah = group_ah_.get();
    wr.wr.ud.remote_qpn = kMulticastQpn;
  } else {
    const RdmaPeerEntry* peer = peers_.sendable(item.dest);
    RTOTEM_ASSERT(peer && peer->reachable());  // checked by knows() when queued; kept if it departs
    wr.wr.ud.ah = peer->ah.get();
    wr.wr.ud.remote_qpn = peer->qpn;
  }
  wr.wr.ud.remote_qkey = group_.qkey;  // rdma_cm gives every UD QP of the port space this qkey
  return inline_send;
}

// Sealed packets and a lone backend's buffers are in this backend's arena; under a LinkSet the
// protocol's buffers are in the set's, the adopted region.
std::uint32_t RdmaBackend::lkey_of(std::span<const std::byte> bytes) const noexcept {
  if (adopted_mr_) {
    const auto* start = static_cast<const std::byte*>(adopted_mr_->addr);
    if (bytes.data() >= start && bytes.data() < start + adopted_mr_->length) return adopted_mr_->lkey;
  }
  return mr_->lkey;
}

// One ibv_post_send of up to kSendChainMax items, as many as the send queue has room for; the
// last WR is signalled. Returns how many items were handled (posted, or dropped and counted).
std::size_t RdmaBackend::post_chain(std::span<TxItem> items) noexcept {
  const std::size_t n = std::min({items.size(), kSendChainMax, std::size_t{window_.room()}});
  if (n == 0) return 0;
  std::array<bool, kSendChainMax> inlined{};
  for (std::size_t i = 0; i < n; ++i) {
    inlined[i] = fill_send_wr(items[i], i);
    send_wrs_[i].next = i + 1 < n ? &send_wrs_[i + 1] : nullptr;
  }
  send_wrs_[n - 1].send_flags |= IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qp_->qp, send_wrs_.data(), &bad);
  ++counters_.tx_calls;
  const std::size_t posted = rc == 0 ? n : static_cast<std::size_t>(bad - send_wrs_.data());
  for (std::size_t i = 0; i < posted; ++i) {
    const std::size_t bytes = items[i].wire.size();
    (void)window_.push(inlined[i] ? SendBufferRef{} : items[i].buffer);  // zero-copy: held until completion
    ++counters_.tx_packets;
    counters_.tx_bytes += bytes;
    if (inlined[i]) ++counters_.tx_inline;
  }
  if (rc == 0 || rc == ENOMEM) return posted;  // ENOMEM: the send queue is full after all
  ++counters_.tx_errors;                       // the refused WR is dropped; a QP that refuses has failed
  set_link_failure(fmt::format("rdma: ibv_post_send on QP {:#x}: {}", self_.qpn, std::strerror(rc)));
  log(link_failure());
  return posted + 1;
}

void RdmaBackend::reap_send_completions() noexcept {
  for (;;) {
    const int got = ibv_poll_cq(send_cq_.get(), static_cast<int>(send_wcs_.size()), send_wcs_.data());
    for (int i = 0; i < got; ++i) {
      if (send_wcs_[i].status != IBV_WC_SUCCESS) count_error_completion(send_wcs_[i], true);
      // With a key every WR read a seal slot (inline ones too, until this point): freed in order.
      release_seal_slots(window_.complete_through(send_wcs_[i].wr_id));
    }
    // Nothing queued or posted can name a departed peer now: its address handle may go.
    if (peers_.has_departed() && window_.empty() && !has_pending_tx()) peers_.forget_departed();
    if (got < static_cast<int>(send_wcs_.size())) return;
  }
}

// Counted always; logged for the first and then every power of two, so a burst of flushed WRs
// leaves a few lines, not thousands. A QP in the error state is a broken link.
void RdmaBackend::count_error_completion(const ibv_wc& wc, bool send) noexcept {
  std::uint64_t& count = send ? counters_.tx_completion_errors : counters_.rx_completion_errors;
  ++count;
  if (worth_logging(count))
    log(fmt::format("rdma: {} completion error #{}: {}", send ? "send" : "receive", count,
                    ibv_wc_status_str(wc.status)));
  if (!link_failure().empty()) return;
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(qp_->qp, &attr, IBV_QP_STATE, &init) == 0 && attr.qp_state != IBV_QPS_ERR) return;
  set_link_failure(fmt::format("rdma: QP {:#x} is in the error state ({} completion: {})", self_.qpn,
                               send ? "send" : "receive", ibv_wc_status_str(wc.status)));
  log(link_failure());
}

std::size_t RdmaBackend::receive(std::span<InboundPacket> out) noexcept {
  drain_events();
  if (!link_failure().empty()) return 0;
  post_pending();                                   // buffers released since the last call go back first
  if (ring_.all_held()) ++counters_.rx_ring_empty;  // as UDP counts it: meanwhile the device drops
  reap_send_completions();
  std::size_t n = 0;
  while (n < out.size()) {
    const int want = static_cast<int>(std::min(out.size() - n, recv_wcs_.size()));
    const int got = ibv_poll_cq(recv_cq_.get(), want, recv_wcs_.data());
    if (got < 0) ++counters_.rx_errors;
    if (got <= 0) break;
    ++counters_.rx_calls;
    for (int i = 0; i < got; ++i)
      if (accept_completion(recv_wcs_[i], out[n])) ++n;
    if (got < want) break;
  }
  return n;
}

namespace {

// The node the GRH's source address belongs to: the only node id its packets may name.
class NodeAtAddress final : public PacketSource {
 public:
  explicit NodeAtAddress(NodeId node) noexcept : node_(node) {}
  bool is(NodeId sender) const noexcept override { return sender == node_; }

 private:
  NodeId node_;
};

}  // namespace

// A receive completion: its buffer leaves the QP here (dropping the Ref re-posts it). The sender
// is told by the GRH's source address and the completion's source QP; the wire header's sender
// must be the node at that address.
bool RdmaBackend::accept_completion(const ibv_wc& wc, InboundPacket& out) noexcept {
  RecvBufferRef buffer = ring_.take(static_cast<std::uint32_t>(wc.wr_id));
  if (wc.status != IBV_WC_SUCCESS) {
    if (wc.status == IBV_WC_LOC_LEN_ERR) ++counters_.drop_truncated;
    count_error_completion(wc, false);
    return false;
  }
  if (wc.byte_len < kGrhBytes || !(wc.wc_flags & IBV_WC_GRH)) {
    ++counters_.drop_short;
    return false;
  }
  if (wc.byte_len - kGrhBytes > wire_max()) {  // fits the slot, not this node's mtu
    ++counters_.drop_truncated;
    return false;
  }
  const auto source_ip = grh_source_ipv4(std::span<const std::byte, kGrhBytes>(ring_.slot_start(*buffer), kGrhBytes));
  if (!source_ip) {
    ++counters_.drop_unknown_sender;
    return false;
  }
  if (is_own_echo(UdSource{wc.src_qp, *source_ip}, self_)) {
    ++counters_.drop_self_echo;  // delivered already through the local path
    return false;
  }
  RdmaPeerEntry* peer = peers_.by_ipv4(*source_ip);
  if (!peer || !reach_peer(*peer, wc.src_qp)) {
    ++counters_.drop_unknown_sender;
    return false;
  }
  const NodeAtAddress source(peer->node);
  if (!accept(std::move(buffer), wc.byte_len - kGrhBytes, false, out, &source)) return false;
  learn_qpn(*peer, wc.src_qp);  // a restarted peer's new QP
  return true;
}

// Released buffers back to the QP, chained kRecvPostBatch to an ibv_post_recv. Each WR takes a
// whole slot: the GRH headroom and the largest message the port carries (BufferLayout), so no
// packet can overflow it (rxe fails the whole QP when one does); one longer than this node's
// wire_max() is dropped as truncated in accept_completion.
void RdmaBackend::post_pending() noexcept {
  const auto pending = ring_.pending();
  if (pending.empty() || closed() || !link_failure().empty()) return;
  const std::uint32_t length = layout().recv_slot;
  for (std::size_t first = 0; first < pending.size(); first += kRecvPostBatch) {
    const std::size_t n = std::min(kRecvPostBatch, pending.size() - first);
    for (std::size_t i = 0; i < n; ++i) {
      RecvBuffer& buffer = *pending[first + i];
      recv_sges_[i] = ibv_sge{reinterpret_cast<std::uintptr_t>(ring_.slot_start(buffer)), length, mr_->lkey};
      recv_wrs_[i] = ibv_recv_wr{buffer.index(), i + 1 < n ? &recv_wrs_[i + 1] : nullptr, &recv_sges_[i], 1};
    }
    ibv_recv_wr* bad = nullptr;
    const int rc = ibv_post_recv(qp_->qp, recv_wrs_.data(), &bad);
    ++counters_.rx_post_calls;
    counters_.rx_posted += rc == 0 ? n : static_cast<std::size_t>(bad - recv_wrs_.data());
    if (rc != 0) {
      ++counters_.rx_errors;
      set_link_failure(fmt::format("rdma: ibv_post_recv on QP {:#x}: {}", self_.qpn, std::strerror(rc)));
      log(link_failure());
      break;
    }
  }
  ring_.clear_pending();
}

}  // namespace rtotem::transport
