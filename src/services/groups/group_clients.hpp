// Process groups as local clients use them: a client's join and leave (after its staged
// multicasts), and what the ring delivers of a group (its messages, its membership changes)
// sent to the group's local members, found by pid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/services/groups/group_service.hpp"
#include "src/services/staging/mcast_staging.hpp"
#include "src/stack/client_table.hpp"

namespace rtotem::groups {

using stack::LocalClient;

class GroupClients {
 public:
  GroupClients(NodeId self, GroupService& groups, stack::ClientTable& clients, staging::McastStaging& staging);

  int join(LocalClient& client, std::string_view group, ipc::BodyWriter& reply);  // kJoin
  int leave(LocalClient& client, std::string_view group);                         // kLeave
  // kGroupMembers: every group (`group` empty) or one, with their members, in binary.
  void members(std::string_view group, ipc::BodyWriter& reply) const;
  // kMembers: the same as JSON, for rtotemctl.
  std::string members_json(std::string_view group) const;

  // What the ring delivered, to the local members of its group.
  void message(const GroupMessage& message);
  void change(const GroupChange& change);

 private:
  // The local client of process `pid` in `group`, if any: found by pid, not by walking every
  // client, since a delivery asks once per local member (a thousand clients in one group).
  LocalClient* client_in(std::string_view group, std::uint32_t pid);

  NodeId self_;
  GroupService& groups_;
  stack::ClientTable& clients_;
  staging::McastStaging& staging_;
  ipc::BodyWriter head_;                     // a delivery's header, reused: a delivery allocates nothing
  std::vector<LocalClient*> local_members_;  // a delivery's local members, reused likewise
};

}  // namespace rtotem::groups
