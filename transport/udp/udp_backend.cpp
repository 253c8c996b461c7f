// UDP backend control path: sockets, their options, multicast membership, teardown.
#include "transport/udp/udp_backend.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rtotem::transport {
namespace {

Result<Fd> make_socket(int family) {
  Fd fd(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP));
  if (!fd) return Error::sys(errno, "udp: socket");
  return fd;
}

Result<void> set_int(const Fd& fd, int level, int option, int value, const char* what) {
  if (::setsockopt(fd.get(), level, option, &value, sizeof value) != 0)
    return Error::sys(errno, "udp: setsockopt {} = {}", what, value);
  return {};
}

// Root may exceed net.core.{w,r}mem_max (the *FORCE options); others get what the limit allows.
int size_buffer(const Fd& fd, int option, int force_option, int bytes) {
  if (::setsockopt(fd.get(), SOL_SOCKET, force_option, &bytes, sizeof bytes) != 0)
    (void)::setsockopt(fd.get(), SOL_SOCKET, option, &bytes, sizeof bytes);
  int granted = 0;
  socklen_t len = sizeof granted;
  (void)::getsockopt(fd.get(), SOL_SOCKET, option, &granted, &len);
  return granted;
}

// The interface holding `address`: an exact match, else (IPv4) one whose subnet holds it, as
// 127.0.0.2 on lo.
Result<unsigned> interface_of(const InetAddress& address) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return Error::sys(errno, "udp: getifaddrs");
  unsigned exact = 0, subnet = 0;
  for (ifaddrs* ifa = list; ifa; ifa = ifa->ifa_next) {
    if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != address.family()) continue;
    auto candidate =
        InetAddress::from_sockaddr(ifa->ifa_addr, address.is_v6() ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    if (!candidate) continue;
    if (candidate->same_host(address)) {
      exact = ::if_nametoindex(ifa->ifa_name);
      break;
    }
    if (!address.is_v6() && ifa->ifa_netmask && subnet == 0) {
      const auto mask = reinterpret_cast<const sockaddr_in*>(ifa->ifa_netmask)->sin_addr.s_addr;
      const auto have = reinterpret_cast<const sockaddr_in*>(ifa->ifa_addr)->sin_addr.s_addr;
      const auto want = reinterpret_cast<const sockaddr_in*>(address.sockaddr_ptr())->sin_addr.s_addr;
      if ((have & mask) == (want & mask)) subnet = ::if_nametoindex(ifa->ifa_name);
    }
  }
  ::freeifaddrs(list);
  if (exact != 0) return exact;
  if (subnet != 0) return subnet;
  return Error::make("udp: no interface holds {}", address.to_string());
}

Result<unsigned> multicast_interface(const UdpConfig& config) {
  if (config.interface.empty()) return interface_of(config.bind);
  const unsigned index = ::if_nametoindex(config.interface.c_str());
  if (index == 0) return Error::sys(errno, "udp: interface '{}'", config.interface);
  return index;
}

}  // namespace

Result<std::unique_ptr<UdpBackend>> UdpBackend::open(const UdpConfig& config) {
  if (auto ok = config.validate(); !ok) return ok.error();
  const BufferLayout layout = BufferLayout::of(config.params, 0);
  auto arena = BufferArena::map(layout.total_bytes());
  if (!arena) return arena.error();
  std::unique_ptr<UdpBackend> backend(new UdpBackend(config, std::move(*arena), layout));
  if (auto ok = backend->open_sockets(); !ok) return ok.error();
  return backend;
}

UdpBackend::UdpBackend(const UdpConfig& config, BufferArena arena, const BufferLayout& layout)
    : Backend(config.params, std::move(arena), layout),
      config_(config),
      ring_(recv_region(), config.params.recv_buffers, layout.recv_slot) {
  for (const UdpPeer& peer : config_.peers)
    if (peer.node != config_.params.local_node) others_.push_back(peer);
  std::sort(others_.begin(), others_.end(), [](const UdpPeer& a, const UdpPeer& b) { return a.node < b.node; });
}

UdpBackend::~UdpBackend() { close(); }

Result<void> UdpBackend::check_peers(std::span<const std::vector<PeerAddress>> by_link) const {
  if (by_link.size() != 1) return Error::make("udp: one link's peers, not {}", by_link.size());
  UdpConfig changed = config_;
  changed.peers = by_link[0];
  return changed.validate();
}

void UdpBackend::set_peers(std::span<const std::vector<PeerAddress>> by_link) {
  RTOTEM_ASSERT(check_peers(by_link).ok());
  config_.peers = by_link[0];
  others_.clear();
  for (const UdpPeer& peer : config_.peers)
    if (peer.node != config_.params.local_node) others_.push_back(peer);
  std::ranges::sort(others_, {}, &UdpPeer::node);
  // The run at the head of the queue starts again, to the new peers: its progress counted the old.
  head_run_ = 0;
  head_dests_sent_ = 0;
}

Result<void> UdpBackend::open_sockets() {
  auto fd = make_socket(config_.bind.family());
  if (!fd) return fd.error();
  unicast_fd_ = std::move(*fd);
  granted_sndbuf_ = size_buffer(unicast_fd_, SO_SNDBUF, SO_SNDBUFFORCE, config_.send_buffer_bytes);
  granted_rcvbuf_ = size_buffer(unicast_fd_, SO_RCVBUF, SO_RCVBUFFORCE, config_.recv_buffer_bytes);
  // Segmentation offload where the kernel knows UDP_SEGMENT (4.18 on): an older one would ignore
  // the per-send cmsg and send a run as one oversized datagram. 0 sets no default segment.
  const int no_default_segment = 0;
  gso_ = ::setsockopt(unicast_fd_.get(), SOL_UDP, UDP_SEGMENT, &no_default_segment, sizeof no_default_segment) == 0;
  if (::bind(unicast_fd_.get(), config_.bind.sockaddr_ptr(), config_.bind.length()) != 0)
    return Error::sys(errno, "udp: bind {}", config_.bind.to_string());
  if (config_.mode == UdpMode::kMulticast) {
    if (auto ok = open_multicast_socket(); !ok) return ok;
  }
  fds_[fd_count_++] = unicast_fd_.get();  // after the group socket: the token waits its turn
  return {};
}

// Sends go out of the unicast socket (source = this node's address); a second socket bound to
// the group receives. Loopback stays on so nodes sharing a host hear each other; our own echoes
// are dropped by sender id (drop_self_echo), because not every device can be told not to echo.
Result<void> UdpBackend::open_multicast_socket() {
  auto ifindex = multicast_interface(config_);
  if (!ifindex) return ifindex.error();
  const bool v6 = config_.bind.is_v6();
  const int ip = v6 ? IPPROTO_IPV6 : IPPROTO_IP;
  if (v6) {
    int index = static_cast<int>(*ifindex);
    if (auto ok = set_int(unicast_fd_, ip, IPV6_MULTICAST_IF, index, "IPV6_MULTICAST_IF"); !ok) return ok;
    if (auto ok = set_int(unicast_fd_, ip, IPV6_MULTICAST_HOPS, config_.ttl, "IPV6_MULTICAST_HOPS"); !ok) return ok;
    if (auto ok = set_int(unicast_fd_, ip, IPV6_MULTICAST_LOOP, 1, "IPV6_MULTICAST_LOOP"); !ok) return ok;
  } else {
    ip_mreqn via{};
    via.imr_ifindex = static_cast<int>(*ifindex);
    if (::setsockopt(unicast_fd_.get(), ip, IP_MULTICAST_IF, &via, sizeof via) != 0)
      return Error::sys(errno, "udp: IP_MULTICAST_IF index {}", *ifindex);
    if (auto ok = set_int(unicast_fd_, ip, IP_MULTICAST_TTL, config_.ttl, "IP_MULTICAST_TTL"); !ok) return ok;
    if (auto ok = set_int(unicast_fd_, ip, IP_MULTICAST_LOOP, 1, "IP_MULTICAST_LOOP"); !ok) return ok;
  }

  auto fd = make_socket(config_.group.family());
  if (!fd) return fd.error();
  multicast_fd_ = std::move(*fd);
  if (auto ok = set_int(multicast_fd_, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR"); !ok) return ok;
  (void)size_buffer(multicast_fd_, SO_RCVBUF, SO_RCVBUFFORCE, config_.recv_buffer_bytes);
  // Hear the configured interface only: Linux matches IPv6 group membership on any interface,
  // so a host with two links would otherwise take every multicast twice.
  char ifname[IF_NAMESIZE] = {};
  if (!::if_indextoname(*ifindex, ifname)) return Error::sys(errno, "udp: interface index {}", *ifindex);
  if (::setsockopt(multicast_fd_.get(), SOL_SOCKET, SO_BINDTODEVICE, ifname, sizeof ifname) != 0)
    return Error::sys(errno, "udp: SO_BINDTODEVICE {}", ifname);
  // Bound to the group address itself, so the socket hears this group only.
  if (::bind(multicast_fd_.get(), config_.group.sockaddr_ptr(), config_.group.length()) != 0)
    return Error::sys(errno, "udp: bind group {}", config_.group.to_string());
  if (v6) {
    ipv6_mreq join{};
    join.ipv6mr_multiaddr = reinterpret_cast<const sockaddr_in6*>(config_.group.sockaddr_ptr())->sin6_addr;
    join.ipv6mr_interface = *ifindex;
    if (::setsockopt(multicast_fd_.get(), ip, IPV6_JOIN_GROUP, &join, sizeof join) != 0)
      return Error::sys(errno, "udp: join {} on interface {}", config_.group.to_string(), *ifindex);
  } else {
    ip_mreqn join{};
    join.imr_multiaddr = reinterpret_cast<const sockaddr_in*>(config_.group.sockaddr_ptr())->sin_addr;
    join.imr_ifindex = static_cast<int>(*ifindex);
    if (::setsockopt(multicast_fd_.get(), ip, IP_ADD_MEMBERSHIP, &join, sizeof join) != 0)
      return Error::sys(errno, "udp: join {} on interface {}", config_.group.to_string(), *ifindex);
  }
  fds_[fd_count_++] = multicast_fd_.get();
  return {};
}

void UdpBackend::on_close() noexcept {
  fd_count_ = 0;
  multicast_fd_.reset();
  unicast_fd_.reset();
}

const UdpPeer* UdpBackend::find_peer(NodeId node) const noexcept {
  auto it = std::lower_bound(others_.begin(), others_.end(), node,
                             [](const UdpPeer& peer, NodeId id) { return peer.node < id; });
  return it != others_.end() && it->node == node ? &*it : nullptr;
}

}  // namespace rtotem::transport
