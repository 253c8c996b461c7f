// UDP backend datapath: queued items out through sendmmsg, datagrams in through recvmmsg straight
// into posted receive buffers. Headers and iovecs live in fixed arrays: nothing here allocates.
#include "transport/udp/udp_backend.hpp"

#include <cerrno>

namespace rtotem::transport {
namespace {

// A datagram's source address: the node id its header names must be the node at that address.
class DatagramSource final : public PacketSource {
 public:
  DatagramSource(const UdpBackend& backend, const sockaddr_storage& address) noexcept
      : backend_(backend), address_(address) {}
  bool is(NodeId sender) const noexcept override { return backend_.peer_at(sender, address_); }

 private:
  const UdpBackend& backend_;
  const sockaddr_storage& address_;
};

}  // namespace

bool UdpBackend::peer_at(NodeId node, const sockaddr_storage& address) const noexcept {
  const UdpPeer* peer = find_peer(node);
  return peer != nullptr && peer->address.is(address);
}

std::size_t UdpBackend::datagrams_of(const TxItem& item) const noexcept {
  if (item.dest != kNoNode || config_.mode == UdpMode::kMulticast) return 1;
  return others_.size();  // unicast mode: a multicast is one datagram per other node
}

const InetAddress& UdpBackend::datagram_dest(const TxItem& item, std::size_t datagram) const noexcept {
  if (item.dest != kNoNode) {
    const UdpPeer* peer = find_peer(item.dest);
    RTOTEM_ASSERT(peer);  // checked by knows() when queued
    return peer->address;
  }
  if (config_.mode == UdpMode::kMulticast) return config_.group;
  return others_[datagram].address;
}

// Fills send_msgs_ from position (item, datagram) on; returns how many datagrams it holds.
std::size_t UdpBackend::fill_send_batch(std::span<TxItem> items, std::size_t item,
                                        std::size_t datagram) noexcept {
  std::size_t n = 0;
  for (; item < items.size() && n < kUdpSendBatch; ++item, datagram = 0) {
    const auto wire = items[item].wire;
    for (; datagram < datagrams_of(items[item]) && n < kUdpSendBatch; ++datagram, ++n) {
      const InetAddress& dest = datagram_dest(items[item], datagram);
      send_iovs_[n] = iovec{const_cast<std::byte*>(wire.data()), wire.size()};
      msghdr& msg = send_msgs_[n].msg_hdr;
      msg.msg_name = const_cast<sockaddr*>(dest.sockaddr_ptr());
      msg.msg_namelen = dest.length();
      msg.msg_iov = &send_iovs_[n];
      msg.msg_iovlen = 1;
    }
  }
  return n;
}

std::size_t UdpBackend::transmit(std::span<TxItem> items) noexcept {
  std::size_t item = 0;  // progress: items fully sent, and datagrams of the next one
  std::size_t& datagram = head_datagrams_sent_;
  auto skip_empty = [&] {  // a multicast with nobody else in the ring has no datagram
    while (item < items.size() && datagrams_of(items[item]) == 0) ++item;
  };
  auto advance = [&](std::size_t count) {
    for (; count > 0; --count) {
      counters_.tx_bytes += items[item].wire.size();
      if (++datagram == datagrams_of(items[item])) {
        ++item, datagram = 0;
        skip_empty();
      }
    }
  };
  skip_empty();
  while (item < items.size()) {
    const std::size_t n = fill_send_batch(items, item, datagram);
    const int sent = ::sendmmsg(unicast_fd_.get(), send_msgs_.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
    ++counters_.tx_calls;
    if (sent > 0) {
      counters_.tx_packets += static_cast<std::size_t>(sent);
      advance(static_cast<std::size_t>(sent));
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return item;
    // This datagram was refused (no route, filtered, too big for the path): it is lost, as on a
    // lossy network; the protocol retransmits. Count it and go on with the next.
    ++counters_.tx_errors;
    counters_.tx_bytes -= items[item].wire.size();
    advance(1);
  }
  return item;
}

// One recvmmsg into up to out.size() posted buffers; `drained` when the socket had fewer.
std::size_t UdpBackend::receive_from(int fd, std::span<InboundPacket> out, bool& drained) noexcept {
  const std::uint32_t want = static_cast<std::uint32_t>(std::min(out.size(), kRxBatchMax));
  const std::uint32_t n = ring_.peek_posted(std::span(recv_posted_.data(), want));
  drained = true;
  if (n == 0) {
    ++counters_.rx_ring_empty;  // the protocol holds every buffer: the socket queues meanwhile
    return 0;
  }
  // Exactly one packet's worth: anything longer comes back MSG_TRUNC and is dropped.
  for (std::uint32_t i = 0; i < n; ++i) {
    recv_iovs_[i] = iovec{recv_posted_[i]->data(), wire_max()};
    recv_msgs_[i].msg_hdr = msghdr{};
    recv_msgs_[i].msg_hdr.msg_name = &recv_sources_[i];
    recv_msgs_[i].msg_hdr.msg_namelen = sizeof recv_sources_[i];
    recv_msgs_[i].msg_hdr.msg_iov = &recv_iovs_[i];
    recv_msgs_[i].msg_hdr.msg_iovlen = 1;
  }
  const int got = ::recvmmsg(fd, recv_msgs_.data(), n, MSG_DONTWAIT, nullptr);
  if (got <= 0) {
    if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ++counters_.rx_errors;
    return 0;
  }
  ++counters_.rx_calls;
  drained = static_cast<std::uint32_t>(got) < n;
  // All filled buffers leave the ring before any is judged: a rejected one is re-posted at once,
  // and the ring hands out its stack top only.
  std::array<RecvBufferRef, kRxBatchMax> filled;
  for (int i = 0; i < got; ++i) filled[i] = ring_.take(*recv_posted_[i]);
  std::size_t accepted = 0;
  for (int i = 0; i < got; ++i) {
    const auto& msg = recv_msgs_[i];
    const DatagramSource source(*this, recv_sources_[i]);
    if (accept(std::move(filled[i]), msg.msg_len, (msg.msg_hdr.msg_flags & MSG_TRUNC) != 0, out[accepted], &source))
      ++accepted;
  }
  return accepted;
}

// Each socket until it is drained or the batch is full, the group socket first: multicasts
// already queued are handed out before a token that arrived on the unicast socket.
std::size_t UdpBackend::receive(std::span<InboundPacket> out) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < fd_count_ && n < out.size(); ++i) {
    bool drained = false;
    while (!drained && n < out.size()) n += receive_from(fds_[i], out.subspan(n), drained);
  }
  return n;
}

}  // namespace rtotem::transport
