// rtotem-sim's --quorum: which votequorum features a run's nodes have, spelled as a comma list of
//   majority                       plain votequorum, one vote per node (alone)
//   votes                          node n has 1 + n % 3 votes
//   two_node                       two_node (and so wait_for_all, unless wait_for_all=0 follows)
//   wait_for_all | wait_for_all=0
//   last_man_standing              with a window of two token timeouts
//   auto_tie_breaker[=lowest|highest|ID:ID:...]
//   device[=VOTES]                 a quorum device (its votes: votequorum's default, nodes - 1),
//                                  the arbiter of sim_cluster_device.cpp giving its vote
// e.g. --quorum wait_for_all,last_man_standing,auto_tie_breaker=highest.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "src/services/quorum/quorum_config.hpp"
#include "base/result.hpp"

namespace rtotem::sim {

struct SimQuorum {
  quorum::QuorumOptions options;
  std::vector<std::uint32_t> votes;  // by node id - 1; empty: one each
};

Result<SimQuorum> parse_quorum_features(std::string_view text, std::uint32_t nodes, std::uint32_t token_timeout_ms);

}  // namespace rtotem::sim
