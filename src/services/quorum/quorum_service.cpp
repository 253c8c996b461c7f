#include "src/services/quorum/quorum_service.hpp"

#include <algorithm>
#include <cerrno>
#include <utility>

namespace rtotem::quorum {

QuorumService::QuorumService(NodeId self, QuorumConfig config, QuorumSubmit submit, QuorumEvents& events)
    : self_(self),
      config_(std::move(config)),
      submit_(std::move(submit)),
      events_(events),
      votes_(config_.votes_of(self)),
      expected_votes_(config_.expected_votes),
      waiting_for_all_(config_.wait_for_all) {
  state_.decision.expected_votes = expected_votes_;
  state_.decision.quorum = expected_votes_ / 2 + 1;
  state_.decision.waiting_for_all = waiting_for_all_;
}

std::uint32_t QuorumService::votes_known(NodeId node) const {
  if (node == self_) return votes_;
  const auto it = votes_heard_.find(node);
  return it != votes_heard_.end() ? it->second : config_.votes_of(node);
}

std::uint32_t QuorumService::votes_in_ring(NodeId node) const {
  const auto it = std::ranges::lower_bound(state_.members, node);
  if (it == state_.members.end() || *it != node) return votes_known(node);
  return state_.votes[static_cast<std::size_t>(it - state_.members.begin())];
}

std::uint64_t QuorumService::total_with(NodeId node, std::uint32_t votes) const {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < state_.members.size(); ++i) total += state_.members[i] == node ? votes : state_.votes[i];
  return total;
}

// Votes added must stay within the expected votes at every node, of the nodes away too: the
// votes present alone (votequorum's rule) leave out what those hold. With every node of the
// nodelist here and counted (none silent), none are away.
std::uint64_t QuorumService::expected_with(NodeId node, std::uint32_t votes) const {
  const std::uint32_t before = votes_in_ring(node);
  const std::uint64_t expected = state_.decision.expected_votes;
  if (votes <= before) return expected;
  const bool everyone_here =
      !config_.nodes.empty() && state_.silent.empty() && std::ranges::all_of(config_.nodes, [&](const NodeVotes& n) {
        return std::ranges::binary_search(state_.members, n.node);
      });
  return everyone_here ? std::max(expected, total_with(node, votes)) : expected + (votes - before);
}

std::optional<QuorumService::NodeView> QuorumService::node(NodeId node) const {
  const auto at = std::ranges::lower_bound(state_.members, node);
  const bool member = at != state_.members.end() && *at == node;
  const bool configured = std::ranges::any_of(config_.nodes, [&](const NodeVotes& n) { return n.node == node; });
  if (!member && !configured && !votes_heard_.contains(node) && node != self_) return std::nullopt;
  NodeView view{.member = member, .votes = votes_known(node), .expected_votes = expected_votes_};
  if (node == self_) view.device = device_;
  if (member && node != self_) {
    const auto& report = reports_[static_cast<std::size_t>(at - state_.members.begin())];
    if (report && report->expected_votes != 0) view.expected_votes = report->expected_votes;
    if (report) view.device = report->device;
  }
  return view;
}

// What this node alone believes of the new members, before they report: their last votes, and its
// own expected votes, flags and last quorate ring for everyone.
std::vector<MemberReport> QuorumService::cached_reports() const {
  std::vector<MemberReport> reports;
  reports.reserve(state_.members.size());
  for (NodeId node : state_.members)
    reports.push_back(MemberReport{.node = node,
                                   .votes = votes_known(node),
                                   .expected_votes = expected_votes_,
                                   .quorate = state_.decision.quorate,
                                   .waiting_for_all = waiting_for_all_,
                                   .last_quorate = last_quorate_});
  return reports;
}

// Whether every member of the new ring holds, of itself, what this node holds of it, so that the
// ring's decision can be taken before their reports: all of them come from this node's ring (EVS:
// they delivered the same messages of it), which was in sync here, quorate, with no one silent,
// and ordered no runtime change, LMS_EXPIRED or SYNC_EXPIRED: a member may have delivered those in
// its transitional configuration, which takes them otherwise. A member that was not in sync there reports its own votes
// as it did there, expected votes no higher than this node's, and no later quorate ring: the same
// decision. A ring that only lost members thereby tells its quorum at the configuration, as soon
// as Pacemaker learns of the loss.
bool QuorumService::holds_what_members_hold(const membership::ConfigChange& change) const {
  return change.joined.empty() && state_.synced && state_.silent.empty() && state_.decision.quorate &&
         !changes_in_ring_;
}

void QuorumService::on_configuration(const membership::ConfigChange& change, Time now) {
  now_ = now;
  if (change.transitional) return;  // the regular configuration that follows decides
  const bool decide_now = holds_what_members_hold(change);
  someone_left_ = std::ranges::any_of(state_.members,
                                      [&](NodeId node) { return !std::ranges::binary_search(change.members, node); });
  state_.ring_id = change.ring_id;
  state_.members.assign(change.members.begin(), change.members.end());
  state_.synced = false;
  reports_.assign(state_.members.size(), std::nullopt);
  reports_missing_ = state_.members.size();
  lms_applied_ = false;
  lms_deadline_.reset();
  state_.silent.clear();
  sync_deadline_.reset();
  if (config_.sync_timeout_ms != 0) sync_deadline_ = now + Time{config_.sync_timeout_ms} * 1000;
  votes_set_in_ring_.clear();
  expected_set_in_ring_.reset();
  state_.votes.clear();
  for (NodeId node : state_.members) state_.votes.push_back(votes_known(node));
  changes_in_ring_ = false;

  // A ring that keeps quorum says so at once; the reports that follow confirm it (the simulator's
  // quorum checker checks that they do). Quorum lost is told at once too, but not decided early:
  // how a ring waits for all (wait_for_all) then rests on flags the members report.
  const Decision cached = decide(config_, cached_reports());
  state_.early = decide_now && cached.quorate;
  if (state_.early) {
    state_.decision = cached;
    events_.quorum_changed(state_);
  } else if (state_.decision.quorate && !cached.quorate) {
    // Until every member reports, quorum may only be lost: kept if the new members, as this node
    // last knew them, still hold it.
    state_.decision.quorate = false;
    state_.decision.tie_broken = false;
    state_.decision.total_votes = cached.total_votes;  // the device's vote was for the ring before
    state_.decision.device_vote = false;
    state_.decision.master_wins = false;
    waiting_for_all_ = config_.wait_for_all;
    events_.quorum_changed(state_);
  }
  pending_.clear();  // what was refused belonged to the ring before
  // The device's vote was for the ring before; it votes for this one once it learns of it.
  device_.cast_vote = false;
  if (device_.alive) device_deadline_ = now + Time{config_.device->sync_timeout_ms} * 1000;
  device_reported_ = device_;
  submit(own_report());
}

NodeInfo QuorumService::own_report() const {
  return NodeInfo{.ring_id = state_.ring_id,
                  .votes = votes_,
                  .expected_votes = expected_votes_,
                  .quorate = state_.decision.quorate,
                  .waiting_for_all = waiting_for_all_,
                  .last_quorate = last_quorate_,
                  .device = device_};
}

void QuorumService::on_deliver(const membership::Delivered& message) {
  QuorumDecoded decoded = decode_quorum_packet(message.payload);
  if (decoded.error != QuorumDecodeError::kNone) {
    ++packets_malformed_;
    return;
  }
  if (!(message.ring_id == state_.ring_id)) return;  // ordered by a ring this node no longer holds
  changes_in_ring_ = changes_in_ring_ || !std::holds_alternative<NodeInfo>(decoded.packet);
  if (const auto* set_votes = std::get_if<SetVotes>(&decoded.packet)) return on_set_votes(*set_votes, message);
  if (const auto* set_expected = std::get_if<SetExpected>(&decoded.packet))
    return on_set_expected(*set_expected, message);
  // The rest belongs to the regular configuration of the ring that ordered it.
  if (message.transitional) return;
  if (const auto* info = std::get_if<NodeInfo>(&decoded.packet)) {
    if (info->ring_id == state_.ring_id) on_node_info(message.sender, *info);
    return;  // made for a ring before: its sender's report for this one follows
  }
  if (const auto* sync = std::get_if<SyncExpired>(&decoded.packet)) return on_sync_expired(*sync);
  on_lms_expired(std::get<LmsExpired>(decoded.packet));
}

// The first SYNC_EXPIRED of the ring decides at every member alike: the silent count as absent.
void QuorumService::on_sync_expired(const SyncExpired& packet) {
  if (!(packet.ring_id == state_.ring_id) || state_.synced) return;
  sync_deadline_.reset();
  for (std::size_t i = 0; i < reports_.size(); ++i) {
    if (reports_[i]) continue;
    reports_[i] = MemberReport{.node = state_.members[i], .votes = 0, .expected_votes = 0};
    state_.votes[i] = 0;
    state_.silent.push_back(state_.members[i]);
  }
  reports_missing_ = 0;
  state_.synced = true;
  recompute(true);
}

void QuorumService::on_node_info(NodeId sender, const NodeInfo& info) {
  const auto it = std::ranges::lower_bound(state_.members, sender);
  if (it == state_.members.end() || *it != sender) return;  // not a member: cannot happen on a ring
  const auto index = static_cast<std::size_t>(it - state_.members.begin());
  const bool silent = std::ranges::find(state_.silent, sender) != state_.silent.end();
  if (reports_[index] && !silent) {
    // Sent again in this ring for its device: the rest stands as first reported.
    if (reports_[index]->device == info.device) return;
    reports_[index]->device = info.device;
    if (state_.synced) recompute(false);
    return;
  }
  const auto set = votes_set_in_ring_.find(sender);
  const std::uint32_t votes = set != votes_set_in_ring_.end() ? set->second : info.votes;
  votes_heard_[sender] = votes;
  state_.votes[index] = votes;
  if (!reports_[index]) --reports_missing_;
  std::erase(state_.silent, sender);
  // Expected votes never go down but by a change: a report made before one counts with the
  // higher of the two.
  reports_[index] = MemberReport{.node = sender,
                                 .votes = votes,
                                 .expected_votes = std::max(info.expected_votes, expected_set_in_ring_.value_or(0)),
                                 .quorate = info.quorate,
                                 .waiting_for_all = info.waiting_for_all,
                                 .last_quorate = info.last_quorate,
                                 .device = info.device};
  if (reports_missing_ != 0) return;
  const bool first = !state_.synced;
  state_.synced = true;
  sync_deadline_.reset();
  recompute(first);
}

// A runtime change stands for the ring it was checked in, and EVS may deliver it on one side of a
// split only: in the transitional configuration, or in agreed order before the split reaches the
// token. A side that has not seen it keeps its expected votes, so votes a change adds must never
// count while a member of its ring might not have raised its expected votes to match:
// - in the transitional configuration a change only raises the expected votes this node holds
//   (and reports in its next ring) to what the change asks; the ring's decisions are over;
// - added votes count only where the change is delivered safe in the regular configuration:
//   every member then holds it and delivers it (here or in its transitional configuration)
//   before it decides in another ring. A change of fewer votes needs no such care.
// Runtime changes go on the ring safe; their sender checked them in sync, so where a change is
// delivered in the regular configuration every member is in sync too.
void QuorumService::on_set_votes(const SetVotes& packet, const membership::Delivered& message) {
  if (!(packet.ring_id == state_.ring_id) || (!message.transitional && !state_.synced)) return drop_change();
  if (message.transitional) {
    expected_votes_ = std::max(expected_votes_, packet.expected_votes);
    return drop_change();
  }
  const bool raise = packet.votes > votes_in_ring(packet.node);
  // A raise carries the expected votes it needs, as its sender saw the ring; one that another
  // change overtook may need more than the transitional members take from it: it is dropped at
  // every member alike.
  if (raise && (message.delivery != membership::Delivery::kSafe ||
                expected_with(packet.node, packet.votes) > packet.expected_votes))
    return drop_change();
  votes_heard_[packet.node] = packet.votes;
  votes_set_in_ring_[packet.node] = packet.votes;
  if (packet.node == self_) votes_ = packet.votes;
  const auto it = std::ranges::lower_bound(state_.members, packet.node);
  if (it != state_.members.end() && *it == packet.node) {
    const auto index = static_cast<std::size_t>(it - state_.members.begin());
    RTOTEM_ASSERT(reports_[index]);  // in sync: every member reported, or was counted silent
    state_.votes[index] = packet.votes;
    reports_[index]->votes = packet.votes;
  }
  if (!raise) return recompute(false);
  set_ring_expected(packet.expected_votes);  // above the ring's: the check above
}

// Raising the expected votes is safe on any side; lowering them only acts in the regular
// configuration, where its sender's check holds (its members are the ones it was checked with).
void QuorumService::on_set_expected(const SetExpected& packet, const membership::Delivered& message) {
  if (!(packet.ring_id == state_.ring_id) || (!message.transitional && !state_.synced)) return drop_change();
  if (message.transitional) {
    if (packet.expected_votes < expected_votes_) drop_change();
    expected_votes_ = std::max(expected_votes_, packet.expected_votes);
    return;
  }
  set_ring_expected(packet.expected_votes);
}

void QuorumService::set_ring_expected(std::uint32_t expected_votes) {
  expected_votes_ = expected_votes;
  expected_set_in_ring_ = expected_votes;
  for (auto& report : reports_)
    if (report) report->expected_votes = expected_votes;
  recompute(false);
}

void QuorumService::on_lms_expired(const LmsExpired& packet) {
  if (!(packet.ring_id == state_.ring_id) || !state_.synced || !state_.decision.quorate || lms_applied_ ||
      !config_.last_man_standing)
    return;
  lms_applied_ = true;
  set_ring_expected(std::max<std::uint32_t>(state_.decision.total_votes, 1));
}

void QuorumService::recompute(bool announce) {
  std::vector<MemberReport> reports;
  reports.reserve(reports_.size());
  for (const auto& report : reports_) reports.push_back(*report);
  const Decision decision = decide(config_, reports);
  announce = announce || !(decision == state_.decision);
  state_.decision = decision;
  // Held as the ring decided it, but never below what this node held before: decided without
  // this node's report (a sync timeout), the ring may not know what this node raised it to.
  expected_votes_ = std::max(expected_votes_, decision.expected_votes);
  waiting_for_all_ = config_.wait_for_all && !decision.quorate;
  if (decision.quorate) last_quorate_ = QuorateRing{state_.ring_id, state_.members};
  // last_man_standing lowers expected votes to those present once the window passes without a
  // change, when nodes left (or the tie breaker carried the ring): votequorum's trigger.
  const bool lowerable = decision.quorate && decision.total_votes < decision.expected_votes;
  if (config_.last_man_standing && lowerable && !lms_applied_ && (someone_left_ || decision.tie_broken)) {
    if (!lms_deadline_) lms_deadline_ = now_ + Time{config_.last_man_standing_window_ms} * 1000;
  } else {
    lms_deadline_.reset();
  }
  if (announce) events_.quorum_changed(state_);
}

void QuorumService::on_time(Time now) {
  now_ = now;
  if (device_deadline_ && now >= *device_deadline_) {
    device_deadline_.reset();
    device_.alive = false;
    device_.cast_vote = false;
    report_device();
  }
  if (sync_deadline_ && now >= *sync_deadline_) {
    sync_deadline_.reset();
    if (!state_.synced) submit(SyncExpired{state_.ring_id});
  }
  if (!lms_deadline_ || now < *lms_deadline_) return;
  lms_deadline_.reset();
  if (state_.synced && state_.decision.quorate) submit(LmsExpired{state_.ring_id});
}

int QuorumService::set_votes(NodeId node, std::uint32_t votes) {
  const bool member = std::ranges::binary_search(state_.members, node);
  const bool listed = std::ranges::binary_search(config_.nodes, node, {}, &NodeVotes::node);
  if (!member && !listed) return -ENOENT;
  if (config_.last_man_standing && votes != 1) return -EINVAL;  // votequorum.5: LMS needs one vote each
  if (!state_.synced) return -EAGAIN;                           // checked against reports not all in
  const std::uint64_t expected = expected_with(node, votes);
  const std::uint64_t total = total_with(node, votes);
  if (expected > UINT32_MAX || total == 0 || expected / 2 + 1 > total) return -EINVAL;
  submit(SetVotes{
      .ring_id = state_.ring_id, .node = node, .votes = votes, .expected_votes = static_cast<std::uint32_t>(expected)});
  return 0;
}

void QuorumService::set_nodelist(std::vector<NodeVotes> nodes) {
  std::ranges::sort(nodes, {}, &NodeVotes::node);
  config_.nodes = std::move(nodes);
}

int QuorumService::set_expected(std::uint32_t expected_votes) {
  if (!state_.synced) return -EAGAIN;
  const std::uint32_t total = state_.decision.total_votes;
  if (expected_votes == 0 || expected_votes < total) return -EINVAL;
  if (state_.decision.quorate && expected_votes / 2 + 1 > total) return -EINVAL;
  submit(SetExpected{.ring_id = state_.ring_id, .expected_votes = expected_votes});
  return 0;
}

int QuorumService::check_device(std::string_view name) const {
  if (!config_.device) return -EACCES;
  if (!device_.registered) return -ENOENT;
  return name == device_name_ ? 0 : -EINVAL;
}

int QuorumService::device_register(std::string_view name) {
  if (!config_.device) return -EACCES;
  if (device_.registered) return name == device_name_ ? 0 : -EEXIST;
  device_name_ = name;
  device_.registered = true;
  report_device();
  return 0;
}

int QuorumService::device_unregister(std::string_view name) {
  if (const int rc = check_device(name); rc != 0) return rc;
  device_ = {};
  device_name_.clear();
  device_deadline_.reset();
  report_device();
  return 0;
}

int QuorumService::device_update(std::string_view old_name, std::string_view new_name) {
  if (const int rc = check_device(old_name); rc != 0) return rc;
  device_name_ = new_name;
  return 0;
}

int QuorumService::device_poll(std::string_view name, bool cast_vote, const RingId& ring, Time now) {
  if (const int rc = check_device(name); rc != 0) return rc;
  if (!(ring == state_.ring_id)) return -ESTALE;
  device_.alive = true;
  device_.cast_vote = cast_vote;
  device_deadline_ = now + Time{config_.device->timeout_ms} * 1000;
  report_device();
  return 0;
}

int QuorumService::device_master_wins(std::string_view name, bool allow) {
  if (const int rc = check_device(name); rc != 0) return rc;
  device_.master_wins = allow;
  report_device();
  return 0;
}

void QuorumService::report_device() {
  if (device_ == device_reported_) return;
  device_reported_ = device_;
  submit(own_report());  // of a member's second report in a ring, only its device's flags are read
}

// Runtime changes go safe (on_set_votes says why); the rest agreed, as soon as the ring orders it.
void QuorumService::submit(const QuorumPacket& packet) {
  Pending next;
  next.bytes.resize(encoded_size(packet));
  encode(packet, next.bytes);
  const bool change = std::holds_alternative<SetVotes>(packet) || std::holds_alternative<SetExpected>(packet);
  next.delivery = change ? membership::Delivery::kSafe : membership::Delivery::kAgreed;
  pending_.push_back(std::move(next));
  retry_pending();
}

void QuorumService::retry_pending() {
  while (!pending_.empty()) {
    if (submit_(pending_.front().bytes, pending_.front().delivery) != Status::kOk) {
      ++submit_refusals_;
      return;
    }
    pending_.pop_front();
  }
}

}  // namespace rtotem::quorum
