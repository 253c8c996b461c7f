// The connection-manager side of the RDMA backend: an event channel and a UD cm_id (RDMA_PS_UDP)
// bound to this node's address, which picks the device and port; the port's attributes; joining
// the ring's multicast group. Start-up waits for events here with a time limit; at run time the
// channel's descriptor is in the event loop and next_event() never blocks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "transport/rdma/rdma_resources.hpp"
#include "base/result.hpp"
#include "transport/udp/inet_address.hpp"

namespace rtotem::transport {

inline constexpr int kCmEventWaitMs = 10'000;  // address resolution and join answer at once on RoCE

class RdmaEndpoint {
 public:
  // Binds `bind`, resolves `group` from it (no route needed: the bound address picks the NIC) and
  // queries the port.
  static Result<RdmaEndpoint> open(const InetAddress& bind, const InetAddress& group);

  rdma_cm_id* id() const noexcept { return id_.get(); }
  ibv_context* context() const noexcept { return id_->verbs; }
  std::uint8_t port() const noexcept { return id_->port_num; }
  const ibv_port_attr& port_attr() const noexcept { return port_attr_; }
  int event_fd() const noexcept { return channel_->fd; }
  const std::string& device() const noexcept { return device_; }  // "rxe0 port 1"

  // Joins `group` with the QP of id() (created by then) as a full member: it receives the
  // group's packets. The join event's UD parameters (qkey, AH attributes, QPN 0xFFFFFF) are what
  // sends to the group use.
  Result<MulticastJoin> join(const InetAddress& group, rdma_ud_param& out);
  // The next pending event, or null; never blocks.
  CmEvent next_event() noexcept;
  // Destroys the cm_id and the channel (the QP and the join must be gone already); device()
  // still answers. librdmacm keeps its own context of the device open until the process exits
  // (it lets go only of a device it no longer finds listed, and rxe lists one being removed
  // until every context is closed).
  void close() noexcept;

 private:
  RdmaEndpoint(EventChannel channel, CmId id) noexcept : channel_(std::move(channel)), id_(std::move(id)) {}
  Result<CmEvent> wait_event(rdma_cm_event_type want, std::string_view step);

  EventChannel channel_;  // before id_: destroyed after it
  CmId id_;
  ibv_port_attr port_attr_{};
  std::string device_name_;  // "rxe0"
  std::string device_;       // "rxe0 port 1", kept past close()
};

// Sets O_NONBLOCK on a descriptor the verbs libraries made (channels, async events).
Result<void> set_nonblocking(int fd, const char* what);

}  // namespace rtotem::transport
