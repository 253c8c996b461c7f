// libquorum.so.5 over librtotem's quorum tracking (rtotem_quorum_*). rtotemd sends the quorum
// state at trackstart, then once per ring when every member has reported and when quorate flips
// within a ring (RTOTEM_QUORUM_CHANGES_RING), as Corosync notifies; each
// carries the ring's id, the same (representative, seq) as the ring changes that libcpg's totem
// confchg reports. Model V1's nodelist notification is made here, before the quorum notification
// of each new ring, from the member lists of consecutive rings.
#include <corosync/quorum.h>

#include <algorithm>
#include <cerrno>
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

struct Quorum {
  Connection connection;
  quorum_handle_t self = 0;
  quorum_model_t model = QUORUM_MODEL_V0;
  quorum_notification_fn_t v0 = nullptr;
  quorum_v1_quorum_notification_fn_t v1_quorum = nullptr;
  quorum_v1_nodelist_notification_fn_t v1_nodelist = nullptr;
  const void* context = nullptr;
  bool configured = false;  // QUORUM_SET: rtotemd runs votequorum
  bool tracking = false;
  unsigned flags = 0;
  bool ring_known = false;
  quorum_ring_id ring{};
  std::vector<std::uint32_t> members;  // of `ring`, sorted
};

rtotem::corosync::HandleTable<Quorum>& handles() {
  static auto& table = *new rtotem::corosync::HandleTable<Quorum>;  // see handle_table.hpp: never destroyed
  return table;
}

// Runs inside rtotem_dispatch, under the connection's mutex: updates what the handle knows and
// defers the application's callbacks, with copies of their arguments.
void quorum_changed(rtotem_t*, const rtotem_quorum* q, void* ctx) {
  Quorum& s = *static_cast<Quorum*>(ctx);
  if (!s.tracking) return;  // stopped while the event was on its way
  const bool first = rtotem::corosync::at_track_start(*q);
  std::vector<std::uint32_t> members;
  for (size_t i = 0; i < q->n_nodes; ++i) members.push_back(q->nodes[i].nodeid);
  const quorum_ring_id ring{q->rep_nodeid, q->ring_seq};
  const bool tell = rtotem::corosync::tell(s.flags, *q);
  // The state at trackstart starts with a nodelist notification, as Corosync's does.
  const bool new_ring = first || !s.ring_known || ring.nodeid != s.ring.nodeid || ring.seq != s.ring.seq;
  std::vector<std::uint32_t> joined, left;
  if (s.ring_known && !first) {
    std::ranges::set_difference(members, s.members, std::back_inserter(joined));
    std::ranges::set_difference(s.members, members, std::back_inserter(left));
  }
  s.ring = ring;
  s.ring_known = true;
  s.members = members;
  if (!tell) return;
  const auto count = [](const std::vector<std::uint32_t>& v) { return static_cast<uint32_t>(v.size()); };
  if (s.model == QUORUM_MODEL_V1 && new_ring && s.v1_nodelist)
    s.connection.defer([&s, ring, members, joined = std::move(joined), left = std::move(left), count] {
      s.v1_nodelist(s.self, ring, count(members), never_null(members), count(joined), never_null(joined), count(left),
                    never_null(left));
    });
  const uint32_t quorate = q->quorate != 0;
  if (s.model == QUORUM_MODEL_V1 && s.v1_quorum)
    s.connection.defer([&s, quorate, ring, members, count] {
      s.v1_quorum(s.self, quorate, ring, count(members), never_null(members));
    });
  else if (s.model == QUORUM_MODEL_V0 && s.v0)
    s.connection.defer([&s, quorate, ring, members = std::move(members), count]() mutable {
      s.v0(s.self, quorate, ring.seq, count(members), never_null(members));
    });
}

cs_error_t open(quorum_handle_t* handle, std::shared_ptr<Quorum> s, uint32_t* quorum_type) {
  if (handle == nullptr || quorum_type == nullptr) return CS_ERR_INVALID_PARAM;
  if (cs_error_t rc = s->connection.open(Service::kQuorum, nullptr, s.get()); rc != CS_OK) return rc;
  rtotem_quorum_node_info node{};
  rtotem_quorum state{};
  const int rc = rtotem_quorum_get(s->connection.handle(), 0, &node, &state);
  if (rc < 0 && rc != -ENOTSUP) return cs_error(rc);
  s->configured = rc == 0;
  *quorum_type = s->configured ? QUORUM_SET : QUORUM_FREE;
  return rtotem::corosync::publish(handles(), std::move(s), handle);
}

}  // namespace

CS_EXPORT cs_error_t quorum_initialize(quorum_handle_t* handle, quorum_callbacks_t* callbacks, uint32_t* quorum_type) {
  auto s = std::make_shared<Quorum>();
  s->model = QUORUM_MODEL_V0;
  if (callbacks != nullptr) s->v0 = callbacks->quorum_notify_fn;
  return open(handle, std::move(s), quorum_type);
}

CS_EXPORT cs_error_t quorum_model_initialize(quorum_handle_t* handle, quorum_model_t model,
                                             quorum_model_data_t* model_data, uint32_t* quorum_type, void* context) {
  auto s = std::make_shared<Quorum>();
  s->model = model;
  s->context = context;
  switch (model) {
    case QUORUM_MODEL_V0:
      if (model_data != nullptr) s->v0 = reinterpret_cast<quorum_model_v0_data_t*>(model_data)->quorum_notify_fn;
      break;
    case QUORUM_MODEL_V1:
      if (model_data != nullptr) {
        const auto* v1 = reinterpret_cast<quorum_model_v1_data_t*>(model_data);
        s->v1_quorum = v1->quorum_notify_fn;
        s->v1_nodelist = v1->nodelist_notify_fn;
      }
      break;
    default: return CS_ERR_INVALID_PARAM;
  }
  return open(handle, std::move(s), quorum_type);
}

CS_EXPORT cs_error_t quorum_finalize(quorum_handle_t handle) { return rtotem::corosync::finalize(handles(), handle); }

CS_EXPORT cs_error_t quorum_fd_get(quorum_handle_t handle, int* fd) {
  return rtotem::corosync::fd_get(handles(), handle, fd);
}

CS_EXPORT cs_error_t quorum_dispatch(quorum_handle_t handle, cs_dispatch_flags_t flags) {
  return rtotem::corosync::dispatch(handles(), handle, flags);
}

CS_EXPORT cs_error_t quorum_getquorate(quorum_handle_t handle, int* quorate) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (quorate == nullptr) return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(s->connection.mutex());
  rtotem_quorum_node_info node{};
  rtotem_quorum state{};
  const int rc = rtotem_quorum_get(s->connection.handle(), 0, &node, &state);
  if (rc == -ENOTSUP) {  // no provider: as Corosync, always quorate
    *quorate = 1;
    return CS_OK;
  }
  if (rc < 0) return cs_error(rc);
  *quorate = state.quorate != 0;
  return CS_OK;
}

CS_EXPORT cs_error_t quorum_trackstart(quorum_handle_t handle, unsigned int flags) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  if (s->tracking && rtotem::corosync::tracks_changes(s->flags)) return CS_ERR_EXIST;
  if (!rtotem::corosync::tracks_anything(flags)) return CS_OK;
  // Without quorum { } in rtotemd's config there is no state to report.
  if (!s->configured) return CS_ERR_NOT_SUPPORTED;
  s->tracking = true;
  s->flags = flags;
  // rtotemd sends only what libquorum reports: a new ring, or quorate flipping.
  const int rc = rtotem_quorum_track_changes(s->connection.handle(), quorum_changed,
                                             rtotem::corosync::changes_asked(flags, RTOTEM_QUORUM_CHANGES_RING));
  if (rc < 0) s->tracking = false;
  return cs_error(rc);
}

CS_EXPORT cs_error_t quorum_trackstop(quorum_handle_t handle) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  if (!s->tracking) return CS_OK;  // as Corosync's quorum service, which answers CS_OK either way
  s->tracking = false;
  return cs_error(rtotem_quorum_track(s->connection.handle(), nullptr));
}

CS_EXPORT cs_error_t quorum_context_set(quorum_handle_t handle, const void* context) {
  return rtotem::corosync::context_set(handles(), handle, context);
}

CS_EXPORT cs_error_t quorum_context_get(quorum_handle_t handle, const void** context) {
  return rtotem::corosync::context_get(handles(), handle, context);
}
