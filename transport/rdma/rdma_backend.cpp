// RDMA backend control path: device and port through rdma_cm, the one registration of the buffer
// arena, completion queues, the UD QP, the multicast join, peer address handles, the channels'
// events (connection manager, device async events, completions), teardown.
#include "transport/rdma/rdma_backend.hpp"

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace rtotem::transport {
namespace {

constexpr std::uint8_t kHopLimit = 64;
constexpr auto kCloseDrainMax = std::chrono::milliseconds(500);
// An int: verbs.h's ibv_reg_mr macro ands the access flags with an enum of another type, which
// C++20 deprecates (clang warns).
constexpr int kLocalWrite = IBV_ACCESS_LOCAL_WRITE;

double mebibytes(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// ::ffff:a.b.c.d, the RoCE v2 GID of an IPv4 address.
ibv_gid gid_of_ipv4(std::uint32_t ipv4) noexcept {
  ibv_gid gid{};
  gid.raw[10] = 0xff;
  gid.raw[11] = 0xff;
  std::memcpy(&gid.raw[12], &ipv4, sizeof ipv4);
  return gid;
}

bool is_fatal(ibv_event_type type) noexcept {
  switch (type) {
    case IBV_EVENT_DEVICE_FATAL:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_CQ_ERR: return true;
    default: return false;
  }
}

}  // namespace

Result<std::unique_ptr<RdmaBackend>> RdmaBackend::open(const RdmaConfig& config) {
  if (auto ok = config.validate(); !ok) return ok.error();
  auto endpoint = RdmaEndpoint::open(config.bind, config.group);
  if (!endpoint) return endpoint.error();
  // Never a guess: a UD send above the port's MTU completes successfully and reaches nobody.
  RdmaConfig clamped = config;
  const int active_mtu = endpoint->port_attr().active_mtu;
  clamped.params.mtu = clamp_mtu(config.params.mtu, active_mtu);
  if (clamped.params.mtu < kMtuMin)
    return Error::make("rdma: {} carries {} bytes per message: below the {}-byte minimum mtu plus our header",
                       endpoint->device(), ud_message_bytes(active_mtu), kMtuMin);
  if (config.size_pools) {
    config.size_pools(clamped.params);
    if (auto ok = clamped.params.validate(); !ok)
      return Error::make("rdma: pools for {}: {}", endpoint->device(), ok.error().message());
  }
  // Receive buffers take whatever the port carries, not only what this node sends: on rxe a
  // packet longer than the receive WR does not fail alone, it puts the QP in the error state, so
  // one larger packet (a peer with a larger netmtu, anyone with the qkey) would stop this node.
  const BufferLayout layout = BufferLayout::of(clamped.params, kGrhBytes, ud_message_bytes(active_mtu));
  auto arena = BufferArena::map(layout.total_bytes());
  if (!arena) return arena.error();
  std::unique_ptr<RdmaBackend> backend(new RdmaBackend(clamped, std::move(*endpoint), std::move(*arena), layout));
  if (auto ok = backend->open_queues(); !ok) return ok.error();
  if (auto ok = backend->create_qp(); !ok) return ok.error();
  backend->post_pending();  // every receive buffer, before the join: nothing sent to us is lost
  if (!backend->link_failure().empty()) return Error::make("{}", backend->link_failure());
  backend->ring_.set_poster(backend.get());
  if (auto ok = backend->join_group(); !ok) return ok.error();
  if (auto ok = backend->watch_events(); !ok) return ok.error();
  return backend;
}

RdmaBackend::RdmaBackend(const RdmaConfig& config, RdmaEndpoint endpoint, BufferArena arena, const BufferLayout& layout)
    : Backend(config.params, std::move(arena), layout),
      config_(config),
      ring_(recv_region(), config.params.recv_buffers, layout.recv_slot, kGrhBytes, kRecvPostBatch),
      window_(kSendQueueDepth),
      endpoint_(std::move(endpoint)),
      peers_(config.peers, config.params.local_node) {
  self_.ipv4 = ipv4_of(config.bind);
}

RdmaBackend::~RdmaBackend() { close(); }

std::string RdmaBackend::local_address() const {
  return fmt::format("{} on {}", config_.bind.host_string(), endpoint_.device());
}

Result<void> RdmaBackend::adopt_send_region(std::span<const std::byte> region) {
  if (!pd_) return Error::make("rdma: cannot register a region on a retired backend");
  adopted_mr_.reset(ibv_reg_mr(pd_.get(), const_cast<std::byte*>(region.data()), region.size(), kLocalWrite));
  if (!adopted_mr_)
    return Error::sys(errno, "rdma: ibv_reg_mr of the links' {:.1f} MiB failed", mebibytes(region.size()));
  ++counters_.mr_registrations;
  return {};
}

Result<void> RdmaBackend::open_queues() {
  ibv_context* context = endpoint_.context();
  pd_.reset(ibv_alloc_pd(context));
  if (!pd_) return Error::sys(errno, "rdma: ibv_alloc_pd on {}", endpoint_.device());
  // One registration for every send and receive buffer: the arena is one mapping.
  const auto region = buffer_region();
  mr_.reset(ibv_reg_mr(pd_.get(), const_cast<std::byte*>(region.data()), region.size(), kLocalWrite));
  if (!mr_) return Error::sys(errno, "rdma: ibv_reg_mr of {:.1f} MiB failed", mebibytes(region.size()));
  ++counters_.mr_registrations;  // the datapath posts from this region (and an adopted one) only
  completion_channel_.reset(ibv_create_comp_channel(context));
  if (!completion_channel_) return Error::sys(errno, "rdma: ibv_create_comp_channel");
  if (auto ok = set_nonblocking(completion_channel_->fd, "the completion channel"); !ok) return ok;
  send_cq_.reset(ibv_create_cq(context, static_cast<int>(kSendQueueDepth), nullptr, completion_channel_.get(), 0));
  if (!send_cq_) return Error::sys(errno, "rdma: ibv_create_cq of {} send completions", kSendQueueDepth);
  recv_cq_.reset(ibv_create_cq(context, static_cast<int>(recv_buffers()), nullptr, completion_channel_.get(), 0));
  if (!recv_cq_) return Error::sys(errno, "rdma: ibv_create_cq of {} receive completions", recv_buffers());
  for (ibv_cq* cq : {send_cq_.get(), recv_cq_.get()})
    if (int rc = ibv_req_notify_cq(cq, 0); rc != 0) return Error::sys(rc, "rdma: ibv_req_notify_cq");
  return {};
}

// rdma_create_qp brings a UD QP to RTS with rdma_cm's qkey. Inline data is asked for (tokens and
// joins then skip the DMA read of their buffer); a device that offers none gets a QP without.
Result<void> RdmaBackend::create_qp() {
  ibv_qp_init_attr attr{};
  attr.send_cq = send_cq_.get();
  attr.recv_cq = recv_cq_.get();
  attr.qp_type = IBV_QPT_UD;
  attr.sq_sig_all = 0;  // selective signalling: the last WR of each chain
  attr.cap.max_send_wr = kSendQueueDepth;
  attr.cap.max_recv_wr = recv_buffers();
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = kInlineWanted;
  if (rdma_create_qp(endpoint_.id(), pd_.get(), &attr) != 0) {
    attr.cap.max_inline_data = 0;
    if (rdma_create_qp(endpoint_.id(), pd_.get(), &attr) != 0)
      return Error::sys(errno, "rdma: rdma_create_qp (UD, {} send and {} receive WRs) on {}", kSendQueueDepth,
                        recv_buffers(), endpoint_.device());
  }
  qp_.reset(endpoint_.id());
  ibv_qp_attr got{};
  ibv_qp_init_attr init{};
  if (int rc = ibv_query_qp(endpoint_.id()->qp, &got, IBV_QP_CAP, &init); rc != 0)
    return Error::sys(rc, "rdma: ibv_query_qp");
  max_inline_ = std::min(init.cap.max_inline_data, kInlineWanted);
  self_.qpn = endpoint_.id()->qp->qp_num;
  return {};
}

Result<void> RdmaBackend::join_group() {
  auto joined = endpoint_.join(config_.group, group_);
  if (!joined) return joined.error();
  join_ = std::move(*joined);
  group_ah_.reset(ibv_create_ah(pd_.get(), &group_.ah_attr));
  if (!group_ah_) return Error::sys(errno, "rdma: ibv_create_ah for group {}", config_.group.host_string());
  return {};
}

Result<void> RdmaBackend::watch_events() {
  if (auto ok = set_nonblocking(endpoint_.context()->async_fd, "the device's async events"); !ok) return ok;
  fds_ = {endpoint_.event_fd(), completion_channel_->fd, endpoint_.context()->async_fd};
  return {};
}

Result<void> RdmaBackend::check_peers(std::span<const std::vector<PeerAddress>> by_link) const {
  if (by_link.size() != 1) return Error::make("rdma: one link's peers, not {}", by_link.size());
  RdmaConfig changed = config_;
  changed.peers = by_link[0];
  return changed.validate();
}

void RdmaBackend::set_peers(std::span<const std::vector<PeerAddress>> by_link) {
  RTOTEM_ASSERT(check_peers(by_link).ok());
  config_.peers = by_link[0];
  peers_.replace(config_.peers, local_node());
}

// A peer is addressed by its GID (RoCE v2: its IPv4 address, mapped) through the GID index the
// multicast join chose for us, and by the QP number its packets carry (wc.src_qp). No rdma_cm
// handshake per peer: the nodelist already names every address, a peer's first multicast
// (a join message) proves it is up, and a restarted peer's new QP number is picked up from its
// next packet. The AH is made once per peer; the kernel resolves the MAC then. A packet not yet
// accepted gives a QP number only to a peer that has none: a change comes from learn_qpn, after
// the packet passed every check (and opened, with a key), so a forged one cannot redirect tokens.
bool RdmaBackend::reach_peer(RdmaPeerEntry& peer, std::uint32_t qpn) noexcept {
  if (!peer.ah) {
    ibv_ah_attr attr{};
    attr.is_global = 1;
    attr.port_num = endpoint_.port();
    attr.sl = group_.ah_attr.sl;
    attr.grh.dgid = gid_of_ipv4(peer.ipv4);
    attr.grh.sgid_index = group_.ah_attr.grh.sgid_index;
    attr.grh.hop_limit = kHopLimit;
    attr.grh.traffic_class = group_.ah_attr.grh.traffic_class;
    peer.ah.reset(ibv_create_ah(pd_.get(), &attr));
    if (!peer.ah) {  // tried again on its next packet; logged the first time, then at powers of two
      const int error = errno;
      ++counters_.link_events;
      ++peer.ah_failures;
      if (worth_logging(peer.ah_failures))
        log(fmt::format("rdma: ibv_create_ah for node {} (failure #{}): {}", peer.node, peer.ah_failures,
                        std::strerror(error)));
      return false;
    }
  }
  if (peer.qpn == 0) peer.qpn = qpn;
  return true;
}

void RdmaBackend::learn_qpn(RdmaPeerEntry& peer, std::uint32_t qpn) noexcept {
  if (peer.qpn == qpn) return;
  log(fmt::format("rdma: node {} now sends from QP {:#x} (was {:#x})", peer.node, qpn, peer.qpn));
  peer.qpn = qpn;
}

// One poll of the three channels; only those ready are read (each is non-blocking).
void RdmaBackend::drain_events() noexcept {
  std::array<pollfd, 3> ready{};
  for (std::size_t i = 0; i < fds_.size(); ++i) ready[i] = pollfd{fds_[i], POLLIN, 0};
  if (::poll(ready.data(), ready.size(), 0) <= 0) return;
  if (ready[0].revents) handle_cm_events();
  if (ready[1].revents) handle_completion_events();
  if (ready[2].revents) handle_async_events();
}

// Re-armed before the queues are drained, so a completion that races the re-arm still wakes us.
void RdmaBackend::handle_completion_events() noexcept {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(completion_channel_.get(), &cq, &context) == 0) {
    ibv_ack_cq_events(cq, 1);
    if (int rc = ibv_req_notify_cq(cq, 0); rc != 0)
      set_link_failure(fmt::format("rdma: ibv_req_notify_cq: {}", std::strerror(rc)));
  }
}

void RdmaBackend::handle_cm_events() noexcept {
  while (CmEvent event = endpoint_.next_event()) {
    ++counters_.link_events;
    const std::string line =
        fmt::format("rdma: {} on {} (status {})", rdma_event_str(event->event), endpoint_.device(), event->status);
    log(line);
    switch (event->event) {
      case RDMA_CM_EVENT_MULTICAST_ERROR:  // the group is gone: multicasts reach nobody
      case RDMA_CM_EVENT_ADDR_CHANGE:      // the address moved to another device
      case RDMA_CM_EVENT_DEVICE_REMOVAL:   // the device is going away
        set_link_failure(line);
        break;
      default: break;
    }
  }
}

void RdmaBackend::handle_async_events() noexcept {
  ibv_async_event event{};
  while (ibv_get_async_event(endpoint_.context(), &event) == 0) {
    ++counters_.link_events;
    const bool ours = concerns(event);
    const std::string line = fmt::format("rdma: {} on {}", ibv_event_type_str(event.event_type), endpoint_.device());
    ibv_ack_async_event(&event);
    if (!ours) continue;
    log(line);
    if (is_fatal(event.event_type)) set_link_failure(line);
  }
}

// The device's events come to every user of the device context: only ours count.
bool RdmaBackend::concerns(const ibv_async_event& event) const noexcept {
  switch (event.event_type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED: return event.element.qp == endpoint_.id()->qp;
    case IBV_EVENT_CQ_ERR: return event.element.cq == send_cq_.get() || event.element.cq == recv_cq_.get();
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: return false;  // no SRQ here
    case IBV_EVENT_DEVICE_FATAL: return true;
    default:  // port events
      return event.element.port_num == endpoint_.port();
  }
}

void RdmaBackend::log(std::string_view line) const noexcept {
  if (config_.log) config_.log(line);
}

// Sends still on the QP finish before anything is torn down (rxe runs sends from a work queue:
// a QP destroyed too early loses them). Then the group is left; the verbs objects go with the
// backend.
void RdmaBackend::on_close() noexcept {
  ring_.set_poster(nullptr);
  const auto deadline = std::chrono::steady_clock::now() + kCloseDrainMax;
  while (!window_.empty() && link_failure().empty() && std::chrono::steady_clock::now() < deadline) {
    reap_send_completions();
    if (!window_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  join_.reset();
}

// Every verbs and rdma_cm object, in reverse order of creation. The arena (ours, not the
// device's) stays for the buffers the protocol holds; released receive buffers only collect
// (on_close took the poster away).
void RdmaBackend::on_retire() noexcept {
  peers_ = RdmaPeerTable(config_.peers, local_node());  // their address handles
  group_ah_.reset();
  join_.reset();
  qp_.reset();
  if (!window_.empty()) (void)window_.complete_through(window_.next_id() - 1);  // no QP reads them now
  recv_cq_.reset();
  send_cq_.reset();
  completion_channel_.reset();
  adopted_mr_.reset();
  mr_.reset();
  pd_.reset();
  endpoint_.close();
  fds_ = {-1, -1, -1};
}

}  // namespace rtotem::transport
