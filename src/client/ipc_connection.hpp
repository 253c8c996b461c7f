// The client's side of the local IPC (libqb qb_ipcc, shared memory): one request and its answer
// at a time, requests without an answer, and events. Shared by librtotem and rtotemctl.
#pragma once

#include <qb/qbipcc.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "src/ipc/ipc_protocol.hpp"
#include "base/result.hpp"

namespace rtotem::client {

struct Reply {
  int error = 0;                     // the daemon's answer: 0 or -errno
  std::span<const std::byte> body;   // valid until the next call
};

struct Event {
  ipc::EventId id{};
  std::span<const std::byte> body;  // valid until the next call
};

class IpcConnection {
 public:
  // `name` empty: $RTOTEM_IPC, else the default. Returns -errno as Error::errnum() on failure.
  static Result<std::unique_ptr<IpcConnection>> open(std::string name);
  ~IpcConnection();
  IpcConnection(const IpcConnection&) = delete;
  IpcConnection& operator=(const IpcConnection&) = delete;

  // Sends a request (its body is `body` then `tail`: a payload goes as it is, uncopied) and
  // waits for its answer. Negative: the connection failed (-errno).
  int request(ipc::RequestId id, std::span<const std::byte> body, Reply& reply,
              std::span<const std::byte> tail = {});
  // Sends a request the daemon does not answer (ipc::RequestId::kMcastAsync): 0 once it is in the
  // connection's request ring, -EAGAIN if the ring is full, or -errno.
  int send(ipc::RequestId id, std::span<const std::byte> body, std::span<const std::byte> tail);
  // The next event: 1 with `event` filled, 0 if none came within timeout_ms (-1: wait), or -errno.
  // A batch (ipc::EventId::kBatch) is opened here and its events returned one per call.
  int next_event(Event& event, int timeout_ms);
  // Events of an opened batch are still to come (the descriptor will not signal them).
  bool batch_open() const noexcept { return batch_at_ < batch_end_; }
  int fd() const;
  const std::string& name() const noexcept { return name_; }

 private:
  IpcConnection(qb_ipcc_connection_t* c, std::string name, std::size_t buffer_bytes);
  qb_ipcc_connection_t* c_;
  std::string name_;
  std::vector<std::byte> reply_buffer_;
  int next_in_batch(Event& event);
  std::vector<std::byte> event_buffer_;
  std::size_t batch_at_ = 0;  // the next event of the open batch in event_buffer_, and its end
  std::size_t batch_end_ = 0;
};

}  // namespace rtotem::client
