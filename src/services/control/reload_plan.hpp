// What a reload of the configuration file may change while rtotemd runs, decided by comparing the
// running configuration's keys (config_keys) with the file's:
// - logging.*: applied;
// - uidgid.config.*: who may connect, applied to new connections;
// - this node's nodelist quorum_votes and quorum.expected_votes: applied as votequorum's runtime
//   changes (set votes, set expected votes), ordered on the ring; another node's votes are that
//   node's to apply;
// - nodes added to or removed from the nodelist (compared by node id): in a reload of every node
//   only, as the timing below; this node's own entry removed, or an entry's address or name
//   changed: a restart;
// - keys rtotem only keeps (`kept`: those of either file): the key store takes the file's values;
// - totem timing (token, token_coefficient, consensus, join...: kTimingKeys, as given and as in
//   force) and totem.keyfile: applied in a reload of every node only (`cluster_wide`), where every
//   member takes the new timing at one place in the ring's order (and a new key in the steps of
//   cluster_reload.hpp); alone, a node refuses them (`cluster_only`);
// - anything else (transport, crypto, the nodelist's membership, the other quorum options, ipc):
//   needs a restart. One such key refuses the whole reload, naming every one, so that the running
//   daemon never half-follows a file.
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
  std::vector<std::string> changed;       // every key that differs (added, changed or gone), sorted
  std::vector<std::string> refused;       // those that need a restart; not empty: apply nothing
  std::vector<std::string> cluster_only;  // timing, in a reload of this node alone; not empty: apply nothing
  bool logging = false;
  bool timing = false;                            // the totem timing changes (cluster_wide only)
  std::vector<membership::NodeId> nodes_added;    // new in the nodelist (cluster_wide only)
  std::vector<membership::NodeId> nodes_removed;  // gone from it (cluster_wide only; never this node)
  bool access = false;
  std::optional<std::uint32_t> own_votes;       // this node's new quorum_votes
  std::optional<std::uint32_t> expected_votes;  // the new quorum.expected_votes
};

ReloadPlan plan_reload(const KeyList& running, const KeyList& file, membership::NodeId self,
                       const std::set<std::string, std::less<>>& kept = {}, bool cluster_wide = false);

// The part of a file's keys every member of a ring must read alike for a reload of every node to
// apply: the nodelist and the totem timing in force, as sorted "key=value" lines.
std::string cluster_part(const KeyList& file);

}  // namespace rtotem::control
