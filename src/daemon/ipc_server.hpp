// rtotemd's local IPC: libqb's qb_ipcs service over shared memory. It decides who may connect,
// makes each authenticated connection a client of the node stack's ClientTable (a ClientChannel
// over libqb's response and event channels), and hands it each request. What is sent and queued,
// and when a client is cut off, is the ClientTable's.
#pragma once

#include <qb/qbipcs.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "src/daemon/event_loop.hpp"
#include "src/daemon/ipc_admission.hpp"
#include "src/stack/client_table.hpp"

namespace rtotem::daemon {

struct IpcAccess {
  std::size_t buffer_bytes = 0;  // one IPC message, at most: a client asking for more is refused
  std::size_t max_clients = 0;
  // Besides root and the daemon's own user, who may connect (sorted): by effective uid or gid.
  std::vector<std::uint32_t> allow_uids;
  std::vector<std::uint32_t> allow_gids;
};

class IpcServer {
 public:
  // `accept`: 0 to accept a new client, or -errno (sent to it: -EAGAIN while no ring is formed).
  static Result<std::unique_ptr<IpcServer>> start(EventLoop& loop, const std::string& name, const IpcAccess& access,
                                                  stack::ClientTable& clients, std::function<int()> accept);
  ~IpcServer();
  IpcServer(const IpcServer&) = delete;
  IpcServer& operator=(const IpcServer&) = delete;

  // Who may connect besides root and the daemon's user from now on (sorted, unique): the
  // configuration's and what uidgid.* keys add at run time. Connected clients stay.
  void set_access(std::vector<std::uint32_t> uids, std::vector<std::uint32_t> gids) {
    access_.allow_uids = std::move(uids);
    access_.allow_gids = std::move(gids);
  }
  std::uint64_t clients_refused() const noexcept { return refused_; }
  const IpcAdmission& admission() const noexcept { return *admission_; }

 private:
  // A connection as the ClientTable sees it: libqb's channels.
  struct Connection final : stack::ClientChannel {
    Connection(IpcServer& s, qb_ipcs_connection_t* c) noexcept : server(s), connection(c) {}
    int send_event(std::span<const iovec> iov) override;
    int send_answer(std::span<const iovec> iov) override;
    void disconnect() override;
    stack::ChannelCounts counts() const override;
    void clear_counts() override;
    IpcServer& server;
    qb_ipcs_connection_t* connection;
    stack::LocalClient* client = nullptr;  // once created
  };

  IpcServer(EventLoop& loop, const IpcAccess& access, stack::ClientTable& clients, std::function<int()> accept);
  static IpcServer& of(qb_ipcs_connection_t* c);
  static std::int32_t on_accept(qb_ipcs_connection_t* c, uid_t uid, gid_t gid);
  static void on_created(qb_ipcs_connection_t* c);
  static std::int32_t on_message(qb_ipcs_connection_t* c, void* data, std::size_t size);
  static std::int32_t on_closed(qb_ipcs_connection_t* c);
  static void on_destroyed(qb_ipcs_connection_t* c);

  EventLoop& loop_;
  IpcAccess access_;
  stack::ClientTable& clients_;
  std::function<int()> accept_;
  std::unique_ptr<IpcAdmission> admission_;  // outlives the service: libqb's hooks are its
  qb_ipcs_service_t* service_ = nullptr;
  std::map<qb_ipcs_connection_t*, std::unique_ptr<Connection>> connections_;
  // Accepted connections' credentials, until created (libqb hands them to on_accept only).
  std::map<qb_ipcs_connection_t*, std::pair<uid_t, gid_t>> accepted_;
  std::uint64_t refused_ = 0;  // connections refused: ipc.max_clients reached, or buffers too large
  bool destroying_ = false;
};

}  // namespace rtotem::daemon
