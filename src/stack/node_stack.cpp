#include "src/stack/node_stack.hpp"

#include <qb/qblog.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "src/stack/ring_service.hpp"
#include "src/daemon/config/config_sections.hpp"
#include "src/services/control/reload_plan.hpp"
#include "src/services/keystore/config_keys.hpp"

namespace rtotem::stack {

using groups::GroupService;
using membership::NodeId;

namespace {

// Each node's ring0 address as text, resolved once (the file resolved it when it was read).
std::map<NodeId, std::string> ring_addresses(const config::DaemonConfig& config) {
  std::map<NodeId, std::string> addresses;
  for (const config::NodeEntry& entry : config.nodes) {
    auto address = config::resolve_ring_addr(config.path, entry, 0, 0);
    addresses[entry.nodeid] = address ? address->host_string() : entry.ring0_addr();
  }
  return addresses;
}

// Why votequorum did not take a runtime change.
std::string_view quorum_refusal(int rc) {
  return rc == -EAGAIN ? "the ring is not in sync yet" : "refused by votequorum's rule";
}

std::string node_list_text(std::span<const NodeId> nodes) {
  std::string text;
  for (NodeId n : nodes) text += fmt::format("{}{}", text.empty() ? "" : " ", n);
  return text;
}

}  // namespace

NodeStack::NodeStack(StackSetup setup, StackHost& host, StackObserver* observer)
    : setup_(std::move(setup)), host_(host), observer_(observer), links_token_ms_(setup_.totem.token_timeout_ms) {}

NodeStack::~NodeStack() = default;

Result<std::unique_ptr<NodeStack>> NodeStack::create(StackSetup setup, StackHost& host, StackObserver* observer) {
  if (setup.totem.max_message_size < groups::kRingMessageSizeMin)
    return Error::make("totem.max_message_size {} is below the {} bytes process groups need",
                       setup.totem.max_message_size, groups::kRingMessageSizeMin);
  std::unique_ptr<NodeStack> s(new NodeStack(std::move(setup), host, observer));
  const StackSetup& c = s->setup_;
  const NodeId self = c.self.nodeid;
  s->addresses_ = ring_addresses(c.config);
  const std::size_t buffer_bytes = c.totem.max_message_size + ipc::kBufferOverhead;
  const ClientLimits limits{buffer_bytes, c.config.ipc.client_queue_bytes, c.config.ipc.queue_budget(),
                            c.config.ipc.max_clients};
  s->clients_ =
      std::make_unique<ClientTable>(limits, static_cast<RequestHandler&>(*s), [&host] { host.arm_client_retry(); });
  auto submit = [&host](const membership::Gather& packet, membership::Delivery order) {
    return host.submit(packet, order);
  };
  s->groups_ =
      std::make_unique<GroupService>(self, c.totem.max_message_size, submit, static_cast<groups::GroupEvents&>(*s));
  NodeStack* raw = s.get();
  s->staging_ = std::make_unique<staging::McastStaging>(*s->groups_, *s->clients_, c.totem.max_message_size,
                                                        [raw] { return raw->ring_in_sync(); });
  s->group_clients_ = std::make_unique<groups::GroupClients>(self, *s->groups_, *s->clients_, *s->staging_);
  if (c.config.quorum) {
    quorum::QuorumConfig config = *c.config.quorum;
    config.sync_timeout_ms = quorum::kSyncTimeouts * c.totem.token_timeout_ms;
    s->quorum_ = std::make_unique<quorum::QuorumService>(
        self, std::move(config),
        [&host](std::span<const std::byte> packet, membership::Delivery order) {
          return host.submit(membership::Gather{packet, {}}, order);
        },
        static_cast<quorum::QuorumEvents&>(*s));
    s->quorum_clients_ = std::make_unique<quorum::QuorumClients>(self, *s->quorum_, *s->clients_, c.config);
  }
  s->keys_ = std::make_unique<keystore::KeyClients>(self, host, *s->clients_, c.config, c.totem, s->addresses_);
  s->control_ = std::make_unique<control::NodeControl>(
      self, host, *s->clients_, s->addresses_,
      [raw](std::function<void(control::PreparedReload)> done) { return raw->read_own_file(std::move(done)); });
  s->keys_->apply_access();  // uidgid.* keys: none yet, but one place decides who may connect
  s->keys_->on_dump_state([raw] {
    log_state("status", raw->status_json());
    log_state("stats", raw->stats_json());
    if (raw->quorum_clients_) log_state("quorum", raw->quorum_clients_->json());
  });
  return s;
}

// runtime.blackbox.dump_state's lines: `json` in pieces, as libqb's flight recorder drops a line
// longer than QB_LOG_MAX_LEN (512 bytes). Each piece its own string: the recorder stores a %s
// argument whole, whatever precision the format gives it.
void NodeStack::log_state(std::string_view what, std::string_view json) {
  constexpr std::size_t kPiece = 400;
  const std::size_t pieces = (json.size() + kPiece - 1) / kPiece;
  const std::string name(what);
  for (std::size_t i = 0; i < pieces; ++i) {
    const std::string piece(json.substr(i * kPiece, kPiece));
    qb_log(LOG_INFO, "state: %s %zu/%zu: %s", name.c_str(), i + 1, pieces, piece.c_str());
  }
}

// Each service's messages to it, by the byte that names the service (ring_service.hpp).
void NodeStack::deliver(const membership::Delivered& message) {
  switch (ring_service_of(message.payload).value_or(RingService{0})) {
    case RingService::kGroups: groups_->on_deliver(message); return;
    case RingService::kQuorum:
      if (quorum_) {
        quorum_->on_deliver(message);
        arm_timer();
        return;
      }
      break;  // a node with quorum on beside one with it off: the cluster's configs differ
    case RingService::kNodeControl:
      if (control_->deliver(message)) {
        arm_timer();  // a reload's abort, a report or key step to send again
        return;
      }
      break;
  }
  if (ring_messages_unknown_++ == 0)
    qb_log(LOG_WARNING,
           "a ring message from node %u for a service this node does not run (first byte %u): ignored; "
           "do the nodes' configs differ (quorum on some only)?",
           message.sender, message.payload.empty() ? 0U : std::to_integer<unsigned>(message.payload[0]));
}

void NodeStack::configuration(const membership::ConfigChange& change) {
  ++configurations_;
  if (change.transitional) {
    qb_log(LOG_NOTICE, "transitional configuration: members [%s], left [%s]", node_list_text(change.members).c_str(),
           node_list_text(change.left).c_str());
  } else {
    qb_log(LOG_NOTICE, "ring %u/%llu: members [%s], joined [%s]", change.ring_id.rep,
           static_cast<unsigned long long>(change.ring_id.seq), node_list_text(change.members).c_str(),
           node_list_text(change.joined).c_str());
  }
  groups_->on_configuration(change);
  control_->configuration(change);
  arm_timer();
  if (!change.transitional) keys_->ring_changed(change);
  if (quorum_ && !change.transitional) {
    quorum_->on_configuration(change, host_.now());
    arm_timer();
  }
  if (!change.transitional && groups_->join_list_pending()) {
    qb_log(LOG_NOTICE, "this node's group members wait for room in the send queue: retried after every token turn");
  }
  ipc::BodyWriter body;
  body.u32(change.ring_id.rep);
  body.u64(change.ring_id.seq);
  body.u8(change.transitional ? 1 : 0);
  body.u32(static_cast<std::uint32_t>(change.members.size()));
  for (NodeId n : change.members) body.u32(n);
  clients_->for_each_client([&](LocalClient& c) {
    if (c.tracks_rings) clients_->send_event(c, ipc::EventId::kRingChange, body.data());
  });
  if (change.transitional) return;
  current_ring_event_.assign(body.data().begin(), body.data().end());
  ring_formed_ = true;
}

void NodeStack::after_turn() {
  groups_->retry_pending();
  if (quorum_) quorum_->retry_pending();
  staging_->after_turn();
  clients_->end_turn();  // queued events, then this turn's deliveries, one batch per client
}

void NodeStack::on_time(membership::Time now) {
  armed_.reset();  // the host's timer has fired
  if (quorum_) {
    const bool device_alive = quorum_->node(setup_.self.nodeid)->device.alive;
    quorum_->on_time(now);
    if (device_alive && !quorum_->node(setup_.self.nodeid)->device.alive) quorum_clients_->device_expired();
  }
  control_->on_time(now);
  keys_->on_time(now);
  arm_timer();
}

void NodeStack::arm_timer() {
  std::optional<membership::Time> next = quorum_ ? quorum_->next_deadline() : std::nullopt;
  for (const auto due : {control_->deadline(), keys_->deadline()})
    if (due) next = std::min(next.value_or(*due), *due);
  if (next == armed_) return;
  armed_ = next;
  host_.arm_timer(next);
}

void NodeStack::client_connected(LocalClient& client) {
  clients_->send_event(client, ipc::EventId::kRingChange, current_ring_event_);
}

int NodeStack::ring_track(LocalClient& client, bool on) {
  if (on && !client.tracks_rings) clients_->send_event(client, ipc::EventId::kRingChange, current_ring_event_);
  client.tracks_rings = on;
  return 0;
}

int NodeStack::request(LocalClient& client, const IpcRequest& request, ipc::BodyWriter& reply) {
  using ipc::RequestId;
  const int rc = [&] {
    switch (request.id) {
      case RequestId::kJoin: return group_clients_->join(client, request.group, reply);
      case RequestId::kLeave: return group_clients_->leave(client, request.group);
      case RequestId::kMcast: return staging_->multicast(client, request, reply);
      case RequestId::kMcastAsync: staging_->multicast_async(client, request); return 0;
      case RequestId::kSync: return staging_->sync(client, reply);
      case RequestId::kLocalNodeId: reply.u32(setup_.self.nodeid); return 0;
      case RequestId::kStatus: reply.string(status_json()); return 0;
      case RequestId::kStats: reply.string(stats_json()); return 0;
      case RequestId::kDataMax:
        reply.u32(static_cast<std::uint32_t>(GroupService::data_max(setup_.totem.max_message_size)));
        return 0;
      case RequestId::kMembers: reply.string(group_clients_->members_json(request.group)); return 0;
      case RequestId::kGroupMembers: group_clients_->members(request.group, reply); return 0;
      case RequestId::kQuorum:
        reply.string(quorum_clients_ ? quorum_clients_->json() : "{\"configured\": false}");
        return 0;
      case RequestId::kQuorumSet: return quorum_clients_ ? quorum_clients_->set(client, request) : -ENOTSUP;
      case RequestId::kQuorumTrack:
        return quorum_clients_ ? quorum_clients_->track(client, request.quorum_track) : -ENOTSUP;
      case RequestId::kRingTrack: return ring_track(client, request.flag == 1);
      case RequestId::kClientService: client.service = request.flag; return 0;
      case RequestId::kQuorumNode: return quorum_clients_ ? quorum_clients_->node(request.node, reply) : -ENOTSUP;
      case RequestId::kQuorumDevice:
        return quorum_clients_ ? quorum_clients_->device(client, request, host_.now(), reply) : -ENOTSUP;
      case RequestId::kKeyGet:
      case RequestId::kKeySet:
      case RequestId::kKeyDelete:
      case RequestId::kKeyList:
      case RequestId::kKeyTrack:
      case RequestId::kKeyUntrack:
      case RequestId::kKeyMap: return keys_->request(client, request, reply);
      case RequestId::kNodeAddresses: return control_->node_addresses(request.node, reply);
      case RequestId::kShutdown: return control_->shutdown(client, request);
      case RequestId::kShutdownTrack: return control_->shutdown_track(client, request.flag == 1);
      case RequestId::kShutdownReply: return control_->shutdown_reply(client, request.flag == 1);
      case RequestId::kKillNode: return control_->kill_node(client, request);
      case RequestId::kReload: return control_->reload(client);
      case RequestId::kReopenLogs:
        if (!privileged(client)) return -EPERM;
        qb_log(LOG_NOTICE, "log file reopened, asked by pid %d", static_cast<int>(client.pid));
        reopen_logging();
        return 0;
    }
    return -EINVAL;  // decode_request admits only the ids above
  }();
  arm_timer();  // a quorum change or a shutdown may have set a deadline
  return rc;
}

void NodeStack::client_gone(LocalClient& client) {
  keys_->client_gone(client);
  control_->client_gone(client);
  staging_->client_gone(client);
}

void NodeStack::group_message(const groups::GroupMessage& message) {
  if (observer_ != nullptr) observer_->group_message(message);
  group_clients_->message(message);
}

void NodeStack::group_change(const groups::GroupChange& change) {
  if (observer_ != nullptr) observer_->group_change(change);
  group_clients_->change(change);
}

void NodeStack::quorum_changed(const quorum::QuorumState& state) {
  if (observer_ != nullptr) observer_->quorum_changed(state);
  keys_->quorum_changed(state);
  quorum_clients_->changed(state);
}

std::optional<control::ReloadOutcome> NodeStack::reload(std::function<void(const control::ReloadOutcome&)> done) {
  if (host_.loading() || control_->reload_under_way())
    return control::ReloadOutcome{-EBUSY, "nothing changed: another reload is under way"};
  auto started = host_.load_config([this, done = std::move(done)](Result<config::DaemonConfig> file) {
    control::PreparedReload prepared = prepare_reload(file, false);
    done(prepared.apply ? prepared.apply() : control::ReloadOutcome{prepared.report.error, prepared.report.summary});
  });
  if (!started) return control::ReloadOutcome{-EAGAIN, fmt::format("nothing changed: {}", started.error().message())};
  return std::nullopt;
}

bool NodeStack::read_own_file(std::function<void(control::PreparedReload)> done) {
  if (host_.loading()) return false;
  auto started = host_.load_config([this, done](Result<config::DaemonConfig> file) {
    // The ring may have ended the reload while the file was read: ClusterReload drops it then.
    done(prepare_reload(file, true));
  });
  if (!started)
    host_.post([done, why = started.error().message()] {
      done({{0, -EAGAIN, fmt::format("nothing changed: {}", why), {}}, nullptr});
    });
  return true;
}

namespace {

std::string key_list(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) out += fmt::format("{}{}", out.empty() ? "" : ", ", k);
  return out;
}

}  // namespace

control::PreparedReload NodeStack::prepare_reload(const Result<config::DaemonConfig>& loaded, bool cluster_wide) {
  control::PreparedReload prepared;
  control::ReloadReport& report = prepared.report;
  report.node = setup_.self.nodeid;
  auto refuse = [&](int error, std::string why) {
    report.error = error;
    report.summary = std::move(why);
    return std::move(prepared);
  };
  if (!loaded) return refuse(-EBADMSG, fmt::format("nothing changed: {}", loaded.error().message()));
  auto file = std::make_shared<const config::DaemonConfig>(*loaded);
  auto timing = file->totem_in_force().resolved();
  if (!timing)
    return refuse(-EBADMSG, fmt::format("nothing changed: {}: totem: {}", file->path, timing.error().message()));
  std::set<std::string, std::less<>> kept;
  for (const config::DaemonConfig* each : {&std::as_const(setup_.config), file.get()})
    for (const config::StoredKey& k : each->stored_keys)
      if (!config::kept_key_in_use(k.key)) kept.insert(k.key);
  const auto file_keys = keystore::config_keys(*file, *timing, links_token_ms_);
  auto plan = std::make_shared<const control::ReloadPlan>(
      control::plan_reload(keystore::config_keys(setup_.config, setup_.totem, links_token_ms_), file_keys,
                           setup_.self.nodeid, kept, cluster_wide));
  report.cluster = control::cluster_part(file_keys);
  // The key: every member must read the same one; another than the one in force changes it.
  std::shared_ptr<const transport::ClusterKey> key;
  if (file->crypto && setup_.key) {
    auto read = config::load_cluster_key(*file);
    if (!read) return refuse(-EBADMSG, fmt::format("nothing changed: {}", read.error().message()));
    key = std::move(read).value();
    // The key in force too: members that agree on it agree on whether the key changes.
    report.cluster +=
        fmt::format("totem.key_fingerprint={}\ntotem.key_in_force={}\n", key->fingerprint(), setup_.key->fingerprint());
    if (key->fingerprint() != setup_.key->fingerprint()) {
      if (!cluster_wide)
        return refuse(-ENOTSUP,
                      "nothing changed: the cluster key changes only in a reload of every node (rtotemctl reload, "
                      "corosync-cfgtool -R)");
      prepared.old_key = setup_.key;
      prepared.new_key = key;
    }
  }
  if (!plan->refused.empty())
    return refuse(-ENOTSUP,
                  fmt::format("nothing changed: {} differ(s) from the running configuration and need(s) a restart",
                              key_list(plan->refused)));
  if (!plan->cluster_only.empty())
    return refuse(-ENOTSUP,
                  fmt::format("nothing changed: {} change(s) only in a reload of every node (rtotemctl reload, "
                              "corosync-cfgtool -R), at one place in the ring's order",
                              key_list(plan->cluster_only)));
  if (!plan->nodes_added.empty() || !plan->nodes_removed.empty())
    if (auto can = host_.can_change_nodes(*file); !can)
      return refuse(-ENOTSUP, fmt::format("nothing changed: nodelist: {}", can.error().message()));
  std::vector<std::string> changed = plan->changed;
  if (prepared.new_key) changed.emplace_back("the cluster key");
  report.summary = changed.empty() ? "no change" : key_list(changed);
  if (changed.empty()) {
    prepared.apply = [] { return control::ReloadOutcome{0, "no change"}; };
    return prepared;
  }
  prepared.apply = [this, file, plan, timing = *timing, key = prepared.new_key] {
    if (key) setup_.key = key;  // ClusterReload changes the backend's keys in its steps
    if (plan->changed.empty()) return control::ReloadOutcome{0, "the cluster key"};
    return apply_reload(*file, *plan, timing);
  };
  return prepared;
}

control::ReloadOutcome NodeStack::apply_reload(const config::DaemonConfig& file, const control::ReloadPlan& plan,
                                               const membership::TotemConfig& timing) {
  std::string refused;
  // Where every member applies at once, a log file this node cannot open keeps its logging as it
  // was and applies the rest: the timing, the nodes and the key must change on all or none.
  if (plan.logging) {
    if (auto applied = host_.apply_logging(file.logging); applied)
      setup_.config.logging = file.logging;
    else
      refused += fmt::format("; logging kept as it was: {}", applied.error().message());
  }
  setup_.config.ipc.allow = file.ipc.allow;
  setup_.config.stored_keys = file.stored_keys;
  setup_.config.keyfile = file.keyfile;
  if (plan.timing) {
    // Every member takes it here, where the reload's last report is delivered.
    host_.set_timing(timing);
    setup_.config.totem = file.totem;
    setup_.config.token_coefficient_ms = file.token_coefficient_ms;
    setup_.config.token_coefficient_given = file.token_coefficient_given;
    // As the file resolves it, as at start: the node's own copy has what its backend sizes filled
    // in (send_queue_max), which the next reload would take for a change that needs a restart.
    setup_.totem = timing;
  }
  if (!plan.nodes_added.empty() || !plan.nodes_removed.empty()) {
    // Every member takes the new nodelist here: from now on the transport sends to and hears
    // from those nodes, and votequorum counts them.
    host_.change_nodes(file);
    const NodeId self = setup_.self.nodeid;
    std::uint32_t own_votes = setup_.self.quorum_votes;
    for (const config::NodeEntry& entry : setup_.config.nodes)
      if (entry.nodeid == self) own_votes = entry.quorum_votes;
    setup_.config.nodes = file.nodes;
    for (config::NodeEntry& entry : setup_.config.nodes)
      if (entry.nodeid == self) entry.quorum_votes = own_votes;  // as votequorum has it: plan.own_votes below
    addresses_ = ring_addresses(file);
    if (quorum_) {
      std::vector<quorum::NodeVotes> votes;
      std::uint32_t sum = 0;
      for (const config::NodeEntry& entry : file.nodes) {
        votes.push_back({entry.nodeid, entry.quorum_votes});
        sum += entry.quorum_votes;
      }
      quorum_->set_nodelist(std::move(votes));
      const bool given = file.quorum && file.quorum->expected_votes_configured;
      if (!given && !plan.expected_votes) {
        if (const int rc = quorum_->set_expected(sum); rc != 0)
          refused += fmt::format("; expected votes {} (the nodelist's): {}", sum, quorum_refusal(rc));
      }
    }
    qb_log(LOG_NOTICE, "nodelist: %zu node(s) added, %zu removed", plan.nodes_added.size(), plan.nodes_removed.size());
  }
  // Votes as votequorum's runtime changes; one it refuses stays as it was (the next reload tries
  // again), and the answer says so.
  const int votes_rc = plan.own_votes && quorum_ ? quorum_->set_votes(setup_.self.nodeid, *plan.own_votes) : 0;
  const bool votes_ok = votes_rc == 0;
  if (!votes_ok) refused += fmt::format("; this node's votes {}: {}", *plan.own_votes, quorum_refusal(votes_rc));
  const int expected_rc = plan.expected_votes && quorum_ ? quorum_->set_expected(*plan.expected_votes) : 0;
  const bool expected_ok = expected_rc == 0;
  if (!expected_ok)
    refused += fmt::format("; expected votes {}: {}", *plan.expected_votes, quorum_refusal(expected_rc));
  for (config::NodeEntry& entry : setup_.config.nodes)
    for (const config::NodeEntry& now : file.nodes)
      if (entry.nodeid == now.nodeid && (entry.nodeid != setup_.self.nodeid || votes_ok))
        entry.quorum_votes = now.quorum_votes;
  if (setup_.config.quorum && file.quorum && expected_ok) {
    setup_.config.quorum->expected_votes = file.quorum->expected_votes;
    setup_.config.quorum->expected_votes_configured = file.quorum->expected_votes_configured;
  }
  keys_->configuration_reloaded();
  arm_timer();
  const std::string done = fmt::format("reloaded {}: {}{}", setup_.config.path, key_list(plan.changed), refused);
  qb_log(refused.empty() ? LOG_NOTICE : LOG_WARNING, "%s", done.c_str());
  return {refused.empty() ? 0 : -ERANGE, done};
}

void NodeStack::reopen_logging() {
  if (auto applied = host_.apply_logging(setup_.config.logging); !applied)
    qb_log(LOG_ERR, "logging not reopened: %s", applied.error().message().c_str());
}

}  // namespace rtotem::stack
