// The group service a bench run drives: librtotem (rtotem-bench), or Corosync's libcpg (cpg-bench),
// so that both systems are measured by the very same run loop, checks and report. Events reach the
// run in librtotem's structs whichever library produced them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "rtotem/rtotem.h"

namespace rtotem::bench {

class GroupClient {
 public:
  struct Callbacks {
    std::function<void(const rtotem_message&)> deliver;
    std::function<void(const rtotem_group_change&)> group_change;
    std::function<void(const rtotem_ring_change&)> ring_change;
  };

  virtual ~GroupClient() = default;

  // Every call returns 0 or a negative errno. connect: -EAGAIN or -ECONNREFUSED while the daemon
  // is not ready (the caller retries); mcast: -EAGAIN is back-pressure.
  virtual int connect(Callbacks callbacks, const std::string& ipc_name) = 0;
  virtual int join(const std::string& group) = 0;
  virtual int mcast(const std::string& group, std::span<const std::byte> data, rtotem_order order) = 0;
  virtual int fd() = 0;
  virtual int dispatch_all() = 0;
  virtual int local_nodeid(std::uint32_t& out) = 0;
  virtual int max_message_size(std::size_t& out) = 0;

  virtual const char* error_text(int rc) const noexcept = 0;
  virtual std::string_view program() const noexcept = 0;  // in messages: "rtotem-bench"
  virtual std::string_view daemon() const noexcept = 0;   // in messages: "rtotemd"
};

}  // namespace rtotem::bench
