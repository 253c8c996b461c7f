// Where a client's multicast enters the ring. kMcast is answered with its outcome; kMcastAsync is
// not: the library sent it within its credit window, and the daemon owes it either the ring or a
// kMcastFailed event. What the ring refuses for now (back-pressure) is staged per client, in
// order, and retried after every turn; a client's later join, leave or answered multicast waits
// for its staged ones (FIFO per client). When a client goes, its staged multicasts are orphaned,
// still in order, and go on the ring before its leaves do.
#include <qb/qblog.h>
#include <sys/uio.h>

#include <cstring>

#include "src/daemon/daemon.hpp"

namespace rtotem::daemon {

using groups::GroupService;

int Daemon::mcast_check(const LocalClient& client, const IpcRequest& request) const {
  if (!client.groups.contains(request.group)) return -ENOTCONN;  // as cpg_mcast_joined: join first
  // Left, the leave not delivered yet: as corosync's LEAVE_STARTED. Sent after it, the message
  // would reach the others from a process they saw leave (and report it joining again).
  if (groups_->leave_in_flight(request.group, static_cast<std::uint32_t>(client.pid))) return -ENOTCONN;
  if (request.data.size() > GroupService::data_max(setup_.totem.max_message_size)) return -EMSGSIZE;
  return 0;
}

// kMcast's answer body (ipc_protocol.hpp).
void Daemon::put_credit(const LocalClient& client, ipc::BodyWriter& reply) const {
  reply.u32(ipc::kMcastWindow);
  reply.u64(client.credit_taken);
  reply.u32(static_cast<std::uint32_t>(GroupService::data_max(setup_.totem.max_message_size)));
}

// Every library reads a kMcast or kSync answer's credit: no kCredit event need repeat it.
void Daemon::put_mcast_reply(LocalClient& client, ipc::BodyWriter& reply) const {
  put_credit(client, reply);
  stack::ClientTable::credit_told(client);
}

// Answered with its outcome and, whatever that is, the credit (after the staged ones went).
int Daemon::multicast(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) {
  int rc = mcast_check(client, request);
  if (rc == 0 && (!ring_in_sync() || !submit_staged(client))) rc = -EAGAIN;
  if (rc == 0)
    rc = errno_of(groups_->multicast(request.group, static_cast<std::uint32_t>(client.pid), request.data, request.order,
                                      request.piece));
  put_mcast_reply(client, reply);
  return rc;
}

void Daemon::multicast_async(LocalClient& client, const IpcRequest& request) {
  if (const int rc = mcast_check(client, request); rc != 0) {
    async_failed(client, request, rc);
    return;
  }
  if (client.staged.empty() && offer(&client, static_cast<std::uint32_t>(client.pid), request)) return;
  (void)clients_->stage(client, request.message);  // refused: past its window, the client is cut off (logged)
}

// Answered once every earlier request is taken: they were read before this one, and what the ring
// refused is staged, bound for it whatever the client does next.
int Daemon::sync(LocalClient& client, ipc::BodyWriter& reply) {
  (void)submit_staged(client);
  put_mcast_reply(client, reply);
  return 0;
}

bool Daemon::offer(LocalClient* client, std::uint32_t pid, const IpcRequest& request) {
  if (!ring_in_sync()) return false;  // as the ring's back-pressure: staged, offered again later
  const int rc = errno_of(groups_->multicast(request.group, pid, request.data, request.order, request.piece));
  if (rc == -EAGAIN) return false;
  if (client == nullptr) return true;  // orphaned: no one to credit or tell
  if (rc != 0) async_failed(*client, request, rc);
  else clients_->give_credit(*client, ipc::credit_cost(request.message.size()));
  return true;
}

// Taken (its credit comes back), but not multicast: the client hears which group and why.
void Daemon::async_failed(LocalClient& client, const IpcRequest& request, int error) {
  clients_->give_credit(client, ipc::credit_cost(request.message.size()));
  ipc::BodyWriter& body = event_head_;
  body.clear();
  body.u32(static_cast<std::uint32_t>(error));
  body.string(request.group);
  clients_->send_event(client, ipc::EventId::kMcastFailed, body.data());
}

bool Daemon::submit_staged(LocalClient& client) {
  while (!client.staged.empty()) {
    IpcRequest request;
    (void)decode_request(client.staged.front(), request);  // it decoded when it came
    if (!offer(&client, static_cast<std::uint32_t>(client.pid), request)) return false;
    client.staged.pop();
  }
  return true;
}

// Bounded: past kOrphanedMax, a departed client's staged multicasts are dropped (as if it had
// crashed before sending them), with a warning. A clean disconnect waits for its messages to be
// taken, not for room on the ring, so it is many such clients while the ring is stalled.
void Daemon::orphan_staged(LocalClient& client) {
  if (!client.staged.empty() && orphaned_.bytes() + client.staged.bytes() > kOrphanedMax) {
    qb_log(LOG_WARNING, "dropped %zu multicasts of departed client pid %d: departed clients' multicasts waiting "
           "for the ring exceed %zu bytes", client.staged.count(), static_cast<int>(client.pid), kOrphanedMax);
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

void Daemon::submit_orphaned() {
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

}  // namespace rtotem::daemon
