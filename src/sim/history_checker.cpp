// The checker's per-delivery checks (creation, duplication, order, configuration, safe delivery)
// and the payload format. Configurations: history_checker_configs.cpp; the prefix rule and FIFO:
// history_checker_order.cpp; what configurations owe their members: history_checker_members.cpp;
// progress during faults: history_checker_progress.cpp; the end of the run:
// history_checker_finish.cpp.
#include "src/sim/history_checker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

namespace rtotem::sim {
namespace {

// The filler after the stamp: a 64-bit LCG (Knuth's MMIX constants) seeded from the stamp, one
// word per 8 bytes, little-endian. Cheap, and any flipped, shifted or foreign byte shows.
std::uint64_t filler_seed(MessageId id) noexcept {
  std::uint64_t z = (std::uint64_t{id.origin} << 40) ^ id.counter ^ 0x9e3779b97f4a7c15;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  return z ^ (z >> 31);
}

std::uint64_t next_filler(std::uint64_t x) noexcept { return x * 6364136223846793005 + 1442695040888963407; }

// The word as its bytes lie in memory on a little-endian host, so whole words copy and compare
// with one load or store.
std::uint64_t little_endian(std::uint64_t word) noexcept {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(word);
  return word;
}

void put_be(std::span<std::byte> out, std::uint64_t value, std::size_t bytes) noexcept {
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>(value >> (8 * (bytes - 1 - i)));
}

std::uint64_t get_be(std::span<const std::byte> in, std::size_t bytes) noexcept {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value = (value << 8) | std::to_integer<std::uint64_t>(in[i]);
  return value;
}

std::string_view delivery_text(Delivery delivery) { return delivery == Delivery::kSafe ? "safe" : "agreed"; }

}  // namespace

void write_payload(MessageId id, std::span<std::byte> out) noexcept {
  RTOTEM_ASSERT(out.size() >= kStampSize);
  put_be(out, id.origin, 4);
  put_be(out.subspan(4), id.counter, 8);
  std::uint64_t word = filler_seed(id);
  for (std::size_t at = kStampSize; at < out.size(); at += sizeof word) {
    word = next_filler(word);
    const std::uint64_t bytes = little_endian(word);
    std::memcpy(out.data() + at, &bytes, std::min(sizeof bytes, out.size() - at));
  }
}

bool read_stamp(std::span<const std::byte> payload, MessageId& out) noexcept {
  if (payload.size() < kStampSize) return false;
  out.origin = static_cast<NodeId>(get_be(payload, 4));
  out.counter = get_be(payload.subspan(4), 8);
  return true;
}

bool payload_matches(MessageId id, std::span<const std::byte> payload) noexcept {
  MessageId stamp;
  if (!read_stamp(payload, stamp) || stamp != id) return false;
  std::uint64_t word = filler_seed(id);
  std::size_t at = kStampSize;
  for (; at + sizeof word <= payload.size(); at += sizeof word) {
    word = next_filler(word);
    std::uint64_t got;
    std::memcpy(&got, payload.data() + at, sizeof got);
    if (got != little_endian(word)) return false;
  }
  if (at == payload.size()) return true;
  const std::uint64_t tail = little_endian(next_filler(word));
  return std::memcmp(payload.data() + at, &tail, payload.size() - at) == 0;
}

Kind kind_of(Property property) noexcept {
  switch (property) {
    case Property::kNoCreation:
    case Property::kNoDuplication:
    case Property::kTotalOrder:
    case Property::kSafeDelivery:
    case Property::kConfiguration:
    case Property::kVirtualSynchrony: return Kind::kSafety;
    case Property::kPrefix:
    case Property::kFifo:
    case Property::kGroupViews:
    case Property::kGroupSender:
    case Property::kGroupNodeDown:
    case Property::kGroupJoinReason:
    case Property::kQuorumSplit:
    case Property::kQuorumAgreement:
    case Property::kQuorumWaitForAll:
    case Property::kClientMessage:
    case Property::kClientFifo:
    case Property::kReloadOrder: return Kind::kSafety;
    case Property::kAgreement:
    case Property::kSelfDelivery:
    case Property::kLiveness:
    case Property::kProgress:
    case Property::kLinkFailover: return Kind::kLiveness;
  }
  return Kind::kSafety;
}

std::string_view name_of(Property property) noexcept {
  switch (property) {
    case Property::kNoCreation: return "no-creation";
    case Property::kNoDuplication: return "no-duplication";
    case Property::kTotalOrder: return "total-order";
    case Property::kSafeDelivery: return "safe-delivery";
    case Property::kConfiguration: return "configuration";
    case Property::kVirtualSynchrony: return "virtual-synchrony";
    case Property::kAgreement: return "agreement";
    case Property::kSelfDelivery: return "self-delivery";
    case Property::kLiveness: return "liveness";
    case Property::kPrefix: return "prefix";
    case Property::kFifo: return "fifo";
    case Property::kProgress: return "progress";
    case Property::kLinkFailover: return "link-failover";
    case Property::kGroupViews: return "group-views";
    case Property::kGroupSender: return "group-sender";
    case Property::kGroupNodeDown: return "group-nodedown";
    case Property::kGroupJoinReason: return "group-join-reason";
    case Property::kQuorumSplit: return "quorum-split";
    case Property::kQuorumAgreement: return "quorum-agreement";
    case Property::kQuorumWaitForAll: return "quorum-wait-for-all";
    case Property::kClientMessage: return "client-message";
    case Property::kClientFifo: return "client-fifo";
    case Property::kReloadOrder: return "reload-order";
  }
  return "?";
}

std::string describe(MessageId id) { return fmt::format("{}#{}", id.origin, id.counter); }

std::string describe(const Violation& violation) {
  std::string text =
      fmt::format("{}: {} at t={}.{:06} s", kind_of(violation.property) == Kind::kSafety ? "safety" : "liveness",
                  name_of(violation.property), violation.time_us / 1'000'000, violation.time_us % 1'000'000);
  if (!violation.nodes.empty()) text += fmt::format(", nodes {}", fmt::join(violation.nodes, ","));
  if (violation.message) text += fmt::format(", message {}", describe(*violation.message));
  return text + ": " + violation.detail;
}

HistoryChecker::HistoryChecker(std::span<const NodeId> nodes, Time progress_bound_us)
    : nodes_(nodes.begin(), nodes.end()),
      node_states_(nodes.size()),
      messages_(nodes.size()),
      outstanding_(nodes.size()),
      fifo_next_(nodes.size() * nodes.size()),
      progress_bound_us_(progress_bound_us) {
  RTOTEM_ASSERT(!nodes_.empty() && nodes_.size() <= membership::kMembersMax);
  RTOTEM_ASSERT(std::adjacent_find(nodes_.begin(), nodes_.end(), std::greater_equal<>()) == nodes_.end());
}

void HistoryChecker::record_offer(Time, MessageId id, std::uint32_t size, Delivery delivery) {
  const std::size_t origin = index_of(id.origin);
  auto& sent = messages_[origin];
  RTOTEM_ASSERT(id.counter == sent.size());  // the generator offers each counter once, in order
  RTOTEM_ASSERT(size >= kStampSize);
  sent.push_back(MessageState{.size = size, .delivery = delivery});
  ++outstanding_[origin];
}

void HistoryChecker::record_accepted(Time, MessageId id) {
  MessageState* state = find(id);
  RTOTEM_ASSERT(state != nullptr && !state->accepted && !state->dropped);
  const std::size_t origin = index_of(id.origin);
  state->accepted = true;
  ++accepted_;
  if (settled(*state, origin)) --outstanding_[origin];  // it was delivered inside submit()
}

void HistoryChecker::record_delivery(Time now, NodeId node, const Delivered& message) {
  ++deliveries_;
  const std::size_t at = index_of(node);
  MessageId id;
  if (!read_stamp(message.payload, id)) {
    report(Property::kNoCreation, now, {node, message.sender}, std::nullopt,
           fmt::format("{} payload bytes from sender {}, too short for a stamp: the application sent none such",
                       message.payload.size(), message.sender));
    return;
  }
  MessageState* state = std::binary_search(nodes_.begin(), nodes_.end(), id.origin) ? find(id) : nullptr;
  if (state == nullptr) {
    report(Property::kNoCreation, now, {node, message.sender}, id,
           fmt::format("delivered from sender {} but never submitted", message.sender));
    return;
  }
  // The bit is the node's, not its incarnation's: a restarted node must not deliver again what it
  // delivered before its crash.
  const std::uint64_t bit = std::uint64_t{1} << at;
  if (state->delivered_mask & bit) {
    report(Property::kNoDuplication, now, {node}, id,
           fmt::format("delivered a second time, as seq {} of ring {}/{}", message.seq, message.ring_id.rep,
                       message.ring_id.seq));
    return;
  }
  const std::size_t origin = index_of(id.origin);
  const bool was_settled = settled(*state, origin);
  if (state->delivered_mask == 0) ++delivered_somewhere_;
  state->delivered_mask |= bit;
  if (!was_settled && settled(*state, origin)) --outstanding_[origin];
  const std::uint32_t ring = ring_index(message.ring_id);
  check_creation(now, node, message, id, *state);
  check_ring_seq(now, node, message, id, ring, *state);
  check_node_sequence(now, at, message, id, ring);
  check_fifo(now, at, id);
  const NodeState& self = node_states_[at];
  if (!message.transitional && self.in_config && !self.in_transitional && self.regular &&
      configs_[*self.regular].ring == ring)
    check_prefix(now, at, id);  // a delivery out of its configuration is reported above already
  node_states_[at].history.push_back(Record{now, ring, Place{message.seq, message.index}, id});
}

void HistoryChecker::check_safe(Time now, NodeId node, const Delivered& message, std::span<const NodeId> lacking) {
  if (lacking.empty()) return;
  std::vector<NodeId> involved{node};
  involved.insert(involved.end(), lacking.begin(), lacking.end());
  MessageId id;
  std::optional<MessageId> known;
  if (read_stamp(message.payload, id)) known = id;
  report(Property::kSafeDelivery, now, std::move(involved), known,
         fmt::format("safe seq {} of ring {}/{} delivered at node {} while {} of its members do not hold it",
                     message.seq, message.ring_id.rep, message.ring_id.seq, node, lacking.size()));
}

void HistoryChecker::record_stall(Time now, std::string detail) {
  report(Property::kLiveness, now, {}, std::nullopt, std::move(detail));
}

void HistoryChecker::record_link_failover(Time now, std::vector<NodeId> nodes, std::string detail) {
  report(Property::kLinkFailover, now, std::move(nodes), std::nullopt, std::move(detail));
}

// Nothing more is owed for it: given up with its crashed origin, or accepted and delivered at its
// origin (or exempted from that by the origin's crash).
bool HistoryChecker::settled(const MessageState& state, std::size_t origin) const noexcept {
  const bool at_origin = (state.delivered_mask >> origin) & 1;
  return state.dropped || (state.accepted && (at_origin || state.self_exempt));
}

// Byte-exact, same sender, same delivery type as submitted.
void HistoryChecker::check_creation(Time now, NodeId node, const Delivered& message, MessageId id,
                                    const MessageState& state) {
  std::string wrong;
  if (message.sender != id.origin)
    wrong = fmt::format("sender is {}, the payload's origin {}", message.sender, id.origin);
  else if (message.payload.size() != state.size)
    wrong = fmt::format("{} bytes, {} submitted", message.payload.size(), state.size);
  else if (!payload_matches(id, message.payload))
    wrong = "payload bytes differ from those submitted";
  else if (message.delivery != state.delivery)
    wrong =
        fmt::format("delivered as {}, submitted as {}", delivery_text(message.delivery), delivery_text(state.delivery));
  if (!wrong.empty()) report(Property::kNoCreation, now, {node}, id, std::move(wrong));
}

// The (ring, place) -> message map is one for all nodes, and each message has one (ring, place).
void HistoryChecker::check_ring_seq(Time now, NodeId node, const Delivered& message, MessageId id, std::uint32_t ring,
                                    MessageState& state) {
  const Place place{message.seq, message.index};
  const auto [slot, fresh] = by_place_.try_emplace({ring, place}, id);
  if (!fresh && slot->second != id)
    report(Property::kTotalOrder, now, {node, find(slot->second)->first_node}, id,
           fmt::format("delivered as {} of ring {}, which node {} delivered as message {}", place_text(place),
                       ring_text(ring), find(slot->second)->first_node, describe(slot->second)));
  if (state.first_node == transport::kNoNode) {
    state.first_node = node;
    state.ring = ring;
    state.place = place;
  } else if (state.ring != ring || state.place != place) {
    report(Property::kTotalOrder, now, {node, state.first_node}, id,
           fmt::format("delivered as {} of ring {}; node {} delivered it as {} of ring {}", place_text(place),
                       ring_text(ring), state.first_node, place_text(state.place), ring_text(state.ring)));
  }
}

std::string HistoryChecker::place_text(Place place) {
  return place.index == 0 ? fmt::format("seq {}", place.seq) : fmt::format("seq {} #{}", place.seq, place.index);
}

// EVS: a node delivers in its current configuration: a regular one delivers its own ring's
// messages, a transitional one those of the ring it closes; a ring left is never delivered in
// again. Within the ring, seqs increase; gaps are allowed (seqs Recovery used for itself, and an
// old ring's messages nobody in the transitional configuration holds).
void HistoryChecker::check_node_sequence(Time now, std::size_t at, const Delivered& message, MessageId id,
                                         std::uint32_t ring) {
  NodeState& self = node_states_[at];
  const NodeId node = nodes_[at];
  const std::string_view kind = message.transitional ? "transitional" : "regular";
  if (!self.in_config) {
    report(Property::kConfiguration, now, {node}, id,
           fmt::format("{} delivery of seq {} of ring {} before any configuration since the node (re)started", kind,
                       message.seq, ring_text(ring)));
    return;
  }
  if (self.left_rings.contains(ring)) {
    report(Property::kTotalOrder, now, {node}, id,
           fmt::format("delivered seq {} of ring {} after leaving that ring", message.seq, ring_text(ring)));
    return;
  }
  // The ring this kind of delivery may come from now: none in a fresh node's transitional one.
  std::optional<std::uint32_t> allowed;
  if (message.transitional == self.in_transitional && self.regular) allowed = configs_[*self.regular].ring;
  if (allowed != ring) {
    report(Property::kConfiguration, now, {node}, id,
           fmt::format("{} delivery of seq {} of ring {} while in {}", kind, message.seq, ring_text(ring),
                       config_text(self.installed.back().config)));
    return;
  }
  const Place place{message.seq, message.index};
  if (place <= self.last)
    report(Property::kTotalOrder, now, {node}, id,
           fmt::format("delivered {} of ring {} after {}", place_text(place), ring_text(ring), place_text(self.last)));
  self.last = std::max(self.last, place);
}

void HistoryChecker::report(Property property, Time now, std::vector<NodeId> nodes, std::optional<MessageId> message,
                            std::string detail) {
  ++violation_count_;
  if (violations_.size() < kViolationsKept)
    violations_.push_back(Violation{property, now, std::move(nodes), message, std::move(detail)});
}

std::size_t HistoryChecker::index_of(NodeId node) const {
  const auto at = std::lower_bound(nodes_.begin(), nodes_.end(), node);
  RTOTEM_ASSERT(at != nodes_.end() && *at == node);  // the simulator only runs known nodes
  return static_cast<std::size_t>(at - nodes_.begin());
}

HistoryChecker::MessageState* HistoryChecker::find(MessageId id) {
  auto& sent = messages_[index_of(id.origin)];
  return id.counter < sent.size() ? &sent[id.counter] : nullptr;
}

std::uint32_t HistoryChecker::ring_index(const RingId& ring) {
  const auto [slot, fresh] = ring_indexes_.try_emplace({ring.rep, ring.seq}, static_cast<std::uint32_t>(rings_.size()));
  if (fresh) rings_.push_back(ring);
  return slot->second;
}

std::string HistoryChecker::ring_text(std::uint32_t ring) const {
  return fmt::format("{}/{}", rings_[ring].rep, rings_[ring].seq);
}

}  // namespace rtotem::sim
