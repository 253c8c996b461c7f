// libvotequorum.so.8 over librtotem's quorum calls: getinfo (rtotem_quorum_get and
// rtotem_quorum_device_get), the runtime changes (rtotem_quorum_set_*), tracking, and the quorum
// device's calls (rtotem_quorum_device_*), which corosync-qdevice makes.
#include <corosync/votequorum.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "src/corosync/shim/connection.hpp"
#include "src/corosync/shim/export.hpp"
#include "src/corosync/shim/handle_calls.hpp"
#include "src/corosync/shim/never_null.hpp"
#include "src/corosync/shim/quorum_tracking.hpp"

namespace {

using rtotem::corosync::Connection;
using rtotem::corosync::cs_error;
using rtotem::corosync::never_null;
using rtotem::corosync::Service;

struct Votequorum {
  Connection connection;
  votequorum_handle_t self = 0;
  votequorum_callbacks_t callbacks{};
  void* context = nullptr;
  bool tracking = false;
  unsigned flags = 0;
  std::uint64_t track_context = 0;
  std::optional<votequorum_ring_id_t> ring;
  std::optional<std::uint32_t> expected;
  std::optional<bool> quorate;
};

rtotem::corosync::HandleTable<Votequorum>& handles() {
  static auto& table = *new rtotem::corosync::HandleTable<Votequorum>;  // see handle_table.hpp: never destroyed
  return table;
}

unsigned info_flags(const rtotem_quorum& q) {
  return ((q.flags & RTOTEM_QUORUM_TWO_NODE) != 0 ? VOTEQUORUM_INFO_TWONODE : 0) |
         (q.quorate != 0 ? VOTEQUORUM_INFO_QUORATE : 0) |
         ((q.flags & RTOTEM_QUORUM_WAIT_FOR_ALL) != 0 ? VOTEQUORUM_INFO_WAIT_FOR_ALL : 0) |
         ((q.flags & RTOTEM_QUORUM_LAST_MAN_STANDING) != 0 ? VOTEQUORUM_INFO_LAST_MAN_STANDING : 0) |
         ((q.flags & RTOTEM_QUORUM_AUTO_TIE_BREAKER) != 0 ? VOTEQUORUM_INFO_AUTO_TIE_BREAKER : 0);
}

// As votequorum: the nodelist notification of a new ring first, then the quorum notification (a new
// ring, or quorate flipped), then the expected votes if they changed.
void quorum_changed(rtotem_t*, const rtotem_quorum* q, void* ctx) {
  Votequorum& s = *static_cast<Votequorum*>(ctx);
  if (!s.tracking) return;
  const bool first = rtotem::corosync::at_track_start(*q);
  const bool tell = rtotem::corosync::tell(s.flags, *q);
  const votequorum_ring_id_t ring{q->rep_nodeid, q->ring_seq};
  // The state at trackstart starts with a nodelist notification, as Corosync's does.
  const bool new_ring = first || !s.ring || s.ring->nodeid != ring.nodeid || s.ring->seq != ring.seq;
  const bool new_expected = !s.expected || *s.expected != q->highest_expected;
  // rtotemd also sends a change of the expected votes alone: that makes no quorum notification.
  const bool quorum_news = new_ring || s.quorate != (q->quorate != 0);
  s.ring = ring;
  s.expected = q->highest_expected;
  s.quorate = q->quorate != 0;
  if (!tell) return;
  // Deferred, with copies: the application's callbacks run once dispatch released the mutex.
  std::vector<votequorum_node_t> nodes;
  std::vector<uint32_t> nodeids;
  for (size_t i = 0; i < q->n_nodes; ++i) {
    nodes.push_back({q->nodes[i].nodeid, VOTEQUORUM_NODESTATE_MEMBER});
    nodeids.push_back(q->nodes[i].nodeid);
  }
  const votequorum_callbacks_t cb = s.callbacks;
  const uint64_t context = s.track_context;
  if (new_ring && cb.votequorum_nodelist_notify_fn)
    s.connection.defer([&s, cb, context, ring, nodeids = std::move(nodeids)]() mutable {
      cb.votequorum_nodelist_notify_fn(s.self, context, ring, static_cast<uint32_t>(nodeids.size()),
                                       never_null(nodeids));
    });
  if (quorum_news && cb.votequorum_quorum_notify_fn)
    s.connection.defer([&s, cb, context, quorate = uint32_t{q->quorate != 0}, nodes = std::move(nodes)]() mutable {
      cb.votequorum_quorum_notify_fn(s.self, context, quorate, static_cast<uint32_t>(nodes.size()), never_null(nodes));
    });
  if (!first && new_expected && cb.votequorum_expectedvotes_notify_fn)
    s.connection.defer([&s, cb, context, expected = q->highest_expected] {
      cb.votequorum_expectedvotes_notify_fn(s.self, context, expected);
    });
}

}  // namespace

CS_EXPORT cs_error_t votequorum_initialize(votequorum_handle_t* handle, votequorum_callbacks_t* callbacks) {
  if (handle == nullptr) return CS_ERR_INVALID_PARAM;
  auto s = std::make_shared<Votequorum>();
  if (callbacks != nullptr) s->callbacks = *callbacks;
  if (cs_error_t rc = s->connection.open(Service::kVotequorum, nullptr, s.get()); rc != CS_OK) return rc;
  rtotem_quorum_node_info node{};
  rtotem_quorum state{};
  // As Corosync without quorum.provider: there is no votequorum service to connect to.
  if (const int rc = rtotem_quorum_get(s->connection.handle(), 0, &node, &state); rc < 0)
    return rc == -ENOTSUP ? CS_ERR_NOT_EXIST : cs_error(rc);
  return rtotem::corosync::publish(handles(), std::move(s), handle);
}

CS_EXPORT cs_error_t votequorum_finalize(votequorum_handle_t handle) {
  return rtotem::corosync::finalize(handles(), handle);
}

CS_EXPORT cs_error_t votequorum_fd_get(votequorum_handle_t handle, int* fd) {
  return rtotem::corosync::fd_get(handles(), handle, fd);
}

CS_EXPORT cs_error_t votequorum_dispatch(votequorum_handle_t handle, cs_dispatch_flags_t flags) {
  return rtotem::corosync::dispatch(handles(), handle, flags);
}

CS_EXPORT cs_error_t votequorum_getinfo(votequorum_handle_t handle, unsigned int nodeid, struct votequorum_info* info) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (info == nullptr) return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(s->connection.mutex());
  rtotem_quorum_node_info node{};
  rtotem_quorum state{};
  if (const int rc = rtotem_quorum_get(s->connection.handle(), nodeid, &node, &state); rc < 0) return cs_error(rc);
  std::memset(info, 0, sizeof *info);
  info->node_id = node.nodeid;
  info->node_state = node.member != 0 ? VOTEQUORUM_NODESTATE_MEMBER : VOTEQUORUM_NODESTATE_DEAD;
  info->node_votes = node.votes;
  info->node_expected_votes = node.expected_votes;
  info->highest_expected = state.highest_expected;
  info->total_votes = state.total_votes;
  info->quorum = state.quorum;
  info->flags = info_flags(state);
  // A daemon older than the quorum device refuses the request (-EINVAL): then there is no device.
  rtotem_quorum_device_info device{};
  if (const int rc = rtotem_quorum_device_get(s->connection.handle(), nodeid, &device); rc < 0 && rc != -EINVAL)
    return cs_error(rc);
  info->flags |= ((device.flags & RTOTEM_QUORUM_DEVICE_REGISTERED) != 0 ? VOTEQUORUM_INFO_QDEVICE_REGISTERED : 0) |
                 ((device.flags & RTOTEM_QUORUM_DEVICE_ALIVE) != 0 ? VOTEQUORUM_INFO_QDEVICE_ALIVE : 0) |
                 ((device.flags & RTOTEM_QUORUM_DEVICE_CAST_VOTE) != 0 ? VOTEQUORUM_INFO_QDEVICE_CAST_VOTE : 0) |
                 ((device.flags & RTOTEM_QUORUM_DEVICE_MASTER_WINS) != 0 ? VOTEQUORUM_INFO_QDEVICE_MASTER_WINS : 0);
  info->qdevice_votes = device.votes;
  static_assert(sizeof info->qdevice_name == sizeof device.name);
  std::memcpy(info->qdevice_name, device.name, sizeof device.name);
  return CS_OK;
}

CS_EXPORT cs_error_t votequorum_setexpected(votequorum_handle_t handle, unsigned int expected_votes) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  return cs_error(rtotem_quorum_set_expected(s->connection.handle(), expected_votes));
}

CS_EXPORT cs_error_t votequorum_setvotes(votequorum_handle_t handle, unsigned int nodeid, unsigned int votes) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  uint32_t node = nodeid;
  if (node == 0) {  // this node; Corosync takes 0 for its quorum device, which rtotem has not
    if (const int rc = rtotem_local_nodeid(s->connection.handle(), &node); rc < 0) return cs_error(rc);
  }
  const int rc = rtotem_quorum_set_votes(s->connection.handle(), node, votes);
  return rc == -ENOENT ? CS_ERR_NAME_NOT_FOUND : cs_error(rc);  // votequorum's answer for an unknown node
}

CS_EXPORT cs_error_t votequorum_trackstart(votequorum_handle_t handle, uint64_t context, unsigned int flags) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  if (s->tracking && rtotem::corosync::tracks_changes(s->flags)) return CS_ERR_EXIST;
  if (!rtotem::corosync::tracks_anything(flags)) return CS_OK;
  s->tracking = true;
  s->flags = flags;
  s->track_context = context;
  // rtotemd sends only what libvotequorum reports: a new ring, quorate flipping, or the expected votes.
  const int rc =
      rtotem_quorum_track_changes(s->connection.handle(), quorum_changed,
                                  rtotem::corosync::changes_asked(flags, RTOTEM_QUORUM_CHANGES_RING_EXPECTED));
  if (rc < 0) s->tracking = false;
  return cs_error(rc);
}

CS_EXPORT cs_error_t votequorum_trackstop(votequorum_handle_t handle) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  if (!s->tracking) return CS_ERR_NOT_EXIST;
  s->tracking = false;
  if (const int rc = rtotem_quorum_track(s->connection.handle(), nullptr); rc < 0) return cs_error(rc);
  return rtotem::corosync::tracks_changes(s->flags) ? CS_OK : CS_ERR_NOT_EXIST;  // as votequorum's
}

CS_EXPORT cs_error_t votequorum_context_get(votequorum_handle_t handle, void** context) {
  return rtotem::corosync::context_get(handles(), handle, context);
}

CS_EXPORT cs_error_t votequorum_context_set(votequorum_handle_t handle, void* context) {
  return rtotem::corosync::context_set(handles(), handle, context);
}

namespace {

// A qdevice call on the handle's connection, with votequorum's answers: CS_ERR_MESSAGE_ERROR for a
// poll of another ring, CS_ERR_ACCESS for a caller rtotemd does not let decide the quorum.
template <class Call>
cs_error_t qdevice_call(votequorum_handle_t handle, Call call) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  const int rc = call(s->connection.handle());
  if (rc == -ESTALE) return CS_ERR_MESSAGE_ERROR;
  if (rc == -EPERM) return CS_ERR_ACCESS;
  return cs_error(rc);
}

}  // namespace

CS_EXPORT cs_error_t votequorum_qdevice_register(votequorum_handle_t handle, const char* name) {
  if (name == nullptr) return CS_ERR_INVALID_PARAM;
  return qdevice_call(handle, [&](rtotem_t* h) { return rtotem_quorum_device_register(h, name); });
}

CS_EXPORT cs_error_t votequorum_qdevice_unregister(votequorum_handle_t handle, const char* name) {
  if (name == nullptr) return CS_ERR_INVALID_PARAM;
  return qdevice_call(handle, [&](rtotem_t* h) { return rtotem_quorum_device_unregister(h, name); });
}

CS_EXPORT cs_error_t votequorum_qdevice_update(votequorum_handle_t handle, const char* oldname, const char* newname) {
  if (oldname == nullptr || newname == nullptr) return CS_ERR_INVALID_PARAM;
  return qdevice_call(handle, [&](rtotem_t* h) { return rtotem_quorum_device_update(h, oldname, newname); });
}

CS_EXPORT cs_error_t votequorum_qdevice_poll(votequorum_handle_t handle, const char* name, unsigned int cast_vote,
                                             votequorum_ring_id_t ring_id) {
  if (name == nullptr) return CS_ERR_INVALID_PARAM;
  return qdevice_call(handle, [&](rtotem_t* h) {
    return rtotem_quorum_device_poll(h, name, cast_vote != 0 ? 1 : 0, ring_id.nodeid, ring_id.seq);
  });
}

CS_EXPORT cs_error_t votequorum_qdevice_master_wins(votequorum_handle_t handle, const char* name, unsigned int allow) {
  if (name == nullptr) return CS_ERR_INVALID_PARAM;
  return qdevice_call(handle,
                      [&](rtotem_t* h) { return rtotem_quorum_device_master_wins(h, name, allow != 0 ? 1 : 0); });
}
