// The state behind an rtotem_t, shared by the files of librtotem (librtotem.cpp: connection,
// groups, multicasts, dispatch; librtotem_quorum.cpp: quorum; librtotem_keys.cpp: the key store;
// librtotem_control.cpp: node control). Private to the library.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "rtotem/rtotem.h"
#include "src/client/client_connection.hpp"
#include "src/client/message_pieces.hpp"

struct rtotem_handle {
  std::unique_ptr<rtotem::client::ClientConnection> connection;  // libqb, or the simulator's memory
  rtotem_callbacks callbacks{};
  rtotem_mcast_failed_fn mcast_failed = nullptr;
  void* ctx = nullptr;
  // Groups this connection joined and has not left: a multicast to another is refused here.
  std::set<std::string, std::less<>> joined_groups;
  // Credit (ipc_protocol.hpp): the window, bytes of asynchronous multicasts sent, and the most the
  // daemon has said it took. 0 window: not heard yet (or an older daemon), so every multicast waits.
  std::uint32_t window = 0;
  std::uint64_t sent = 0;
  std::uint64_t taken = 0;
  std::size_t data_max = 0;               // 0: not heard yet (the daemon checks)
  rtotem::client::PieceAssembler pieces;  // messages delivered in pieces, being put together
  // A request being written, reused: a multicast allocates nothing once it has grown.
  rtotem::ipc::BodyWriter request;
  // Scratch for decoded events, reused.
  std::string group;
  std::vector<rtotem_member> members, joined, left;
  std::vector<rtotem_reason> reasons, joined_reasons;
  std::vector<std::uint32_t> nodeids;
  rtotem_quorum_fn quorum_changed = nullptr;  // rtotem_quorum_track's
  std::vector<rtotem_quorum_node> quorum_nodes;
  std::vector<rtotem_quorum_node>
      quorum_get_nodes;  // rtotem_quorum_get's answer: apart, as it may be called from a callback
  struct KeyTracker {
    rtotem_key_changed_fn changed = nullptr;
    void* user = nullptr;
  };
  std::map<std::uint64_t, KeyTracker> key_trackers;  // rtotem_key_track's, by id
  rtotem_shutdown_fn shutdown_asked = nullptr;       // rtotem_shutdown_track's
};

namespace rtotem::client {

// A handle over `connection`, as rtotem_connect makes one over libqb (the simulator's clients over
// memory): 0 with *out set, or -errno.
int open_handle(std::unique_ptr<ClientConnection> connection, const rtotem_callbacks* cb, void* ctx, rtotem_t** out);

// One request and its answer: the daemon's error (0 or -errno), or the connection's (-ENOTCONN
// once the daemon is gone).
int call(rtotem_t* h, ipc::RequestId id, std::span<const std::byte> body, Reply& reply,
         std::span<const std::byte> tail = {});
// Decodes a kQuorumChange event and calls the tracker: 0, or -EPROTO.
int quorum_event(rtotem_t* h, WireReader& in);
// Decodes a kKeyChange event and calls its tracker: 0, or -EPROTO.
int key_event(rtotem_t* h, WireReader& in);
// Decodes a kShutdownQuery event and calls the shutdown tracker: 0, or -EPROTO.
int shutdown_event(rtotem_t* h, WireReader& in);

}  // namespace rtotem::client
