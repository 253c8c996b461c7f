// The daemon's side of the local IPC (libqb qb_ipcs, shared memory): accepts clients, hands each
// request to an IpcHandler and sends its answer, and sends events. A client that does not read
// its events gets them queued here up to a byte limit, then is disconnected: a slow client never
// blocks the ring or the other clients. The queues of all clients together are bounded too: many
// slow clients cost no more memory than one budget. A client that does not read its answers is
// disconnected at the first that finds no room.
#pragma once

#include <qb/qbipcs.h>
#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/daemon/event_backlog.hpp"
#include "src/daemon/event_loop.hpp"
#include "src/daemon/ipc_admission.hpp"
#include "src/daemon/ipc_request.hpp"
#include "src/daemon/shared_event.hpp"
#include "src/ipc/ipc_protocol.hpp"

namespace rtotem::daemon {

// What a client tracking the quorum was last told, to judge which changes its mode sends.
struct QuorumTold {
  std::uint32_t rep = 0;
  std::uint64_t seq = 0;
  bool quorate = false;
  std::uint32_t highest_expected = 0;
};

struct IpcClient {
  qb_ipcs_connection_t* connection = nullptr;
  pid_t pid = 0;
  // Effective, as the connection authenticated; none (not root) until it is known.
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::uint64_t generation = 0;  // unique per connection, unlike its address
  std::set<std::string, std::less<>> groups;  // joins it asked for (and has not left)
  EventBacklog backlog;  // events the shared-memory ring had no room for
  // Small deliveries waiting for the end of the turn (IpcServer::end_turn): a kBatch
  // header, then whole events. It grows with use, to ipc::kBatchBytes at most, and stays.
  std::vector<std::byte> batch;
  // Asynchronous multicasts (whole kMcastAsync requests, in order) the ring has refused for now:
  // within the credit window, so at most ipc::kMcastWindow bytes. The same byte ring as `backlog`.
  EventBacklog staged;
  std::uint64_t async_read = 0;    // bytes of kMcastAsync requests read
  std::uint64_t credit_taken = 0;  // of those, taken (to the ring, or failed): credit given back
  std::uint64_t credit_told = 0;   // credit_taken as the client last heard it
  bool credit_owed = false;        // credit_taken moved past credit_told (IpcServer's list)
  bool staged_listed = false;      // in IpcServer's list of clients with staged multicasts
  bool closing = false;  // disconnected or being evicted: no more events
  bool tracks_rings = true;    // kRingChange events, unless it asked for none (kRingTrack)
  std::uint8_t quorum_track = ipc::kQuorumTrackStop;  // the kQuorumChange events it asked for
  QuorumTold quorum_told;  // the quorum as its last kQuorumChange (sent or not, by its mode) had it
  bool tracks_shutdown = false;  // asked for kShutdownQuery events
};

struct IpcLimits {
  std::size_t buffer_bytes = 0;       // one IPC message, at most
  std::size_t client_queue_bytes = 0;  // events queued for one client before it is dropped
  // Memory the queues of all clients may hold together: past it the client with the largest
  // queue is dropped. At least twice client_queue_bytes (a queue's storage grows by doubling).
  std::size_t total_queue_bytes = 0;
  std::size_t max_clients = 0;
  // Besides root and the daemon's own user, who may connect (sorted): by effective uid or gid.
  std::vector<std::uint32_t> allow_uids;
  std::vector<std::uint32_t> allow_gids;
};

// What IpcHandler::request returns for a request it answers later, with IpcServer::answer (a
// shutdown waits for its clients' votes). The client waits for it; nothing else is sent meanwhile.
inline constexpr int kAnswerLater = 1;

class IpcHandler {
 public:
  // 0 to accept a new client, or -errno (sent to it: -EAGAIN while no ring is formed yet).
  virtual int accept_client() = 0;
  // An accepted client is ready for events (the daemon tells it the current ring).
  virtual void client_connected(IpcClient& client) = 0;
  // A request that decoded (decode_request); returns 0 or -errno for the response header, and
  // `reply` is the response body; or kAnswerLater. Not answered at all if !ipc::answered(request.id).
  virtual int request(IpcClient& client, const IpcRequest& request, ipc::BodyWriter& reply) = 0;
  // The client disconnected or died: its groups are left on its behalf.
  virtual void client_gone(IpcClient& client) = 0;

 protected:
  ~IpcHandler() = default;
};

class IpcServer {
 public:
  static Result<std::unique_ptr<IpcServer>> start(EventLoop& loop, const std::string& name, const IpcLimits& limits,
                                                  IpcHandler& handler);
  ~IpcServer();
  IpcServer(const IpcServer&) = delete;
  IpcServer& operator=(const IpcServer&) = delete;

  // Sends (or queues) one event, whose body is `body` then `tail` (a payload, sent uncopied from
  // where the ring holds it); a client past its queue limit is disconnected. A small delivery
  // joins the client's batch instead; any other event sends the batch first, so order holds.
  void send_event(IpcClient& client, ipc::EventId id, std::span<const std::byte> body,
                  std::span<const std::byte> tail = {});
  // The same event to each of `clients` (a delivery to a group's local members): the queues of
  // those that have fallen behind hold one copy of it between them.
  void send_event_to_all(std::span<IpcClient* const> clients, ipc::EventId id, std::span<const std::byte> body,
                         std::span<const std::byte> tail = {});
  // At the end of each turn of the ring: what waits in clients' queues goes first, as far as their
  // rings now take it (a client that reads keeps up without waiting for the retry timer), then
  // every client's batch, so no delivery waits longer than its turn.
  // Credit given back is told then too (settle_credit).
  void end_turn();
  // The answer to a request the handler took with kAnswerLater.
  void answer(IpcClient& client, ipc::RequestId id, int error, std::span<const std::byte> body);
  // The client's credit comes back by `bytes` (a kMcastAsync request taken).
  void give_credit(IpcClient& client, std::size_t bytes);
  // An answer tells the client its credit (ipc::McastReply): nothing is owed it then.
  static void credit_told(IpcClient& client) noexcept { client.credit_told = client.credit_taken; }
  // Keeps an asynchronous multicast the ring refused, after the client's others. False: the
  // client sent past its credit window (it is disconnected; the request is not kept).
  bool stage(IpcClient& client, std::span<const std::byte> request);
  // Calls f(client) for each client with staged multicasts (not closing) until f returns false;
  // clients whose staged queue is empty afterwards leave the list. The list's order rotates each
  // call, so no client always goes first when the ring has room for only some.
  template <class F>
  void for_each_staged(F&& f) {
    if (staged_.empty()) return;
    std::rotate(staged_.begin(), staged_.begin() + 1, staged_.end());
    for (IpcClient* client : staged_)
      if (!client->closing && !f(*client)) break;
    std::erase_if(staged_, [](IpcClient* c) {
      if (!c->staged.empty()) return false;
      c->staged_listed = false;
      return true;
    });
  }
  template <class F>
  void for_each_client(F&& f) {
    for (auto& [connection, client] : clients_)
      if (!client->closing) f(*client);
  }
  std::size_t client_count() const noexcept { return clients_.size(); }
  // The first connection of process `pid` that `match` takes (closing ones too), or null.
  template <class F>
  IpcClient* find_client(pid_t pid, F&& match) {
    const auto [first, last] = by_pid_.equal_range(pid);
    for (auto it = first; it != last; ++it)
      if (match(*it->second)) return it->second;
    return nullptr;
  }
  // The client with this generation, if it is still there (not closing).
  IpcClient* find_generation(std::uint64_t generation) {
    const auto found = by_generation_.find(generation);
    return found == by_generation_.end() || found->second->closing ? nullptr : found->second;
  }
  // Who may connect besides root and the daemon's user from now on (sorted, unique): the
  // configuration's and what uidgid.* keys add at run time. Connected clients stay.
  void set_access(std::vector<std::uint32_t> uids, std::vector<std::uint32_t> gids) {
    limits_.allow_uids = std::move(uids);
    limits_.allow_gids = std::move(gids);
  }
  std::uint64_t clients_evicted() const noexcept { return evicted_; }
  std::uint64_t clients_refused() const noexcept { return refused_; }
  const IpcAdmission& admission() const noexcept { return *admission_; }
  // Memory held by the clients' event queues now (what ipc.total_queue_bytes bounds), and the
  // most it ever held.
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
  IpcServer(EventLoop& loop, const IpcLimits& limits, IpcHandler& handler);
  static IpcServer& of(qb_ipcs_connection_t* c);
  static std::int32_t on_accept(qb_ipcs_connection_t* c, uid_t uid, gid_t gid);
  static void on_created(qb_ipcs_connection_t* c);
  static std::int32_t on_message(qb_ipcs_connection_t* c, void* data, std::size_t size);
  static std::int32_t on_closed(qb_ipcs_connection_t* c);
  static void on_destroyed(qb_ipcs_connection_t* c);
  // The response header, then `body`: what libqb returns.
  static ssize_t send_answer(qb_ipcs_connection_t* c, ipc::RequestId id, int error, std::span<const std::byte> body);
  // send_answer to a client. A client waits for each answer it asks for, one at a time: one that
  // finds its response ring full does not read them, and every answer after it would be lost
  // too, so it is cut off there, as a client that does not read its events is.
  void respond(IpcClient& client, ipc::RequestId id, int error, std::span<const std::byte> body);
  // Sends queued events in order until the ring is full again.
  bool drain(IpcClient& client);
  void drain_all();
  // Sends now or queues; with `shared` (a fan-out), the queue holds that copy, made at the first
  // that needs it.
  void send_now(IpcClient& client, std::span<const iovec> iov, std::size_t size, SharedEvent::Handle* shared);
  void flush_batch(IpcClient& client);
  void append_to_batch(IpcClient& client, std::span<const iovec> iov, std::size_t size);
  void tell_credit(IpcClient& client);  // a kCredit event at the end of the client's batch
  // Tells each client owed credit: in its batch when it has one (a busy sender learns it with its
  // deliveries, no wake-up of its own), alone when half a window or more of its requests is
  // unacknowledged (it may be waiting for it: rtotem_mcast's -EAGAIN asks nothing of the daemon).
  void settle_credit();
  void evict(IpcClient& client, const char* why);
  // Makes room under total_queue_bytes for `client` to queue `size` more bytes (by reference:
  // only a record, the block is counted already), dropping the clients furthest behind; false if
  // `client` was the one dropped.
  bool make_room(IpcClient& client, std::size_t size, bool by_reference);
  // Forgets a client's queue and gives its memory back.
  void drop_backlog(IpcClient& client) noexcept;
  void channel_failed(IpcClient& client, int err);

  EventLoop& loop_;
  IpcLimits limits_;
  IpcHandler& handler_;
  std::unique_ptr<IpcAdmission> admission_;  // outlives the service: libqb's hooks are its
  qb_ipcs_service_t* service_ = nullptr;
  // Blocks that backlogs hold by reference (SharedEvent): before clients_, whose backlogs count
  // their blocks out of it when they go.
  std::size_t shared_bytes_ = 0;
  std::map<qb_ipcs_connection_t*, std::unique_ptr<IpcClient>> clients_;
  // Accepted connections' credentials, until created (libqb hands them to on_accept only).
  std::map<qb_ipcs_connection_t*, std::pair<uid_t, gid_t>> accepted_;
  // The same clients by process id (a delivery looks its members up by pid), and those whose
  // queue is not empty (drained at the end of every turn).
  std::unordered_multimap<pid_t, IpcClient*> by_pid_;
  std::unordered_map<std::uint64_t, IpcClient*> by_generation_;  // key store trackers name their owner so
  std::vector<IpcClient*> backlogged_;
  std::vector<IpcClient*> staged_;  // clients with staged multicasts
  std::vector<IpcClient*> credit_owed_;
  ipc::BodyWriter reply_;           // a request's answer, reused: answering allocates nothing
  LoopTimer retry_;  // while some client has a backlog
  std::uint64_t evicted_ = 0;
  std::uint64_t refused_ = 0;         // connections refused: ipc.max_clients reached, or buffers too large
  std::size_t queue_storage_ = 0;     // capacity of every client's backlog
  std::size_t queue_storage_peak_ = 0;
  bool batches_waiting_ = false;
  std::uint64_t batches_sent_ = 0;
  std::uint64_t events_batched_ = 0;
  std::uint64_t requests_async_ = 0;
  std::uint64_t requests_sync_ = 0;
  std::uint64_t credit_events_ = 0;
  std::uint64_t mcasts_staged_ = 0;
  bool destroying_ = false;
  std::uint64_t generations_ = 0;  // in the destructor: clients go without a word to the handler
  std::uint64_t malformed_ = 0;
};

}  // namespace rtotem::daemon
