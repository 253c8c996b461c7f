// The simulated network: attaching backends, fault and reachability settings, and the heap of
// copies in flight that advance_to() delivers in virtual-time order.
#include "transport/sim/sim_network.hpp"

#include <algorithm>
#include <tuple>

namespace rtotem::transport {
namespace {

void check(const SimFaults& faults) {
  RTOTEM_ASSERT(faults.loss >= 0.0 && faults.loss <= 1.0);
  RTOTEM_ASSERT(faults.duplicate >= 0.0 && faults.duplicate <= 1.0);
  RTOTEM_ASSERT(faults.delay_min_us <= faults.delay_max_us);
  RTOTEM_ASSERT(faults.late >= 0.0 && faults.late <= 1.0 && faults.late_min_us <= faults.late_max_us);
  RTOTEM_ASSERT(faults.corrupt >= 0.0 && faults.corrupt <= 1.0);
}

}  // namespace

SimNetwork::SimNetwork(std::uint64_t seed, SimFaults faults) : rng_(seed), faults_(faults) { check(faults_); }

SimNetwork::~SimNetwork() {
  // A backend outliving us would detach into freed memory. With none left, nothing is in flight.
  RTOTEM_ASSERT(endpoints_.empty());
  RTOTEM_ASSERT(in_flight_.empty());
}

Result<std::unique_ptr<SimBackend>> SimNetwork::attach(const BackendParams& params) {
  if (auto valid = params.validate(); !valid) return valid.error();
  const auto at = lower_bound(params.local_node);
  if (at != endpoints_.end() && at->node == params.local_node)
    return Error::make("node {} is already attached to the simulated network", params.local_node);
  const BufferLayout layout = BufferLayout::of(params, 0);
  auto arena = BufferArena::map(layout.total_bytes());
  if (!arena) return arena.error();
  // Not make_unique: the constructor is private, only the network makes backends.
  std::unique_ptr<SimBackend> backend(new SimBackend(*this, params, std::move(arena).value(), layout));
  endpoints_.insert(at, Endpoint{params.local_node, backend.get()});
  return backend;
}

void SimNetwork::set_faults(const SimFaults& faults) {
  check(faults);
  faults_ = faults;
}

void SimNetwork::break_device(NodeId node, std::string reason) {
  SimBackend* backend = find(node);
  RTOTEM_ASSERT(backend != nullptr);  // the scenario breaks an attached node's device
  backend->break_device(std::move(reason));
}

void SimNetwork::stall_device(NodeId node, bool stalled) {
  SimBackend* backend = find(node);
  RTOTEM_ASSERT(backend != nullptr);  // the scenario stalls an attached node's device
  backend->stalled_ = stalled;
}

void SimNetwork::partition(std::span<const std::vector<NodeId>> groups) {
  group_of_.clear();
  for (std::size_t group = 0; group < groups.size(); ++group) {
    for (NodeId node : groups[group]) {
      const bool first_time = group_of_.emplace(node, group).second;
      RTOTEM_ASSERT(first_time);  // a node in two groups: the scenario is wrong
    }
  }
  partitioned_ = true;
}

SimNetworkStats& SimNetworkStats::operator+=(const SimNetworkStats& other) noexcept {
  sent += other.sent;
  delivered += other.delivered;
  lost += other.lost;
  duplicated += other.duplicated;
  cut += other.cut;
  no_receiver += other.no_receiver;
  ring_full += other.ring_full;
  crashed += other.crashed;
  late += other.late;
  corrupted += other.corrupted;
  from_dead_incarnation += other.from_dead_incarnation;
  return *this;
}

void SimNetwork::heal() {
  partitioned_ = false;
  group_of_.clear();
  down_links_.clear();
  multicast_deaf_.clear();
}

void SimNetwork::set_port(NodeId node, bool up) {
  if (up)
    ports_down_.erase(node);
  else
    ports_down_.insert(node);
}

void SimNetwork::set_link(NodeId from, NodeId to, bool up) {
  if (up)
    down_links_.erase({from, to});
  else
    down_links_.emplace(from, to);
}

void SimNetwork::set_multicast_deaf(NodeId node, bool deaf) {
  if (deaf)
    multicast_deaf_.insert(node);
  else
    multicast_deaf_.erase(node);
}

bool SimNetwork::reachable(NodeId from, NodeId to) const {
  if (from == to) return true;  // a node always reaches itself (its own packets never travel)
  if (down_links_.contains({from, to}) || ports_down_.contains(from) || ports_down_.contains(to)) return false;
  if (!partitioned_) return true;
  const auto a = group_of_.find(from);
  const auto b = group_of_.find(to);
  return a != group_of_.end() && b != group_of_.end() && a->second == b->second;
}

std::optional<std::uint64_t> SimNetwork::next_delivery_us() const noexcept {
  if (in_flight_.empty()) return std::nullopt;
  return in_flight_.front().deliver_us;
}

void SimNetwork::advance_to(std::uint64_t t_us) {
  RTOTEM_ASSERT(t_us >= now_us_);
  while (!in_flight_.empty() && in_flight_.front().deliver_us <= t_us) {
    std::pop_heap(in_flight_.begin(), in_flight_.end(), later);
    const Copy copy = std::move(in_flight_.back());
    in_flight_.pop_back();
    now_us_ = copy.deliver_us;
    deliver(copy);  // then `copy` drops its Ref: the sender's buffer goes home after the last one
  }
  now_us_ = t_us;
}

void SimNetwork::send(NodeId from, NodeId dest, const SendBufferRef& buffer, std::span<const std::byte> wire) {
  Payload payload{buffer, nullptr};
  if (wire.data() != buffer->wire().data()) {  // sealed: the slot is the sender's again after this call
    payload.buffer.reset();
    payload.sealed = std::make_shared<const std::vector<std::byte>>(wire.begin(), wire.end());
  }
  if (dest != kNoNode) {
    send_copy(from, dest, payload, buffer->payload());
    return;
  }
  for (const Endpoint& endpoint : endpoints_) {
    if (endpoint.node == from) continue;
    if (multicast_deaf_.contains(endpoint.node)) {
      ++stats_.sent;
      ++stats_.cut;
      continue;
    }
    send_copy(from, endpoint.node, payload, buffer->payload());
  }
}

void SimNetwork::detach(const SimBackend& backend) {
  const NodeId node = backend.local_node();
  const auto at = lower_bound(node);
  RTOTEM_ASSERT(at != endpoints_.end() && at->backend == &backend);
  endpoints_.erase(at);
  // Erasing releases the Refs now, while the sender's pool is still alive; so does copying the
  // bytes of those that still land.
  stats_.crashed += std::erase_if(in_flight_, [&](Copy& copy) {
    if (copy.to == node) return true;
    if (copy.from != node) return false;
    if (!crashed_copies_land_) return true;
    copy.orphan = true;
    if (copy.payload.buffer) {
      const auto wire = copy.payload.buffer->wire();
      copy.payload.sealed = std::make_shared<const std::vector<std::byte>>(wire.begin(), wire.end());
      copy.payload.buffer.reset();
    }
    return false;
  });
  std::make_heap(in_flight_.begin(), in_flight_.end(), later);
}

void SimNetwork::send_copy(NodeId from, NodeId to, const Payload& payload, std::span<const std::byte> packet) {
  ++stats_.sent;
  if (find(to) == nullptr) {
    ++stats_.no_receiver;
    return;
  }
  if (!reachable(from, to)) {
    ++stats_.cut;
    return;
  }
  if (rng_.chance(faults_.loss) || (drop_rule_ && drop_rule_(now_us_, from, to, packet))) {
    ++stats_.lost;
    return;
  }
  launch(from, to, payload);
  if (rng_.chance(faults_.duplicate)) {
    ++stats_.duplicated;
    launch(from, to, payload);
  }
}

void SimNetwork::launch(NodeId from, NodeId to, const Payload& payload) {
  std::uint64_t delay_us = rng_.uniform_range(faults_.delay_min_us, faults_.delay_max_us);
  if (faults_.late > 0 && rng_.chance(faults_.late)) {
    ++stats_.late;
    delay_us = rng_.uniform_range(faults_.late_min_us, faults_.late_max_us);
  }
  in_flight_.push_back(Copy{now_us_ + delay_us, next_seq_++, from, to, payload});
  std::push_heap(in_flight_.begin(), in_flight_.end(), later);
}

void SimNetwork::deliver(const Copy& copy) {
  SimBackend* receiver = find(copy.to);
  RTOTEM_ASSERT(receiver != nullptr);  // detach() drops the copies addressed to a leaving node
  if (!reachable(copy.from, copy.to)) {
    ++stats_.cut;
    return;
  }
  if (copy.orphan && find(copy.from) != nullptr) ++stats_.from_dead_incarnation;
  std::span<const std::byte> wire = copy.payload.wire();
  if (faults_.corrupt > 0 && damage_ && rng_.chance(faults_.corrupt)) {
    ++stats_.corrupted;
    damaged_.assign(wire.begin(), wire.end());
    const std::size_t size = damage_(damaged_, rng_);
    RTOTEM_ASSERT(size <= damaged_.size());
    wire = std::span<const std::byte>(damaged_.data(), size);
  }
  switch (receiver->deliver(wire)) {
    case SimBackend::Delivery::kDelivered: ++stats_.delivered; return;
    case SimBackend::Delivery::kRingFull: ++stats_.ring_full; return;
    case SimBackend::Delivery::kClosed: ++stats_.no_receiver; return;
  }
}

bool SimNetwork::later(const Copy& a, const Copy& b) noexcept {
  return std::tie(a.deliver_us, a.seq) > std::tie(b.deliver_us, b.seq);
}

std::vector<SimNetwork::Endpoint>::const_iterator SimNetwork::lower_bound(NodeId node) const noexcept {
  return std::lower_bound(endpoints_.begin(), endpoints_.end(), node,
                          [](const Endpoint& endpoint, NodeId key) { return endpoint.node < key; });
}

SimBackend* SimNetwork::find(NodeId node) const noexcept {
  const auto at = lower_bound(node);
  return at != endpoints_.end() && at->node == node ? at->backend : nullptr;
}

}  // namespace rtotem::transport
