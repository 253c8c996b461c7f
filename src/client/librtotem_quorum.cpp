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
