#include "src/daemon/ipc_server.hpp"

#include <fmt/format.h>
#include <qb/qbipc_common.h>
#include <qb/qblog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>

namespace rtotem::daemon {
namespace {

constexpr std::uint64_t kRetryNs = 5'000'000;  // a client's full event ring is tried again this often
constexpr std::size_t kCreditEventBytes = sizeof(qb_ipc_response_header) + 8;

qb_ipc_response_header event_header(ipc::EventId id, std::size_t body_size) {
  qb_ipc_response_header header{};
  header.id = static_cast<std::int32_t>(id);
  header.size = static_cast<std::int32_t>(sizeof header + body_size);
  return header;
}

void append(std::vector<std::byte>& out, std::span<const iovec> iov) {
  for (const iovec& part : iov) {
    const auto* bytes = static_cast<const std::byte*>(part.iov_base);
    out.insert(out.end(), bytes, bytes + part.iov_len);
  }
}

}  // namespace

IpcServer::IpcServer(EventLoop& loop, const IpcLimits& limits, IpcHandler& handler)
    : loop_(loop), limits_(limits), handler_(handler), retry_(loop, [this] { drain_all(); }) {}

Result<std::unique_ptr<IpcServer>> IpcServer::start(EventLoop& loop, const std::string& name, const IpcLimits& limits,
                                                    IpcHandler& handler) {
  std::unique_ptr<IpcServer> server(new IpcServer(loop, limits, handler));
  server->admission_ = IpcAdmission::create(loop);
  qb_ipcs_service_handlers handlers{on_accept, on_created, on_message, on_closed, on_destroyed};
  server->service_ = qb_ipcs_create(name.c_str(), 0, QB_IPC_SHM, &handlers);
  if (server->service_ == nullptr) return Error::sys(errno, "IPC service '{}'", name);
  qb_ipcs_poll_handlers poll = server->admission_->handlers();
  qb_ipcs_poll_handlers_set(server->service_, &poll);
  qb_ipcs_service_context_set(server->service_, server.get());
  qb_ipcs_enforce_buffer_size(server->service_, static_cast<std::uint32_t>(limits.buffer_bytes));
  // Up to 50 requests of a connection per dispatch, not libqb's default 5 (asynchronous senders
  // keep their request rings full), and never more than the client has announced: IpcAdmission's
  // take_request(). The loop level of the connections is IpcAdmission's, whatever this says.
  qb_ipcs_request_rate_limit(server->service_, QB_IPCS_RATE_FAST);
  server->backlogged_.reserve(limits.max_clients);  // no allocation when a client falls behind
  server->staged_.reserve(limits.max_clients);
  server->credit_owed_.reserve(limits.max_clients);
  if (const int rc = qb_ipcs_run(server->service_); rc != 0) {
    server->service_ = nullptr;  // qb_ipcs_run destroyed it
    return Error::sys(-rc, "IPC service '{}' (another daemon with this --ipc-name?)", name);
  }
  return server;
}

// Destroying the service disconnects every client: nothing is reported to the handler then,
// which may be half destroyed itself (the daemon's members go in reverse order).
IpcServer::~IpcServer() {
  destroying_ = true;
  admission_->close_unauthenticated();  // libqb would keep them (and their memory) past the end
  if (service_ != nullptr) qb_ipcs_destroy(service_);
}

IpcServer& IpcServer::of(qb_ipcs_connection_t* c) {
  return *static_cast<IpcServer*>(qb_ipcs_connection_service_context_get(c));
}

// Root, the daemon's own user, and the users and groups the config allows may connect (as
// corosync: its uidgid sections and files). Anyone else is refused, with a log line.
std::int32_t IpcServer::on_accept(qb_ipcs_connection_t* c, uid_t uid, gid_t gid) {
  IpcServer& self = of(c);
  const auto allowed = [](const std::vector<std::uint32_t>& ids, std::uint32_t id) {
    return std::binary_search(ids.begin(), ids.end(), id);
  };
  if (uid != 0 && uid != geteuid()) {
    if (!allowed(self.limits_.allow_uids, uid) && !allowed(self.limits_.allow_gids, gid)) {
      qb_log(LOG_WARNING, "IPC client uid %u gid %u refused: not root, not this daemon's user, not in "
             "ipc.allow_uid/allow_gid or a uidgid section", static_cast<unsigned>(uid), static_cast<unsigned>(gid));
      return -EACCES;
    }
    // The connection's shared memory is the daemon's (root's): the client's group may use it.
    qb_ipcs_connection_auth_set(c, -1, gid, S_IRUSR | S_IWUSR | S_IRGRP | S_IWGRP);
  }
  // libqb sizes a connection's rings by the larger of the client's wish and ours, and allocates
  // them whole: a client that asks for more than we use (or than an older librtotem asked for)
  // is refused before they exist. The size is unsigned: 2 GiB and more read negative as int32.
  const auto asked = static_cast<std::uint32_t>(qb_ipcs_connection_get_buffer_size(c));
  if (asked > std::max(self.limits_.buffer_bytes, ipc::kLegacyClientBufferBytes)) {
    ++self.refused_;
    qb_log(LOG_WARNING, "IPC client uid %u refused: it asked for %u-byte buffers, above this daemon's %zu "
           "(totem.max_message_size plus room)", static_cast<unsigned>(uid), asked, self.limits_.buffer_bytes);
    return -EMSGSIZE;
  }
  if (self.clients_.size() >= self.limits_.max_clients) {
    ++self.refused_;
    qb_log(LOG_WARNING, "IPC client uid %u refused: ipc.max_clients (%zu) reached", static_cast<unsigned>(uid),
           self.limits_.max_clients);
    return -EMFILE;
  }
  const int rc = self.handler_.accept_client();
  if (rc == 0) self.accepted_[c] = {uid, gid};
  return rc;
}

void IpcServer::on_created(qb_ipcs_connection_t* c) {
  IpcServer& self = of(c);
  auto client = std::make_unique<IpcClient>();
  client->connection = c;
  client->generation = ++self.generations_;
  client->batch.resize(sizeof(qb_ipc_response_header));  // grows with use, up to ipc::kBatchBytes
  qb_ipcs_connection_stats stats{};
  if (qb_ipcs_connection_stats_get(c, &stats, QB_FALSE) == 0) client->pid = stats.client_pid;
  if (const auto it = self.accepted_.find(c); it != self.accepted_.end()) {
    std::tie(client->uid, client->gid) = it->second;
    self.accepted_.erase(it);
  }
  IpcClient& added = *(self.clients_[c] = std::move(client));
  self.by_pid_.emplace(added.pid, &added);
  self.by_generation_.emplace(added.generation, &added);
  self.handler_.client_connected(added);
}

std::int32_t IpcServer::on_message(qb_ipcs_connection_t* c, void* data, std::size_t size) {
  IpcServer& self = of(c);
  // Negative stops libqb's batch after this request (it is taken all the same).
  const std::int32_t next = self.admission_->take_request() ? 0 : -ENOBUFS;
  const auto found = self.clients_.find(c);
  if (found != self.clients_.end() && found->second->closing) return next;  // being cut off: asked nothing more
  IpcRequest request;
  ipc::BodyWriter& reply = self.reply_;
  reply.clear();
  int error = -EINVAL;
  const bool decoded =
      found != self.clients_.end() && decode_request({static_cast<const std::byte*>(data), size}, request);
  if (found != self.clients_.end() && request.id == ipc::RequestId::kMcastAsync) {
    ++self.requests_async_;
    found->second->async_read += ipc::credit_cost(size);
  }
  if (!decoded) {
    ++self.malformed_;
  } else {
    if (ipc::answered(request.id)) ++self.requests_sync_;
    error = self.handler_.request(*found->second, request, reply);
    if (error == -EINVAL) ++self.malformed_;
  }
  // Unanswered: its outcome is the delivery, or a kMcastFailed event. One that does not decode
  // (no library sends it) is dropped, its credit given back.
  if (!ipc::answered(request.id)) {
    if (!decoded && found != self.clients_.end()) self.give_credit(*found->second, ipc::credit_cost(size));
    return next;
  }
  if (error == kAnswerLater) return next;
  if (sizeof(qb_ipc_response_header) + reply.data().size() > self.limits_.buffer_bytes) {  // e.g. members of many groups
    reply.clear();
    error = -EMSGSIZE;
  }
  if (found != self.clients_.end()) self.respond(*found->second, request.id, error, reply.data());
  else (void)send_answer(c, request.id, error, reply.data());
  return next;
}

void IpcServer::answer(IpcClient& client, ipc::RequestId id, int error, std::span<const std::byte> body) {
  respond(client, id, error, body);
}

ssize_t IpcServer::send_answer(qb_ipcs_connection_t* c, ipc::RequestId id, int error, std::span<const std::byte> body) {
  qb_ipc_response_header response{};
  response.id = static_cast<std::int32_t>(id);
  response.size = static_cast<std::int32_t>(sizeof response + body.size());
  response.error = error;
  iovec iov[2] = {{&response, sizeof response}, {const_cast<std::byte*>(body.data()), body.size()}};
  return qb_ipcs_response_sendv(c, iov, body.empty() ? 1 : 2);
}

void IpcServer::respond(IpcClient& client, ipc::RequestId id, int error, std::span<const std::byte> body) {
  if (client.closing) return;
  const ssize_t sent = send_answer(client.connection, id, error, body);
  if (sent >= 0) return;
  if (sent == -EAGAIN || sent == -ENOBUFS) evict(client, "it does not read its answers (its response ring is full)");
  else channel_failed(client, static_cast<int>(-sent));
}

std::int32_t IpcServer::on_closed(qb_ipcs_connection_t* c) {
  IpcServer& self = of(c);
  if (const auto found = self.clients_.find(c); found != self.clients_.end()) {
    found->second->closing = true;
    if (!self.destroying_) self.handler_.client_gone(*found->second);
  }
  return 0;
}

void IpcServer::on_destroyed(qb_ipcs_connection_t* c) {
  IpcServer& self = of(c);
  self.accepted_.erase(c);
  const auto found = self.clients_.find(c);
  if (found == self.clients_.end()) return;
  IpcClient* client = found->second.get();
  self.drop_backlog(*client);
  std::erase(self.backlogged_, client);
  std::erase(self.staged_, client);
  std::erase(self.credit_owed_, client);
  const auto [first, last] = self.by_pid_.equal_range(client->pid);
  for (auto it = first; it != last; ++it) {
    if (it->second != client) continue;
    self.by_pid_.erase(it);
    break;
  }
  self.by_generation_.erase(client->generation);
  self.clients_.erase(found);
}

void IpcServer::send_event(IpcClient& client, ipc::EventId id, std::span<const std::byte> body,
                           std::span<const std::byte> tail) {
  IpcClient* const one[1] = {&client};
  send_event_to_all(one, id, body, tail);
}

void IpcServer::send_event_to_all(std::span<IpcClient* const> clients, ipc::EventId id,
                                  std::span<const std::byte> body, std::span<const std::byte> tail) {
  qb_ipc_response_header header = event_header(id, body.size() + tail.size());
  const iovec iov[3] = {{&header, sizeof header},
                        {const_cast<std::byte*>(body.data()), body.size()},
                        {const_cast<std::byte*>(tail.data()), tail.size()}};
  const std::span<const iovec> parts(iov, tail.empty() ? 2 : 3);
  const std::size_t size = static_cast<std::size_t>(header.size);
  const bool batched = id == ipc::EventId::kDeliver && size <= ipc::kBatchedEventMax;
  SharedEvent::Handle shared;  // made at the first queue that must hold the event, if several may
  for (IpcClient* client : clients) {
    if (client->closing) continue;
    if (!batched) {
      flush_batch(*client);
      send_now(*client, parts, size, clients.size() > 1 ? &shared : nullptr);
      continue;
    }
    if (client->batch.size() + size > ipc::kBatchBytes - kCreditEventBytes) flush_batch(*client);
    append_to_batch(*client, parts, size);
    ++events_batched_;
    batches_waiting_ = true;
  }
}

void IpcServer::end_turn() {
  if (!backlogged_.empty()) drain_all();
  if (!credit_owed_.empty()) settle_credit();
  if (!batches_waiting_) return;
  batches_waiting_ = false;
  for (auto& [connection, client] : clients_) flush_batch(*client);
}

void IpcServer::give_credit(IpcClient& client, std::size_t bytes) {
  client.credit_taken += bytes;
  if (client.credit_owed) return;
  client.credit_owed = true;
  credit_owed_.push_back(&client);
}

void IpcServer::settle_credit() {
  std::erase_if(credit_owed_, [this](IpcClient* client) {
    const bool told = client->closing || client->credit_told == client->credit_taken;
    if (!told) {
      const bool has_batch = client->batch.size() > sizeof(qb_ipc_response_header);
      if (!has_batch && client->async_read - client->credit_told < ipc::kMcastWindow / 2) return false;
      tell_credit(*client);
    }
    client->credit_owed = false;
    return true;
  });
}

// Batches leave room for it (kCreditEventBytes): appending never grows one past kBatchBytes.
void IpcServer::tell_credit(IpcClient& client) {
  std::byte taken[8];
  WireWriter body(taken);
  body.put_u64(client.credit_taken);
  qb_ipc_response_header header = event_header(ipc::EventId::kCredit, sizeof taken);
  const iovec iov[2] = {{&header, sizeof header}, {taken, sizeof taken}};
  append_to_batch(client, iov, kCreditEventBytes);
  client.credit_told = client.credit_taken;
  batches_waiting_ = true;
  ++credit_events_;
}

// Doubling, but never past a batch: an idle client costs little, a busy one kBatchBytes.
void IpcServer::append_to_batch(IpcClient& client, std::span<const iovec> iov, std::size_t size) {
  if (client.batch.capacity() < client.batch.size() + size)
    client.batch.reserve(std::min(ipc::kBatchBytes, std::max(2 * client.batch.capacity(), client.batch.size() + size)));
  append(client.batch, iov);
}

bool IpcServer::stage(IpcClient& client, std::span<const std::byte> request) {
  if (client.staged.bytes() + request.size() > ipc::kMcastWindow) {
    evict(client, "it sent asynchronous multicasts past its credit window");
    return false;
  }
  if (!client.staged_listed) {
    client.staged_listed = true;
    staged_.push_back(&client);
  }
  const iovec iov[1] = {{const_cast<std::byte*>(request.data()), request.size()}};
  client.staged.push(iov, request.size());
  ++mcasts_staged_;
  return true;
}

void IpcServer::flush_batch(IpcClient& client) {
  constexpr std::size_t kHeader = sizeof(qb_ipc_response_header);
  if (client.batch.size() == kHeader) return;
  if (!client.closing) {
    const qb_ipc_response_header header = event_header(ipc::EventId::kBatch, client.batch.size() - kHeader);
    std::memcpy(client.batch.data(), &header, kHeader);
    ++batches_sent_;
    const iovec iov[1] = {{client.batch.data(), client.batch.size()}};
    send_now(client, iov, client.batch.size(), nullptr);
  }
  client.batch.resize(kHeader);
}

void IpcServer::send_now(IpcClient& client, std::span<const iovec> iov, std::size_t size,
                         SharedEvent::Handle* shared) {
  if (client.closing) return;
  if (client.backlog.empty()) {
    const ssize_t sent = qb_ipcs_event_sendv(client.connection, iov.data(), iov.size());
    if (sent >= 0) return;
    if (sent != -EAGAIN && sent != -ENOBUFS) {
      channel_failed(client, static_cast<int>(-sent));
      return;
    }
  }
  if (client.backlog.bytes() + size > limits_.client_queue_bytes) {
    evict(client, "it does not read its events (ipc.client_queue_bytes reached)");
    return;
  }
  if (shared != nullptr && !*shared) *shared = SharedEvent::copy_of(iov, size, shared_bytes_);
  if (!make_room(client, size, shared != nullptr)) return;
  if (client.backlog.empty()) backlogged_.push_back(&client);
  const std::size_t before = client.backlog.capacity();
  if (shared != nullptr) client.backlog.push_shared(*shared->get());
  else client.backlog.push(iov, size);
  queue_storage_ += client.backlog.capacity() - before;
  queue_storage_peak_ = std::max(queue_storage_peak_, queue_memory());
  if (!retry_.armed()) retry_.arm(kRetryNs);
}

// First the storage of queues that have drained (kept only to spare the next allocation), then
// whole clients, the one furthest behind first, as it would have gone at its own limit: the
// memory of all of them stays within the budget. (A block that other queues share is freed only
// with the last of them.)
bool IpcServer::make_room(IpcClient& client, std::size_t size, bool by_reference) {
  // What the push adds: asked again after each step, since dropping storage changes it.
  const auto growth = [&] {
    return (by_reference ? client.backlog.capacity_after_push_shared() : client.backlog.capacity_after_push(size)) -
           client.backlog.capacity();
  };
  const auto fits = [&] { return queue_memory() + growth() <= limits_.total_queue_bytes; };
  if (fits()) return true;
  for (auto& [connection, other] : clients_)
    if (other->backlog.empty()) drop_backlog(*other);
  while (!fits()) {
    IpcClient* largest = &client;
    std::size_t largest_bytes = client.backlog.bytes() + size;
    for (auto& [connection, other] : clients_) {
      if (other->backlog.bytes() > largest_bytes) {
        largest = other.get();
        largest_bytes = other->backlog.bytes();
      }
    }
    const std::string why = fmt::format("the event queues of all clients reached ipc.total_queue_bytes ({}) and "
                                        "it is furthest behind ({} bytes)", limits_.total_queue_bytes, largest_bytes);
    evict(*largest, why.c_str());
    if (largest == &client) return false;
  }
  return true;
}

void IpcServer::drop_backlog(IpcClient& client) noexcept {
  queue_storage_ -= client.backlog.capacity();
  client.backlog.clear();
}

bool IpcServer::drain(IpcClient& client) {
  while (!client.backlog.empty() && !client.closing) {
    const std::span<const std::byte> event = client.backlog.front();
    const ssize_t sent = qb_ipcs_event_send(client.connection, event.data(), event.size());
    if (sent == -EAGAIN || sent == -ENOBUFS) return false;
    if (sent < 0) {
      channel_failed(client, static_cast<int>(-sent));
      return true;
    }
    client.backlog.pop();
  }
  return true;
}

// Only the clients with a queue: a thousand idle ones cost nothing here. drain() may close a
// client (its channel failed) but destroys none, so the list holds still while it is walked.
void IpcServer::drain_all() {
  std::size_t waiting = 0;
  for (IpcClient* client : backlogged_)
    if (!drain(*client)) backlogged_[waiting++] = client;
  backlogged_.resize(waiting);
  if (waiting > 0 && !retry_.armed()) retry_.arm(kRetryNs);
}

// A client that exited has a closed channel until libqb tells us (on_closed): no warning for
// that, only for a channel that broke under a live client.
void IpcServer::channel_failed(IpcClient& client, int err) {
  if (err == ENOTCONN || err == EPIPE || err == ECONNRESET) {
    qb_log(LOG_DEBUG, "client pid %d has gone", static_cast<int>(client.pid));
    client.closing = true;
    drop_backlog(client);
    return;
  }
  evict(client, fmt::format("its channel failed: {}", std::strerror(err)).c_str());
}

void IpcServer::evict(IpcClient& client, const char* why) {
  qb_log(LOG_WARNING, "disconnecting client pid %d (uid %u): %s", static_cast<int>(client.pid),
         static_cast<unsigned>(client.uid), why);
  client.closing = true;
  drop_backlog(client);
  ++evicted_;
  // Later, not now: the caller may be walking the client list that disconnecting changes.
  // By generation too: the connection's address may belong to a new client by then.
  qb_ipcs_connection_t* connection = client.connection;
  const std::uint64_t generation = client.generation;
  loop_.post([this, connection, generation] {
    const auto found = clients_.find(connection);
    if (found != clients_.end() && found->second->generation == generation)
      qb_ipcs_disconnect(connection);  // on_closed leaves its groups
  });
}

}  // namespace rtotem::daemon
