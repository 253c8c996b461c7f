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
  // Above any serial of this node's earlier runs (the clock since boot), so no id comes twice.
  const std::uint64_t serial = asked_ = std::max(asked_ + 1, static_cast<std::uint64_t>(host_.now()));
  const int rc = staging::errno_of(submit(ReloadStart{{self_, serial}}));
  if (rc != 0) return rc;
  askers_[serial] = client.generation;
  return stack::kAnswerLater;
}

bool ClusterReload::deliver(const membership::Delivered& delivered) {
  const std::optional<ReloadMessage> message = decode_reload(delivered.payload);
  if (!message) return false;
  if (const auto* start = std::get_if<ReloadStart>(&*message)) {
    if (start->id.origin == delivered.sender) started(start->id);
  } else if (const auto* sent = std::get_if<ReloadReportMessage>(&*message)) {
    // A member reports on its own file only.
    if (round_ && round_->id() == sent->id && sent->report.node == delivered.sender)
      if (auto decision = round_->report(sent->report)) finish(*decision);
  } else if (const auto* abort = std::get_if<ReloadAbort>(&*message)) {
    if (abort->id.origin != delivered.sender) return true;
    if (round_ && round_->id() == abort->id) finish(round_->ended(abort->reason));
    if (rotation_ && rotation_->id == abort->id) end_rotation(abort->reason);
  } else {
    const auto& step = std::get<ReloadKeyStep>(*message);
    if (step.node == delivered.sender) key_step(step);
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
  if (prepared.report.cluster.size() > kReloadClusterMax) {
    prepared.report = {self_, -EMSGSIZE, "nothing changed: the nodelist is too large to compare through the ring", {}};
    prepared.apply = nullptr;
  }
  apply_ = std::move(prepared.apply);
  old_key_ = std::move(prepared.old_key);
  new_key_ = std::move(prepared.new_key);
  unsent_ = ReloadReportMessage{id, std::move(prepared.report)};
  send_unsent();
}

void ClusterReload::send_unsent() {
  retry_at_.reset();
  if (!unsent_) return;
  if (submit(*unsent_) == Status::kOk) {
    unsent_.reset();
    return;
  }
  retry_at_ = host_.now() + 100'000;  // the send queue is full: again shortly
}

void ClusterReload::configuration(std::span<const NodeId> members) {
  unsent_.reset();  // what it was for ends here
  retry_at_.reset();
  if (round_) finish(round_->ended("the ring changed"));
  if (rotation_) end_rotation("the ring changed while the key changed");
  members_.assign(members.begin(), members.end());
}

// A key change that cannot finish: every member of this ring is here too, at the same step. Each
// keeps opening both keys; at step 2 each seals with the new one, as every member may already
// do; at step 1 none does, and one that missed the reload (it left before the last report) still
// opens what they seal. Two sides of a split that ended at different steps still open each
// other's packets: a side that finished went through step 2, where every member seals new.
void ClusterReload::end_rotation(const std::string& why) {
  Rotation r = std::move(*rotation_);
  rotation_.reset();
  unsent_.reset();
  retry_at_.reset();
  abort_at_.reset();
  if (r.step == 2)
    host_.rekey(r.new_key, r.old_key);
  else
    host_.rekey(r.old_key, r.new_key);
  const std::string text =
      fmt::format("{}: this node seals with the {} key and opens both until rtotemd restarts; reload again to finish",
                  why, r.step == 2 ? "new" : "old");
  qb_log(LOG_WARNING, "key change: %s", text.c_str());
  if (r.id.origin == self_) answer(r.id.serial, -EAGAIN, fmt::format("{}{}\n", r.text, text));
}

std::optional<membership::Time> ClusterReload::deadline() const noexcept {
  if (abort_at_ && retry_at_) return std::min(*abort_at_, *retry_at_);
  return abort_at_ ? abort_at_ : retry_at_;
}

void ClusterReload::on_time(membership::Time now) {
  if (retry_at_ && now >= *retry_at_) send_unsent();
  if (!abort_at_ || now < *abort_at_) return;
  // Only the asker times its reload or key change.
  const ReloadId id = round_ ? round_->id() : rotation_->id;
  RTOTEM_ASSERT(id.origin == self_);
  abort_at_ = now + 1'000'000;  // again in a second if the abort does not get into the send queue
  const std::string why = round_
                              ? fmt::format("not every member reported within {} s", kReloadReportTimeoutMs / 1000)
                              : fmt::format("not every member took the key within {} s", kReloadReportTimeoutMs / 1000);
  if (submit(ReloadAbort{id, why}) == Status::kOk) abort_at_.reset();
}

void ClusterReload::finish(const ReloadDecision& decision) {
  const ReloadId id = round_->id();
  round_.reset();
  abort_at_.reset();
  std::string text = decision.text;
  int error = decision.error;
  if (decision.apply && !apply_) {
    // Every member reported no error, this one too, so it has its changes: not here only if a
    // member put a report on the ring in another's name, which deliver() refuses.
    qb_log(LOG_ERR, "reload of every node: applied elsewhere, but this node has no changes to apply");
  } else if (decision.apply) {
    const ReloadOutcome own = apply_();
    if (own.error != 0) {  // applied, but (say) votequorum refused this node's votes: the asker hears it
      error = own.error;
      text += fmt::format("node {}: {}\n", self_, own.message);
    }
    if (new_key_) {  // every member's file names the same new key over the same old one (cluster part)
      std::vector<NodeId> members = members_;
      std::ranges::sort(members);
      rotation_ = Rotation{id, std::move(members), 1, {}, old_key_, new_key_, error, text};
      host_.rekey(old_key_, new_key_);
      qb_log(LOG_NOTICE, "key change: this node opens packets sealed with the new key too");
      if (id.origin == self_) abort_at_ = host_.now() + kReloadReportTimeoutMs * 1000;
      unsent_ = ReloadKeyStep{id, self_, 1};
      send_unsent();
    }
  } else {
    qb_log(LOG_WARNING, "reload of every node: %s", decision.text.c_str());
  }
  apply_ = nullptr;
  old_key_.reset();
  new_key_.reset();
  if (id.origin == self_ && !rotation_) answer(id.serial, error, text);
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
    unsent_ = ReloadKeyStep{r.id, self_, 2};
    send_unsent();
    return;
  }
  // Every member seals with the new key: the old one opens nothing from now on.
  host_.rekey(r.new_key, nullptr);
  qb_log(LOG_NOTICE, "key change: done on every node; the old key is refused from now on");
  const Rotation done = std::move(r);
  rotation_.reset();
  abort_at_.reset();
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
