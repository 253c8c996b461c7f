// What rtotemctl shows: status and counters, as JSON (its text form is made by rtotemctl from the
// same document, so scripts and people read one source).
#include <algorithm>

#include "src/daemon/config/config_sections.hpp"
#include "src/ipc/json_quote.hpp"
#include "src/stack/node_stack.hpp"
#include "transport/links/link_set.hpp"

namespace rtotem::stack {
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
    out +=
        fmt::format("{}\"{}\": {}", out.size() > 1 ? ", " : "", l, link ? counters_object(link->counters()) : "null");
  }
  return out + "}";
}

// The timing in force (resolved, token_coefficient applied), in ms, under corosync's key names.
std::string timing_json(const membership::TotemConfig& totem) {
  std::string out;
  for (const config::TotemNumber& t : config::totem_numbers())
    if (t.unit == std::string_view("ms"))
      out += fmt::format("{}\"{}\": {}", out.empty() ? "" : ", ", t.key, totem.*t.field);
  return "{" + out + "}";
}

}  // namespace

std::string NodeStack::status_json() const {
  const membership::Node& node = host_.node();
  std::string members;
  for (NodeId n : node.members()) members += fmt::format("{}{}", members.empty() ? "" : ", ", n);
  return fmt::format(
      "{{\"nodeid\": {}, \"cluster_name\": {}, \"transport\": {}, \"crypto\": {}, \"local_address\": {}, "
      "\"state\": {}, "
      "\"ring\": {{\"rep\": {}, \"seq\": {}}}, \"members\": [{}], \"clients\": {}, \"groups\": {}, "
      "\"configurations\": {}, \"totem\": {}, \"links\": {}, \"link\": {}}}",
      setup_.self.nodeid, json_quoted(setup_.config.cluster_name),
      json_quoted(config::describe(setup_.config.link0().transport)),
      json_quoted(host_.backend().sealed() ? "on" : "off"), json_quoted(host_.backend().local_address()),
      json_quoted(membership::describe(node.state())), node.ring_id().rep, node.ring_id().seq, members,
      clients_->client_count(), groups_->group_names().size(), configurations_, timing_json(setup_.totem),
      links_json(host_.backend()), counters_object(host_.backend().counters()));
}

std::string NodeStack::stats_json() const {
  const HostStats host = host_.host_stats();
  return fmt::format(
      "{{\"protocol\": {}, \"link\": {}, \"links\": {}, \"ipc\": {{\"clients\": {}, \"clients_evicted\": {}, "
      "\"clients_refused\": {}, \"unauthenticated\": {}, \"auth_timeouts\": {}, \"connections_shed\": {}, "
      "\"queue_memory_bytes\": {}, \"queue_memory_peak_bytes\": {}, \"requests_malformed\": {}, "
      "\"group_packets_malformed\": {}, \"join_list_refusals\": {}, \"event_batches\": {}, \"events_batched\": {}, "
      "\"requests_async\": {}, \"requests_sync\": {}, \"mcasts_staged\": {}, \"credit_events\": {}, "
      "\"orphaned_bytes\": {}, \"orphans_dropped\": {}}}, "
      "\"process\": {{\"heap_allocations\": {}, \"rss_bytes\": {}, \"rss_anon_bytes\": {}, \"rss_shmem_bytes\": {}, "
      "\"rss_peak_bytes\": {}}}}}",
      counters_object(host_.node().counters()), counters_object(host_.backend().counters()),
      link_counters_json(host_.backend()), clients_->client_count(), clients_->clients_evicted(), host.clients_refused,
      host.unauthenticated, host.auth_timeouts, host.connections_shed, clients_->queue_memory(),
      clients_->queue_memory_peak(), clients_->requests_malformed(), groups_->packets_malformed(),
      groups_->join_list_refusals(), clients_->batches_sent(), clients_->events_batched(), clients_->requests_async(),
      clients_->requests_sync(), clients_->mcasts_staged(), clients_->credit_events(), staging_->orphaned_bytes(),
      staging_->orphans_dropped(), host.heap_allocations ? std::to_string(*host.heap_allocations) : "null",
      host.rss_bytes, host.rss_anon_bytes, host.rss_shmem_bytes, host.rss_peak_bytes);
}

}  // namespace rtotem::stack
