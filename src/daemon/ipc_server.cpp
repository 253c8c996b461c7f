#include "src/daemon/ipc_server.hpp"

#include <fmt/format.h>
#include <qb/qbipc_common.h>
#include <qb/qblog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

namespace rtotem::daemon {

namespace {

// Its command's name, as /proc/PID/comm has it (Corosync reads the same name from /proc/PID/stat);
// empty if the process has gone.
std::string process_name(pid_t pid) {
  std::ifstream comm(fmt::format("/proc/{}/comm", pid));
  std::string name;
  std::getline(comm, name);
  return name;
}

stack::ChannelCounts counts_of(const qb_ipcs_connection_stats& s) {
  return {.requests = s.requests,
          .responses = s.responses,
          .events = s.events,
          .send_retries = s.send_retries,
          .recv_retries = s.recv_retries,
          .flow_control_count = s.flow_control_count,
          .flow_control = static_cast<std::uint32_t>(s.flow_control_state)};
}

}  // namespace

IpcServer::IpcServer(EventLoop& loop, const IpcAccess& access, stack::ClientTable& clients, std::function<int()> accept)
    : loop_(loop), access_(access), clients_(clients), accept_(std::move(accept)) {}

Result<std::unique_ptr<IpcServer>> IpcServer::start(EventLoop& loop, const std::string& name, const IpcAccess& access,
                                                    stack::ClientTable& clients, std::function<int()> accept) {
  std::unique_ptr<IpcServer> server(new IpcServer(loop, access, clients, std::move(accept)));
  server->admission_ = IpcAdmission::create(loop);
  qb_ipcs_service_handlers handlers{on_accept, on_created, on_message, on_closed, on_destroyed};
  server->service_ = qb_ipcs_create(name.c_str(), 0, QB_IPC_SHM, &handlers);
  if (server->service_ == nullptr) return Error::sys(errno, "IPC service '{}'", name);
  qb_ipcs_poll_handlers poll = server->admission_->handlers();
  qb_ipcs_poll_handlers_set(server->service_, &poll);
  qb_ipcs_service_context_set(server->service_, server.get());
  qb_ipcs_enforce_buffer_size(server->service_, static_cast<std::uint32_t>(access.buffer_bytes));
  // Up to 50 requests of a connection per dispatch, not libqb's default 5 (asynchronous senders
  // keep their request rings full), and never more than the client has announced: IpcAdmission's
  // take_request(). The loop level of the connections is IpcAdmission's, whatever this says.
  qb_ipcs_request_rate_limit(server->service_, QB_IPCS_RATE_FAST);
  if (const int rc = qb_ipcs_run(server->service_); rc != 0) {
    server->service_ = nullptr;  // qb_ipcs_run destroyed it
    return Error::sys(-rc, "IPC service '{}' (another daemon with this --ipc-name?)", name);
  }
  return server;
}

// Destroying the service disconnects every client: nothing is reported to the stack then, which
// may be half destroyed itself (the daemon's members go in reverse order).
IpcServer::~IpcServer() {
  destroying_ = true;
  clients_.closing_all();
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
    if (!allowed(self.access_.allow_uids, uid) && !allowed(self.access_.allow_gids, gid)) {
      qb_log(LOG_WARNING,
             "IPC client uid %u gid %u refused: not root, not this daemon's user, not in "
             "ipc.allow_uid/allow_gid or a uidgid section",
             static_cast<unsigned>(uid), static_cast<unsigned>(gid));
      return -EACCES;
    }
    // The connection's shared memory is the daemon's (root's): the client's group may use it.
    qb_ipcs_connection_auth_set(c, -1, gid, S_IRUSR | S_IWUSR | S_IRGRP | S_IWGRP);
  }
  // libqb sizes a connection's rings by the larger of the client's wish and ours, and allocates
  // them whole: a client that asks for more than we use (or than an older librtotem asked for)
  // is refused before they exist. The size is unsigned: 2 GiB and more read negative as int32.
  const auto asked = static_cast<std::uint32_t>(qb_ipcs_connection_get_buffer_size(c));
  if (asked > std::max(self.access_.buffer_bytes, ipc::kLegacyClientBufferBytes)) {
    ++self.refused_;
    qb_log(LOG_WARNING,
           "IPC client uid %u refused: it asked for %u-byte buffers, above this daemon's %zu "
           "(totem.max_message_size plus room)",
           static_cast<unsigned>(uid), asked, self.access_.buffer_bytes);
    return -EMSGSIZE;
  }
  if (self.connections_.size() >= self.access_.max_clients) {
    ++self.refused_;
    qb_log(LOG_WARNING, "IPC client uid %u refused: ipc.max_clients (%zu) reached", static_cast<unsigned>(uid),
           self.access_.max_clients);
    return -EMFILE;
  }
  const int rc = self.accept_();
  if (rc == 0) self.accepted_[c] = {uid, gid};
  return rc;
}

void IpcServer::on_created(qb_ipcs_connection_t* c) {
  IpcServer& self = of(c);
  pid_t pid = 0;
  qb_ipcs_connection_stats stats{};
  if (qb_ipcs_connection_stats_get(c, &stats, QB_FALSE) == 0) pid = stats.client_pid;
  // Effective, as the connection authenticated; none (not root) if libqb did not say.
  std::pair<uid_t, gid_t> ids{static_cast<uid_t>(-1), static_cast<gid_t>(-1)};
  if (const auto it = self.accepted_.find(c); it != self.accepted_.end()) {
    ids = it->second;
    self.accepted_.erase(it);
  }
  Connection& connection = *(self.connections_[c] = std::make_unique<Connection>(self, c));
  connection.client = &self.clients_.add(connection, pid, ids.first, ids.second);
  if (pid > 0) connection.client->process_name = process_name(pid);
}

std::int32_t IpcServer::on_message(qb_ipcs_connection_t* c, void* data, std::size_t size) {
  IpcServer& self = of(c);
  // Negative stops libqb's batch after this request (it is taken all the same).
  const std::int32_t next = self.admission_->take_request() ? 0 : -ENOBUFS;
  const std::span<const std::byte> message(static_cast<const std::byte*>(data), size);
  const auto found = self.connections_.find(c);
  if (found != self.connections_.end() && found->second->client != nullptr) {
    self.clients_.on_request(*found->second->client, message);
    return next;
  }
  // Not a client yet (libqb hands no request before on_created): refused under its id.
  stack::IpcRequest request;
  (void)stack::decode_request(message, request);
  if (!ipc::answered(request.id)) return next;
  qb_ipc_response_header response{};
  response.id = static_cast<std::int32_t>(request.id);
  response.size = sizeof response;
  response.error = -EINVAL;
  (void)qb_ipcs_response_send(c, &response, sizeof response);
  return next;
}

std::int32_t IpcServer::on_closed(qb_ipcs_connection_t* c) {
  IpcServer& self = of(c);
  if (const auto found = self.connections_.find(c); found != self.connections_.end() && found->second->client)
    if (!self.destroying_) self.clients_.closed(*found->second->client);
  return 0;
}

void IpcServer::on_destroyed(qb_ipcs_connection_t* c) {
  IpcServer& self = of(c);
  self.accepted_.erase(c);
  const auto found = self.connections_.find(c);
  if (found == self.connections_.end()) return;
  if (found->second->client != nullptr) self.clients_.remove(*found->second->client);
  self.connections_.erase(found);
}

int IpcServer::Connection::send_event(std::span<const iovec> iov) {
  const ssize_t sent = qb_ipcs_event_sendv(connection, iov.data(), iov.size());
  return sent >= 0 ? 0 : static_cast<int>(sent);
}

stack::ChannelCounts IpcServer::Connection::counts() const {
  qb_ipcs_connection_stats stats{};
  if (qb_ipcs_connection_stats_get(connection, &stats, QB_FALSE) != 0) return {};
  return counts_of(stats);
}

void IpcServer::Connection::clear_counts() {
  qb_ipcs_connection_stats stats{};
  (void)qb_ipcs_connection_stats_get(connection, &stats, QB_TRUE);  // clear after read
}

int IpcServer::Connection::send_answer(std::span<const iovec> iov) {
  const ssize_t sent = qb_ipcs_response_sendv(connection, iov.data(), iov.size());
  return sent >= 0 ? 0 : static_cast<int>(sent);
}

// Later, not now: the table may be walking the client list that disconnecting changes. By the
// client's generation too: the connection's address may belong to a new client by then.
void IpcServer::Connection::disconnect() {
  IpcServer& s = server;
  qb_ipcs_connection_t* c = connection;
  const std::uint64_t generation = client != nullptr ? client->generation : 0;
  (void)s.loop_.post([&s, c, generation] {
    const auto found = s.connections_.find(c);
    if (found != s.connections_.end() && found->second->client != nullptr &&
        found->second->client->generation == generation)
      qb_ipcs_disconnect(c);  // on_closed leaves its groups
  });
}

}  // namespace rtotem::daemon
