// What libquorum's and libvotequorum's trackstart flags ask of each quorum event rtotemd sends.
#pragma once

#include <corosync/corotypes.h>

#include "rtotem/rtotem.h"

namespace rtotem::corosync {

// The state when tracking started (RTOTEM_QUORUM_TRACK_START) is told for CS_TRACK_CURRENT or
// CS_TRACK_CHANGES; any other event is a change, told for CS_TRACK_CHANGES or _CHANGES_ONLY. An
// event of an earlier tracking, still unread at trackstart, is one of those changes.
inline bool at_track_start(const rtotem_quorum& q) { return (q.flags & RTOTEM_QUORUM_TRACK_START) != 0; }

inline bool tracks_changes(unsigned track_flags) {
  return (track_flags & (CS_TRACK_CHANGES | CS_TRACK_CHANGES_ONLY)) != 0;
}

// What rtotemd is asked to send after the state: `if_changes` (the changes a library reports)
// when changes are tracked, else none, so that the descriptor wakes for nothing it does not report.
inline int changes_asked(unsigned track_flags, int if_changes) {
  return tracks_changes(track_flags) ? if_changes : RTOTEM_QUORUM_CHANGES_NONE;
}

// Corosync's services accept a trackstart with no track flag, and track nothing. They refuse one
// while changes are tracked (CS_ERR_EXIST); CURRENT alone tracks no change, so it does not count.
inline bool tracks_anything(unsigned track_flags) {
  return (track_flags & (CS_TRACK_CURRENT | CS_TRACK_CHANGES | CS_TRACK_CHANGES_ONLY)) != 0;
}

inline bool tell(unsigned track_flags, const rtotem_quorum& q) {
  return at_track_start(q) ? (track_flags & (CS_TRACK_CURRENT | CS_TRACK_CHANGES)) != 0 : tracks_changes(track_flags);
}

}  // namespace rtotem::corosync
