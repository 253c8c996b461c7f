// rdma_cm set-up: channel, id, bind, address resolution, port query, multicast join.
#include "transport/rdma/rdma_endpoint.hpp"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace rtotem::transport {

Result<void> set_nonblocking(int fd, const char* what) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return Error::sys(errno, "rdma: O_NONBLOCK on {}", what);
  return {};
}

Result<RdmaEndpoint> RdmaEndpoint::open(const InetAddress& bind, const InetAddress& group) {
  EventChannel channel(rdma_create_event_channel());
  if (!channel) return Error::sys(errno, "rdma: rdma_create_event_channel");
  if (auto ok = set_nonblocking(channel->fd, "the rdma_cm event channel"); !ok) return ok.error();
  rdma_cm_id* raw = nullptr;
  if (rdma_create_id(channel.get(), &raw, nullptr, RDMA_PS_UDP) != 0) return Error::sys(errno, "rdma: rdma_create_id");
  RdmaEndpoint endpoint(std::move(channel), CmId(raw));
  // A copy: librdmacm takes non-const sockaddrs.
  InetAddress local = bind.with_port(0);
  InetAddress remote = group.with_port(0);
  auto* local_sa = const_cast<sockaddr*>(local.sockaddr_ptr());
  if (rdma_bind_addr(raw, local_sa) != 0)
    return Error::sys(errno, "rdma: rdma_bind_addr {} (is it the address of an RDMA device?)", local.host_string());
  if (rdma_resolve_addr(raw, local_sa, const_cast<sockaddr*>(remote.sockaddr_ptr()), kCmEventWaitMs) != 0)
    return Error::sys(errno, "rdma: rdma_resolve_addr {} from {}", remote.host_string(), local.host_string());
  if (auto event = endpoint.wait_event(RDMA_CM_EVENT_ADDR_RESOLVED, "resolving the group address"); !event)
    return event.error();
  if (!raw->verbs) return Error::make("rdma: {} is on no RDMA device", local.host_string());
  endpoint.device_name_ = ibv_get_device_name(raw->verbs->device);
  endpoint.device_ = fmt::format("{} port {}", endpoint.device_name_, raw->port_num);
  if (int rc = ibv_query_port(raw->verbs, raw->port_num, &endpoint.port_attr_); rc != 0)
    return Error::sys(rc, "rdma: ibv_query_port {}", endpoint.device());
  if (endpoint.port_attr_.state != IBV_PORT_ACTIVE)
    return Error::make("rdma: {} is not active (state {})", endpoint.device(),
                       ibv_port_state_str(endpoint.port_attr_.state));
  return endpoint;
}

void RdmaEndpoint::close() noexcept {
  id_.reset();
  channel_.reset();
}

Result<MulticastJoin> RdmaEndpoint::join(const InetAddress& group, rdma_ud_param& out) {
  InetAddress address = group.with_port(0);
  auto* sa = const_cast<sockaddr*>(address.sockaddr_ptr());
  if (rdma_join_multicast(id_.get(), sa, nullptr) != 0)
    return Error::sys(errno, "rdma: rdma_join_multicast {} on {}", address.host_string(), device());
  MulticastJoin joined(id_.get(), sa, address.length());
  const std::string step = fmt::format("joining multicast group {} on {}", address.host_string(), device());
  auto event = wait_event(RDMA_CM_EVENT_MULTICAST_JOIN, step);
  if (!event) return event.error();
  out = (*event)->param.ud;
  return joined;
}

CmEvent RdmaEndpoint::next_event() noexcept {
  rdma_cm_event* event = nullptr;
  if (rdma_get_cm_event(channel_.get(), &event) != 0) return nullptr;
  return CmEvent(event);
}

Result<CmEvent> RdmaEndpoint::wait_event(rdma_cm_event_type want, std::string_view step) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(kCmEventWaitMs);
  for (;;) {
    if (CmEvent event = next_event()) {
      if (event->event == want && event->status == 0) return event;
      // Status -1 is librdmacm's own step failing (attaching the QP to a joined group): the
      // reason is in errno, which rdma_get_cm_event leaves as that step set it.
      const std::string reason = event->status == -1 ? fmt::format(": {}", std::strerror(errno)) : std::string();
      return Error::make("rdma: {}: got {} (status {}{}), wanted {}", step, rdma_event_str(event->event), event->status,
                         reason, rdma_event_str(want));
    }
    if (errno != EAGAIN) return Error::sys(errno, "rdma: {}: rdma_get_cm_event", step);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Error::make("rdma: {}: no {} within {} ms", step, rdma_event_str(want), kCmEventWaitMs);
    pollfd fd{channel_->fd, POLLIN, 0};
    (void)::poll(&fd, 1, static_cast<int>(left));
  }
}

}  // namespace rtotem::transport
