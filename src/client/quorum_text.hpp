// `rtotemctl quorum` for people: the daemon's quorum JSON (Daemon::quorum_json) as the three blocks
// corosync-quorumtool -s prints, so an operator who knows corosync reads it at a glance.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rtotem::client {

struct QuorumText {
  std::string text;
  bool configured = false;
  bool quorate = false;
};

// Null if `json` is not the daemon's quorum document.
std::optional<QuorumText> quorum_text(std::string_view json);

}  // namespace rtotem::client
