// What rtotemctl shows: status, group members and counters, as JSON (its text form is made by
// rtotemctl from the same document, so scripts and people read one source); and the group members
// in binary for librtotem (kGroupMembers).
#include <algorithm>

#include "src/common/process_memory.hpp"
#include "src/daemon/daemon.hpp"
#include "src/ipc/json_quote.hpp"
#include "transport/links/link_set.hpp"
#ifdef RTOTEM_ALLOC_COUNTER
#include "src/common/alloc_counter.hpp"
#endif

namespace rtotem::daemon {
namespace {

using membership::NodeId;

using ipc::json_quoted;

template <class Counters>
std::string counters_object(const Counters& counters) {
  std::string out = "{";
  counters.for_each([&](std::string_view name, std::uint64_t value) {
    out += fmt::format("{}{}: {}", out.size() > 1 ? ", " : "", json_quoted(name), value);
  });
  return out + "}";
}

std::string processes_array(std::span<const groups::ProcessId> list) {
  std::string out = "[";
  for (const auto& p : list) out += fmt::format("{}{{\"nodeid\": {}, \"pid\": {}}}", out.size() > 1 ? ", " : "", p.node, p.pid);
  return out + "]";
}

// Each link's transport and address, why it carries nothing if so (missing on this node, or
// broken), and per peer whether it is up and its round trip (several links only: with one, the
// ring itself says whether a node is reachable).
std::string links_json(const transport::Backend& backend) {
  const transport::LinkSet* set = backend.link_set();
  if (set == nullptr) return "null";
  std::string out = "{";
  for (std::size_t l = 0; l < set->link_count(); ++l) {
    const auto link = static_cast<transport::LinkId>(l);
    std::string nodes = "{";
    for (NodeId peer : set->monitor().peers()) {
      const transport::LinkStatus& s = *set->monitor().status(peer, link);
      nodes += fmt::format("{}\"{}\": {{\"connected\": {}, \"latency_us\": {}, \"went_down\": {}}}",
                           nodes.size() > 1 ? ", " : "", peer, s.up, s.latency, s.went_down);
    }
    const transport::Backend* backend_of_link = set->link(link);
    const std::string_view down = set->link_down(link);
    out += fmt::format("{}\"{}\": {{\"transport\": {}, \"address\": {}, \"out_of_service\": {}, \"nodes\": {}}}",
                       out.size() > 1 ? ", " : "", l, backend_of_link ? json_quoted(backend_of_link->name()) : "null",
                       backend_of_link ? json_quoted(backend_of_link->local_address()) : "null",
                       down.empty() ? "null" : json_quoted(down), nodes + "}");
  }
  return out + "}";
}

// Each link's own counters (several links only; `link` is then the set's: a packet counted once,
// however many datagrams its links sent). A link missing on this node: null.
std::string link_counters_json(const transport::Backend& backend) {
  const transport::LinkSet* set = backend.link_set();
  if (set == nullptr) return "null";
  std::string out = "{";
  for (std::size_t l = 0; l < set->link_count(); ++l) {
    const transport::Backend* link = set->link(static_cast<transport::LinkId>(l));
    out += fmt::format("{}\"{}\": {}", out.size() > 1 ? ", " : "", l, link ? counters_object(link->counters()) : "null");
  }
  return out + "}";
}

}  // namespace

std::string Daemon::status_json() const {
  const membership::Node& node = ring_->node();
  std::string members;
  for (NodeId n : node.members()) members += fmt::format("{}{}", members.empty() ? "" : ", ", n);
  return fmt::format(
      "{{\"nodeid\": {}, \"cluster_name\": {}, \"transport\": {}, \"crypto\": {}, \"local_address\": {}, "
      "\"state\": {}, "
      "\"ring\": {{\"rep\": {}, \"seq\": {}}}, \"members\": [{}], \"clients\": {}, \"groups\": {}, "
      "\"configurations\": {}, \"links\": {}, \"link\": {}}}",
      setup_.self.nodeid, json_quoted(setup_.config.cluster_name), json_quoted(config::describe(setup_.config.link0().transport)),
      json_quoted(ring_->backend().sealed() ? "on" : "off"), json_quoted(ring_->backend().local_address()), json_quoted(membership::describe(node.state())), node.ring_id().rep,
      node.ring_id().seq, members, clients_->client_count(), groups_->group_names().size(), configurations_,
      links_json(ring_->backend()), counters_object(ring_->backend().counters()));
}

void Daemon::group_members(std::string_view group, ipc::BodyWriter& reply) const {
  const std::vector<std::string> names = groups_->group_names();
  reply.u32(static_cast<std::uint32_t>(
      group.empty() ? names.size() : static_cast<std::size_t>(std::ranges::count(names, group))));
  for (const std::string& name : names) {
    if (!group.empty() && name != group) continue;
    reply.string(name);
    const std::span<const groups::ProcessId> members = groups_->members(name);
    reply.u32(static_cast<std::uint32_t>(members.size()));
    for (const groups::ProcessId& p : members) {
      reply.u32(p.node);
      reply.u32(p.pid);
    }
  }
}

std::string Daemon::members_json(std::string_view group) const {
  std::string out = "{";
  for (const std::string& name : groups_->group_names()) {
    if (!group.empty() && name != group) continue;
    out += fmt::format("{}{}: {}", out.size() > 1 ? ", " : "", json_quoted(name), processes_array(groups_->members(name)));
  }
  return out + "}";
}

namespace {

// The process's heap allocations so far; null in a build without the counter (under ASan).
std::string heap_allocations_json() {
#ifdef RTOTEM_ALLOC_COUNTER
  return std::to_string(heap_allocations());
#else
  return "null";
#endif
}

}  // namespace

std::string Daemon::stats_json() const {
  const ProcessMemory memory = process_memory();
  return fmt::format(
      "{{\"protocol\": {}, \"link\": {}, \"links\": {}, \"ipc\": {{\"clients\": {}, \"clients_evicted\": {}, "
      "\"clients_refused\": {}, \"unauthenticated\": {}, \"auth_timeouts\": {}, \"connections_shed\": {}, "
      "\"queue_memory_bytes\": {}, \"queue_memory_peak_bytes\": {}, \"requests_malformed\": {}, "
      "\"group_packets_malformed\": {}, \"join_list_refusals\": {}, \"event_batches\": {}, \"events_batched\": {}, "
      "\"requests_async\": {}, \"requests_sync\": {}, \"mcasts_staged\": {}, \"credit_events\": {}, "
      "\"orphaned_bytes\": {}, \"orphans_dropped\": {}}}, "
      "\"process\": {{\"heap_allocations\": {}, \"rss_bytes\": {}, \"rss_anon_bytes\": {}, \"rss_shmem_bytes\": {}, "
      "\"rss_peak_bytes\": {}}}}}",
      counters_object(ring_->node().counters()), counters_object(ring_->backend().counters()),
      link_counters_json(ring_->backend()), clients_->client_count(),
      clients_->clients_evicted(), ipc_->clients_refused(), ipc_->admission().unauthenticated(),
      ipc_->admission().auth_timeouts(), ipc_->admission().connections_shed(), clients_->queue_memory(), clients_->queue_memory_peak(),
      clients_->requests_malformed(), groups_->packets_malformed(), groups_->join_list_refusals(), clients_->batches_sent(),
      clients_->events_batched(), clients_->requests_async(), clients_->requests_sync(), clients_->mcasts_staged(), clients_->credit_events(), orphaned_.bytes(),
      orphans_dropped_,
      heap_allocations_json(), memory.rss_bytes, memory.rss_anon_bytes, memory.rss_shmem_bytes,
      memory.peak_bytes);
}

}  // namespace rtotem::daemon
