// The quorum packets (quorum_wire.hpp) as the ring delivers them to a QuorumService, and the
// service answering them, its quorum device's calls included. Steps (fuzz_steps.hpp), by op >> 6:
//   0, 1  the step's bytes delivered as a ring message from member (op & 3) + 1 of the ring, agreed
//         (0) or safe (1), in the regular configuration (bit 5 clear) or the transitional one
//   2     a regular configuration of this node (1) and the nodes of the step's first byte's low
//         bits (node n + 2 for bit n), at the time the step's second byte says
//   3     a local call, by (op >> 3) & 7: set votes, set expected votes, the device's register,
//         poll (bit 0 of op: its vote), master_wins, unregister, or the clock moving on to the
//         next deadline; the step's bytes give the values
// What the service submits is delivered back to it from this node after each step, as the ring
// would. Checked, beyond "no crash, no bad read":
// - a packet that decodes re-encodes to the very same bytes, and so does every packet the service
//   submits (which must decode);
// - after each step: the state's members are sorted and unique, one vote each; a decision in sync
//   is one decide() could make (quorum at most expected / 2 + 1, quorate only with the votes or
//   a rule that allows it).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "base/assert.hpp"
#include "src/services/quorum/quorum_service.hpp"
#include "tests/fuzz/fuzz_steps.hpp"

namespace rtotem::quorum {
namespace {

using membership::Delivery;
using Bytes = std::span<const std::byte>;

constexpr NodeId kSelf = 1;
constexpr NodeId kNodes = 6;
constexpr const char* kDevice = "Qdevice";

struct Events final : QuorumEvents {
  void quorum_changed(const QuorumState&) override {}
};

void check_round_trip(Bytes bytes) {
  const QuorumDecoded decoded = decode_quorum_packet(bytes);
  if (decoded.error != QuorumDecodeError::kNone) return;
  std::vector<std::byte> again(encoded_size(decoded.packet));
  RTOTEM_ASSERT(encode(decoded.packet, again) == again.size());
  RTOTEM_ASSERT(std::ranges::equal(again, bytes));
}

void check_state(const QuorumState& s) {
  RTOTEM_ASSERT(std::ranges::adjacent_find(s.members, std::greater_equal<>{}) == s.members.end());
  RTOTEM_ASSERT(s.votes.size() == s.members.size());
  const Decision& d = s.decision;
  if (!s.synced || s.members.empty()) return;
  RTOTEM_ASSERT(d.expected_votes >= d.total_votes);
  RTOTEM_ASSERT(d.two_node ? d.quorum == 1 : d.quorum == d.expected_votes / 2 + 1);
  if (d.quorate) RTOTEM_ASSERT(d.total_votes >= d.quorum || d.tie_broken || d.master_wins);
  if (d.waiting_for_all) RTOTEM_ASSERT(!d.quorate);
}

std::uint32_t u32_of(Bytes bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = at; i < at + 4 && i < bytes.size(); ++i) v = (v << 8) | std::to_integer<std::uint32_t>(bytes[i]);
  return v;
}

}  // namespace
}  // namespace rtotem::quorum

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rtotem::quorum;
  QuorumOptions options;
  options.device_model = "net";
  options.device_timeout_ms = 100;
  options.device_sync_timeout_ms = 300;
  std::vector<NodeVotes> nodes;
  for (NodeId id = 1; id <= kNodes; ++id) nodes.push_back({id, 1});
  auto config = resolve_quorum(options, nodes);
  RTOTEM_ASSERT(config.ok());
  config.value().sync_timeout_ms = 200;
  std::deque<std::vector<std::byte>> submitted;
  Events events;
  QuorumService service(
      kSelf, config.value(),
      [&](Bytes packet, Delivery) {
        check_round_trip(packet);
        RTOTEM_ASSERT(decode_quorum_packet(packet).error == QuorumDecodeError::kNone);
        submitted.emplace_back(packet.begin(), packet.end());
        return rtotem::Status::kOk;
      },
      events);
  Time now = 0;
  auto deliver_own = [&] {
    while (!submitted.empty()) {
      const std::vector<std::byte> packet = std::move(submitted.front());
      submitted.pop_front();
      service.on_deliver(rtotem::membership::Delivered{
          .ring_id = service.state().ring_id, .sender = kSelf, .delivery = Delivery::kAgreed, .payload = packet});
    }
  };
  rtotem::fuzz::StepReader reader(std::as_bytes(std::span(data, size)));
  rtotem::fuzz::Step step;
  rtotem::membership::Seq seq = 0;
  while (reader.next(step)) {
    const std::uint8_t kind = step.op >> 6;
    const QuorumState& state = service.state();
    if (kind <= 1) {
      check_round_trip(step.bytes);
      if (!state.members.empty()) {
        const NodeId sender = state.members[(step.op & 3) % state.members.size()];
        service.on_deliver(rtotem::membership::Delivered{.ring_id = state.ring_id,
                                                         .sender = sender,
                                                         .delivery = kind == 1 ? Delivery::kSafe : Delivery::kAgreed,
                                                         .transitional = (step.op & 0x20) != 0,
                                                         .payload = step.bytes});
      }
    } else if (kind == 2) {
      const std::uint8_t mask = step.bytes.empty() ? 0 : std::to_integer<std::uint8_t>(step.bytes[0]);
      if (step.bytes.size() > 1) now += std::to_integer<Time>(step.bytes[1]) * 1000;
      std::vector<NodeId> members{kSelf};
      for (NodeId n = 0; n + 2 <= kNodes; ++n)
        if ((mask >> n) & 1) members.push_back(n + 2);
      const RingId ring{members.front(), ++seq};
      service.on_configuration(
          rtotem::membership::ConfigChange{.transitional = true, .ring_id = ring, .members = members}, now);
      service.on_configuration(
          rtotem::membership::ConfigChange{.transitional = false, .ring_id = ring, .members = members}, now);
    } else {
      const std::uint32_t value = u32_of(step.bytes, 0);
      switch ((step.op >> 3) & 7) {
        case 0: (void)service.set_votes(1 + value % kNodes, (value >> 8) % 4); break;
        case 1: (void)service.set_expected(value % 16); break;
        case 2: (void)service.device_register(kDevice); break;
        case 3: (void)service.device_poll(kDevice, (step.op & 1) != 0, state.ring_id, now); break;
        case 4: (void)service.device_master_wins(kDevice, (step.op & 1) != 0); break;
        case 5: (void)service.device_unregister(kDevice); break;
        default:
          if (const auto next = service.next_deadline()) now = std::max(now, *next);
          service.on_time(now);
          break;
      }
    }
    deliver_own();
    check_state(service.state());
  }
  return 0;
}
