// Where a client's multicast enters the ring. kMcast is answered with its outcome; kMcastAsync is
// not: the library sent it within its credit window, and the node owes it either the ring or a
// kMcastFailed event. What the ring refuses for now (back-pressure) is staged per client, in
// order, and retried after every turn; a client's later join, leave or answered multicast waits
// for its staged ones (FIFO per client). When a client goes, its staged multicasts are orphaned,
// still in order, and go on the ring before its leaves do.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "src/services/groups/group_service.hpp"
#include "src/stack/client_table.hpp"

namespace rtotem::staging {

using stack::IpcRequest;
using stack::LocalClient;

// A ring submission's outcome as a client hears it: 0, -EMSGSIZE, -ESHUTDOWN, or -EAGAIN for
// back-pressure.
int errno_of(Status status);

class McastStaging {
 public:
  // `in_sync`: whether the ring's members are all in sync (quorum's barrier); multicasts wait
  // until they are.
  McastStaging(groups::GroupService& groups, stack::ClientTable& clients, std::size_t max_message_size,
               std::function<bool()> in_sync);

  int multicast(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply);  // kMcast
  void multicast_async(LocalClient& client, const IpcRequest& request);                   // kMcastAsync
  // Answered once every earlier request is taken: kSync.
  int sync(LocalClient& client, ipc::BodyWriter& reply);
  // A kMcast answer's credit (ipc_protocol.hpp), as a join's answer carries it too.
  void put_credit(const LocalClient& client, ipc::BodyWriter& reply) const;
  // The client's staged multicasts to the ring, in order, as far as it takes them: true if none
  // remain (a join or leave goes after them).
  bool submit_staged(LocalClient& client);
  // A leave of this process is waiting for its departed connection's multicasts.
  bool leave_waiting(std::string_view group, std::uint32_t pid) const;
  // The client has gone: its staged multicasts go on the ring, then its leaves (PROCDOWN).
  void client_gone(LocalClient& client);
  // After every turn: what departed clients left, then what the ring refused before, oldest first.
  void after_turn();

  std::size_t orphaned_bytes() const noexcept { return orphaned_.bytes(); }
  std::uint64_t orphans_dropped() const noexcept { return orphans_dropped_; }

 private:
  int check(const LocalClient& client, const IpcRequest& request) const;
  void put_reply(LocalClient& client, ipc::BodyWriter& reply) const;
  // One multicast offered to the ring: false if refused for now (back-pressure); else taken, or
  // failed for good (told to `client` as kMcastFailed, if it is still there).
  bool offer(LocalClient* client, std::uint32_t pid, const IpcRequest& request);
  void failed(LocalClient& client, const IpcRequest& request, int error);
  void orphan(LocalClient& client);
  void submit_orphaned();

  groups::GroupService& groups_;
  stack::ClientTable& clients_;
  std::size_t max_message_size_;
  std::function<bool()> in_sync_;
  // Leaves of departed clients the ring refused for now (back-pressure): sent on a later turn,
  // once the orphaned multicasts (sent before them) are all on the ring.
  std::deque<std::pair<std::string, std::uint32_t>> pending_leaves_;
  // Staged multicasts of clients that have gone, in order: records of [u32 pid][request], up to
  // kOrphanedMax bytes (a window each for 256 departed clients).
  static constexpr std::size_t kOrphanedMax = 256 * ipc::kMcastWindow;
  stack::EventBacklog orphaned_;
  std::uint64_t orphans_dropped_ = 0;
  ipc::BodyWriter event_;  // a kMcastFailed event, reused
};

}  // namespace rtotem::staging
