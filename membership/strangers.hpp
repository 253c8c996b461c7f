// The nodes outside our ring we have heard lately (their merge detections, joins, or other rings'
// multicasts), and when we last proposed merging with each: what a member votes with
// (merge_vote.cpp). Bounded by kMembersMax strangers; a new one replaces the longest silent.
#pragma once

#include <array>
#include <cstdint>

#include "membership/node_set.hpp"
#include "membership/packets.hpp"

namespace rtotem::membership {

class StrangerLog {
 public:
  using Time = std::uint64_t;

  void heard(NodeId node, Time now) noexcept;
  bool heard_since(NodeId node, Time since) const noexcept;
  // A stranger heard since `heard_since`, not a member, and not proposed after `proposed_before`:
  // it is noted as proposed now. kNoNode if there is none.
  NodeId propose(Time heard_since, Time proposed_before, const NodeList& members, Time now) noexcept;

 private:
  struct Entry {
    NodeId node = kNoNode;
    Time heard = 0;
    Time proposed = 0;
    bool ever_proposed = false;
  };
  std::array<Entry, kMembersMax> entries_{};
};

}  // namespace rtotem::membership
