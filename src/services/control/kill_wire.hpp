// The ring message that kills a node (corosync-cfgtool -k): every member learns of it in order,
// and the node it names leaves the ring and exits, logging the reason and who asked.
// Wire form: u8 RingService::kNodeControl, u8 kKill, u32 target, u32 from node, u32 from pid,
// reason (u32 length, bytes; at most ipc::kReasonMax).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "membership/node.hpp"

namespace rtotem::control {

struct KillNode {
  membership::NodeId target = 0;
  membership::NodeId from = 0;
  std::uint32_t pid = 0;
  std::string reason;
};

std::vector<std::byte> encode_kill(const KillNode& kill);
// nullopt for anything that is not a whole, well-formed kill message.
std::optional<KillNode> decode_kill(std::span<const std::byte> message);

}  // namespace rtotem::control
