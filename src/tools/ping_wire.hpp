// rtotem-ping's messages, carried as the payload of a transport packet. The encoder checks what it
// writes; the decoder validates what the network handed it and never asserts on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rtotem::tools {

enum class PingType : std::uint8_t {
  kHello = 1,  // multicast every 100 ms until everyone heard everyone; flags: kHeardAll
  kPing = 2,   // multicast; seq and sent_ns, then filler
  kPong = 3,   // unicast to the pinger; echoes seq and sent_ns
  kDone = 4,   // multicast every 100 ms once our pings are settled; flags: kHeardAll (all done)
};

inline constexpr std::uint8_t kHeardAll = 0x01;  // hello: heard every peer; done: every peer done

// Layout, network byte order: type u8 | flags u8 | reserved u16 | seq u32 | sent_ns u64
inline constexpr std::size_t kPingHeaderSize = 16;

struct PingMessage {
  PingType type = PingType::kHello;
  std::uint8_t flags = 0;
  std::uint32_t seq = 0;
  std::uint64_t sent_ns = 0;  // the pinger's steady_clock, echoed untouched in the pong
};

// Writes the header into the first kPingHeaderSize bytes of `out`.
void encode_ping(const PingMessage& message, std::span<std::byte> out) noexcept;

// False if `payload` is shorter than a header, names no known type or sets a reserved bit.
bool decode_ping(std::span<const std::byte> payload, PingMessage& out) noexcept;

}  // namespace rtotem::tools
