// The votequorum arithmetic, as a pure function: from what every member of a ring reported of
// itself in that ring (its votes, the expected votes it holds, its flags, the last quorate ring it
// knows), whether the ring is quorate and with which numbers. Every member computes it from the
// same ordered reports, so every member reaches the same decision (votequorum.5's rules):
// - expected votes: the highest any member holds, raised to the votes present if those are more;
//   quorum is half of it plus one;
// - two_node: quorum 1 while the ring has at most two members and two expected votes;
// - wait_for_all: a ring none of whose members is quorate with all seen needs every expected vote
//   present before it is quorate the first time;
// - auto_tie_breaker: a ring holding exactly half the expected votes is quorate if it holds the
//   tie-breaker node of the last quorate ring any member knows (lowest, highest, or the first
//   node of the list that is here, when no node listed before it was in that ring);
// - quorum device: its votes count once any member reports its device's vote cast for this ring,
//   the same at every member (votequorum counts each node's own device: a node whose device went
//   silent there counts without it while the others count it). qnetd gives its vote to one side
//   of a split, for that side's ring alone; master_wins makes a ring with that vote quorate.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "membership/packets.hpp"
#include "src/services/quorum/quorum_config.hpp"

namespace rtotem::quorum {

using membership::RingId;

// The last ring a node was quorate in: its id and members (sorted). Empty before the first.
struct QuorateRing {
  RingId ring_id;
  std::vector<NodeId> members;
  bool known() const noexcept { return !members.empty(); }
  friend bool operator==(const QuorateRing&, const QuorateRing&) = default;
};

// A member's quorum device (corosync-qdevice), as the member reports it for a ring: the vote is
// cast for that ring only (the device polled with its id).
struct DeviceFlags {
  bool registered = false;
  bool alive = false;      // polled within its timeout
  bool cast_vote = false;  // its vote given to this ring
  bool master_wins = false;
  friend bool operator==(const DeviceFlags&, const DeviceFlags&) = default;
};

// One member's report of itself (its NODEINFO).
struct MemberReport {
  NodeId node = 0;
  std::uint32_t votes = 1;
  std::uint32_t expected_votes = 0;
  bool quorate = false;          // in the ring it was in when it reported
  bool waiting_for_all = false;  // wait_for_all and not quorate since it last saw every vote
  QuorateRing last_quorate;
  DeviceFlags device;
};

struct Decision {
  bool quorate = false;
  std::uint32_t total_votes = 0;
  std::uint32_t expected_votes = 0;  // the highest held, or the votes present if more
  std::uint32_t quorum = 0;
  bool two_node = false;         // two_node is in force (at most two members)
  bool waiting_for_all = false;  // wait_for_all holds the ring back (all votes not yet seen)
  bool tie_broken = false;       // quorate by the tie breaker, on an even split
  bool device_vote = false;      // the quorum device's votes are in total_votes
  bool master_wins = false;      // quorate by the device's master_wins
  friend bool operator==(const Decision&, const Decision&) = default;
};

// `reports`: one per member of the ring, sorted by node id.
Decision decide(const QuorumConfig& config, std::span<const MemberReport> reports);

// Of the members' last quorate rings, the most recent (highest ring seq, then representative):
// the ring every member agrees the partition came from. Null if no member was ever quorate.
const QuorateRing* latest_quorate_ring(std::span<const MemberReport> reports) noexcept;

}  // namespace rtotem::quorum
