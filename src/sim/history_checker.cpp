// The checker's per-delivery checks (creation, duplication, order, safe delivery) and the payload
// format; the end-of-run checks are in finish() below.
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

std::uint64_t next_filler(std::uint64_t x) noexcept {
  return x * 6364136223846793005 + 1442695040888963407;
}

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

std::string id_text(MessageId id) { return fmt::format("{}#{}", id.origin, id.counter); }

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
    case Property::kSafeDelivery: return Kind::kSafety;
    case Property::kAgreement:
    case Property::kSelfDelivery:
    case Property::kLiveness: return Kind::kLiveness;
  }
  return Kind::kSafety;
}

std::string_view name_of(Property property) noexcept {
  switch (property) {
    case Property::kNoCreation: return "no-creation";
    case Property::kNoDuplication: return "no-duplication";
    case Property::kTotalOrder: return "total-order";
    case Property::kSafeDelivery: return "safe-delivery";
    case Property::kAgreement: return "agreement";
    case Property::kSelfDelivery: return "self-delivery";
    case Property::kLiveness: return "liveness";
  }
  return "?";
}

std::string describe(const Violation& violation) {
  std::string text = fmt::format("{}: {} at t={}.{:06} s", kind_of(violation.property) == Kind::kSafety ? "safety" : "liveness",
                                 name_of(violation.property), violation.time_us / 1'000'000,
                                 violation.time_us % 1'000'000);
  if (!violation.nodes.empty()) text += fmt::format(", nodes {}", fmt::join(violation.nodes, ","));
  if (violation.message) text += fmt::format(", message {}", id_text(*violation.message));
  return text + ": " + violation.detail;
}

HistoryChecker::HistoryChecker(std::span<const NodeId> nodes)
    : nodes_(nodes.begin(), nodes.end()), node_states_(nodes.size()), messages_(nodes.size()) {
  RTOTEM_ASSERT(!nodes_.empty() && nodes_.size() <= membership::kMembersMax);
  RTOTEM_ASSERT(std::adjacent_find(nodes_.begin(), nodes_.end(), std::greater_equal<>()) == nodes_.end());
  all_mask_ = nodes_.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << nodes_.size()) - 1;
}

void HistoryChecker::record_offer(Time, MessageId id, std::uint32_t size, Delivery delivery) {
  auto& sent = messages_[index_of(id.origin)];
  RTOTEM_ASSERT(id.counter == sent.size());  // the generator offers each counter once, in order
  RTOTEM_ASSERT(size >= kStampSize);
  sent.push_back(MessageState{.size = size, .delivery = delivery});
  ++offered_;
}

void HistoryChecker::record_accepted(Time, MessageId id) {
  MessageState* state = find(id);
  RTOTEM_ASSERT(state != nullptr && !state->accepted);
  state->accepted = true;
  ++accepted_;
  if (state->delivered_mask == all_mask_) ++complete_;  // it was delivered inside submit()
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
  const std::uint64_t bit = std::uint64_t{1} << at;
  if (state->delivered_mask & bit) {
    report(Property::kNoDuplication, now, {node}, id,
           fmt::format("delivered a second time, as seq {} of ring {}/{}", message.seq, message.ring_id.rep,
                       message.ring_id.seq));
    return;
  }
  if (state->delivered_mask == 0) ++delivered_somewhere_;
  state->delivered_mask |= bit;
  if (state->delivered_mask == all_mask_ && state->accepted) ++complete_;
  check_creation(now, node, message, id, *state);
  check_order(now, node, message, id, *state);
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

// Byte-exact, same sender, same delivery type as submitted.
void HistoryChecker::check_creation(Time now, NodeId node, const Delivered& message, MessageId id,
                                    const MessageState& state) {
  std::string wrong;
  if (message.sender != id.origin) wrong = fmt::format("sender is {}, the payload's origin {}", message.sender, id.origin);
  else if (message.payload.size() != state.size)
    wrong = fmt::format("{} bytes, {} submitted", message.payload.size(), state.size);
  else if (!payload_matches(id, message.payload)) wrong = "payload bytes differ from those submitted";
  else if (message.delivery != state.delivery)
    wrong = fmt::format("delivered as {}, submitted as {}", delivery_text(message.delivery), delivery_text(state.delivery));
  if (!wrong.empty()) report(Property::kNoCreation, now, {node}, id, std::move(wrong));
}

// The (ring, seq) -> message map is one for all nodes, each message has one (ring, seq), and each
// node delivers a ring's seqs from 1 up, without gaps, never going back to a ring it left.
void HistoryChecker::check_order(Time now, NodeId node, const Delivered& message, MessageId id,
                                 MessageState& state) {
  const std::uint32_t ring = ring_index(message.ring_id);
  const auto [slot, fresh] = by_ring_seq_.try_emplace({ring, message.seq}, id);
  if (!fresh && slot->second != id)
    report(Property::kTotalOrder, now, {node, find(slot->second)->first_node}, id,
           fmt::format("delivered as seq {} of ring {}, which node {} delivered as message {}", message.seq,
                       ring_text(ring), find(slot->second)->first_node, id_text(slot->second)));
  if (state.first_node == transport::kNoNode) {
    state.first_node = node;
    state.ring = ring;
    state.seq = message.seq;
  } else if (state.ring != ring || state.seq != message.seq) {
    report(Property::kTotalOrder, now, {node, state.first_node}, id,
           fmt::format("delivered as seq {} of ring {}; node {} delivered it as seq {} of ring {}", message.seq,
                       ring_text(ring), state.first_node, state.seq, ring_text(state.ring)));
  }
  check_node_sequence(now, node, ring, message.seq, id);
  node_states_[index_of(node)].history.push_back(Record{now, ring, message.seq, id});
}

void HistoryChecker::check_node_sequence(Time now, NodeId node, std::uint32_t ring, Seq seq, MessageId id) {
  NodeState& self = node_states_[index_of(node)];
  if (self.ring != ring) {
    if (std::find(self.left_rings.begin(), self.left_rings.end(), ring) != self.left_rings.end())
      report(Property::kTotalOrder, now, {node}, id, fmt::format("delivered in ring {} after leaving it", ring_text(ring)));
    if (self.ring) self.left_rings.push_back(*self.ring);
    self.ring = ring;
    self.last_seq = 0;
  }
  // Membership will relax this for an old ring's tail in the transitional configuration.
  if (seq != self.last_seq + 1)
    report(Property::kTotalOrder, now, {node}, id,
           fmt::format("delivered seq {} of ring {} after seq {}: out of order or a gap", seq, ring_text(ring),
                       self.last_seq));
  self.last_seq = std::max(self.last_seq, seq);
}

void HistoryChecker::finish(Time now) {
  finish_liveness(now);  // first: the summary of what is missing, then each message
  finish_sets(now);
  finish_pairwise_order();
}

// Per message: accepted before delivered, delivered everywhere, delivered at its origin.
void HistoryChecker::finish_sets(Time now) {
  for (std::size_t origin = 0; origin < messages_.size(); ++origin) {
    const std::uint64_t origin_bit = std::uint64_t{1} << origin;
    for (std::uint64_t counter = 0; counter < messages_[origin].size(); ++counter) {
      const MessageState& state = messages_[origin][counter];
      const MessageId id{nodes_[origin], counter};
      const std::vector<NodeId> lacking = nodes_lacking(state.delivered_mask);
      if (state.delivered_mask != 0 && !state.accepted)
        report(Property::kNoCreation, now, nodes_lacking(~state.delivered_mask), id,
               "delivered, though submit() never accepted it");
      if (state.delivered_mask != 0 && state.delivered_mask != all_mask_)
        report(Property::kAgreement, now, lacking, id,
               fmt::format("delivered at {}, never at {}", fmt::join(nodes_lacking(~state.delivered_mask), ","),
                           fmt::join(lacking, ",")));
      if (state.accepted && !(state.delivered_mask & origin_bit))
        report(Property::kSelfDelivery, now, {id.origin}, id, "accepted by its origin, never delivered there");
    }
  }
}

// What the application still waits for: submissions never accepted, messages not delivered
// everywhere. One report per origin, naming the first such message.
void HistoryChecker::finish_liveness(Time now) {
  for (std::size_t origin = 0; origin < messages_.size(); ++origin) {
    std::uint64_t refused = 0;
    std::uint64_t incomplete = 0;
    std::optional<MessageId> first;
    std::vector<NodeId> lacking;
    for (std::uint64_t counter = 0; counter < messages_[origin].size(); ++counter) {
      const MessageState& state = messages_[origin][counter];
      const bool waiting = !state.accepted || state.delivered_mask != all_mask_;
      refused += !state.accepted;
      incomplete += state.accepted && state.delivered_mask != all_mask_;
      if (waiting && !first) {
        first = MessageId{nodes_[origin], counter};
        lacking = nodes_lacking(state.accepted ? state.delivered_mask : 0);
      }
    }
    if (first)
      report(Property::kLiveness, now, std::move(lacking), first,
             fmt::format("node {}: {} accepted messages not delivered everywhere and {} submissions still "
                         "refused when the liveness bound ran out",
                         nodes_[origin], incomplete, refused));
  }
}

// For every pair of nodes, the messages both delivered come in the same order. With one ring the
// per-delivery checks already imply it; across rings it is the check that remains.
void HistoryChecker::finish_pairwise_order() {
  constexpr std::uint64_t kAbsent = ~std::uint64_t{0};
  std::vector<std::vector<std::uint64_t>> position(messages_.size());
  for (std::size_t b = 1; b < nodes_.size(); ++b) {
    for (std::size_t origin = 0; origin < messages_.size(); ++origin)
      position[origin].assign(messages_[origin].size(), kAbsent);
    const auto& theirs = node_states_[b].history;
    for (std::uint64_t i = 0; i < theirs.size(); ++i)
      position[index_of(theirs[i].id.origin)][theirs[i].id.counter] = i;
    for (std::size_t a = 0; a < b; ++a) {
      const Record* previous = nullptr;  // the last record of a's history that b also has
      std::uint64_t previous_at = 0;
      for (const Record& record : node_states_[a].history) {
        const std::uint64_t at = position[index_of(record.id.origin)][record.id.counter];
        if (at == kAbsent) continue;
        if (previous != nullptr && at < previous_at) {
          report(Property::kTotalOrder, std::max(record.time_us, theirs[previous_at].time_us),
                 {nodes_[a], nodes_[b]}, record.id,
                 fmt::format("node {} delivered {} before {}, node {} the other way round", nodes_[a],
                             id_text(previous->id), id_text(record.id), nodes_[b]));
          break;  // one report per pair
        }
        previous = &record;
        previous_at = at;
      }
    }
  }
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
  const auto at = std::find(rings_.begin(), rings_.end(), ring);
  if (at != rings_.end()) return static_cast<std::uint32_t>(at - rings_.begin());
  rings_.push_back(ring);
  return static_cast<std::uint32_t>(rings_.size() - 1);
}

std::vector<NodeId> HistoryChecker::nodes_lacking(std::uint64_t mask) const {
  std::vector<NodeId> lacking;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (!(mask & (std::uint64_t{1} << i))) lacking.push_back(nodes_[i]);
  return lacking;
}

std::string HistoryChecker::ring_text(std::uint32_t ring) const {
  return fmt::format("{}/{}", rings_[ring].rep, rings_[ring].seq);
}

}  // namespace rtotem::sim
