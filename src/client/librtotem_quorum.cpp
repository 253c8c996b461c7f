// librtotem's quorum calls (rtotem.h: rtotem_quorum_*): tracking, and the runtime changes
// votequorum allows, over the daemon's kQuorumTrack, kQuorumChange and kQuorumSet.
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

}  // namespace

int rtotem::client::quorum_event(rtotem_t* h, membership::WireReader& in) {
  rtotem_quorum q{};
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
  h->quorum_nodes.resize(count);
  for (rtotem_quorum_node& node : h->quorum_nodes) {
    node.nodeid = in.get_u32();
    node.votes = in.get_u32();
  }
  if (!in.at_end()) return -EPROTO;
  q.nodes = h->quorum_nodes.data();
  q.n_nodes = count;
  if (h->quorum_changed) h->quorum_changed(h, &q, h->ctx);
  return 0;
}

int rtotem_quorum_track(rtotem_t* h, rtotem_quorum_fn changed) {
  if (h == nullptr) return -EINVAL;
  rtotem::ipc::BodyWriter& body = h->request;
  body.clear();
  body.u8(changed != nullptr ? 1 : 0);
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
