// Recovery and the configuration changes of extended virtual synchrony (tocssrp95 §5; Moser,
// Amir, Melliar-Smith, Agarwal: "Extended virtual synchrony", ICDCS 1994).
//
// On the new ring, the members that come from one old ring (the transitional configuration)
// make their old-ring message sets equal: each re-sends, inside new-ring messages, every old
// message above the lowest aru among them, so that all of them end up holding the same set.
// Then each delivers, in this order:
//  1. old messages up to the highest any of them delivered before the old ring failed: delivered
//     in the old regular configuration, as they were somewhere (every old member held them);
//  2. the transitional configuration (survivors of the old ring);
//  3. the rest of the old messages, in order, skipping the holes (their senders are gone: a
//     survivor keeps its own messages until every old member holds them);
//  4. the regular configuration of the new ring. New-ring messages follow.
// If the new ring fails during Recovery, the node goes back to Gather with its old ring (and
// whatever Recovery brought it): the next ring's Recovery starts over from there.
#include <algorithm>
#include <cstring>

#include "membership/node.hpp"
#include "membership/node_set.hpp"

namespace rtotem::membership {

using transport::SendBufferRef;

void Node::recovery_enter(Time now) {
  RTOTEM_ASSERT(state_ == MemberState::kCommit && contains(new_members_, self_));
  std::swap(ring_, old_ring_);  // old_ring_: the ring being closed
  ring_.reset(commit_.ring_id, new_members_.view());
  RecoveryPlan plan;
  plan.trans = single(self_);  // whatever the commit token says of us
  plan.low_aru = old_ring_.queue.aru();
  plan.high_delivered = old_ring_.delivered_through;
  for (std::uint16_t i = 0; i < commit_.count; ++i) {
    const CommitMember& member = commit_.members[i];
    if (!(member.old_ring == old_ring_.id)) continue;
    insert(plan.trans, member.node);
    plan.low_aru = std::min(plan.low_aru, member.aru);
    plan.high_delivered = std::max(plan.high_delivered, member.high_delivered);
  }
  // Below my own discard point every old member held everything: nothing to re-send there.
  plan.next_resend = std::max(plan.low_aru, old_ring_.queue.base()) + 1;
  plan.old_high = old_ring_.queue.high_seq();
  // What the plan rests on: we come from the old ring, and what we delivered we held.
  RTOTEM_ASSERT(contains(plan.trans, self_) && contains(ring_.members, self_));
  RTOTEM_ASSERT(plan.next_resend <= plan.old_high + 1);
  RTOTEM_ASSERT(ring_.queue.size() == 0 && ring_.delivered_through == 0);
  RTOTEM_INVARIANT(old_ring_.queue.consistent());
  recovery_ = plan;
  state_ = MemberState::kRecovery;
  last_token_seq_ = 0;
  my_trc_ = my_pbl_ = 0;
  // A new ring: what held the old one back is not counted against it, in visits or in time.
  stuck_visits_ = 0;
  stuck_since_ = now;
  holding_token_ = token_may_rest_ = hold_cancelled_ = false;
  events_.cancel_timer(TimerId::kTokenHold);
  events_.arm_timer(TimerId::kTokenLoss, now + ms_to_time(config_.token_timeout_ms));
}

void Node::recovery_abort() {
  RTOTEM_ASSERT(state_ == MemberState::kRecovery);
  std::swap(ring_, old_ring_);
  old_ring_.queue.reset(0);  // the failed new ring's messages: its buffers go back
  ring_.queue.forget_resent();
  RTOTEM_ASSERT(old_ring_.queue.size() == 0);
}

// Old messages go out again whole, behind a new-ring header, within the token's flow control.
// One that already came through Recovery was re-sent by someone: every member has it too.
std::uint32_t Node::send_recovery_messages(std::uint32_t allowed) {
  RTOTEM_ASSERT(state_ == MemberState::kRecovery);
  std::uint32_t sent = 0;
  RecoveryPlan& plan = recovery_;
  while (sent < allowed) {
    const StoredMessage* old = nullptr;
    for (; plan.next_resend <= plan.old_high; ++plan.next_resend) {
      old = old_ring_.queue.find(plan.next_resend);
      if (old && !old->recovery && !old->resent && old->packet.size() + mcast_header_size() <= backend_->mtu()) break;
      old = nullptr;
    }
    if (!old || !next_seq_free()) break;
    SendBufferRef buffer;
    if (backend_->acquire(buffer) != Status::kOk) {
      send_starved_ = true;
      break;
    }
    const std::size_t at = mcast_header_size();
    RTOTEM_ASSERT(at + old->packet.size() <= buffer->payload_capacity());
    std::memcpy(buffer->writable_payload().data() + at, old->packet.data(), old->packet.size());
    buffer->set_payload_size(static_cast<std::uint32_t>(at + old->packet.size()));
    if (!multicast_next(buffer, Delivery::kAgreed, true)) break;
    ++plan.next_resend;
    ++sent;
    ++counters_.recovery_sent;
  }
  RTOTEM_ASSERT(sent <= allowed && plan.next_resend <= plan.old_high + 1);
  return sent;
}

// The token's backlog counts old messages left to re-send at every member (pass_token). At 0,
// seen on my second visit or later (so that every member has added its count since my first),
// nobody has more: the recovery messages end at the token's seq, and the token says so to all.
// No member sends application messages before it knows that point, so it is the same for all;
// the token carries it because once some have left Recovery their backlog is the application's.
void Node::track_recovery_end() {
  ++recovery_.visits;
  if (token_.install_known || recovery_.visits < 2 || token_.backlog != 0 || my_backlog() != 0) return;
  token_.install_known = true;
  token_.install_seq = token_.seq;
  RTOTEM_ASSERT(recovery_.next_resend > recovery_.old_high);  // ours are all out
}

void Node::operational_enter(Time now) {
  RTOTEM_ASSERT(state_ == MemberState::kRecovery && token_.install_known);
  const RecoveryPlan& plan = recovery_;
  // 1. What some survivor delivered in the old regular configuration.
  while (old_ring_.delivered_through < plan.high_delivered) {
    const Seq seq = old_ring_.delivered_through + 1;
    if (!old_ring_.queue.holds(seq)) {
      ++counters_.recovery_gaps;  // a commit entry no survivor could back: the rest goes below
      break;
    }
    deliver_old(seq, false);
  }
  // 2. The transitional configuration.
  const NodeList left = difference(old_ring_.members, plan.trans);
  RTOTEM_ASSERT(!contains(left, self_));
  events_.configuration(ConfigChange{true, ring_.id, plan.trans.view(), {}, left.view()});
  // 3. The rest of the old ring, holes skipped.
  for (Seq seq = old_ring_.delivered_through + 1; seq <= old_ring_.queue.high_seq(); ++seq)
    if (old_ring_.queue.holds(seq)) deliver_old(seq, true);
  // 4. The regular configuration of the new ring. A split message the old ring did not finish
  // ends here; its sender, if it is still with us, sends it again whole on the new ring.
  assembler_.reset();
  counters_.messages_cut_short = assembler_.dropped();
  const NodeList joined = difference(ring_.members, plan.trans);
  events_.configuration(ConfigChange{false, ring_.id, ring_.members.view(), joined.view(), {}});
  ++counters_.rings_installed;
  // Every old message held was delivered, once, in order, before the new ring's first.
  RTOTEM_ASSERT(old_ring_.delivered_through >= old_ring_.queue.high_seq() ||
                old_ring_.queue.high_seq() == old_ring_.queue.base());
  old_ring_.queue.reset(0);
  state_ = MemberState::kOperational;
  strangers_.installed(proc_set_, ring_.members, now, ms_to_time(config_.merge_ms));
  proc_set_ = ring_.members;
  failed_set_ = NodeList{};
  if (ring_.members.count > 1) deaf_ = false;
  RTOTEM_ASSERT(contains(proc_set_, self_) && failed_set_.count == 0);
  note_installed(now);
  if (self_ == ring_.id.rep && !deaf_ && published_unheard(now).count != 0) {
    // At once: a stranger that does not hear some node must say so before another ring's merge
    // detection pulls it into Gather again, which may come sooner than a merge period.
    send_merge_detect(now);
  } else if (!deaf_ && (self_ == ring_.id.rep || announcing(now))) {
    events_.arm_timer(TimerId::kMergeDetect, now + ms_to_time(config_.merge_ms));
  }
  deliver_ready();
}

void Node::deliver_old(Seq seq, bool transitional) {
  RTOTEM_ASSERT(state_ == MemberState::kRecovery && seq > old_ring_.delivered_through);  // never twice
  const StoredMessage* message = old_ring_.queue.find(seq);
  RTOTEM_ASSERT(message);
  old_ring_.delivered_through = seq;
  if (message->recovery) return;  // the old ring's own Recovery packet: never the application's
  deliver_packet(old_ring_.id, seq, *message, transitional);
}

}  // namespace rtotem::membership
