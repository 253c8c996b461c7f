// Forming a ring (tocssrp95 §4, as corosync's totemsrp runs it).
//
// Gather: a node that lost its token, hears another ring, or starts, multicasts joins (who it
// hears: proc_set; who it gave up on: failed_set) until every node of proc_set − failed_set sends
// the same two sets (consensus). Who is silent until the consensus timeout is declared failed.
// A join that knows more widens ours and restarts the round; one that thinks us failed is failed.
// Commit: the representative (smallest id of the consensus) makes a commit token naming the new
// ring, which goes round twice: on the first rotation each member writes where it comes from
// (old ring, aru, highest delivered), on the second each enters Recovery with everyone's entry.
// The representative then starts the new ring's token (recovery.cpp takes over).
#include <algorithm>

#include "membership/node.hpp"
#include "membership/node_set.hpp"

namespace rtotem::membership {

using transport::InboundPacket;
using transport::SendBufferRef;

void Node::gather_enter(Time now) {
  RTOTEM_ASSERT(started_ && state_ != MemberState::kLeft);
  if (state_ == MemberState::kRecovery) recovery_abort();
  state_ = MemberState::kGather;
  insert(proc_set_, self_);
  consensus_ = single(self_);
  heard_in_round_ = NodeList{};
  cancel_token_timers();
  events_.cancel_timer(TimerId::kTokenLoss);
  events_.cancel_timer(TimerId::kMergeDetect);
  ++counters_.gathers;
  if (config_.send_join_ms == 0) {
    send_join();
    events_.arm_timer(TimerId::kJoin, now + ms_to_time(config_.join_ms));
  } else {
    // The join timer sends it. Re-entries within the delay (a node hears of many others at
    // once when a large ring forms) send one join with the widest sets, not one each.
    events_.arm_timer(TimerId::kJoin, now + join_delay());
  }
  // Restarted on each entry (as corosync does): everyone gets a full consensus period to answer
  // our new sets. Sets only grow within a round, so re-entries are bounded by the node count.
  events_.arm_timer(TimerId::kConsensus, now + ms_to_time(config_.consensus_ms));
  // Nobody gives up on itself but a leaving node, and a round starts agreed with itself only.
  RTOTEM_ASSERT(contains(proc_set_, self_) && !contains(failed_set_, self_));
  RTOTEM_ASSERT(consensus_.count == 1 && !holding_token_ && !token_buffer_);
}

// Every node takes our word on ourselves (merge_join_sets), so naming ourselves failed makes the
// others agree on a ring without us in one round of joins. Sent twice: a lost copy costs them a
// token timeout.
void Node::leave() {
  RTOTEM_ASSERT(started_ && state_ != MemberState::kLeft);
  merge(proc_set_, ring_.members);
  if (state_ == MemberState::kCommit || state_ == MemberState::kRecovery) merge(proc_set_, new_members_);
  insert(failed_set_, self_);
  for (int copy = 0; copy < 2; ++copy) send_join();
  cancel_token_timers();
  for (const TimerId timer : {TimerId::kTokenLoss, TimerId::kJoin, TimerId::kConsensus, TimerId::kMergeDetect})
    events_.cancel_timer(timer);
  state_ = MemberState::kLeft;
  RTOTEM_ASSERT(contains(failed_set_, self_) && !holding_token_);
}

// Random in [0, send_join): with tens of nodes all answering the same join, joins sent at once
// arrive as a burst at every receiver (corosync's send_join).
Time Node::join_delay() noexcept {
  if (config_.send_join_ms == 0) return 0;
  const Time delay = join_rng_.uniform(ms_to_time(config_.send_join_ms));
  RTOTEM_ASSERT(delay < ms_to_time(config_.send_join_ms));
  return delay;
}

void Node::send_join() {
  RTOTEM_ASSERT(state_ == MemberState::kGather || contains(failed_set_, self_));  // a round, or a leave
  Join join;
  join.sender = self_;
  join.ring_seq = ring_seq_;
  join.proc_set = proc_set_;
  join.failed_set = failed_set_;
  SendBufferRef buffer;
  if (backend_->acquire(buffer) != Status::kOk) {
    ++counters_.send_refused;  // the join timer sends it again
    return;
  }
  buffer->set_payload_size(static_cast<std::uint32_t>(encode_join(join, buffer->writable_payload())));
  if (backend_->multicast(buffer) == Status::kOk)
    ++counters_.joins_sent;
  else
    ++counters_.send_refused;
}

void Node::on_join(InboundPacket& packet, Time now) {
  Join join;
  if (decode_join(packet.payload, join) != DecodeError::kNone) {
    ++counters_.packets_malformed;
    return;
  }
  if (join.sender != packet.from) {
    ++counters_.packets_spoofed;
    return;
  }
  if (join.sender == self_) return;
  if (contains(join.failed_set, join.sender)) strangers_.forget(join.sender);  // it is leaving
  // Not from a node we gave up on this round: the seq our joins carry dates our verdicts (the
  // stale rule below), and that node, gathering at its new ring's seq, would take our old verdict
  // on it as its round's word and fail us back. Its seq reaches us once the round is over.
  if (join.ring_seq > ring_seq_ && !contains(failed_set_, join.sender)) {
    // A new ring must outnumber every one seen, and a restart must not come back below it: a
    // commit token's seq is stored only when above ours, so one we were put on could be lost.
    ring_seq_ = join.ring_seq;
    events_.persist_ring_seq(ring_seq_);
  }
  if (state_ != MemberState::kGather) {
    if (join_is_stale(join)) {
      ++counters_.joins_stale;
      return;
    }
    // As corosync: a ring being formed listens only to its own members. A stranger's round
    // would abort it, and a node that keeps its failed set until a ring is installed would keep
    // failing the stranger, round after round; once installed, the stranger's joins merge us.
    if (state_ != MemberState::kOperational && !contains(new_members_, join.sender)) {
      ++counters_.joins_deferred;
      return;
    }
    // A stranger's join lists whom it counts live (merge_vote.cpp), even one that gave up on us.
    if (!contains(ring_.members, join.sender))
      strangers_.says_live(join.sender, difference(join.proc_set, join.failed_set));
    // A stranger that gave up on us: its round goes on without us; answering would make us fail
    // it, and each side's joins would restart the other's round forever. Its ring's merge
    // detection brings us together. A member of our ring (or, past the deferral above, of the one
    // being formed) that gave up on us has left it (it failed to receive, or timed us out): it
    // will not pass the token, so waiting for the token timeout only delays the ring we form
    // without it. It ignores our joins (it failed us), so the two rounds cannot restart each other.
    if (contains(join.failed_set, self_)) {
      if (state_ == MemberState::kOperational && !contains(ring_.members, join.sender)) {
        ++counters_.joins_failing_us;
        return;
      }
      merge_join_sets(join);  // it goes into our failed set
      gather_enter(now);
      return;
    }
    // A stranger's join: ours to merge with once every member hears it (merge_vote.cpp); a
    // stranger leaving (its join names itself failed) is nothing to merge with. Past Operational
    // the sender is a member of the ring being formed (deferral above): that ring will not form.
    if (state_ == MemberState::kOperational && !contains(ring_.members, join.sender) &&
        (contains(join.failed_set, join.sender) || !note_stranger(join.sender, now)))
      return;
    merge_join_sets(join);
    gather_enter(now);
    if (equal(join.proc_set, proc_set_) && equal(join.failed_set, failed_set_)) insert(consensus_, join.sender);
    return;
  }
  if (contains(failed_set_, join.sender)) return;  // given up on for this round
  // Sent before its sender heard of our ring (every join of ours carries at least its seq): a
  // leftover of an older round, or the word of a node that has not heard us yet; either way not
  // this round's verdict. Taken, a late one failing us would make us fail its sender back, and
  // two connected nodes would go on failing each other. Its next join, once it hears ours,
  // carries our seq. A leaving node's join is its last (leave() sends it twice, then nothing).
  if (join.ring_seq < ring_.id.seq && !contains(join.failed_set, join.sender)) {
    ++counters_.joins_stale;
    return;
  }
  if (equal(join.proc_set, proc_set_) && equal(join.failed_set, failed_set_)) {
    insert(consensus_, join.sender);
    check_consensus(now);
    return;
  }
  // It knows no more than we do (or only failures we do not take from it): our next join tells
  // it the rest. Re-entering for nothing would answer join with join at network speed.
  if (merge_join_sets(join)) gather_enter(now);
}

// A join sent by a member of our ring (or of the one being formed) before it learned of that
// ring: left over from the round that formed it. Not so, in Commit, a member's join at or above
// our last ring's seq whose sets exceed ours (the consensus; a node's sets only grow until it
// installs a ring) and name another ring: sent after it agreed, by a node that will refuse the
// commit token. We gather now, not at the token timeout: a one-way cut loses the commit token,
// and the round that follows gives up on the node behind it.
bool Node::join_is_stale(const Join& join) const noexcept {
  if (state_ == MemberState::kOperational) return contains(ring_.members, join.sender) && join.ring_seq < ring_.id.seq;
  if (!contains(new_members_, join.sender) || join.ring_seq >= commit_.ring_id.seq) return false;
  if (state_ != MemberState::kCommit || join.ring_seq < ring_.id.seq) return true;
  const bool within_ours = is_subset(join.proc_set, proc_set_) && is_subset(join.failed_set, failed_set_);
  return within_ours || equal(difference(join.proc_set, join.failed_set), new_members_);
}

// A member of our last ring is taken at its word on everyone; a stranger, as in Corosync, only on
// nodes outside that ring. Its verdicts on our members would let two rings' old verdicts split
// everyone into singletons, round after round; without the rest, nodes that never shared a ring
// (all of them at a cold start) would never agree on a failure, and each would form a ring alone.
// A stranger's join older than a ring seq we know of may be an old round's, late (the stale rule
// dates joins by our last ring's seq, 0 at a cold start or after a restart): its verdicts on others
// are not taken, only on itself (leaving) or on us (above). Returns whether our sets grew.
bool Node::merge_join_sets(const Join& join) noexcept {
  const std::uint16_t before = proc_set_.count + failed_set_.count;
  merge(proc_set_, join.proc_set);
  if (contains(join.failed_set, self_))
    insert(failed_set_, join.sender);  // it gave up on us: we cannot be on one ring this round
  else if (contains(ring_.members, join.sender))
    merge(failed_set_, join.failed_set);
  else if (join.ring_seq >= ring_seq_)
    merge(failed_set_, difference(join.failed_set, ring_.members));
  else if (contains(join.failed_set, join.sender))
    insert(failed_set_, join.sender);
  // Sets only grow within a round, and no join makes us give up on ourselves.
  RTOTEM_ASSERT(proc_set_.count + failed_set_.count >= before && !contains(failed_set_, self_));
  return proc_set_.count + failed_set_.count != before;
}

void Node::on_merge_detect(InboundPacket& packet, Time now) {
  MergeDetect merge_detect;
  if (decode_merge_detect(packet.payload, merge_detect) != DecodeError::kNone) {
    ++counters_.packets_malformed;
    return;
  }
  if (merge_detect.sender != packet.from) {
    ++counters_.packets_spoofed;
    return;
  }
  if (merge_detect.sender == self_ || merge_detect.ring_id == ring_.id) return;
  heard_foreign(merge_detect.sender, merge_detect.ring_id, now);
  note_merge_detect(merge_detect, now);
}

// A node of another ring is alive and reaches us: the rings should become one.
void Node::heard_foreign(NodeId sender, const RingId& ring, Time now) {
  if (sender == self_) return;
  if (state_ == MemberState::kOperational) {
    // A member still on an older ring of ours sends stragglers; a member on a newer ring means
    // one that went on without us; a stranger, a ring to merge with once all of us hear it.
    if (contains(ring_.members, sender) ? ring.seq < ring_.id.seq : !note_stranger(sender, now)) return;
  } else if (state_ != MemberState::kGather || contains(proc_set_, sender) || contains(failed_set_, sender)) {
    return;
  }
  ++counters_.foreign_heard;
  insert(proc_set_, sender);
  gather_enter(now);
}

void Node::check_consensus(Time now) {
  if (state_ != MemberState::kGather) return;
  const NodeList members = difference(proc_set_, failed_set_);
  if (!is_subset(members, consensus_)) return;
  RTOTEM_ASSERT(members.count > 0 && contains(members, self_));
  if (members.ids[0] == self_) form_commit(now);  // the representative; the others wait for it
}

void Node::on_consensus_timeout(Time now) {
  if (state_ != MemberState::kGather) return;
  ++counters_.consensus_timeouts;
  const NodeList members = difference(proc_set_, failed_set_);
  if (is_subset(members, consensus_)) {
    // Everyone agreed but no commit token came: agree again from fresh joins.
    consensus_ = single(self_);
    events_.arm_timer(TimerId::kConsensus, now + ms_to_time(config_.consensus_ms));
    check_consensus(now);
    return;
  }
  note_given_up(difference(members, consensus_));
  merge(failed_set_, difference(members, consensus_));
  RTOTEM_ASSERT(contains(consensus_, self_) && !contains(failed_set_, self_));
  gather_enter(now);
}

// The representative's, every merge period; a member's while it announces itself (merge_vote.cpp).
// Never while deaf_: a node alone for failing to receive would pull the others into Gather.
void Node::send_merge_detect(Time now) {
  if (state_ != MemberState::kOperational || deaf_ || (ring_.id.rep != self_ && !announcing(now))) return;
  MergeDetect merge_detect;
  merge_detect.ring_id = ring_.id;
  merge_detect.sender = self_;
  merge_detect.unheard = published_unheard(now);
  SendBufferRef buffer;
  if (backend_->acquire(buffer) == Status::kOk) {
    buffer->set_payload_size(static_cast<std::uint32_t>(encode_merge_detect(merge_detect, buffer->writable_payload())));
    if (backend_->multicast(buffer) == Status::kOk) ++counters_.merge_detects_sent;
  }
  events_.arm_timer(TimerId::kMergeDetect, now + ms_to_time(config_.merge_ms));
}

void Node::form_commit(Time now) {
  RTOTEM_ASSERT(state_ == MemberState::kGather);
  const NodeList members = difference(proc_set_, failed_set_);
  RTOTEM_ASSERT(members.count > 0 && members.ids[0] == self_);  // the representative: smallest id
  if (members.count > members_max_) {
    ++counters_.rings_too_large;  // stays in Gather; the operator's config allows too many nodes
    return;
  }
  // Persisted before anyone hears of it: a restarted representative never names a ring twice.
  ring_seq_ = std::max(ring_seq_, ring_.id.seq) + 1;
  RTOTEM_ASSERT(ring_seq_ > ring_.id.seq);  // a new ring outnumbers the one it replaces
  events_.persist_ring_seq(ring_seq_);
  commit_ = Commit{};
  commit_.ring_id = RingId{self_, ring_seq_};
  commit_.count = members.count;
  for (std::uint16_t i = 0; i < members.count; ++i) {
    commit_.members[i].node = members.ids[i];
    commit_.members[i].old_ring = RingId{members.ids[i], 0};  // until the member writes its own
  }
  fill_commit_entry(commit_.members[0]);
  new_members_ = members;
  state_ = MemberState::kCommit;
  events_.cancel_timer(TimerId::kJoin);
  events_.cancel_timer(TimerId::kConsensus);
  events_.arm_timer(TimerId::kTokenLoss, now + ms_to_time(config_.token_timeout_ms));
  forward_commit(now);
}

// Hop h of the commit token goes to member h mod n, so a member at index i sees it as hop i on
// the first rotation and n + i on the second; the representative sees n, then 2n.
void Node::on_commit(InboundPacket& packet, Time now) {
  Commit& c = incoming_commit_;
  if (decode_commit(packet.payload, c) != DecodeError::kNone) {
    ++counters_.packets_malformed;
    return;
  }
  const std::uint64_t n = c.count;
  const std::uint64_t index = c.memb_index;
  const std::uint64_t hop = c.token_seq;
  if (c.members[index].node != self_ || c.ring_id.rep != c.members[0].node) {
    ++counters_.commits_ignored;
    return;
  }
  NodeList named;
  for (std::uint16_t i = 0; i < c.count; ++i) named.ids[i] = c.members[i].node;
  named.count = c.count;
  if (state_ == MemberState::kGather && index != 0 && hop == index && c.ring_id.seq > ring_.id.seq &&
      equal(named, difference(proc_set_, failed_set_))) {
    if (c.ring_id.seq > ring_seq_) {
      ring_seq_ = c.ring_id.seq;
      events_.persist_ring_seq(ring_seq_);
    }
    std::swap(commit_, c);
    fill_commit_entry(commit_.members[index]);
    new_members_ = named;
    RTOTEM_ASSERT(ring_seq_ >= commit_.ring_id.seq && contains(new_members_, self_));
    state_ = MemberState::kCommit;
    events_.cancel_timer(TimerId::kJoin);
    events_.cancel_timer(TimerId::kConsensus);
    events_.arm_timer(TimerId::kTokenLoss, now + ms_to_time(config_.token_timeout_ms));
    forward_commit(now);
  } else if (state_ == MemberState::kCommit && c.ring_id == commit_.ring_id && hop == n + index % n) {
    // index % n: the representative's second visit is hop n, the others' n + index.
    std::swap(commit_, c);
    recovery_enter(now);
    RTOTEM_ASSERT(state_ == MemberState::kRecovery && ring_.id == commit_.ring_id);
    forward_commit(now);
  } else if (state_ == MemberState::kRecovery && index == 0 && hop == 2 * n && c.ring_id == ring_.id &&
             !recovery_.token_started) {
    recovery_.token_started = true;
    token_buffer_.reset();  // the commit token came round: no more resending it
    events_.cancel_timer(TimerId::kTokenRetransmit);
    originate_token(now);
  } else {
    ++counters_.commits_ignored;  // a resent copy, or a round this node has left
  }
}

void Node::forward_commit(Time now) {
  RTOTEM_ASSERT(state_ == MemberState::kCommit || state_ == MemberState::kRecovery);
  RTOTEM_ASSERT(commit_.count > 0 && commit_.count <= kMembersMax);
  ++commit_.token_seq;
  commit_.memb_index = static_cast<std::uint16_t>(commit_.token_seq % commit_.count);
  SendBufferRef buffer;
  if (backend_->acquire(buffer) != Status::kOk) {
    ++counters_.send_refused;  // token loss takes the ring back to Gather
    return;
  }
  buffer->set_payload_size(static_cast<std::uint32_t>(encode_commit(commit_, buffer->writable_payload())));
  seq_forwarded_ = 0;
  send_token_buffer(std::move(buffer), commit_.members[commit_.memb_index].node, commit_.ring_id, now);
}

void Node::fill_commit_entry(CommitMember& entry) const noexcept {
  entry.old_ring = ring_.id;
  entry.aru = ring_.queue.aru();
  entry.high_delivered = ring_.delivered_through;
  RTOTEM_ASSERT(entry.high_delivered <= entry.aru);  // nothing is delivered before all below it is held
}

}  // namespace rtotem::membership
