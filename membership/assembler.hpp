// Puts split messages back together as they are delivered, one slot per sender that has one
// under way (a sender's pieces never interleave with its other messages). A piece continues only
// the message it names: pieces of two messages, where those between them were never delivered
// (a departed sender's holes in a transitional configuration), are never joined into one. A message is handed
// on whole or not at all: a configuration change drops what is under way, at the same point of
// the delivery stream on every node that delivers it (EVS), so all of them drop the same ones.
//
// Slots are made when the Node is: max_message_size bytes for each of max_senders, taken from
// the system untouched, so only pages a split message wrote to are ever resident.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "membership/chunks.hpp"

namespace rtotem::membership {

class Assembler {
 public:
  Assembler(std::size_t max_senders, std::size_t max_message_size);

  enum class Outcome : std::uint8_t {
    kPartial,    // kept: more pieces to come
    kComplete,   // the message is whole: message() until the next call
    kDiscarded,  // a piece that does not continue what the sender has under way (or too large)
  };
  Outcome add(NodeId sender, const Chunk& piece) noexcept;
  std::span<const std::byte> message() const noexcept { return completed_; }
  // A configuration change: every message under way is cut short.
  void reset() noexcept;
  std::size_t under_way() const noexcept;
  // Messages dropped unfinished so far: cut short by a configuration change, or broken.
  std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  struct Slot {
    NodeId sender = kNoNode;    // kNoNode: free
    std::uint32_t message = 0;  // the sender's number for it (Chunk::message)
    std::uint32_t total = 0;
    std::uint32_t size = 0;
  };
  Slot* find(NodeId sender) noexcept;
  std::byte* bytes_of(const Slot& slot) const noexcept;
  Outcome drop(Slot& slot) noexcept;

  std::size_t max_message_size_;
  std::size_t slot_count_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<std::byte[]> bytes_;  // slot i: [i x max_message_size, (i + 1) x max_message_size)
  std::span<const std::byte> completed_;
  std::uint64_t dropped_ = 0;
};

}  // namespace rtotem::membership
