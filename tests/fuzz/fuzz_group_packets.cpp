// The group packets (group_wire.hpp) as the ring delivers them to a GroupService, and the service
// answering them. Steps (fuzz_steps.hpp), by op >> 6:
//   0, 1  the step's bytes delivered as a ring message from node (op & 3) + 2, agreed or safe
//   2     a configuration: bit 5 set a regular one that node (op & 3) + 2 joined, else a
//         transitional one it left
//   3     a local client's request, by (op >> 4) & 3: join the group named by the bytes, leave it
//         (bit 3: as its process died), multicast (group up to the first zero byte, then data), or
//         turn the ring's back-pressure on or off; pid op & 7
// What the service submits is delivered back to it from this node (1) after each step, as the
// ring would. Checked, beyond "no crash, no bad read":
// - a message that decodes re-encodes to the very same bytes; every packet the service submits
//   decodes, and re-encodes to itself too;
// - each change names a valid group, has members sorted and unique, either joined (all members)
//   or left (none of them, each with a leave reason), never both;
// - after each step every group has members, sorted and unique; refusals are counted exactly.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "src/services/groups/group_service.hpp"
#include "src/services/groups/group_wire.hpp"
#include "tests/fuzz/fuzz_steps.hpp"
#include "base/assert.hpp"

namespace rtotem::groups {
namespace {

using membership::Delivery;
using Bytes = std::span<const std::byte>;

constexpr NodeId kSelf = 1;
constexpr std::size_t kMessageMax = 4096;  // small: join lists split into several packets

template <class T>
bool sorted_unique(std::span<const T> items) {
  return std::ranges::adjacent_find(items, std::greater_equal<>{}) == items.end();
}

std::size_t encode(const GroupPacket& packet, std::vector<std::byte>& out) {
  return std::visit(
      [&](const auto& p) -> std::size_t {
        using P = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<P, GroupJoin>) {
          out.resize(group_join_size(p.group));
          return encode_group_join(p, out);
        } else if constexpr (std::is_same_v<P, GroupLeave>) {
          out.resize(group_leave_size(p.group));
          return encode_group_leave(p, out);
        } else if constexpr (std::is_same_v<P, GroupMcast>) {
          out.resize(group_mcast_size(p.group, p.data.size()));
          return encode_group_mcast(p, out);
        } else {
          out.resize(join_list_size(p.entries));
          return encode_join_list(p.entries, out);
        }
      },
      packet);
}

// Decodes `message`: true if it is a group packet, which must then re-encode to `message`.
bool check_decodes(Bytes message) {
  GroupPacket packet;
  const GroupDecodeError error = decode_group_packet(message, packet);
  RTOTEM_ASSERT(describe(error) != nullptr);
  if (error != GroupDecodeError::kNone) return false;
  std::vector<std::byte> out;
  RTOTEM_ASSERT(encode(packet, out) == out.size());
  RTOTEM_ASSERT(std::ranges::equal(out, message));
  return true;
}

class Harness final : public GroupEvents {
 public:
  Harness()
      : service_(
            kSelf, kMessageMax,
            [this](const membership::Gather& packet, Delivery order) { return submit(packet, order); }, *this) {}

  void deliver(NodeId sender, Delivery order, Bytes message) {
    if (!check_decodes(message)) ++refused_;
    membership::Delivered delivered;
    delivered.ring_id = {kSelf, 1};
    delivered.seq = ++seq_;
    delivered.sender = sender;
    delivered.delivery = order;
    delivered.payload = message;
    service_.on_deliver(delivered);
    RTOTEM_ASSERT(service_.packets_malformed() == refused_);
  }

  void configuration(NodeId node, bool regular) {
    const NodeId members[] = {kSelf, node};
    membership::ConfigChange change;
    change.transitional = !regular;
    change.ring_id = {kSelf, ++ring_seq_};
    change.members = std::span(members, regular ? 2 : 1);
    (regular ? change.joined : change.left) = std::span(&members[1], 1);
    service_.on_configuration(change);
  }

  void local_request(std::uint8_t op, Bytes bytes) {
    const std::uint32_t pid = op & 7;
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    switch ((op >> 4) & 3) {
      case 0:
        if (GroupService::valid_group_name(text)) (void)service_.join(text, pid);
        break;
      case 1:
        if (GroupService::valid_group_name(text))
          (void)service_.leave(text, pid, (op & 8) ? Reason::kProcDown : Reason::kLeave);
        break;
      case 2: {
        const std::size_t cut = std::min(text.find('\0'), text.size());
        if (GroupService::valid_group_name(text.substr(0, cut)))
          (void)service_.multicast(text.substr(0, cut), pid, bytes.subspan(std::min(cut + 1, bytes.size())),
                                   Delivery::kAgreed);
        break;
      }
      default: refusing_ = !refusing_; break;
    }
  }

  // The ring's turn: what the service submitted comes back to it, in order; refused join lists
  // are retried.
  void turn() {
    service_.retry_pending();
    while (!submitted_.empty()) {
      const Submitted packet = std::move(submitted_.front());
      submitted_.pop_front();
      RTOTEM_ASSERT(check_decodes(packet.bytes));
      deliver(kSelf, packet.order, packet.bytes);
    }
    check_groups();
  }

 private:
  struct Submitted {
    std::vector<std::byte> bytes;
    Delivery order;
  };

  Status submit(const membership::Gather& packet, Delivery order) {
    RTOTEM_ASSERT(packet.size() <= kMessageMax);
    if (refusing_) return Status::kQueueFull;
    std::vector<std::byte> whole(packet.size());  // as the ring would carry it: header and data together
    packet.copy(0, whole);
    submitted_.push_back({std::move(whole), order});
    return Status::kOk;
  }

  void group_message(const GroupMessage& message) override {
    RTOTEM_ASSERT(GroupService::valid_group_name(message.group));
    RTOTEM_ASSERT(message.sender.node != membership::kNoNode);
  }

  void group_change(const GroupChange& change) override {
    RTOTEM_ASSERT(GroupService::valid_group_name(change.group));
    RTOTEM_ASSERT(sorted_unique(change.members));
    RTOTEM_ASSERT(change.joined.empty() != change.left.empty());
    RTOTEM_ASSERT(change.left.size() == change.left_reason.size());
    for (const ProcessId& p : change.joined) RTOTEM_ASSERT(std::ranges::binary_search(change.members, p));
    for (const ProcessId& p : change.left) RTOTEM_ASSERT(!std::ranges::binary_search(change.members, p));
    for (const Reason why : change.left_reason) RTOTEM_ASSERT(why != Reason::kJoin && why != Reason::kNodeUp);
    RTOTEM_ASSERT(change.joined.size() == change.joined_reason.size());
    for (const Reason why : change.joined_reason) RTOTEM_ASSERT(why == Reason::kJoin || why == Reason::kNodeUp);
  }

  void check_groups() const {
    const std::vector<std::string> names = service_.group_names();
    RTOTEM_ASSERT(sorted_unique(std::span<const std::string>(names)));
    for (const std::string& name : names) {
      RTOTEM_ASSERT(!service_.members(name).empty());
      RTOTEM_ASSERT(sorted_unique(service_.members(name)));
    }
  }

  GroupService service_;
  std::deque<Submitted> submitted_;
  bool refusing_ = false;
  std::uint64_t refused_ = 0;
  membership::Seq seq_ = 0;
  membership::Seq ring_seq_ = 1;
};

}  // namespace
}  // namespace rtotem::groups

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rtotem::groups;
  Harness harness;
  rtotem::fuzz::StepReader steps({reinterpret_cast<const std::byte*>(data), size});
  rtotem::fuzz::Step step;
  while (steps.next(step)) {
    const NodeId node = static_cast<NodeId>((step.op & 3) + 2);
    switch (step.op >> 6) {
      case 0: harness.deliver(node, Delivery::kAgreed, step.bytes); break;
      case 1: harness.deliver(node, Delivery::kSafe, step.bytes); break;
      case 2: harness.configuration(node, (step.op & 0x20) != 0); break;
      default: harness.local_request(step.op, step.bytes); break;
    }
    harness.turn();
  }
  return 0;
}
