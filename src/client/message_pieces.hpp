// A message larger than one multicast takes (the daemon's data_max) travels as pieces: multicasts
// marked ipc::kModePiece, sent one after another by one connection, so each member's daemon
// delivers them in order. Each piece's data opens with
//   u8 flags (kPieceFirst on the first) | u32 the whole message's size (big-endian)
// and carries the next bytes of the message. The receiving library joins them per sender and
// group, and delivers the message where its last piece is delivered, so every member that had
// all of its pieces delivers it at the same place in the order. A member that joined after the
// first piece never has them all and drops the rest (as Corosync's libcpg does); so does one
// whose sender left mid-message. This member's own leave or join ends every message of the group
// begun before it, at the place its event stream has it (the daemon marks the change as its own:
// ipc::kChangeOwn), not when the call returns: the pieces of a message begun before a leave,
// still undispatched, are never joined to the end of a later message of the same size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "rtotem/rtotem.h"

namespace rtotem::client {

inline constexpr std::size_t kPieceHeaderSize = 5;
inline constexpr std::uint8_t kPieceFirst = 1;

// The header of a piece of a `total`-byte message: the first or a later one.
void put_piece_header(std::span<std::byte, kPieceHeaderSize> out, bool first, std::size_t total) noexcept;

class PieceAssembler {
 public:
  enum class Outcome : std::uint8_t {
    kPending,   // taken; more pieces to come
    kComplete,  // the message is whole: take_message() hands it over
    kDropped,   // not part of a message this member can put together (counted in dropped())
  };

  // One delivered piece of `sender` in `group`.
  Outcome add(const rtotem_member& sender, std::string_view group, std::span<const std::byte> piece);
  // The message the last add() completed. Handed over, not kept: a handle that once received a
  // 64 MiB message does not hold that memory until the next one completes.
  std::vector<std::byte> take_message() noexcept { return std::move(complete_); }

  // A change of `group`, where this member's event stream has it: what the senders in `left` had
  // begun is never finished; nor, at this member's own join or leave (`own`), anything begun
  // before it.
  void changed(std::string_view group, std::span<const rtotem_member> left, bool own);

  std::uint64_t dropped() const noexcept { return dropped_; }
  std::size_t pending() const noexcept { return partial_.size(); }

 private:
  using Key = std::tuple<std::string, std::uint32_t, std::uint32_t>;  // group, node, pid
  struct Partial {
    std::uint32_t total = 0;
    std::vector<std::byte> bytes;
  };
  using Partials = std::map<Key, Partial, std::less<>>;
  Outcome drop(Partials::iterator at);
  void forget(const rtotem_member& sender, std::string_view group);
  void forget_group(std::string_view group);

  Partials partial_;
  std::vector<std::byte> complete_;
  std::uint64_t dropped_ = 0;
};

}  // namespace rtotem::client
