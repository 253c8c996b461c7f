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
//
// What a handle holds of unfinished messages is bounded, all together (kPiecesHeldMax), counted
// by what is allocated: each one's storage grows by doubling, up to its message's size. Past the
// bound the message least recently given a piece is dropped (a sender that stopped midway holds
// no room the others need), and its later pieces as they come; evicted() counts them for
// rtotem_messages_dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "rtotem/rtotem.h"

namespace rtotem::client {

inline constexpr std::size_t kPieceHeaderSize = 5;
inline constexpr std::uint8_t kPieceFirst = 1;

// Room for four of the largest messages under way at once.
inline constexpr std::size_t kPiecesHeldMax = 4 * std::size_t{RTOTEM_MESSAGE_MAX};
static_assert(kPiecesHeldMax >= RTOTEM_MESSAGE_MAX, "the largest message must fit");

// The header of a piece of a `total`-byte message: the first or a later one.
void put_piece_header(std::span<std::byte, kPieceHeaderSize> out, bool first, std::size_t total) noexcept;

class PieceAssembler {
 public:
  enum class Outcome : std::uint8_t {
    kPending,   // taken; more pieces to come
    kComplete,  // the message is whole: take_message() hands it over
    kDropped,   // not part of a message this member can put together (counted in dropped())
  };

  // `held_max`: the bound on what unfinished messages hold together (a test's is smaller).
  explicit PieceAssembler(std::size_t held_max = kPiecesHeldMax) noexcept : held_max_(held_max) {}

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
  // Messages dropped for want of room, within dropped(): past the bound, or larger than it.
  std::uint64_t evicted() const noexcept { return evicted_; }
  std::size_t pending() const noexcept { return partial_.size(); }
  std::size_t held() const noexcept { return held_; }  // bytes allocated for unfinished messages

 private:
  using Key = std::tuple<std::string, std::uint32_t, std::uint32_t>;  // group, node, pid
  struct Partial {
    std::uint32_t total = 0;
    std::vector<std::byte> bytes;
    std::uint64_t added = 0;  // when it was last given a piece (added_)
  };
  // A Key and a lookup's (group, node, pid) ordered alike, so that a lookup makes no string. Not
  // std::less<>: it compares the tuples as they are, and clang-14 finds no order between a
  // std::string and a std::string_view there.
  struct KeyLess {
    using is_transparent = void;
    using View = std::tuple<std::string_view, std::uint32_t, std::uint32_t>;
    static View view(const Key& key) { return {std::get<0>(key), std::get<1>(key), std::get<2>(key)}; }
    static const View& view(const View& key) { return key; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) < view(b);
    }
  };
  using Partials = std::map<Key, Partial, KeyLess>;
  void erase(Partials::iterator at);
  Outcome drop(Partials::iterator at);
  bool make_room(Partials::iterator at, std::size_t more);
  void evict_oldest_but(Partials::iterator keep);
  void forget(const rtotem_member& sender, std::string_view group);
  void forget_group(std::string_view group);

  std::size_t held_max_;
  Partials partial_;
  std::size_t held_ = 0;  // the capacity of every partial's bytes
  std::uint64_t added_ = 0;
  std::vector<std::byte> complete_;
  std::uint64_t dropped_ = 0;
  std::uint64_t evicted_ = 0;
};

}  // namespace rtotem::client
