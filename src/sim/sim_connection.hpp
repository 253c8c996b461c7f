// A simulated client's connection to its node's stack, in memory: the librtotem side
// (client::ClientConnection) and the stack's side (stack::ClientChannel) of one connection. A
// request is handed to the node's ClientTable at once and answered before the call returns, as
// rtotemd answers it within one turn (one sent with send(), such as a reload, may be answered on a
// later turn: take_late_answer); events wait in a bounded queue, as in libqb's event ring,
// until the client dispatches: a client that dispatches late fills it, and the ClientTable then
// queues its events, or cuts it off, as it does in rtotemd.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "src/client/client_connection.hpp"
#include "src/stack/client_table.hpp"

namespace rtotem::sim {

class SimConnection final : public client::ClientConnection, public stack::ClientChannel {
 public:
  // `after_request`: what the node's host does after each request (flushes what the stack sent to
  // the ring); `host_alive`: false once the node's process is gone (a torn crash struck), when
  // requests fail as on a closed socket. `channel_bytes`: what the event queue holds before the
  // channel says -EAGAIN.
  SimConnection(stack::ClientTable& table, pid_t pid, std::size_t buffer_bytes, std::size_t channel_bytes,
                std::function<void()> after_request, std::function<bool()> host_alive);
  ~SimConnection() override;
  SimConnection(const SimConnection&) = delete;
  SimConnection& operator=(const SimConnection&) = delete;

  // ClientConnection
  int fd() const override { return -1; }  // nothing to poll: the simulator dispatches
  int wait_for_ring(std::chrono::milliseconds) override { return -EAGAIN; }  // virtual time cannot pass inside a call
  // ClientChannel
  int send_event(std::span<const iovec> iov) override;
  int send_answer(std::span<const iovec> iov) override;
  void disconnect() override { cut_off_ = true; }
  stack::ChannelCounts counts() const override { return counts_; }
  void clear_counts() override { counts_ = {}; }

  // The answers to requests sent (send()) and answered then or on a later turn, as a reload
  // is: the error (0 or -errno) of the oldest not yet taken; nothing if none came.
  std::optional<int> take_late_answer();

  // The stack cut this client off (it did not read): its next call fails, as libqb's would.
  bool cut_off() const noexcept { return cut_off_; }
  std::size_t events_waiting() const noexcept { return events_.size(); }

 private:
  ssize_t exchange(std::span<const iovec> request, std::span<std::byte> answer) override;
  ssize_t post(std::span<const iovec> request) override;
  ssize_t receive_event(std::span<std::byte> out, int timeout_ms) override;
  // The request's bytes handed to the table; false if the client is cut off.
  bool hand_over(std::span<const iovec> request);

  stack::ClientTable& table_;
  stack::LocalClient* client_ = nullptr;
  std::size_t channel_bytes_;
  std::function<void()> after_request_;
  std::function<bool()> host_alive_;
  std::vector<std::byte> request_;
  std::vector<std::byte> answer_;
  bool answered_ = false;
  bool exchanging_ = false;      // within exchange(): the answer is its reply
  std::deque<int> late_errors_;  // answers to send()s, oldest first
  std::deque<std::vector<std::byte>> events_;
  std::size_t event_bytes_ = 0;
  bool cut_off_ = false;
  stack::ChannelCounts counts_;  // as libqb counts them; no flow control here
};

}  // namespace rtotem::sim
