#include "src/services/staging/mcast_staging.hpp"

#include <qb/qblog.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rtotem::staging {

using groups::GroupService;

int errno_of(Status status) {
  switch (status) {
    case Status::kOk: return 0;
    case Status::kTooLarge: return -EMSGSIZE;
    case Status::kClosed: return -ESHUTDOWN;
    default: return -EAGAIN;  // the ring's back-pressure: the client retries
  }
}

McastStaging::McastStaging(GroupService& groups, stack::ClientTable& clients, std::size_t max_message_size,
                           std::function<bool()> in_sync)
    : groups_(groups), clients_(clients), max_message_size_(max_message_size), in_sync_(std::move(in_sync)) {}

int McastStaging::check(const LocalClient& client, const IpcRequest& request) const {
  if (!client.groups.contains(request.group)) return -ENOTCONN;  // as cpg_mcast_joined: join first
  // Left, the leave not delivered yet: as corosync's LEAVE_STARTED. Sent after it, the message
  // would reach the others from a process they saw leave (and report it joining again).
  if (groups_.leave_in_flight(request.group, static_cast<std::uint32_t>(client.pid))) return -ENOTCONN;
  if (request.data.size() > GroupService::data_max(max_message_size_)) return -EMSGSIZE;
  return 0;
}

void McastStaging::put_credit(const LocalClient& client, ipc::BodyWriter& reply) const {
  reply.u32(ipc::kMcastWindow);
  reply.u64(client.credit_taken);
  reply.u32(static_cast<std::uint32_t>(GroupService::data_max(max_message_size_)));
}

// Every library reads a kMcast or kSync answer's credit: no kCredit event need repeat it.
void McastStaging::put_reply(LocalClient& client, ipc::BodyWriter& reply) const {
  put_credit(client, reply);
  stack::ClientTable::credit_told(client);
}

// Answered with its outcome and, whatever that is, the credit (after the staged ones went).
int McastStaging::multicast(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) {
  int rc = check(client, request);
  if (rc == 0 && (!in_sync_() || !submit_staged(client))) rc = -EAGAIN;
  if (rc == 0)
    rc = errno_of(groups_.multicast(request.group, static_cast<std::uint32_t>(client.pid), request.data, request.order,
                                    request.piece));
  put_reply(client, reply);
  return rc;
}

void McastStaging::multicast_async(LocalClient& client, const IpcRequest& request) {
  if (const int rc = check(client, request); rc != 0) {
    failed(client, request, rc);
    return;
  }
  if (client.staged.empty() && offer(&client, static_cast<std::uint32_t>(client.pid), request)) return;
  (void)clients_.stage(client, request.message);  // refused: past its window, the client is cut off (logged)
}

// Answered once every earlier request is taken: they were read before this one, and what the ring
// refused is staged, bound for it whatever the client does next.
int McastStaging::sync(LocalClient& client, ipc::BodyWriter& reply) {
  (void)submit_staged(client);
  put_reply(client, reply);
  return 0;
}

bool McastStaging::offer(LocalClient* client, std::uint32_t pid, const IpcRequest& request) {
  if (!in_sync_()) return false;  // as the ring's back-pressure: staged, offered again later
  const int rc = errno_of(groups_.multicast(request.group, pid, request.data, request.order, request.piece));
  if (rc == -EAGAIN) return false;
  if (client == nullptr) return true;  // orphaned: no one to credit or tell
  if (rc != 0)
    failed(*client, request, rc);
  else
    clients_.give_credit(*client, ipc::credit_cost(request.message.size()));
  return true;
}

// Taken (its credit comes back), but not multicast: the client hears which group and why.
void McastStaging::failed(LocalClient& client, const IpcRequest& request, int error) {
  clients_.give_credit(client, ipc::credit_cost(request.message.size()));
  event_.clear();
  event_.u32(static_cast<std::uint32_t>(error));
  event_.string(request.group);
  clients_.send_event(client, ipc::EventId::kMcastFailed, event_.data());
}

bool McastStaging::submit_staged(LocalClient& client) {
  while (!client.staged.empty()) {
    IpcRequest request;
    (void)decode_request(client.staged.front(), request);  // it decoded when it came
    if (!offer(&client, static_cast<std::uint32_t>(client.pid), request)) return false;
    client.staged.pop();
  }
  return true;
}

bool McastStaging::leave_waiting(std::string_view group, std::uint32_t pid) const {
  return std::ranges::any_of(pending_leaves_, [&](const auto& l) { return l.first == group && l.second == pid; });
}

void McastStaging::client_gone(LocalClient& client) {
  orphan(client);  // its multicasts go before its leaves, as it sent them before
  // Taken out first: a leave may be delivered inside the submit, and that edits client.groups.
  const auto groups = std::exchange(client.groups, {});
  for (const std::string& group : groups) {
    if (pending_leaves_.empty() && orphaned_.empty() &&
        groups_.leave(group, static_cast<std::uint32_t>(client.pid), groups::Reason::kProcDown) == Status::kOk)
      continue;
    pending_leaves_.emplace_back(group, static_cast<std::uint32_t>(client.pid));
  }
}

void McastStaging::after_turn() {
  submit_orphaned();
  while (orphaned_.empty() && !pending_leaves_.empty()) {
    const auto& [group, pid] = pending_leaves_.front();
    if (groups_.leave(group, pid, groups::Reason::kProcDown) != Status::kOk) break;
    pending_leaves_.pop_front();
  }
  clients_.for_each_staged([this](LocalClient& client) { return submit_staged(client); });
}

// Bounded: past kOrphanedMax, a departed client's staged multicasts are dropped (as if it had
// crashed before sending them), with a warning. A clean disconnect waits for its messages to be
// taken, not for room on the ring, so it is many such clients while the ring is stalled.
void McastStaging::orphan(LocalClient& client) {
  if (!client.staged.empty() && orphaned_.bytes() + client.staged.bytes() > kOrphanedMax) {
    qb_log(LOG_WARNING,
           "dropped %zu multicasts of departed client pid %d: departed clients' multicasts waiting "
           "for the ring exceed %zu bytes",
           client.staged.count(), static_cast<int>(client.pid), kOrphanedMax);
    orphans_dropped_ += client.staged.count();
    client.staged.clear();
    return;
  }
  while (!client.staged.empty()) {
    const std::span<const std::byte> request = client.staged.front();
    std::uint32_t pid = static_cast<std::uint32_t>(client.pid);
    const iovec iov[2] = {{&pid, sizeof pid}, {const_cast<std::byte*>(request.data()), request.size()}};
    orphaned_.push(iov, sizeof pid + request.size());
    client.staged.pop();
  }
}

void McastStaging::submit_orphaned() {
  while (!orphaned_.empty()) {
    const std::span<const std::byte> record = orphaned_.front();
    std::uint32_t pid = 0;
    std::memcpy(&pid, record.data(), sizeof pid);
    IpcRequest request;
    (void)decode_request(record.subspan(sizeof pid), request);
    if (!offer(nullptr, pid, request)) return;
    orphaned_.pop();
  }
  orphaned_.clear();  // its storage back: orphans are rare
}

}  // namespace rtotem::staging
