// One reload of every node, as each member decides it from the ring's order alone, so that all
// decide the same: the members are those of the configuration the start was delivered in; each
// reports on its own file; once every member has reported, the reload applies everywhere if every
// file loads, none changes a key that needs a restart, and all read the same cluster part
// (nodelist and totem timing); else it applies nowhere, and the decision says why, per node.
// A configuration change or an abort before that ends it with nothing applied. Sans-I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/services/control/reload_wire.hpp"

namespace rtotem::control {

struct ReloadDecision {
  bool apply = false;
  int error = 0;     // 0 when applied; else the first failing member's error, -EINVAL on disagreement
  std::string text;  // for the asker: a line per node, or why nothing changed
};

class ReloadRound {
 public:
  ReloadRound(ReloadId id, std::vector<membership::NodeId> members);

  const ReloadId& id() const noexcept { return id_; }
  const std::vector<membership::NodeId>& members() const noexcept { return members_; }
  // A member's report, in delivery order: the decision once every member has reported. A report
  // from a node that is no member, or a second one from a member, changes nothing.
  std::optional<ReloadDecision> report(ReloadReport report);
  // Ended before every member reported (a configuration change, an abort delivered).
  ReloadDecision ended(const std::string& why) const;

 private:
  ReloadDecision decide() const;

  ReloadId id_;
  std::vector<membership::NodeId> members_;  // sorted
  std::map<membership::NodeId, ReloadReport> reports_;
};

}  // namespace rtotem::control
