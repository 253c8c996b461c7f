// libcpg.so.4 over librtotem's process groups. One group per handle, as CPG has it; a group's
// name maps to an rtotem group name (group_name.hpp). rtotemd already orders what CPG's users
// rely on: a departed node's last messages come before the confchg that reports it NODEDOWN,
// and that confchg before the totem confchg of the new ring; and librtotem sends a message larger
// than one multicast in pieces and puts it back together, as libcpg does. Where rtotem differs:
// processes that a merge brings in (reason NODEUP, as in Corosync) are reported after the totem
// confchg, not before it.
#include <corosync/cpg.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "src/corosync/cpg/group_name.hpp"
#include "src/corosync/shim/connection.hpp"
#include "src/corosync/shim/export.hpp"
#include "src/corosync/shim/handle_calls.hpp"
#include "src/corosync/shim/never_null.hpp"

namespace {

using rtotem::corosync::Connection;
using rtotem::corosync::cpg_group_name;
using rtotem::corosync::cs_error;
using rtotem::corosync::never_null;
using rtotem::corosync::rtotem_group_name;
using rtotem::corosync::Service;

enum class Membership { kNone, kJoined, kLeaving };

struct Cpg {
  Connection connection;
  cpg_handle_t self = 0;
  cpg_model_v1_data_t model{};
  void* context = nullptr;
  std::uint32_t pid = static_cast<std::uint32_t>(getpid());
  std::uint32_t local_nodeid = 0;
  Membership membership = Membership::kNone;
  cpg_name group{};
  std::string rtotem_group;
  bool initial_totem_due = false;  // CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF, until the first own join
  bool first_ring_seen = false;    // the ring as it was at connect: not a change
  cpg_ring_id ring{};
  std::vector<std::uint32_t> ring_members;
  std::vector<cpg_address> members, left, joined;  // scratch for a confchg's lists
  std::vector<std::byte> gathered;                 // scratch for an iovec's bytes
  std::set<void*> zcb_buffers;                     // cpg_zcb_alloc's, freed with the handle at the latest
  std::mutex iterations_mutex;                     // its own: finalize does not wait behind a send for it
  std::set<cpg_iteration_handle_t> iterations;     // open ones, which end with the handle

  Cpg() = default;
  Cpg(const Cpg&) = delete;
  Cpg& operator=(const Cpg&) = delete;
  ~Cpg() {
    for (void* buffer : zcb_buffers) std::free(buffer);
  }
};

rtotem::corosync::HandleTable<Cpg>& handles() {
  static auto& table = *new rtotem::corosync::HandleTable<Cpg>;  // see handle_table.hpp: never destroyed
  return table;
}

struct Iteration {
  cpg_handle_t owner = 0;
  std::vector<cpg_iteration_description_t> entries;
  std::size_t next = 0;
};

rtotem::corosync::HandleTable<Iteration>& iterations() {
  static auto& table = *new rtotem::corosync::HandleTable<Iteration>;
  return table;
}

uint32_t cpg_reason(rtotem_reason reason) {
  switch (reason) {
    case RTOTEM_JOIN: return CPG_REASON_JOIN;
    case RTOTEM_LEAVE: return CPG_REASON_LEAVE;
    case RTOTEM_NODEDOWN: return CPG_REASON_NODEDOWN;
    case RTOTEM_PROCDOWN: return CPG_REASON_PROCDOWN;
    case RTOTEM_NODEUP: return CPG_REASON_NODEUP;
  }
  return CPG_REASON_UNDEFINED;
}

// CPG gives at most CPG_MEMBERS_MAX processes in a list.
void fill(std::vector<cpg_address>& out, const rtotem_member* in, size_t n, const rtotem_reason* reasons,
          uint32_t reason) {
  out.clear();
  for (size_t i = 0; i < n && i < CPG_MEMBERS_MAX; ++i)
    out.push_back({in[i].nodeid, in[i].pid, reasons != nullptr ? cpg_reason(reasons[i]) : reason});
}

bool has(const std::vector<cpg_address>& list, uint32_t nodeid, uint32_t pid) {
  for (const cpg_address& a : list)
    if (a.nodeid == nodeid && a.pid == pid) return true;
  return false;
}

// The callbacks below run inside rtotem_dispatch, under the connection's mutex: they update the
// handle's state there and defer the application's callback, with copies of its arguments.
void totem_confchg(Cpg& s) {
  if (!s.model.cpg_totem_confchg_fn) return;
  s.connection.defer([&s, ring = s.ring, members = s.ring_members] {
    s.model.cpg_totem_confchg_fn(s.self, ring, static_cast<uint32_t>(members.size()), never_null(members));
  });
}

void on_deliver(rtotem_t*, const rtotem_message* m, void* ctx) {
  Cpg& s = *static_cast<Cpg*>(ctx);
  if (s.membership == Membership::kNone || s.rtotem_group != m->group || !s.model.cpg_deliver_fn) return;
  const auto* bytes = static_cast<const std::byte*>(m->data);
  // One byte more than the message, so that even an empty one has an address (see never_null).
  std::vector<std::byte> data(m->len + 1);
  if (m->len > 0) std::memcpy(data.data(), bytes, m->len);
  s.connection.defer([&s, group = s.group, nodeid = m->nodeid, pid = m->pid, data = std::move(data)]() mutable {
    s.model.cpg_deliver_fn(s.self, &group, nodeid, pid, data.data(), data.size() - 1);
  });
}

void on_group_change(rtotem_t*, const rtotem_group_change* c, void* ctx) {
  Cpg& s = *static_cast<Cpg*>(ctx);
  if (s.membership == Membership::kNone || s.rtotem_group != c->group) return;
  fill(s.members, c->members, c->n_members, nullptr, CPG_REASON_UNDEFINED);
  fill(s.left, c->left, c->n_left, c->left_reason, CPG_REASON_UNDEFINED);
  fill(s.joined, c->joined, c->n_joined, c->joined_reason, CPG_REASON_JOIN);
  const bool own_join = has(s.joined, s.local_nodeid, s.pid);
  if (has(s.left, s.local_nodeid, s.pid)) s.membership = Membership::kNone;  // its last event for the group
  if (s.model.cpg_confchg_fn)
    s.connection.defer([&s, group = s.group, members = s.members, left = s.left, joined = s.joined] {
      s.model.cpg_confchg_fn(s.self, &group, never_null(members), members.size(), never_null(left), left.size(),
                             never_null(joined), joined.size());
    });
  if (own_join && s.initial_totem_due) {
    s.initial_totem_due = false;
    totem_confchg(s);
  }
}

void on_ring_change(rtotem_t*, const rtotem_ring_change* r, void* ctx) {
  Cpg& s = *static_cast<Cpg*>(ctx);
  if (r->transitional) return;
  s.ring = {r->rep_nodeid, r->ring_seq};
  s.ring_members.assign(r->nodeids, r->nodeids + r->n_nodes);
  const bool first = !s.first_ring_seen;
  s.first_ring_seen = true;
  if (!first) totem_confchg(s);  // to every connection, joined or not
}

const rtotem_callbacks kCallbacks{on_deliver, on_group_change, on_ring_change};

// What a multicast's iovecs hold, as one run of bytes: the one iovec itself, or several gathered
// into the handle's scratch. Their lengths are judged first, so that a message over the limit is
// refused without a byte of it read.
std::optional<std::span<const std::byte>> gather(Cpg& s, const iovec* iov, unsigned int n) {
  if (n == 1) return std::span(static_cast<const std::byte*>(iov[0].iov_base), iov[0].iov_len);
  size_t total = 0;
  for (unsigned i = 0; i < n; ++i) {
    if (iov[i].iov_len > RTOTEM_MESSAGE_MAX - total) return std::nullopt;
    total += iov[i].iov_len;
  }
  s.gathered.clear();
  s.gathered.reserve(total);
  for (unsigned i = 0; i < n; ++i) {
    const auto* p = static_cast<const std::byte*>(iov[i].iov_base);
    s.gathered.insert(s.gathered.end(), p, p + iov[i].iov_len);
  }
  return std::span<const std::byte>(s.gathered);
}

cs_error_t send(Cpg& s, cpg_guarantee_t guarantee, const iovec* iov, unsigned int n) {
  // As Corosync: a message of a process not in the group is dropped, and the caller told CS_OK.
  if (s.membership != Membership::kJoined) return CS_OK;
  std::optional<std::span<const std::byte>> message;
  try {
    message = gather(s, iov, n);
  } catch (const std::bad_alloc&) {
    return CS_ERR_NO_MEMORY;
  }
  if (!message) return CS_ERR_TOO_BIG;
  const void* data = message->data();
  const size_t len = message->size();
  const auto mcast = [&] {
    return rtotem_mcast(s.connection.handle(), s.rtotem_group.c_str(), data, len,
                        guarantee == CPG_TYPE_SAFE ? RTOTEM_SAFE : RTOTEM_AGREED);
  };
  int rc = mcast();
  // librtotem's credit window is full: its credit comes back as events, which a CPG application
  // need not dispatch before it retries (dlm retries inside its callbacks). A flush takes the
  // credit back in its answer; what is still refused after it is the ring's back-pressure.
  if (rc == -EAGAIN && rtotem_flush(s.connection.handle()) == 0) rc = mcast();
  // A large message's scratch is not kept for the handle's life (pmxcfs sends in several iovecs).
  constexpr size_t kScratchKept = 64 * 1024;
  if (s.gathered.capacity() > kScratchKept) std::vector<std::byte>().swap(s.gathered);
  // Joined here is joined in librtotem too: -ENOTCONN means the daemon is gone (cs_error: LIBRARY).
  return rc == -EMSGSIZE ? CS_ERR_TOO_BIG : cs_error(rc);
}

}  // namespace

CS_EXPORT cs_error_t cpg_model_initialize(cpg_handle_t* handle, cpg_model_t model, cpg_model_data_t* model_data,
                                          void* context) {
  if (handle == nullptr || model != CPG_MODEL_V1) return CS_ERR_INVALID_PARAM;
  auto s = std::make_shared<Cpg>();
  if (model_data != nullptr) {
    s->model = *reinterpret_cast<const cpg_model_v1_data_t*>(model_data);
    if ((s->model.flags & ~CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF) != 0) return CS_ERR_INVALID_PARAM;
  }
  s->model.model = CPG_MODEL_V1;
  s->initial_totem_due = (s->model.flags & CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF) != 0;  // once a handle, as Corosync
  s->context = context;
  if (cs_error_t rc = s->connection.open(Service::kCpg, &kCallbacks, s.get()); rc != CS_OK) return rc;
  if (const int rc = rtotem_local_nodeid(s->connection.handle(), &s->local_nodeid); rc < 0) return cs_error(rc);
  return rtotem::corosync::publish(handles(), std::move(s), handle);
}

CS_EXPORT cs_error_t cpg_initialize(cpg_handle_t* handle, cpg_callbacks_t* callbacks) {
  cpg_model_v1_data_t model{};
  model.model = CPG_MODEL_V1;
  if (callbacks != nullptr) {
    model.cpg_deliver_fn = callbacks->cpg_deliver_fn;
    model.cpg_confchg_fn = callbacks->cpg_confchg_fn;
  }
  return cpg_model_initialize(handle, CPG_MODEL_V1, reinterpret_cast<cpg_model_data_t*>(&model), nullptr);
}

// As Corosync's, the handle's iterations end with it: those opened before it is marked finalized
// are ended here, and cpg_iteration_initialize refuses after.
CS_EXPORT cs_error_t cpg_finalize(cpg_handle_t handle) {
  const auto s = handles().get(handle);
  if (const cs_error_t rc = rtotem::corosync::finalize(handles(), handle); rc != CS_OK) return rc;
  std::lock_guard lock(s->iterations_mutex);
  for (const cpg_iteration_handle_t it : s->iterations) iterations().remove(it);
  s->iterations.clear();
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_fd_get(cpg_handle_t handle, int* fd) {
  return rtotem::corosync::fd_get(handles(), handle, fd);
}

CS_EXPORT cs_error_t cpg_dispatch(cpg_handle_t handle, cs_dispatch_flags_t flags) {
  return rtotem::corosync::dispatch(handles(), handle, flags);
}

CS_EXPORT cs_error_t cpg_max_atomic_msgsize_get(cpg_handle_t handle, uint32_t* size) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (size == nullptr) return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(s->connection.mutex());
  size_t max = 0;
  if (const int rc = rtotem_max_message_size(s->connection.handle(), &max); rc < 0) return cs_error(rc);
  *size = static_cast<uint32_t>(max);
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_context_get(cpg_handle_t handle, void** context) {
  return rtotem::corosync::context_get(handles(), handle, context);
}

CS_EXPORT cs_error_t cpg_context_set(cpg_handle_t handle, void* context) {
  return rtotem::corosync::context_set(handles(), handle, context);
}

CS_EXPORT cs_error_t cpg_join(cpg_handle_t handle, const struct cpg_name* group) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (group == nullptr) return CS_ERR_INVALID_PARAM;
  if (group->length > CPG_MAX_NAME_LENGTH) return CS_ERR_NAME_TOO_LONG;
  const std::optional<std::string> name = rtotem_group_name(*group);
  if (!name) return CS_ERR_NAME_TOO_LONG;
  std::lock_guard lock(s->connection.mutex());
  if (s->membership == Membership::kJoined) return CS_ERR_EXIST;  // one group per handle
  if (s->membership == Membership::kLeaving) return CS_ERR_TRY_AGAIN;
  if (const int rc = rtotem_join(s->connection.handle(), name->c_str()); rc < 0) return cs_error(rc);
  s->membership = Membership::kJoined;
  std::memset(&s->group, 0, sizeof s->group);
  s->group.length = group->length;
  std::memcpy(s->group.value, group->value, group->length);
  s->rtotem_group = *name;
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_leave(cpg_handle_t handle, const struct cpg_name* group) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (group == nullptr) return CS_ERR_INVALID_PARAM;
  if (group->length > CPG_MAX_NAME_LENGTH) return CS_ERR_NAME_TOO_LONG;
  std::lock_guard lock(s->connection.mutex());
  if (s->membership != Membership::kJoined || group->length != s->group.length ||
      std::memcmp(group->value, s->group.value, group->length) != 0)
    return CS_ERR_NOT_EXIST;
  if (const int rc = rtotem_leave(s->connection.handle(), s->rtotem_group.c_str()); rc < 0) return cs_error(rc);
  s->membership = Membership::kLeaving;  // still delivered to until its own leave confchg
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_mcast_joined(cpg_handle_t handle, cpg_guarantee_t guarantee, const struct iovec* iov,
                                      unsigned int iov_len) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (iov == nullptr && iov_len > 0) return CS_ERR_INVALID_PARAM;
  std::lock_guard lock(s->connection.mutex());
  return send(*s, guarantee, iov, iov_len);
}

// The group's members as this node's daemon knows them now.
CS_EXPORT cs_error_t cpg_membership_get(cpg_handle_t handle, struct cpg_name* group, struct cpg_address* member_list,
                                        int* member_list_entries) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (group == nullptr || member_list == nullptr || member_list_entries == nullptr) return CS_ERR_INVALID_PARAM;
  const std::optional<std::string> name = rtotem_group_name(*group);
  if (!name) return CS_ERR_NAME_TOO_LONG;
  struct Out {
    cpg_address* list;
    int n = 0;
  } out{member_list};
  std::lock_guard lock(s->connection.mutex());
  const int rc = rtotem_group_members(
      s->connection.handle(), name->c_str(),
      [](const char*, const rtotem_member* members, size_t n, void* ctx) {
        auto& o = *static_cast<Out*>(ctx);
        for (size_t i = 0; i < n && o.n < CPG_MEMBERS_MAX; ++i)
          o.list[o.n++] = {members[i].nodeid, members[i].pid, CPG_REASON_UNDEFINED};
        return 1;
      },
      &out);
  if (rc < 0) return cs_error(rc);
  *member_list_entries = out.n;
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_local_get(cpg_handle_t handle, unsigned int* local_nodeid) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (local_nodeid == nullptr) return CS_ERR_INVALID_PARAM;
  *local_nodeid = s->local_nodeid;
  return CS_OK;
}

// Corosync 3 always answers DISABLED: back-pressure shows as CS_ERR_TRY_AGAIN from the send.
CS_EXPORT cs_error_t cpg_flow_control_state_get(cpg_handle_t handle, cpg_flow_control_state_t* state) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (state == nullptr) return CS_ERR_INVALID_PARAM;
  *state = CPG_FLOW_CONTROL_DISABLED;
  return CS_OK;
}

// The "zero-copy" calls, as Corosync 3.1.9 and later make them: a buffer of the application's,
// multicast as cpg_mcast_joined does.
CS_EXPORT cs_error_t cpg_zcb_alloc(cpg_handle_t handle, size_t size, void** buffer) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (buffer == nullptr) return CS_ERR_INVALID_PARAM;
  void* b = std::malloc(size > 0 ? size : 1);
  if (b == nullptr) return CS_ERR_NO_MEMORY;
  std::lock_guard lock(s->connection.mutex());
  s->zcb_buffers.insert(b);
  *buffer = b;
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_zcb_free(cpg_handle_t handle, void* buffer) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  if (s->zcb_buffers.erase(buffer) == 0) return CS_ERR_INVALID_PARAM;
  std::free(buffer);
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_zcb_mcast_joined(cpg_handle_t handle, cpg_guarantee_t guarantee, void* msg, size_t msg_len) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  std::lock_guard lock(s->connection.mutex());
  if (!s->zcb_buffers.contains(msg)) return CS_ERR_INVALID_PARAM;
  const iovec one{msg, msg_len};
  return send(*s, guarantee, &one, 1);
}

CS_EXPORT cs_error_t cpg_iteration_initialize(cpg_handle_t handle, cpg_iteration_type_t type,
                                              const struct cpg_name* group, cpg_iteration_handle_t* iteration) {
  auto s = handles().get(handle);
  if (!s) return CS_ERR_BAD_HANDLE;
  if (iteration == nullptr || type < CPG_ITERATION_NAME_ONLY || type > CPG_ITERATION_ALL ||
      (type == CPG_ITERATION_ONE_GROUP && group == nullptr))
    return CS_ERR_INVALID_PARAM;
  std::string one;
  if (type == CPG_ITERATION_ONE_GROUP) {
    const std::optional<std::string> name = rtotem_group_name(*group);
    if (!name) return CS_ERR_NAME_TOO_LONG;
    one = *name;
  }
  struct Collect {
    cpg_iteration_type_t type;
    Iteration it;
  } collect{type, {handle, {}, 0}};
  std::lock_guard lock(s->connection.mutex());
  const int rc = rtotem_group_members(
      s->connection.handle(), one.empty() ? nullptr : one.c_str(),
      [](const char* name, const rtotem_member* members, size_t n, void* ctx) {
        auto& c = *static_cast<Collect*>(ctx);
        const std::optional<cpg_name> group_name = cpg_group_name(name);
        if (!group_name) return 0;  // a group no CPG client could have made
        if (c.type == CPG_ITERATION_NAME_ONLY) {
          c.it.entries.push_back({*group_name, 0, 0});
          return 0;
        }
        for (size_t i = 0; i < n; ++i) c.it.entries.push_back({*group_name, members[i].nodeid, members[i].pid});
        return 0;
      },
      &collect);
  if (rc < 0) return cs_error(rc);
  std::lock_guard own(s->iterations_mutex);
  if (s->connection.finalized()) return CS_ERR_BAD_HANDLE;  // by another thread meanwhile
  *iteration = iterations().add(std::make_shared<Iteration>(std::move(collect.it)));
  s->iterations.insert(*iteration);
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_iteration_next(cpg_iteration_handle_t iteration, struct cpg_iteration_description_t* out) {
  auto it = iterations().get(iteration);
  if (!it) return CS_ERR_BAD_HANDLE;
  if (out == nullptr) return CS_ERR_INVALID_PARAM;
  if (it->next == it->entries.size()) return CS_ERR_NO_SECTIONS;
  *out = it->entries[it->next++];
  return CS_OK;
}

CS_EXPORT cs_error_t cpg_iteration_finalize(cpg_iteration_handle_t iteration) {
  const auto it = iterations().remove(iteration);
  if (!it) return CS_ERR_BAD_HANDLE;
  if (const auto s = handles().get(it->owner)) {
    std::lock_guard lock(s->iterations_mutex);
    s->iterations.erase(iteration);
  }
  return CS_OK;
}
