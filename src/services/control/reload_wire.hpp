// The ring messages of a reload of every node (corosync-cfgtool -R, rtotemctl reload): its start,
// each member's report on the file it read, and its abort. Every member sees them in one order,
// so every member decides the same from them (reload_round.hpp).
// A reload that changes the cluster key goes on with two key steps from every member
// (cluster_reload.hpp).
// Wire form: u8 RingService::kNodeControl, u8 kind (kReloadStart 2, kReloadReport 3,
// kReloadAbort 4, kReloadKeyStep 5), u32 origin, u64 serial; then for a report: u32 node, i32
// error, summary (u32 length, bytes), cluster part (u32 length, bytes); for an abort: reason
// (u32 length, bytes); for a key step: u32 node, u8 step (1 or 2).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "membership/node.hpp"

namespace rtotem::control {

// Which reload: the node that asked, and its count of reloads asked.
struct ReloadId {
  membership::NodeId origin = 0;
  std::uint64_t serial = 0;
  auto operator<=>(const ReloadId&) const = default;
};

// What one member found in its own file: 0 and what it would change, or why it cannot; and the
// part of the file every member must read alike (nodelist and totem timing, as key=value lines).
struct ReloadReport {
  membership::NodeId node = 0;
  int error = 0;
  std::string summary;
  std::string cluster;
};

struct ReloadStart {
  ReloadId id;
};
struct ReloadReportMessage {
  ReloadId id;
  ReloadReport report;
};
struct ReloadAbort {
  ReloadId id;
  std::string reason;
};
struct ReloadKeyStep {
  ReloadId id;
  membership::NodeId node = 0;
  std::uint8_t step = 0;  // 1: this node opens the new key too; 2: it seals with the new key
};
using ReloadMessage = std::variant<ReloadStart, ReloadReportMessage, ReloadAbort, ReloadKeyStep>;

inline constexpr std::size_t kReloadSummaryMax = 4096;      // a longer summary is cut
inline constexpr std::size_t kReloadClusterMax = 1u << 20;  // a nodelist of thousands of nodes

std::vector<std::byte> encode_reload(const ReloadMessage& message);
// nullopt for anything that is not a whole, well-formed reload message.
std::optional<ReloadMessage> decode_reload(std::span<const std::byte> message);

}  // namespace rtotem::control
