// A node's hardware, drawn once per run (its clock's rate, whether it is a slow receiver), and
// each of its incarnations: a backend on the network and a Node on its own clock.
#include <algorithm>
#include <cmath>

#include "membership/ring_seq_floor.hpp"
#include "src/sim/sim_cluster.hpp"
#include "src/sim/sim_cluster_member.hpp"

namespace rtotem::sim {
namespace {

// A slow receiver polls at most this often: from a busy loop's hiccup to a hundred times the
// network's delay. The token waits at each slow member, so a ring of 16 slow ones at up to 30 ms
// carried a third of its load and could not drain its backlog within the liveness bound.
constexpr Time kSlowPollMinUs = 500;
constexpr Time kSlowPollMaxUs = 10'000;
// A skewed clock's reading at its incarnation's start: up to a day of uptime.
constexpr Time kClockOffsetMaxUs = 86'400'000'000;

}  // namespace

// What each node's hardware is, for the whole run: its clock's rate, and whether it is a slow
// receiver. No draw for a trait that is off, so runs without them draw as before.
void SimCluster::draw_node_traits() {
  Rng& rng = network_.rng();
  const auto ppm_max = static_cast<std::uint64_t>(std::llround(spec_.clock_skew * 1e6));
  for (Slot& slot : slots_) {
    if (ppm_max > 0)
      slot.clock_ppm =
          static_cast<std::int64_t>(rng.uniform_range(0, 2 * ppm_max)) - static_cast<std::int64_t>(ppm_max);
    if (spec_.slow_share > 0 && rng.chance(spec_.slow_share))
      slot.poll_gap_us = rng.uniform_range(kSlowPollMinUs, kSlowPollMaxUs);
  }
}

// One link: a SimBackend on the network. Several: a LinkSet over a SimBackend on each link's
// network, with the ping timing rtotemd derives from the token (knet's: an interval of a quarter
// of it, a timeout of half), timed by virtual time.
Result<std::unique_ptr<transport::Backend>> SimCluster::open_backend(const transport::BackendParams& params) {
  if (spec_.links == 1) {
    auto backend = network_.attach(params);
    if (!backend) return backend.error();
    return std::unique_ptr<transport::Backend>(std::move(backend).value());
  }
  transport::LinkSetConfig set;
  set.params = params;
  for (NodeId other : ids_)
    if (other != params.local_node) set.peers.push_back(other);
  const Time token_us = Time{totem_.token_timeout_ms} * 1000;
  const transport::LinkTiming timing{.ping_interval = token_us / 4, .ping_timeout = token_us / 2, .pong_count = 2};
  set.mode = spec_.link_mode;
  set.clock = [this] { return network_.now_us(); };
  std::vector<std::unique_ptr<transport::Backend>> links;
  transport::BackendParams link_params = params;
  link_params.local_path = false;
  link_params.send_buffers = static_cast<std::uint32_t>(transport::kTxQueueMax);  // the set's are sent
  std::optional<Error> failed;
  each_network([&](transport::SimNetwork& net) {
    set.links.push_back({timing, 1});
    auto link = net.attach(link_params);
    if (!link) failed = Error::make("link {}: {}", links.size(), link.error().message());
    links.push_back(link ? std::move(link).value() : nullptr);
  });
  if (failed) return *failed;
  auto opened = transport::LinkSet::open(set, std::move(links));
  if (!opened) return opened.error();
  return std::unique_ptr<transport::Backend>(std::move(opened).value());
}

// A fresh incarnation of node `id`: a new backend on the network, a Node given the stored ring seq
// or the wall clock's floor, whichever is higher (as rtotemd). Virtual time is every node's wall
// clock, whatever its skewed monotonic one: no skew, no steps back (the floor's limits,
// membership/ring_seq_floor.hpp).
constexpr std::uint32_t kSimClientQueueBytes = 1u << 20;

// A nodelist of numeric addresses, as a config file gives it: the stack reads its peers' addresses
// (status, the key store's nodelist keys) from it without a lookup. `totem` is the timing in
// force: no token_coefficient on top of it.
stack::StackSetup stack_setup(const SimSpec& spec, const membership::TotemConfig& totem, NodeId id) {
  stack::StackSetup setup;
  setup.config.path = "rtotem-sim";
  setup.config.cluster_name = "sim";
  setup.config.totem = totem;
  setup.config.token_coefficient_ms = 0;
  // Small enough that a process that falls behind for a while may be cut off.
  setup.config.ipc.client_queue_bytes = kSimClientQueueBytes;
  for (NodeId n = 1; n <= spec.nodes; ++n) {
    config::NodeEntry entry;
    entry.nodeid = n;
    entry.ring_addrs[0] = fmt::format("10.{}.{}.{}", n >> 16, (n >> 8) & 0xff, n & 0xff);
    setup.config.nodes.push_back(std::move(entry));
  }
  setup.totem = totem;
  setup.self = setup.config.nodes[id - 1];
  return setup;
}

Result<std::unique_ptr<SimCluster::Member>> SimCluster::make_member(NodeId id) {
  Slot& slot = slots_[id - 1];
  transport::BackendParams params = spec_.backend;
  params.local_node = id;
  params.epoch = ++slot.incarnations;  // grows across restarts, as the daemon's clock does
  // The Node sizes its window from the receive ring: 8 windows is the least it takes.
  if (slot.poll_gap_us > 0) params.recv_buffers = std::min(params.recv_buffers, 8 * totem_.window_size);
  // A skewed clock reads from an offset of its own: a monotonic clock starts anew at each boot.
  NodeClock clock{0, slot.clock_ppm};
  if (spec_.clock_skew > 0) clock.offset_us = network_.rng().uniform_range(0, kClockOffsetMaxUs);
  auto backend = open_backend(params);
  if (!backend) return Error::make("node {}: {}", id, backend.error().message());
  const Seq ring_seq = std::max(slot.stored_ring_seq, membership::ring_seq_floor(network_.now_us() * 1000));
  // It runs what its file says (a reload may have changed it since the run began).
  auto made =
      std::make_unique<Member>(*this, std::move(backend).value(), slot.file_totem, ring_seq, network_.now_us(), clock);
  made->poll_gap_us = slot.poll_gap_us;
  if (spec_.links > 1) made->link_timer = network_.now_us();  // the pings start at once
  if (made->node->max_message_size() < kStampSize)
    return Error::make("mtu {}: a message cannot hold the {}-byte stamp", params.mtu, kStampSize);
  return made;
}

}  // namespace rtotem::sim
