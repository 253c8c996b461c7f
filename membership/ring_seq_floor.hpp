// The lowest ring seq a node may start from, read off the wall clock: what keeps ring ids unique
// when the state directory that stores the last one is gone (a new disk, a wiped or restored
// /var/lib/rtotem). The host starts the Node at max(stored seq, this floor).
//
// Why it holds: a ring seq grows by one per attempt to form a ring (form_commit), from the
// highest seq its former has heard of, and an attempt takes far more than a microsecond (a round
// of joins, or a join timer, then the commit token over the network). So seqs that start from
// this floor, one per microsecond of wall-clock time, never overtake the clocks they started
// from: every seq in the cluster is below the floor of the member clock that is furthest ahead.
// A node that lost its state therefore starts above every seq it used (and every ring id it
// named: a ring id is the representative's node id and a seq), as long as its clock now reads
// later than the clock furthest ahead in the cluster read when it last formed a ring.
//
// Limits: it fails only if the node comes back sooner than the largest lead of another member's
// clock over its own, plus any step its own clock made backwards while it was down (an RTC reset
// to an old date, before NTP). With NTP both are milliseconds, and a restart takes longer. The
// stored seq, when there is one, covers any clock; so do the seqs in the joins it takes before
// it forms a ring (Node::on_join: not from nodes given up on that round), which is every ring but
// one formed alone.
#pragma once

#include <cstdint>

#include "membership/packets.hpp"

namespace rtotem::membership {

inline constexpr std::uint64_t kNsPerRingSeq = 1000;  // one a microsecond: ~2^51 today, far below 2^64

constexpr Seq ring_seq_floor(std::uint64_t wall_clock_ns) noexcept { return wall_clock_ns / kNsPerRingSeq; }

}  // namespace rtotem::membership
