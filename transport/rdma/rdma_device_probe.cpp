#include "transport/rdma/rdma_device_probe.hpp"

#include <infiniband/verbs.h>

#include <cerrno>
#include <memory>
#include <span>

namespace rtotem::transport {
namespace {

struct DeviceListFree {
  void operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }
};
struct DeviceClose {
  void operator()(ibv_context* context) const noexcept { ibv_close_device(context); }
};
using DeviceList = std::unique_ptr<ibv_device*, DeviceListFree>;
using DeviceContext = std::unique_ptr<ibv_context, DeviceClose>;

// The first active port of `device` (1-based), or why there is none.
Result<int> active_port(ibv_device* device) {
  const char* name = ibv_get_device_name(device);
  const DeviceContext context(ibv_open_device(device));
  if (!context) return Error::sys(errno, "{}: ibv_open_device", name);
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(context.get(), &attr); rc != 0) return Error::sys(rc, "{}: ibv_query_device", name);
  for (int port = 1; port <= attr.phys_port_cnt; ++port) {
    ibv_port_attr port_attr{};
    if (ibv_query_port(context.get(), static_cast<std::uint8_t>(port), &port_attr) != 0) continue;
    if (port_attr.state == IBV_PORT_ACTIVE) return port;
  }
  return Error::make("{}: no active port", name);
}

}  // namespace

Result<std::string> find_active_rdma_port() {
  int count = 0;
  const DeviceList list(ibv_get_device_list(&count));
  // A kernel without RDMA support fails with ENOSYS; a host without devices returns an empty list.
  if (!list) return Error::sys(errno, "no RDMA device (ibv_get_device_list)");
  if (count == 0) return Error::make("no RDMA device");
  Error last = Error::make("no RDMA device");
  for (ibv_device* device : std::span(list.get(), static_cast<std::size_t>(count))) {
    auto port = active_port(device);
    if (port) return std::string(ibv_get_device_name(device)) + " port " + std::to_string(*port);
    last = port.error();
  }
  return last;
}

}  // namespace rtotem::transport
