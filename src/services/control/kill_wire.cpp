#include "src/services/control/kill_wire.hpp"

#include "base/wire_io.hpp"
#include "src/stack/ring_service.hpp"
#include "src/ipc/ipc_protocol.hpp"

namespace rtotem::control {
namespace {

constexpr std::uint8_t kKill = 1;

}  // namespace

std::vector<std::byte> encode_kill(const KillNode& kill) {
  ipc::BodyWriter out;
  out.u8(static_cast<std::uint8_t>(RingService::kNodeControl));
  out.u8(kKill);
  out.u32(kill.target);
  out.u32(kill.from);
  out.u32(kill.pid);
  out.string(kill.reason);
  return std::move(out.data());
}

std::optional<KillNode> decode_kill(std::span<const std::byte> message) {
  WireReader in(message);
  if (in.get_u8() != static_cast<std::uint8_t>(RingService::kNodeControl) || in.get_u8() != kKill) return std::nullopt;
  KillNode kill;
  kill.target = in.get_u32();
  kill.from = in.get_u32();
  kill.pid = in.get_u32();
  const auto reason = ipc::read_string(in, ipc::kReasonMax);
  if (!reason || !in.at_end()) return std::nullopt;
  kill.reason = std::string(*reason);
  return kill;
}

}  // namespace rtotem::control
