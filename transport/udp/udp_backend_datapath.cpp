// UDP backend datapath: queued items out through sendmmsg, runs of equal-sized datagrams to one
// destination as one entry with UDP segmentation offload (the kernel carries the run through its
// stack, veth and bridges once and cuts it into datagrams at the receiving socket or the NIC),
// datagrams in through recvmmsg straight into posted receive buffers. Headers and iovecs live in
// fixed arrays: nothing here allocates.
#include "transport/udp/udp_backend.hpp"

#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

// The cmsg that has the kernel cut the entry's bytes into datagrams of `segment` bytes.
void set_segment(msghdr& msg, GsoControl& control, std::size_t segment) noexcept {
  control = GsoControl{};
  msg.msg_control = control.bytes;
  msg.msg_controllen = sizeof control.bytes;
  cmsghdr* header = CMSG_FIRSTHDR(&msg);
  header->cmsg_level = SOL_UDP;
  header->cmsg_type = UDP_SEGMENT;
  header->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
  const auto size = static_cast<std::uint16_t>(segment);  // at most kUdpGsoBytesMax / 2 in a run
  std::memcpy(CMSG_DATA(header), &size, sizeof size);
}

}  // namespace

bool UdpBackend::peer_at(NodeId node, const sockaddr_storage& address) const noexcept {
  const UdpPeer* peer = find_peer(node);
  return peer != nullptr && peer->address.is(address);
}

std::size_t UdpBackend::dests_of(const TxItem& item) const noexcept {
  // A unicast queued to a node that set_peers() has since removed goes nowhere.
  if (item.dest != kNoNode) return find_peer(item.dest) != nullptr ? 1 : 0;
  if (config_.mode == UdpMode::kMulticast) return 1;
  return others_.size();  // unicast mode: a multicast is one datagram per other node
}

const InetAddress& UdpBackend::dest_address(const TxItem& item, std::size_t dest) const noexcept {
  if (item.dest != kNoNode) {
    const UdpPeer* peer = find_peer(item.dest);
    RTOTEM_ASSERT(peer);  // dests_of() is 0 otherwise: never asked
    return peer->address;
  }
  if (config_.mode == UdpMode::kMulticast) return config_.group;
  return others_[dest].address;
}

// The items from `item` on that go out as one run: same destination, the size of the first, and
// at most one shorter one to end it (segmentation offload cuts a run at the first's size). One
// item without the offload.
std::size_t UdpBackend::run_length(std::span<TxItem> items, std::size_t item) const noexcept {
  if (!gso_) return 1;
  const TxItem& first = items[item];
  const std::size_t segment = first.wire.size();
  std::size_t n = 1, bytes = segment;
  while (item + n < items.size() && n < kUdpGsoSegmentsMax && bytes + segment <= kUdpGsoBytesMax) {
    const TxItem& next = items[item + n];
    if (next.dest != first.dest || next.wire.size() > segment) break;
    ++n;
    bytes += next.wire.size();
    if (next.wire.size() < segment) break;
  }
  return n;
}

// Fills send_msgs_ from the run at `item` (`run` items long if it was cut short before, else
// computed), destination `dest` on: one entry per run and destination, the run's iovecs shared by
// its destinations. Returns how many entries it holds.
std::size_t UdpBackend::fill_send_batch(std::span<TxItem> items, std::size_t item, std::size_t run,
                                        std::size_t dest) noexcept {
  std::size_t n = 0, iovs = 0;
  while (item < items.size() && n < kUdpSendBatch) {
    if (run == 0) run = run_length(items, item);
    if (iovs + run > send_iovs_.size()) break;
    iovec* const iov = &send_iovs_[iovs];
    for (std::size_t i = 0; i < run; ++i) {
      const auto wire = items[item + i].wire;
      iov[i] = iovec{const_cast<std::byte*>(wire.data()), wire.size()};
    }
    iovs += run;
    for (; dest < dests_of(items[item]) && n < kUdpSendBatch; ++dest, ++n) {
      const InetAddress& address = dest_address(items[item], dest);
      msghdr& msg = send_msgs_[n].msg_hdr;
      msg = msghdr{};
      msg.msg_name = const_cast<sockaddr*>(address.sockaddr_ptr());
      msg.msg_namelen = address.length();
      msg.msg_iov = iov;
      msg.msg_iovlen = run;
      if (run > 1) set_segment(msg, send_controls_[n], items[item].wire.size());
      send_runs_[n] = static_cast<std::uint16_t>(run);
    }
    item += run, run = 0, dest = 0;
  }
  return n;
}

std::size_t UdpBackend::transmit(std::span<TxItem> items) noexcept {
  std::size_t item = 0;  // progress: items fully sent, and destinations of the run at `item`
  std::size_t& run = head_run_;
  std::size_t& dest = head_dests_sent_;
  auto skip_empty = [&] {  // a multicast with nobody else in the ring has no datagram
    while (item < items.size() && dests_of(items[item]) == 0) ++item;
  };
  // One entry of the batch is done: the run's datagrams to one destination, the first `delivered`
  // of them sent (as one segmented run if `as_run`), the rest refused and lost. The run stays at
  // the head until every destination has it.
  auto advance = [&](std::size_t entry, std::size_t delivered, bool as_run) {
    const std::size_t count = send_runs_[entry];
    counters_.tx_packets += delivered;
    counters_.tx_errors += count - delivered;
    if (as_run && count > 1) ++counters_.tx_gso_runs;
    for (std::size_t i = 0; i < delivered; ++i) counters_.tx_bytes += items[item + i].wire.size();
    run = count;
    if (++dest == dests_of(items[item])) {
      item += count, run = 0, dest = 0;
      skip_empty();
    }
  };
  if (run == 0) skip_empty();
  while (item < items.size()) {
    const std::size_t n = fill_send_batch(items, item, run, dest);
    const int sent = ::sendmmsg(unicast_fd_.get(), send_msgs_.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
    ++counters_.tx_calls;
    if (sent > 0) {
      for (std::size_t entry = 0; entry < static_cast<std::size_t>(sent); ++entry)
        advance(entry, send_runs_[entry], true);
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return item;
    // A refused run may be the offload's fault (a device without checksum offload, a segment above
    // the path's MTU, an IPsec policy) or the destination's (a blackhole route gives the same
    // EINVAL). Its first datagram goes again alone: if it passes, the offload was at fault and is
    // off for this backend's life; if not, the route was, the run is lost for that destination,
    // and the offload stays on for the others.
    if (send_runs_[0] > 1 && (errno == EIO || errno == EINVAL || errno == EMSGSIZE)) {
      const std::size_t count = send_runs_[0];
      const InetAddress& address = dest_address(items[item], dest);
      const int first = send_singly(items.subspan(item, 1), address);
      if (first < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return item;
      if (first < 0) {
        advance(0, 0, false);
        continue;
      }
      if (gso_) ++counters_.tx_gso_refused;
      gso_ = false;
      if (dest == 0) {  // no destination has the rest: it goes on as single datagrams, as all later ones
        send_runs_[0] = 1;
        advance(0, 1, false);
        continue;
      }
      // The others have the whole run (as one, or after a probe of their own): this destination
      // gets the rest now, and loses what a full send buffer refuses, as on a lossy network.
      const int rest = send_singly(items.subspan(item + 1, count - 1), address);
      advance(0, 1 + static_cast<std::size_t>(std::max(rest, 0)), false);
      continue;
    }
    // This entry was refused (no route, filtered, too big for the path): its datagrams are lost,
    // as on a lossy network; the protocol retransmits.
    advance(0, 0, false);
  }
  return item;
}

// Sends `run` to `address` one datagram per entry, without the offload: how many went, or -1 with
// errno when none did.
int UdpBackend::send_singly(std::span<const TxItem> run, const InetAddress& address) noexcept {
  for (std::size_t i = 0; i < run.size(); ++i) {
    const auto wire = run[i].wire;
    send_iovs_[i] = iovec{const_cast<std::byte*>(wire.data()), wire.size()};
    msghdr& msg = send_msgs_[i].msg_hdr;
    msg = msghdr{};
    msg.msg_name = const_cast<sockaddr*>(address.sockaddr_ptr());
    msg.msg_namelen = address.length();
    msg.msg_iov = &send_iovs_[i];
    msg.msg_iovlen = 1;
  }
  ++counters_.tx_calls;
  return ::sendmmsg(unicast_fd_.get(), send_msgs_.data(), static_cast<unsigned>(run.size()), MSG_DONTWAIT);
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
