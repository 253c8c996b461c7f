// librtotem's quorum calls (rtotem.h: rtotem_quorum_*): tracking, one node's view, and the runtime
// changes votequorum allows, over the daemon's kQuorumTrack, kQuorumChange, kQuorumNode and kQuorumSet.
#include <cerrno>

#include "src/client/librtotem_handle.hpp"

using rtotem::client::Reply;
using rtotem::ipc::RequestId;

namespace {

int quorum_set(rtotem_t* h, std::uint8_t what, std::uint32_t node, std::uint32_t value) {
  if (h == nullptr) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(what);
  body.u32(node);
  body.u32(value);
  Reply reply;
  return rtotem::client::call(h, RequestId::kQuorumSet, body.data(), reply);
}

// A kQuorumDevice request of op `op` and the names; `tail` writes what follows them.
template <class Tail>
int device_call(rtotem_t* h, std::uint8_t op, const char* name, const char* new_name, Tail tail) {
  if (h == nullptr || name == nullptr) return -EINVAL;
  const std::string_view n(name);
  if (n.empty() || n.size() > rtotem::ipc::kDeviceNameMax) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(op);
  body.string(n);
  if (op == rtotem::ipc::kDeviceUpdate) {
    if (new_name == nullptr) return -EINVAL;
    const std::string_view nn(new_name);
    if (nn.empty() || nn.size() > rtotem::ipc::kDeviceNameMax) return -EINVAL;
    body.string(nn);
  }
  tail(body);
  Reply reply;
  return rtotem::client::call(h, RequestId::kQuorumDevice, body.data(), reply);
}

void nothing_more(rtotem::ipc::BodyWriter&) {}

// The quorum state as kQuorumChange carries it; q.nodes points into `nodes`.
int read_quorum(rtotem::WireReader& in, rtotem_quorum& q, std::vector<rtotem_quorum_node>& nodes) {
  q = {};
  q.rep_nodeid = in.get_u32();
  q.ring_seq = in.get_u64();
  q.quorate = in.get_u8();
  q.expected_votes = in.get_u32();
  q.highest_expected = in.get_u32();
  q.total_votes = in.get_u32();
  q.quorum = in.get_u32();
  q.flags = in.get_u32();
  const std::uint32_t count = in.get_u32();
  if (in.short_read() || count > in.remaining() / 8) return -EPROTO;
  nodes.resize(count);
  for (rtotem_quorum_node& node : nodes) {
    node.nodeid = in.get_u32();
    node.votes = in.get_u32();
  }
  if (!in.at_end()) return -EPROTO;
  q.nodes = nodes.data();
  q.n_nodes = count;
  return 0;
}

}  // namespace

int rtotem::client::quorum_event(rtotem_t* h, WireReader& in) {
  rtotem_quorum q;
  if (const int rc = read_quorum(in, q, h->quorum_nodes); rc < 0) return rc;
  if (h->quorum_changed) h->quorum_changed(h, &q, h->ctx);
  return 0;
}

int rtotem_quorum_get(rtotem_t* h, uint32_t nodeid, struct rtotem_quorum_node_info* node, struct rtotem_quorum* state) {
  if (h == nullptr || node == nullptr || state == nullptr) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u32(nodeid);
  Reply reply;
  if (const int rc = rtotem::client::call(h, RequestId::kQuorumNode, body.data(), reply); rc < 0) return rc;
  rtotem::WireReader in(reply.body);
  node->nodeid = in.get_u32();
  node->member = in.get_u8();
  node->votes = in.get_u32();
  node->expected_votes = in.get_u32();
  if (in.short_read()) return -EPROTO;
  return read_quorum(in, *state, h->quorum_get_nodes);
}

int rtotem_quorum_track(rtotem_t* h, rtotem_quorum_fn changed) {
  return rtotem_quorum_track_changes(h, changed, RTOTEM_QUORUM_CHANGES_ALL);
}

int rtotem_quorum_track_changes(rtotem_t* h, rtotem_quorum_fn changed, int which) {
  static_assert(RTOTEM_QUORUM_CHANGES_ALL == rtotem::ipc::kQuorumTrackEvery &&
                RTOTEM_QUORUM_CHANGES_RING == rtotem::ipc::kQuorumTrackRings &&
                RTOTEM_QUORUM_CHANGES_RING_EXPECTED == rtotem::ipc::kQuorumTrackRingsAndExpected &&
                RTOTEM_QUORUM_CHANGES_NONE == rtotem::ipc::kQuorumTrackStateOnly);
  if (h == nullptr || which < RTOTEM_QUORUM_CHANGES_ALL || which > RTOTEM_QUORUM_CHANGES_NONE) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(changed != nullptr ? static_cast<std::uint8_t>(which) : rtotem::ipc::kQuorumTrackStop);
  Reply reply;
  // Set first: the daemon's first event may be read in the same turn as its answer.
  rtotem_quorum_fn before = h->quorum_changed;
  h->quorum_changed = changed;
  const int rc = rtotem::client::call(h, RequestId::kQuorumTrack, body.data(), reply);
  if (rc < 0) h->quorum_changed = before;
  return rc;
}

int rtotem_quorum_set_votes(rtotem_t* h, uint32_t nodeid, uint32_t votes) {
  return quorum_set(h, rtotem::ipc::kQuorumSetVotes, nodeid, votes);
}

int rtotem_quorum_set_expected(rtotem_t* h, uint32_t expected_votes) {
  return quorum_set(h, rtotem::ipc::kQuorumSetExpected, 0, expected_votes);
}

int rtotem_quorum_device_register(rtotem_t* h, const char* name) {
  return device_call(h, rtotem::ipc::kDeviceRegister, name, nullptr, nothing_more);
}

int rtotem_quorum_device_unregister(rtotem_t* h, const char* name) {
  return device_call(h, rtotem::ipc::kDeviceUnregister, name, nullptr, nothing_more);
}

int rtotem_quorum_device_update(rtotem_t* h, const char* old_name, const char* new_name) {
  return device_call(h, rtotem::ipc::kDeviceUpdate, old_name, new_name, nothing_more);
}

int rtotem_quorum_device_poll(rtotem_t* h, const char* name, int cast_vote, uint32_t rep_nodeid, uint64_t ring_seq) {
  return device_call(h, rtotem::ipc::kDevicePoll, name, nullptr, [&](rtotem::ipc::BodyWriter& body) {
    body.u8(cast_vote != 0 ? 1 : 0);
    body.u32(rep_nodeid);
    body.u64(ring_seq);
  });
}

int rtotem_quorum_device_master_wins(rtotem_t* h, const char* name, int allow) {
  return device_call(h, rtotem::ipc::kDeviceMasterWins, name, nullptr,
                     [&](rtotem::ipc::BodyWriter& body) { body.u8(allow != 0 ? 1 : 0); });
}

int rtotem_quorum_device_get(rtotem_t* h, uint32_t nodeid, struct rtotem_quorum_device_info* info) {
  if (h == nullptr || info == nullptr) return -EINVAL;
  static_assert(RTOTEM_QUORUM_DEVICE_REGISTERED == rtotem::ipc::kDeviceFlagRegistered &&
                RTOTEM_QUORUM_DEVICE_ALIVE == rtotem::ipc::kDeviceFlagAlive &&
                RTOTEM_QUORUM_DEVICE_CAST_VOTE == rtotem::ipc::kDeviceFlagCastVote &&
                RTOTEM_QUORUM_DEVICE_MASTER_WINS == rtotem::ipc::kDeviceFlagMasterWins &&
                RTOTEM_QUORUM_DEVICE_NAME_MAX == rtotem::ipc::kDeviceNameMax + 1);
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(rtotem::ipc::kDeviceInfo);
  body.u32(nodeid);
  Reply reply;
  if (const int rc = rtotem::client::call(h, RequestId::kQuorumDevice, body.data(), reply); rc < 0) return rc;
  rtotem::WireReader in(reply.body);
  *info = {};
  info->flags = in.get_u32();
  info->votes = in.get_u32();
  const auto name = rtotem::ipc::read_string(in, rtotem::ipc::kDeviceNameMax);
  if (in.short_read() || !name || !in.at_end()) return -EPROTO;
  name->copy(info->name, name->size());
  return 0;
}
