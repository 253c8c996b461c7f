#include "src/services/control/cluster_reload.hpp"

#include <qb/qblog.h>

#include <algorithm>
#include <cerrno>

#include "src/services/staging/mcast_staging.hpp"

namespace rtotem::control {

using membership::NodeId;

ClusterReload::ClusterReload(NodeId self, stack::StackHost& host, stack::ClientTable& clients, ReadOwnFile read)
    : self_(self), host_(host), clients_(clients), read_(std::move(read)) {}

Status ClusterReload::submit(const ReloadMessage& message) {
  const std::vector<std::byte> packet = encode_reload(message);
  return host_.submit(membership::Gather{packet, {}}, membership::Delivery::kAgreed);
}

int ClusterReload::ask(const stack::LocalClient& client) {
  if (members_.empty()) return -EAGAIN;  // no ring yet
  const std::uint64_t serial = ++asked_;
  const int rc = staging::errno_of(submit(ReloadStart{{self_, serial}}));
  if (rc != 0) return rc;
  askers_[serial] = client.generation;
  return stack::kAnswerLater;
}

bool ClusterReload::deliver(std::span<const std::byte> payload) {
  const std::optional<ReloadMessage> message = decode_reload(payload);
  if (!message) return false;
  if (const auto* start = std::get_if<ReloadStart>(&*message)) {
    started(start->id);
  } else if (const auto* sent = std::get_if<ReloadReportMessage>(&*message)) {
    if (round_ && round_->id() == sent->id)
      if (auto decision = round_->report(sent->report)) finish(*decision);
  } else if (const auto* abort = std::get_if<ReloadAbort>(&*message)) {
    if (round_ && round_->id() == abort->id) finish(round_->ended(abort->reason));
  } else {
    key_step(std::get<ReloadKeyStep>(*message));
  }
  return true;
}

void ClusterReload::started(const ReloadId& id) {
  if (under_way()) {  // every member sees this start inside the open one: the asker alone answers
    if (id.origin == self_)
      answer(id.serial, -EBUSY,
             fmt::format("nothing changed: node {}'s reload of every node is under way\n",
                         round_ ? round_->id().origin : rotation_->id.origin));
    return;
  }
  round_.emplace(id, members_);
  qb_log(LOG_NOTICE, "reload of every node asked by node %u: reading this node's file", id.origin);
  if (id.origin == self_) abort_at_ = host_.now() + kReloadReportTimeoutMs * 1000;
  const bool reading = read_([this, id](PreparedReload prepared) { read(id, std::move(prepared)); });
  if (!reading) read(id, {{self_, -EBUSY, "this node is reloading its file alone (SIGHUP): try again", {}}, nullptr});
}

void ClusterReload::read(const ReloadId& id, PreparedReload prepared) {
  if (!round_ || round_->id() != id) return;  // ended while the file was read
  prepared.report.node = self_;
  apply_ = std::move(prepared.apply);
  old_key_ = std::move(prepared.old_key);
  new_key_ = std::move(prepared.new_key);
  if (const Status sent = submit(ReloadReportMessage{id, std::move(prepared.report)}); sent != Status::kOk) {
    // The asker's timeout ends it everywhere; this node's report did not get into the send queue.
    const std::string_view why = describe(sent);
    qb_log(LOG_WARNING, "reload of every node: this node's report was not sent (%.*s)", static_cast<int>(why.size()),
           why.data());
  }
}

void ClusterReload::configuration(std::span<const NodeId> members) {
  if (round_) finish(round_->ended("the ring changed"));
  if (rotation_) {
    // Every member of this ring is here too, in the same step: all seal with the new key from
    // now on, and still open the old one (a member of step 1 may have sent with it).
    Rotation r = std::move(*rotation_);
    rotation_.reset();
    step_retry_at_.reset();
    host_.rekey(r.new_key, r.old_key);
    const std::string why =
        "the ring changed while the key changed: every node seals with the new key, and the old one is still "
        "accepted until rtotemd restarts";
    qb_log(LOG_WARNING, "key change: %s", why.c_str());
    if (r.id.origin == self_) answer(r.id.serial, -EAGAIN, fmt::format("{}{}\n", r.text, why));
  }
  members_.assign(members.begin(), members.end());
}

std::optional<membership::Time> ClusterReload::deadline() const noexcept {
  if (abort_at_ && step_retry_at_) return std::min(*abort_at_, *step_retry_at_);
  return abort_at_ ? abort_at_ : step_retry_at_;
}

void ClusterReload::on_time(membership::Time now) {
  if (step_retry_at_ && now >= *step_retry_at_) send_key_step();
  if (!abort_at_ || now < *abort_at_) return;
  RTOTEM_ASSERT(round_ && round_->id().origin == self_);  // only the asker of the open reload times it
  abort_at_ = now + 1'000'000;  // again in a second if the abort does not get into the send queue
  const std::string why = fmt::format("not every member reported within {} s", kReloadReportTimeoutMs / 1000);
  if (submit(ReloadAbort{round_->id(), why}) == Status::kOk) abort_at_.reset();
}

void ClusterReload::finish(const ReloadDecision& decision) {
  const ReloadId id = round_->id();
  round_.reset();
  abort_at_.reset();
  std::string text = decision.text;
  int error = decision.error;
  if (decision.apply) {
    RTOTEM_ASSERT(apply_);  // this node reported no error, so it has its changes
    const ReloadOutcome own = apply_();
    if (own.error != 0) {  // applied, but votequorum refused this node's votes: the asker hears it
      error = own.error;
      text += fmt::format("node {}: {}\n", self_, own.message);
    }
    if (new_key_) {  // every member's file names the same new key (the cluster part agreed)
      std::vector<NodeId> members = members_;
      std::ranges::sort(members);
      rotation_ = Rotation{id, std::move(members), 1, {}, old_key_, new_key_, error, text};
      host_.rekey(old_key_, new_key_);
      qb_log(LOG_NOTICE, "key change: this node opens packets sealed with the new key too");
      send_key_step();
    }
  } else {
    qb_log(LOG_WARNING, "reload of every node: %s", decision.text.c_str());
  }
  apply_ = nullptr;
  old_key_.reset();
  new_key_.reset();
  if (id.origin == self_ && !rotation_) answer(id.serial, error, text);
}

void ClusterReload::send_key_step() {
  step_retry_at_.reset();
  if (!rotation_) return;
  if (submit(ReloadKeyStep{rotation_->id, self_, rotation_->step}) != Status::kOk)
    step_retry_at_ = host_.now() + 100'000;  // the send queue is full: again shortly
}

void ClusterReload::key_step(const ReloadKeyStep& step) {
  if (!rotation_ || rotation_->id != step.id || rotation_->step != step.step) return;
  Rotation& r = *rotation_;
  if (!std::ranges::binary_search(r.members, step.node) || std::ranges::find(r.stepped, step.node) != r.stepped.end())
    return;
  r.stepped.push_back(step.node);
  if (r.stepped.size() < r.members.size()) return;
  if (r.step == 1) {  // every member opens the new key: seal with it
    r.step = 2;
    r.stepped.clear();
    host_.rekey(r.new_key, r.old_key);
    qb_log(LOG_NOTICE, "key change: this node seals with the new key");
    send_key_step();
    return;
  }
  // Every member seals with the new key: the old one opens nothing from now on.
  host_.rekey(r.new_key, nullptr);
  qb_log(LOG_NOTICE, "key change: done on every node; the old key is refused from now on");
  const Rotation done = std::move(r);
  rotation_.reset();
  if (done.id.origin == self_)
    answer(done.id.serial, done.error, fmt::format("{}key changed on every node; the old key is refused\n", done.text));
}

void ClusterReload::answer(std::uint64_t serial, int error, const std::string& text) {
  const auto found = askers_.find(serial);
  if (found == askers_.end()) return;
  stack::LocalClient* waiting = clients_.find_generation(found->second);
  askers_.erase(found);
  if (waiting == nullptr) return;
  ipc::BodyWriter body;
  body.string(text.ends_with('\n') ? std::string_view(text).substr(0, text.size() - 1) : std::string_view(text));
  clients_.answer(*waiting, ipc::RequestId::kReload, error, body.data());
}

}  // namespace rtotem::control
