// The RDMA UD backend: one UD QP on the device that holds this node's address; multicasts go to the
// ring's group (joined through rdma_cm), tokens to one node's QP through an address handle to its
// GID. Control path (open, events, teardown) in rdma_backend.cpp, datapath (post, poll, re-post)
// in rdma_backend_datapath.cpp. Threading: like every Backend, one thread owns it.
//
// Memory: the whole buffer arena is registered once (one MR); sends are zero-copy from the send
// buffer (held in the SendWindow until its completion) or inline when small; every receive
// buffer is posted at start-up and re-posted when the protocol drops it.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "transport/backend.hpp"
#include "transport/rdma/rdma_config.hpp"
#include "transport/rdma/rdma_endpoint.hpp"
#include "transport/rdma/rdma_grh.hpp"
#include "transport/rdma/rdma_limits.hpp"
#include "transport/rdma/rdma_peer_table.hpp"
#include "transport/rdma/rdma_recv_ring.hpp"
#include "transport/rdma/rdma_send_window.hpp"

namespace rtotem::transport {

class RdmaBackend final : public Backend, private RecvPoster {
 public:
  // Fails (with the step and the reason) when the device, the port, the registration or the
  // multicast join fails: the caller may fall back to UDP.
  static Result<std::unique_ptr<RdmaBackend>> open(const RdmaConfig& config);
  ~RdmaBackend() override;

  std::string_view name() const noexcept override { return "rdma"; }
  std::string local_address() const override;
  // A LinkSet's buffers, registered as a second memory region: this link sends them zero-copy.
  Result<void> adopt_send_region(std::span<const std::byte> region) override;
  // The nodelist changed: by_link[0] from now on. A node kept at its address keeps its address
  // handle and QP number; a unicast queued to a removed one still goes to it.
  Result<void> check_peers(std::span<const std::vector<PeerAddress>> by_link) const override;
  void set_peers(std::span<const std::vector<PeerAddress>> by_link) override;
  // The connection manager's channel, the completion channel, the device's async events.
  std::span<const int> poll_fds() const noexcept override { return fds_; }

  std::uint32_t qp_num() const noexcept { return self_.qpn; }
  std::uint32_t max_inline() const noexcept { return max_inline_; }
  std::uint32_t port_mtu_bytes() const noexcept { return ud_message_bytes(endpoint_.port_attr().active_mtu); }

 private:
  RdmaBackend(const RdmaConfig& config, RdmaEndpoint endpoint, BufferArena arena, const BufferLayout& layout);
  // rdma_backend.cpp: the control path
  Result<void> open_queues();
  Result<void> create_qp();
  Result<void> join_group();
  Result<void> watch_events();
  void drain_events() noexcept;
  void handle_cm_events() noexcept;
  void handle_async_events() noexcept;
  void handle_completion_events() noexcept;
  bool concerns(const ibv_async_event& event) const noexcept;
  bool reach_peer(RdmaPeerEntry& peer, std::uint32_t qpn) noexcept;
  void learn_qpn(RdmaPeerEntry& peer, std::uint32_t qpn) noexcept;
  void log(std::string_view line) const noexcept;
  void on_close() noexcept override;
  void on_retire() noexcept override;

  // rdma_backend_datapath.cpp
  std::size_t transmit(std::span<TxItem> items) noexcept override;
  bool holds_sent_bytes() const noexcept override { return true; }  // the NIC reads them later
  void reclaim_sent() noexcept override { reap_send_completions(); }
  std::size_t receive(std::span<InboundPacket> out) noexcept override;
  bool knows(NodeId node) const noexcept override;
  void post_pending() noexcept override;
  std::size_t post_chain(std::span<TxItem> items) noexcept;
  bool fill_send_wr(const TxItem& item, std::size_t slot) noexcept;
  std::uint32_t lkey_of(std::span<const std::byte> bytes) const noexcept;
  void reap_send_completions() noexcept;
  bool accept_completion(const ibv_wc& wc, InboundPacket& out) noexcept;
  void count_error_completion(const ibv_wc& wc, bool send) noexcept;

  RdmaConfig config_;
  RdmaRecvRing ring_;
  SendWindow window_;
  // Verbs and rdma_cm objects, in creation order (destroyed in reverse).
  RdmaEndpoint endpoint_;
  ProtectionDomain pd_;
  MemoryRegion mr_;
  MemoryRegion adopted_mr_;  // a LinkSet's buffers (adopt_send_region); null when alone
  CompletionChannel completion_channel_;
  CompletionQueue send_cq_;
  CompletionQueue recv_cq_;
  CmQueuePair qp_;
  MulticastJoin join_;
  AddressHandle group_ah_;
  RdmaPeerTable peers_;    // holds an AH per peer: destroyed before the PD
  rdma_ud_param group_{};  // from the join event: qkey, AH attributes, QPN 0xFFFFFF
  std::uint32_t max_inline_ = 0;
  UdSource self_;
  std::array<int, 3> fds_{-1, -1, -1};

  // Datapath state in fixed arrays, filled per call: nothing here allocates.
  std::array<ibv_send_wr, kSendChainMax> send_wrs_{};
  std::array<ibv_sge, kSendChainMax> send_sges_{};
  std::array<ibv_recv_wr, kRecvPostBatch> recv_wrs_{};
  std::array<ibv_sge, kRecvPostBatch> recv_sges_{};
  std::array<ibv_wc, kRxBatchMax> recv_wcs_{};
  std::array<ibv_wc, kSendCompletionBatch> send_wcs_{};
};

}  // namespace rtotem::transport
