// Every message rtotemd puts on the ring opens with a u8 naming the service that reads it, so one
// delivered stream carries them all and the daemon hands each message to its service by that byte.
// A service that changes its wire form takes a new value; a daemon counts and ignores a value it
// does not know. Values start at 1: the simulator's application payloads open with 0 (a node id's
// high byte), so the two never mix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace rtotem {

enum class RingService : std::uint8_t {
  kGroups = 1,       // process groups, src/services/groups/group_wire.hpp
  kQuorum = 2,       // votequorum, src/services/quorum/quorum_wire.hpp
  kNodeControl = 3,  // node control (kill), src/services/control/kill_wire.hpp
};

// The service a delivered message names, if any.
inline std::optional<RingService> ring_service_of(std::span<const std::byte> message) noexcept {
  if (message.empty()) return std::nullopt;
  switch (static_cast<RingService>(message[0])) {
    case RingService::kGroups:
    case RingService::kQuorum:
    case RingService::kNodeControl: return static_cast<RingService>(message[0]);
  }
  return std::nullopt;
}

}  // namespace rtotem
