// The node stack's local clients: each request handed to the RequestHandler and answered, and
// every event sent, batched, or queued. A client that does not read its events gets them queued
// here up to a byte limit, then is cut off: a slow client never blocks the ring or the other
// clients. The queues of all clients together are bounded too: many slow clients cost no more
// memory than one budget. Sans-I/O: each client's bytes leave through its ClientChannel, which
// rtotemd's IpcServer (libqb) and the simulator provide; the host drains queues on retry().
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "src/ipc/ipc_protocol.hpp"
#include "src/stack/ipc_request.hpp"
#include "src/stack/local_client.hpp"
#include "src/stack/shared_event.hpp"

namespace rtotem::stack {

struct ClientLimits {
  std::size_t buffer_bytes = 0;        // one IPC message, at most (an answer larger is -EMSGSIZE)
  std::size_t client_queue_bytes = 0;  // events queued for one client before it is cut off
  // Memory the queues of all clients may hold together: past it the client with the largest
  // queue is cut off. At least twice client_queue_bytes (a queue's storage grows by doubling).
  std::size_t total_queue_bytes = 0;
  std::size_t max_clients = 0;  // reserved up front: no allocation when clients fall behind
};

// What RequestHandler::request returns for a request it answers later, with ClientTable::answer (a
// shutdown waits for its clients' votes). The client waits for it; nothing else is sent meanwhile.
inline constexpr int kAnswerLater = 1;

class RequestHandler {
 public:
  // An added client is ready for events (the stack tells it the current ring).
  virtual void client_connected(LocalClient& client) = 0;
  // A request that decoded (decode_request); returns 0 or -errno for the answer's header, and
  // `reply` is its body; or kAnswerLater. Not answered at all if !ipc::answered(request.id).
  virtual int request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) = 0;
  // The client disconnected or was cut off: its groups are left on its behalf.
  virtual void client_gone(LocalClient& client) = 0;

 protected:
  ~RequestHandler() = default;
};

class ClientTable {
 public:
  // `arm_retry`: the host calls retry() a few ms later (once per call, until it is called).
  ClientTable(const ClientLimits& limits, RequestHandler& handler, std::function<void()> arm_retry);
  ~ClientTable();
  ClientTable(const ClientTable&) = delete;
  ClientTable& operator=(const ClientTable&) = delete;

  // A client authenticated on `channel`; the handler hears of it.
  LocalClient& add(ClientChannel& channel, pid_t pid, uid_t uid, gid_t gid);
  // The client's channel has closed (it disconnected, or was cut off): no more events, and the
  // handler hears of it once. Then remove() forgets it.
  void closed(LocalClient& client);
  void remove(LocalClient& client);
  // At the host's end (rtotemd's shutdown): clients go without a word to the handler.
  void closing_all() noexcept { destroying_ = true; }

  // One whole request of `client` (a qb_ipc_request_header and its body): decoded, handed to the
  // handler, answered (unless it is one that is not, or answered later). A request that does not
  // decode is answered -EINVAL and counted.
  void on_request(LocalClient& client, std::span<const std::byte> message);

  // Sends (or queues) one event, whose body is `body` then `tail` (a payload, sent uncopied from
  // where the ring holds it); a client past its queue limit is cut off. A small delivery joins
  // the client's batch instead; any other event sends the batch first, so order holds.
  void send_event(LocalClient& client, ipc::EventId id, std::span<const std::byte> body,
                  std::span<const std::byte> tail = {});
  // The same event to each of `clients` (a delivery to a group's local members): the queues of
  // those that have fallen behind hold one copy of it between them.
  void send_event_to_all(std::span<LocalClient* const> clients, ipc::EventId id, std::span<const std::byte> body,
                         std::span<const std::byte> tail = {});
  // At the end of each turn of the ring: what waits in clients' queues goes first, as far as their
  // channels now take it (a client that reads keeps up without waiting for the retry), then every
  // client's batch, so no delivery waits longer than its turn. Credit given back is told then too.
  void end_turn();
  // The queued events again, for those whose channel now has room (the host's retry).
  void retry();
  // The answer to a request the handler took with kAnswerLater.
  void answer(LocalClient& client, ipc::RequestId id, int error, std::span<const std::byte> body);
  // The client's credit comes back by `bytes` (a kMcastAsync request taken).
  void give_credit(LocalClient& client, std::size_t bytes);
  // An answer tells the client its credit (ipc::McastReply): nothing is owed it then.
  static void credit_told(LocalClient& client) noexcept { client.credit_told = client.credit_taken; }
  // Keeps an asynchronous multicast the ring refused, after the client's others. False: the
  // client sent past its credit window (it is cut off; the request is not kept).
  bool stage(LocalClient& client, std::span<const std::byte> request);
  // Calls f(client) for each client with staged multicasts (not closing) until f returns false;
  // clients whose staged queue is empty afterwards leave the list. The list's order rotates each
  // call, so no client always goes first when the ring has room for only some.
  template <class F>
  void for_each_staged(F&& f) {
    if (staged_.empty()) return;
    std::rotate(staged_.begin(), staged_.begin() + 1, staged_.end());
    for (LocalClient* client : staged_)
      if (!client->closing && !f(*client)) break;
    std::erase_if(staged_, [](LocalClient* c) {
      if (!c->staged.empty()) return false;
      c->staged_listed = false;
      return true;
    });
  }
  template <class F>
  void for_each_client(F&& f) {
    for (auto& [generation, client] : clients_)
      if (!client->closing) f(*client);
  }
  std::size_t client_count() const noexcept { return clients_.size(); }
  // The first client of process `pid` that `match` takes (closing ones too), or null.
  template <class F>
  LocalClient* find_client(pid_t pid, F&& match) {
    const auto [first, last] = by_pid_.equal_range(pid);
    for (auto it = first; it != last; ++it)
      if (match(*it->second)) return it->second;
    return nullptr;
  }
  // The client with this generation, if it is still there (not closing).
  LocalClient* find_generation(std::uint64_t generation) {
    const auto found = clients_.find(generation);
    return found == clients_.end() || found->second->closing ? nullptr : found->second.get();
  }
  // Cuts the client off, with one log line saying why.
  void evict(LocalClient& client, const char* why);

  std::uint64_t clients_evicted() const noexcept { return evicted_; }
  std::uint64_t connections_made() const noexcept { return generations_; }  // since start, closed ones too
  // Memory held by the clients' event queues now (what total_queue_bytes bounds), and the most
  // it ever held.
  std::size_t queue_memory() const noexcept { return queue_storage_ + shared_bytes_; }
  std::size_t queue_memory_peak() const noexcept { return queue_storage_peak_; }
  std::uint64_t requests_malformed() const noexcept { return malformed_; }
  std::uint64_t batches_sent() const noexcept { return batches_sent_; }
  std::uint64_t events_batched() const noexcept { return events_batched_; }
  std::uint64_t requests_async() const noexcept { return requests_async_; }
  std::uint64_t requests_sync() const noexcept { return requests_sync_; }  // those the client waits on
  std::uint64_t credit_events() const noexcept { return credit_events_; }
  std::uint64_t mcasts_staged() const noexcept { return mcasts_staged_; }

 private:
  // The answer's header, then `body`; a client that does not read its answers is cut off.
  void respond(LocalClient& client, ipc::RequestId id, int error, std::span<const std::byte> body);
  // Sends queued events in order until the channel is full again.
  bool drain(LocalClient& client);
  void drain_all();
  // Sends now or queues; with `shared` (a fan-out), the queue holds that copy, made at the first
  // that needs it.
  void send_now(LocalClient& client, std::span<const iovec> iov, std::size_t size, SharedEvent::Handle* shared);
  void flush_batch(LocalClient& client);
  void append_to_batch(LocalClient& client, std::span<const iovec> iov, std::size_t size);
  void tell_credit(LocalClient& client);  // a kCredit event at the end of the client's batch
  // Tells each client owed credit: in its batch when it has one (a busy sender learns it with its
  // deliveries, no wake-up of its own), alone when half a window or more of its requests is
  // unacknowledged (it may be waiting for it: rtotem_mcast's -EAGAIN asks nothing of the daemon).
  void settle_credit();
  // Makes room under total_queue_bytes for `client` to queue `size` more bytes (by reference:
  // only a record, the block is counted already), cutting off the clients furthest behind; false
  // if `client` was the one cut off.
  bool make_room(LocalClient& client, std::size_t size, bool by_reference);
  // Forgets a client's queue and gives its memory back.
  void drop_backlog(LocalClient& client) noexcept;
  void channel_failed(LocalClient& client, int err);
  void want_retry();

  ClientLimits limits_;
  RequestHandler& handler_;
  std::function<void()> arm_retry_;
  bool retry_armed_ = false;
  // Blocks that backlogs hold by reference (SharedEvent): before clients_, whose backlogs count
  // their blocks out of it when they go.
  std::size_t shared_bytes_ = 0;
  std::map<std::uint64_t, std::unique_ptr<LocalClient>> clients_;  // by generation
  // The same clients by process id (a delivery looks its members up by pid), and those whose
  // queue is not empty (drained at the end of every turn).
  std::unordered_multimap<pid_t, LocalClient*> by_pid_;
  std::vector<LocalClient*> backlogged_;
  std::vector<LocalClient*> staged_;  // clients with staged multicasts
  std::vector<LocalClient*> credit_owed_;
  ipc::BodyWriter reply_;  // a request's answer, reused: answering allocates nothing
  std::uint64_t generations_ = 0;
  std::uint64_t evicted_ = 0;
  std::size_t queue_storage_ = 0;  // capacity of every client's backlog
  std::size_t queue_storage_peak_ = 0;
  bool batches_waiting_ = false;
  bool destroying_ = false;
  std::uint64_t batches_sent_ = 0;
  std::uint64_t events_batched_ = 0;
  std::uint64_t requests_async_ = 0;
  std::uint64_t requests_sync_ = 0;
  std::uint64_t credit_events_ = 0;
  std::uint64_t mcasts_staged_ = 0;
  std::uint64_t malformed_ = 0;
};

}  // namespace rtotem::stack
