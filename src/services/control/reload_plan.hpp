// What a reload of the configuration file may change while rtotemd runs, decided by comparing the
// running configuration's keys (config_keys) with the file's:
// - logging.*: applied;
// - uidgid.config.*: who may connect, applied to new connections;
// - this node's nodelist quorum_votes and quorum.expected_votes: applied as votequorum's runtime
//   changes (set votes, set expected votes), ordered on the ring;
// - keys rtotem only keeps (`kept`: those of either file): the key store takes the file's values;
// - anything else (totem timing, transport, crypto, the nodelist's membership, the other quorum
//   options, ipc): needs a restart. One such key refuses the whole reload, naming every one,
//   so that the running daemon never half-follows a file.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "membership/node.hpp"
#include "src/ipc/key_value.hpp"

namespace rtotem::control {

using KeyList = std::vector<std::pair<std::string, ipc::KeyValue>>;

struct ReloadPlan {
  std::vector<std::string> changed;  // every key that differs (added, changed or gone), sorted
  std::vector<std::string> refused;  // those that need a restart; not empty: apply nothing
  bool logging = false;
  bool access = false;
  std::optional<std::uint32_t> own_votes;       // this node's new quorum_votes
  std::optional<std::uint32_t> expected_votes;  // the new quorum.expected_votes
};

ReloadPlan plan_reload(const KeyList& running, const KeyList& file, membership::NodeId self,
                       const std::set<std::string, std::less<>>& kept = {});

}  // namespace rtotem::control
