// The client's side of the local IPC, whatever carries it: requests framed as a
// qb_ipc_request_header and a body, answers and events as a qb_ipc_response_header and a body,
// batches of events opened here. IpcConnection carries them over libqb (librtotem, rtotemctl);
// the simulator's clients over memory, into a node stack it runs (src/sim/sim_client.hpp). The
// bytes that come back are checked here alike, as untrusted input.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "src/ipc/ipc_protocol.hpp"

namespace rtotem::client {

struct Reply {
  int error = 0;                    // the daemon's answer: 0 or -errno
  std::span<const std::byte> body;  // valid until the next call
};

struct Event {
  ipc::EventId id{};
  std::span<const std::byte> body;  // valid until the next call
};

class ClientConnection {
 public:
  virtual ~ClientConnection() = default;

  // Sends a request (its body is `body` then `tail`: a payload goes as it is, uncopied) and
  // waits for its answer. Negative: the connection failed (-errno).
  int request(ipc::RequestId id, std::span<const std::byte> body, Reply& reply, std::span<const std::byte> tail = {});
  // Sends a request the daemon does not answer (ipc::RequestId::kMcastAsync): 0 once it is in the
  // connection's request ring, -EAGAIN if the ring is full, or -errno.
  int send(ipc::RequestId id, std::span<const std::byte> body, std::span<const std::byte> tail);
  // The next event: 1 with `event` filled, 0 if none came within timeout_ms (-1: wait), or -errno.
  // A batch (ipc::EventId::kBatch) is opened here and its events returned one per call.
  int next_event(Event& event, int timeout_ms);
  // Events of an opened batch are still to come (the descriptor will not signal them).
  bool batch_open() const noexcept { return batch_at_ < batch_end_; }
  virtual int fd() const = 0;
  // Waits `pause` before a request the ring refused is made again (a piece of a message, a
  // flush at disconnect): 0, or -errno when this connection cannot wait (the simulator's, which
  // runs on virtual time): the caller then gives up as at the end of its bound.
  virtual int wait_for_ring(std::chrono::milliseconds pause) = 0;

 protected:
  explicit ClientConnection(std::size_t buffer_bytes) : reply_buffer_(buffer_bytes), event_buffer_(buffer_bytes) {}

  // What carries the bytes. exchange: sends the request and receives its answer into `answer`,
  // returning its length or -errno. post: sends a request that is not answered (0 or -errno;
  // -EAGAIN: no room). receive_event: the next event into `out`, its length, or -EAGAIN /
  // -ETIMEDOUT when none came within timeout_ms, or -errno.
  virtual ssize_t exchange(std::span<const iovec> request, std::span<std::byte> answer) = 0;
  virtual ssize_t post(std::span<const iovec> request) = 0;
  virtual ssize_t receive_event(std::span<std::byte> out, int timeout_ms) = 0;

 private:
  int next_in_batch(Event& event);

  std::vector<std::byte> reply_buffer_;
  std::vector<std::byte> event_buffer_;
  std::size_t batch_at_ = 0;  // the next event of the open batch in event_buffer_, and its end
  std::size_t batch_end_ = 0;
};

}  // namespace rtotem::client
