// Split messages put back together as delivery does it (Node::deliver_packet): each step is one
// delivered packet's payload, read into chunks; a whole chunk is a message as it is, a piece goes
// to the Assembler. Steps (fuzz_steps.hpp): op bit 7 set is a configuration change (reset), else
// the payload's sender is (op & 7) + 1, twice as many senders as the Assembler has slots.
//
// A model kept here holds, per sender, the pieces it has under way. Checked on every piece: the
// outcome is the model's; a completed message is exactly its sender's pieces from the first to
// the last, all naming the same message, as long as the total they announced and never above the
// maximum (whole or not at all); the count of messages under way and of those dropped agree with
// the model.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "membership/assembler.hpp"
#include "membership/chunks.hpp"
#include "tests/fuzz/fuzz_steps.hpp"
#include "base/assert.hpp"

namespace rtotem::membership {
namespace {

using Outcome = Assembler::Outcome;

constexpr std::size_t kSlots = 4;
constexpr std::size_t kMessageMax = 4096;
constexpr std::uint8_t kResetOp = 0x80;
constexpr std::uint8_t kSenderMask = 0x07;
static_assert(kSenderMask + 1 == 2 * kSlots, "more senders than slots: running out of slots is reached");

class Model {
 public:
  // What the Assembler must answer to `piece`; `completed` gets the message on kComplete.
  Outcome add(NodeId sender, const Chunk& piece, std::vector<std::byte>& completed) {
    auto it = under_way_.find(sender);
    if (piece.kind == ChunkKind::kFirst) {
      if (it != under_way_.end()) drop(it);  // its previous message never finished
      if (piece.total > kMessageMax || under_way_.size() == kSlots) {
        ++dropped_;
        return Outcome::kDiscarded;
      }
      it = under_way_.emplace(sender, Message{piece.message, piece.total, {}}).first;
    } else if (it == under_way_.end()) {
      return Outcome::kDiscarded;  // nothing under way to continue
    }
    Message& message = it->second;
    const std::size_t after = message.bytes.size() + piece.bytes.size();
    const bool last = piece.kind == ChunkKind::kLast;
    if (piece.message != message.number || piece.total != message.total || after > message.total ||
        last != (after == message.total)) {
      drop(it);
      return Outcome::kDiscarded;
    }
    message.bytes.insert(message.bytes.end(), piece.bytes.begin(), piece.bytes.end());
    if (!last) return Outcome::kPartial;
    completed = std::move(message.bytes);
    under_way_.erase(it);
    return Outcome::kComplete;
  }

  void reset() {
    dropped_ += under_way_.size();
    under_way_.clear();
  }

  std::size_t under_way() const noexcept { return under_way_.size(); }
  std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  struct Message {
    std::uint32_t number = 0;  // Chunk::message: which of the sender's split messages
    std::uint32_t total = 0;
    std::vector<std::byte> bytes;
  };
  void drop(std::map<NodeId, Message>::iterator it) {
    under_way_.erase(it);
    ++dropped_;
  }

  std::map<NodeId, Message> under_way_;
  std::uint64_t dropped_ = 0;
};

void deliver_payload(Assembler& assembler, Model& model, NodeId sender, std::span<const std::byte> payload) {
  ChunkReader reader(payload);
  Chunk chunk;
  std::vector<std::byte> expected;
  while (reader.next(chunk)) {
    if (chunk.kind == ChunkKind::kWhole) continue;  // delivered as it is, without the Assembler
    const Outcome outcome = assembler.add(sender, chunk);
    RTOTEM_ASSERT(outcome == model.add(sender, chunk, expected));
    if (outcome == Outcome::kComplete) {
      RTOTEM_ASSERT(assembler.message().size() == chunk.total);
      RTOTEM_ASSERT(assembler.message().size() <= kMessageMax);
      RTOTEM_ASSERT(std::ranges::equal(assembler.message(), expected));
    } else {
      RTOTEM_ASSERT(assembler.message().empty());
    }
    RTOTEM_ASSERT(assembler.under_way() == model.under_way());
    RTOTEM_ASSERT(assembler.dropped() == model.dropped());
  }
}

}  // namespace
}  // namespace rtotem::membership

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rtotem::membership;
  Assembler assembler(kSlots, kMessageMax);
  Model model;
  rtotem::fuzz::StepReader steps({reinterpret_cast<const std::byte*>(data), size});
  rtotem::fuzz::Step step;
  while (steps.next(step)) {
    if (step.op & kResetOp) {
      assembler.reset();
      model.reset();
      RTOTEM_ASSERT(assembler.under_way() == 0);
      RTOTEM_ASSERT(assembler.dropped() == model.dropped());
      continue;
    }
    deliver_payload(assembler, model, static_cast<NodeId>((step.op & kSenderMask) + 1), step.bytes);
  }
  return 0;
}
