#include "src/stack/client_table.hpp"

#include <fmt/format.h>
#include <qb/qbipc_common.h>
#include <qb/qblog.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/wire_io.hpp"

namespace rtotem::stack {
namespace {

constexpr std::size_t kCreditEventBytes = sizeof(qb_ipc_response_header) + 8;

qb_ipc_response_header event_header(ipc::EventId id, std::size_t body_size) {
  qb_ipc_response_header header{};
  header.id = static_cast<std::int32_t>(id);
  header.size = static_cast<std::int32_t>(sizeof header + body_size);
  return header;
}

}  // namespace

bool privileged(const LocalClient& client) noexcept { return client.uid == 0 || client.uid == geteuid(); }

ClientTable::ClientTable(const ClientLimits& limits, RequestHandler& handler, std::function<void()> arm_retry)
    : limits_(limits), handler_(handler), arm_retry_(std::move(arm_retry)) {
  backlogged_.reserve(limits.max_clients);  // no allocation when a client falls behind
  staged_.reserve(limits.max_clients);
  credit_owed_.reserve(limits.max_clients);
}

ClientTable::~ClientTable() = default;

LocalClient& ClientTable::add(ClientChannel& channel, pid_t pid, uid_t uid, gid_t gid) {
  const std::uint64_t generation = ++generations_;
  auto client = std::make_unique<LocalClient>(channel, pid, uid, gid, generation);
  client->batch.resize(sizeof(qb_ipc_response_header));  // grows with use, up to ipc::kBatchBytes
  LocalClient& added = *(clients_[generation] = std::move(client));
  by_pid_.emplace(pid, &added);
  handler_.client_connected(added);
  return added;
}

// Once per client, from its host: the handler leaves its groups on its behalf.
void ClientTable::closed(LocalClient& client) {
  client.closing = true;
  if (!destroying_) handler_.client_gone(client);
}

void ClientTable::remove(LocalClient& client) {
  drop_backlog(client);
  std::erase(backlogged_, &client);
  std::erase(staged_, &client);
  std::erase(credit_owed_, &client);
  const auto [first, last] = by_pid_.equal_range(client.pid);
  for (auto it = first; it != last; ++it) {
    if (it->second != &client) continue;
    by_pid_.erase(it);
    break;
  }
  clients_.erase(client.generation);
}

void ClientTable::on_request(LocalClient& client, std::span<const std::byte> message) {
  if (client.closing) return;  // being cut off: asked nothing more
  IpcRequest request;
  ipc::BodyWriter& reply = reply_;
  reply.clear();
  int error = -EINVAL;
  const bool decoded = decode_request(message, request);
  if (request.id == ipc::RequestId::kMcastAsync) {
    ++requests_async_;
    client.async_read += ipc::credit_cost(message.size());
  }
  if (decoded) {
    if (ipc::answered(request.id)) ++requests_sync_;
    error = handler_.request(client, request, reply);
  }
  if (!decoded || error == -EINVAL) {
    ++malformed_;
    ++client.ipc_counts.invalid_requests;
  }
  // Unanswered: its outcome is the delivery, or a kMcastFailed event. One that does not decode
  // (no library sends it) is dropped, its credit given back.
  if (!ipc::answered(request.id)) {
    if (!decoded) give_credit(client, ipc::credit_cost(message.size()));
    return;
  }
  if (error == kAnswerLater) return;
  if (sizeof(qb_ipc_response_header) + reply.data().size() > limits_.buffer_bytes) {  // e.g. members of many groups
    reply.clear();
    error = -EMSGSIZE;
  }
  respond(client, request.id, error, reply.data());
}

void ClientTable::answer(LocalClient& client, ipc::RequestId id, int error, std::span<const std::byte> body) {
  respond(client, id, error, body);
}

void ClientTable::respond(LocalClient& client, ipc::RequestId id, int error, std::span<const std::byte> body) {
  if (client.closing) return;
  if (error == -EAGAIN) ++client.ipc_counts.overloads;
  qb_ipc_response_header response{};
  response.id = static_cast<std::int32_t>(id);
  response.size = static_cast<std::int32_t>(sizeof response + body.size());
  response.error = error;
  const iovec iov[2] = {{&response, sizeof response}, {const_cast<std::byte*>(body.data()), body.size()}};
  const int sent = client.channel.send_answer(std::span(iov, body.empty() ? 1 : 2));
  if (sent == 0) return;
  if (sent == -EAGAIN || sent == -ENOBUFS)
    evict(client, "it does not read its answers (its response ring is full)");
  else
    channel_failed(client, -sent);
}

void ClientTable::send_event(LocalClient& client, ipc::EventId id, std::span<const std::byte> body,
                             std::span<const std::byte> tail) {
  LocalClient* const one[1] = {&client};
  send_event_to_all(one, id, body, tail);
}

void ClientTable::send_event_to_all(std::span<LocalClient* const> clients, ipc::EventId id,
                                    std::span<const std::byte> body, std::span<const std::byte> tail) {
  qb_ipc_response_header header = event_header(id, body.size() + tail.size());
  const iovec iov[3] = {{&header, sizeof header},
                        {const_cast<std::byte*>(body.data()), body.size()},
                        {const_cast<std::byte*>(tail.data()), tail.size()}};
  const std::span<const iovec> parts(iov, tail.empty() ? 2 : 3);
  const std::size_t size = static_cast<std::size_t>(header.size);
  const bool batched = id == ipc::EventId::kDeliver && size <= ipc::kBatchedEventMax;
  SharedEvent::Handle shared;  // made at the first queue that must hold the event, if several may
  for (LocalClient* client : clients) {
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

void ClientTable::end_turn() {
  if (!backlogged_.empty()) drain_all();
  if (!credit_owed_.empty()) settle_credit();
  if (!batches_waiting_) return;
  batches_waiting_ = false;
  for (auto& [generation, client] : clients_) flush_batch(*client);
}

void ClientTable::retry() {
  retry_armed_ = false;
  drain_all();
}

void ClientTable::give_credit(LocalClient& client, std::size_t bytes) {
  client.credit_taken += bytes;
  if (client.credit_owed) return;
  client.credit_owed = true;
  credit_owed_.push_back(&client);
}

void ClientTable::settle_credit() {
  std::erase_if(credit_owed_, [this](LocalClient* client) {
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
void ClientTable::tell_credit(LocalClient& client) {
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
void ClientTable::append_to_batch(LocalClient& client, std::span<const iovec> iov, std::size_t size) {
  if (client.batch.capacity() < client.batch.size() + size)
    client.batch.reserve(std::min(ipc::kBatchBytes, std::max(2 * client.batch.capacity(), client.batch.size() + size)));
  append_iov(client.batch, iov);
}

bool ClientTable::stage(LocalClient& client, std::span<const std::byte> request) {
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

void ClientTable::flush_batch(LocalClient& client) {
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

void ClientTable::send_now(LocalClient& client, std::span<const iovec> iov, std::size_t size,
                           SharedEvent::Handle* shared) {
  if (client.closing) return;
  if (client.backlog.empty()) {
    const int sent = client.channel.send_event(iov);
    if (sent == 0) {
      ++client.ipc_counts.sent;
      return;
    }
    if (sent != -EAGAIN && sent != -ENOBUFS) {
      channel_failed(client, -sent);
      return;
    }
  }
  if (client.backlog.bytes() + size > limits_.client_queue_bytes) {
    evict(client, "it does not read its events (ipc.client_queue_bytes reached)");
    return;
  }
  if (shared != nullptr && !*shared) *shared = SharedEvent::copy_of(iov, size, shared_bytes_);
  if (!make_room(client, size, shared != nullptr)) return;
  if (client.backlog.empty()) {
    backlogged_.push_back(&client);
    client.ipc_counts.sent = 0;  // Corosync's count starts again with each queue
  }
  const std::size_t before = client.backlog.capacity();
  if (shared != nullptr)
    client.backlog.push_shared(*shared->get());
  else
    client.backlog.push(iov, size);
  queue_storage_ += client.backlog.capacity() - before;
  queue_storage_peak_ = std::max(queue_storage_peak_, queue_memory());
  want_retry();
}

void ClientTable::want_retry() {
  if (retry_armed_) return;
  retry_armed_ = true;
  arm_retry_();
}

// First the storage of queues that have drained (kept only to spare the next allocation), then
// whole clients, the one furthest behind first, as it would have gone at its own limit: the
// memory of all of them stays within the budget. (A block that other queues share is freed only
// with the last of them.)
bool ClientTable::make_room(LocalClient& client, std::size_t size, bool by_reference) {
  // What the push adds: asked again after each step, since dropping storage changes it.
  const auto growth = [&] {
    return (by_reference ? client.backlog.capacity_after_push_shared() : client.backlog.capacity_after_push(size)) -
           client.backlog.capacity();
  };
  const auto fits = [&] { return queue_memory() + growth() <= limits_.total_queue_bytes; };
  if (fits()) return true;
  for (auto& [generation, other] : clients_)
    if (other->backlog.empty()) drop_backlog(*other);
  while (!fits()) {
    LocalClient* largest = &client;
    std::size_t largest_bytes = client.backlog.bytes() + size;
    for (auto& [generation, other] : clients_) {
      if (other->backlog.bytes() > largest_bytes) {
        largest = other.get();
        largest_bytes = other->backlog.bytes();
      }
    }
    const std::string why = fmt::format(
        "the event queues of all clients reached ipc.total_queue_bytes ({}) and "
        "it is furthest behind ({} bytes)",
        limits_.total_queue_bytes, largest_bytes);
    evict(*largest, why.c_str());
    if (largest == &client) return false;
  }
  return true;
}

void ClientTable::drop_backlog(LocalClient& client) noexcept {
  queue_storage_ -= client.backlog.capacity();
  client.backlog.clear();
}

bool ClientTable::drain(LocalClient& client) {
  while (!client.backlog.empty() && !client.closing) {
    const std::span<const std::byte> event = client.backlog.front();
    const iovec iov[1] = {{const_cast<std::byte*>(event.data()), event.size()}};
    const int sent = client.channel.send_event(iov);
    if (sent == -EAGAIN || sent == -ENOBUFS) return false;
    if (sent < 0) {
      channel_failed(client, -sent);
      return true;
    }
    client.backlog.pop();
    ++client.ipc_counts.sent;
  }
  if (client.backlog.empty()) client.ipc_counts.sent = 0;
  return true;
}

// Only the clients with a queue: a thousand idle ones cost nothing here. drain() may close a
// client (its channel failed) but removes none, so the list holds still while it is walked.
void ClientTable::drain_all() {
  std::size_t waiting = 0;
  for (LocalClient* client : backlogged_)
    if (!drain(*client)) backlogged_[waiting++] = client;
  backlogged_.resize(waiting);
  if (waiting > 0) want_retry();
}

// A client that exited has a closed channel until its host tells us (closed()): no warning for
// that, only for a channel that broke under a live client.
void ClientTable::channel_failed(LocalClient& client, int err) {
  if (err == ENOTCONN || err == EPIPE || err == ECONNRESET) {
    qb_log(LOG_DEBUG, "client pid %d has gone", static_cast<int>(client.pid));
    client.closing = true;
    drop_backlog(client);
    return;
  }
  evict(client, fmt::format("its channel failed: {}", std::strerror(err)).c_str());
}

void ClientTable::evict(LocalClient& client, const char* why) {
  qb_log(LOG_WARNING, "disconnecting client pid %d (uid %u): %s", static_cast<int>(client.pid),
         static_cast<unsigned>(client.uid), why);
  client.closing = true;
  drop_backlog(client);
  ++evicted_;
  client.channel.disconnect();  // later: the caller may be walking the list that changes
}

}  // namespace rtotem::stack
