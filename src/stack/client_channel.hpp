// Where a local client's answers and events go: libqb's shared-memory channels in rtotemd
// (src/daemon/ipc_server.cpp), an in-memory queue in the simulator. Each send takes a whole
// message (a qb_ipc_response_header and its body) or nothing.
#pragma once

#include <sys/uio.h>

#include <span>

namespace rtotem::stack {

class ClientChannel {
 public:
  // 0: sent whole. -EAGAIN or -ENOBUFS: no room now (the client has not read). Any other
  // -errno: the channel failed (-ENOTCONN, -EPIPE, -ECONNRESET: the client has gone).
  virtual int send_event(std::span<const iovec> iov) = 0;
  virtual int send_answer(std::span<const iovec> iov) = 0;
  // Cut the client off, later (never from inside the ClientTable's call): its host then reports
  // it gone, as for a client that disconnected.
  virtual void disconnect() = 0;

 protected:
  ~ClientChannel() = default;
};

}  // namespace rtotem::stack
