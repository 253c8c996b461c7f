// One local client of the node stack, as the services see it: who it is, what it asked for, and
// what waits for it. Its bytes leave through its ClientChannel (libqb in rtotemd, memory in the
// simulator); the ClientTable keeps the rest.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "src/ipc/ipc_protocol.hpp"
#include "src/stack/client_channel.hpp"
#include "src/stack/event_backlog.hpp"

namespace rtotem::stack {

// What a client tracking the quorum was last told, to judge which changes its mode sends.
struct QuorumTold {
  std::uint32_t rep = 0;
  std::uint64_t seq = 0;
  bool quorate = false;
  std::uint32_t highest_expected = 0;
};

// What the statistics map shows of a connection beside its channel's counts, under Corosync's
// names (stats.ipcs.serviceN.PID.HANDLE.*); stats.clear.ipc zeroes them.
struct ClientIpcCounts {
  std::uint64_t invalid_requests = 0;  // requests that did not decode, or that were refused as malformed
  std::uint64_t overloads = 0;         // requests refused for now (-EAGAIN: CS_ERR_TRY_AGAIN)
  // Events sent since its backlog last began or emptied, as Corosync's "sent" counts them.
  std::uint32_t sent = 0;
};

struct LocalClient {
  LocalClient(ClientChannel& c, pid_t p, uid_t u, gid_t g, std::uint64_t gen) noexcept
      : channel(c), pid(p), uid(u), gid(g), generation(gen) {}
  LocalClient(const LocalClient&) = delete;
  LocalClient& operator=(const LocalClient&) = delete;

  ClientChannel& channel;
  const pid_t pid;
  // Effective, as the connection authenticated.
  const uid_t uid;
  const gid_t gid;
  const std::uint64_t generation;             // unique per connection, unlike its address
  std::set<std::string, std::less<>> groups;  // joins it asked for (and has not left)
  EventBacklog backlog;                       // events its channel had no room for
  // Small deliveries waiting for the end of the turn (ClientTable::end_turn): a kBatch header,
  // then whole events. It grows with use, to ipc::kBatchBytes at most, and stays.
  std::vector<std::byte> batch;
  // Asynchronous multicasts (whole kMcastAsync requests, in order) the ring has refused for now:
  // within the credit window, so at most ipc::kMcastWindow bytes. The same byte ring as `backlog`.
  EventBacklog staged;
  std::uint64_t async_read = 0;                       // bytes of kMcastAsync requests read
  std::uint64_t credit_taken = 0;                     // of those, taken (to the ring, or failed): credit given back
  std::uint64_t credit_told = 0;                      // credit_taken as the client last heard it
  bool credit_owed = false;                           // credit_taken moved past credit_told (the table's list)
  bool staged_listed = false;                         // in the table's list of clients with staged multicasts
  bool closing = false;                               // disconnected or being cut off: no more events
  bool tracks_rings = true;                           // kRingChange events, unless it asked for none (kRingTrack)
  std::uint8_t key_map = ipc::kKeyMapDefault;         // where its key requests go (kKeyMap)
  std::uint8_t quorum_track = ipc::kQuorumTrackStop;  // the kQuorumChange events it asked for
  QuorumTold quorum_told;                      // the quorum as its last kQuorumChange (sent or not, by its mode) had it
  bool tracks_shutdown = false;                // asked for kShutdownQuery events
  std::uint8_t service = ipc::kServiceNative;  // as it said (kClientService)
  std::string process_name;                    // its command's name as the kernel had it at connection
  ClientIpcCounts ipc_counts;
};

// Stopping or killing a node, reloading its configuration, and changing votes or expected votes
// are root's (or the host's own user's): any user the node lets connect could otherwise take the
// cluster down, or make a minority side quorate.
bool privileged(const LocalClient& client) noexcept;

}  // namespace rtotem::stack
