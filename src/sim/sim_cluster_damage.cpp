// How the simulated network damages a corrupted packet: what a decoder may be handed.
//
// Without --crypto, totem has no checksum of its own: it leans on UDP's. That 16-bit checksum
// catches every error of one bit and every burst up to 15 bits, and lets through about 1 in 65,536
// of the rest; what it lets through may be any well-formed packet, which no receiver can tell from
// a real one (only the seal can: --crypto). Modelling those would report the missing checksum,
// not a protocol bug, so an unsealed copy is damaged only where its receiver can see it: cut short
// anywhere (a datagram cut by a receive buffer too small for it, or a peer with a larger mtu), or
// one bit flipped in the bytes a decoder validates (transport magic, version, cluster id, length;
// totem type and reserved bytes). A sealed copy may be damaged anywhere, as the seal must refuse
// every change.
#include <array>
#include <cstddef>

#include "src/sim/sim_cluster.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::sim {
namespace {

// Offsets of the bytes every decoder checks: transport magic (0, 1), version (2), cluster id
// (4..7), payload length (12..15); then the totem prefix's type (16) and reserved (18, 19). Not the
// flags (a defined flag flipped is another well-formed packet) nor the sender id (another sender).
constexpr std::array<std::size_t, 14> kCheckedBytes = {0, 1, 2, 4, 5, 6, 7, 12, 13, 14, 15, 16, 18, 19};
static_assert(transport::kWireHeaderSize == 16);

}  // namespace

std::size_t damage_packet(std::span<std::byte> wire, Rng& rng, bool sealed) {
  if (wire.empty()) return 0;
  if (rng.uniform(2) == 0) return rng.uniform(wire.size());  // cut short: 0..size-1 bytes remain
  if (sealed) {
    const std::uint64_t flips = rng.uniform_range(1, 4);
    for (std::uint64_t i = 0; i < flips; ++i) wire[rng.uniform(wire.size())] ^= std::byte(1u << rng.uniform(8));
    return wire.size();
  }
  const std::size_t at = kCheckedBytes[rng.uniform(kCheckedBytes.size())];
  if (at < wire.size()) wire[at] ^= std::byte(1u << rng.uniform(8));
  return wire.size();
}

}  // namespace rtotem::sim
