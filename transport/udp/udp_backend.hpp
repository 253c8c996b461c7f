// The UDP backend: IP multicast or per-peer unicast, IPv4 or IPv6, non-blocking sockets driven in
// batches by sendmmsg/recvmmsg. Control path in udp_backend.cpp, datapath in
// udp_backend_datapath.cpp. Threading: like every Backend, one thread owns it.
#pragma once

#include <sys/socket.h>

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "transport/backend.hpp"
#include "base/fd.hpp"
#include "transport/udp/udp_config.hpp"

namespace rtotem::transport {

inline constexpr std::size_t kUdpSendBatch = 64;  // entries per sendmmsg (a run and destination each)
static_assert(kUdpSendBatch <= 1024);             // UIO_MAXIOV: the kernel caps sendmmsg there
static_assert(kRxBatchMax <= kUdpSendBatch);
// A run of datagrams sent as one entry with segmentation offload: the kernel's segment limit
// (UDP_MAX_SEGMENTS, 64 before Linux 6.3), and the run's bytes within one IPv4 or IPv6 datagram.
inline constexpr std::size_t kUdpGsoSegmentsMax = 64;
inline constexpr std::size_t kUdpGsoBytesMax = 65000;
static_assert(kUdpGsoSegmentsMax <= kUdpSendBatch);  // a refused run goes again as one batch of singles

// The control bytes of one entry sent with segmentation offload: its segment size.
struct GsoControl {
  alignas(cmsghdr) std::byte bytes[CMSG_SPACE(sizeof(std::uint16_t))];
};

class UdpBackend final : public Backend {
 public:
  static Result<std::unique_ptr<UdpBackend>> open(const UdpConfig& config);
  ~UdpBackend() override;

  std::string_view name() const noexcept override { return "udp"; }
  std::string local_address() const override { return config_.bind.to_string(); }
  std::span<const int> poll_fds() const noexcept override { return {fds_.data(), fd_count_}; }
  int tx_fd() const noexcept override { return unicast_fd_.get(); }

  // Socket buffer sizes the kernel granted (it may cap what was asked).
  int granted_send_buffer_bytes() const noexcept { return granted_sndbuf_; }
  int granted_recv_buffer_bytes() const noexcept { return granted_rcvbuf_; }
  // Whether `address` (a datagram's source) is where node `node` sends from: its configured
  // address and port (every datagram leaves from the socket bound there).
  bool peer_at(NodeId node, const sockaddr_storage& address) const noexcept;
  // From now on it sends to, and hears from, by_link[0] (this node's own entry skipped). The
  // packets at the head of the send queue, sent to some of the old peers, go again to every new
  // one: a copy twice is one the protocol drops.
  Result<void> check_peers(std::span<const std::vector<PeerAddress>> by_link) const override;
  void set_peers(std::span<const std::vector<PeerAddress>> by_link) override;

 private:
  UdpBackend(const UdpConfig& config, BufferArena arena, const BufferLayout& layout);
  Result<void> open_sockets();
  Result<void> open_multicast_socket();

  std::size_t transmit(std::span<TxItem> items) noexcept override;
  std::size_t receive(std::span<InboundPacket> out) noexcept override;
  bool knows(NodeId node) const noexcept override { return find_peer(node) != nullptr; }
  void on_close() noexcept override;

  const UdpPeer* find_peer(NodeId node) const noexcept;
  std::size_t dests_of(const TxItem& item) const noexcept;
  const InetAddress& dest_address(const TxItem& item, std::size_t dest) const noexcept;
  std::size_t run_length(std::span<TxItem> items, std::size_t item) const noexcept;
  int send_singly(std::span<const TxItem> run, const InetAddress& address) noexcept;
  std::size_t fill_send_batch(std::span<TxItem> items, std::size_t item, std::size_t run, std::size_t dest) noexcept;
  std::size_t receive_from(int fd, std::span<InboundPacket> out, bool& drained) noexcept;

  UdpConfig config_;
  std::vector<UdpPeer> others_;  // peers but this node, sorted by node id
  SocketRecvRing ring_;
  Fd unicast_fd_;                   // bound to config_.bind: tokens in, everything out
  Fd multicast_fd_;                 // kMulticast: bound to the group, receives multicasts
  std::array<int, 2> fds_{-1, -1};  // read in this order: the group socket first
  std::size_t fd_count_ = 0;
  int granted_sndbuf_ = 0;
  int granted_rcvbuf_ = 0;

  // Datapath state, filled once per call from fixed arrays: no allocation per packet.
  // The run at the head of the queue, across calls: its length once some destination has it
  // (0: not started), and how many destinations have it.
  std::size_t head_run_ = 0;
  std::size_t head_dests_sent_ = 0;
  bool gso_ = false;  // segmentation offload: on where the kernel has it, off once it is found at fault
  std::array<mmsghdr, kUdpSendBatch> send_msgs_{};
  std::array<iovec, kTxQueueMax> send_iovs_{};  // per item, shared by a run's destinations
  std::array<GsoControl, kUdpSendBatch> send_controls_{};
  std::array<std::uint16_t, kUdpSendBatch> send_runs_{};  // each entry's datagrams
  std::array<mmsghdr, kRxBatchMax> recv_msgs_{};
  std::array<iovec, kRxBatchMax> recv_iovs_{};
  std::array<sockaddr_storage, kRxBatchMax> recv_sources_{};
  std::array<RecvBuffer*, kRxBatchMax> recv_posted_{};
};

}  // namespace rtotem::transport
