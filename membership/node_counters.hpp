// What a node counts: packets by fate, tokens, retransmissions, deliveries, refusals.
#pragma once

#include <cstdint>
#include <string_view>

namespace rtotem::membership {

#define RTOTEM_NODE_COUNTERS(X)                                                               \
  X(mcasts_received)           /* stored in the sort queue */                                 \
  X(mcasts_duplicate)          /* already held or already discarded */                        \
  X(mcasts_out_of_window)      /* too far ahead: left for retransmission */                   \
  X(mcasts_foreign_ring)       /* from another ring */                                        \
  X(tokens_received)           /* handled */                                                  \
  X(tokens_duplicate)          /* a retransmitted token already handled */                    \
  X(tokens_foreign_ring)       /* a token of another ring */                                  \
  X(tokens_deferred)           /* no buffer to forward it: left for its retransmission */     \
  X(tokens_retransmitted)      /* our token resent: the successor showed no sign */           \
  X(hold_cancels_sent)         /* asked the member resting an idle ring's token to pass it */ \
  X(hold_cancels_foreign_ring) /* a hold cancel of another ring, or from a non-member */      \
  X(token_holds_cancelled)     /* a held token passed on at a member's request */             \
  X(token_losses)              /* token timeout expired */                                    \
  X(failed_to_receive)         /* we held the aru back too long: we left the ring */          \
  X(messages_sent)             /* new messages multicast with a sequence number */            \
  X(retransmits_sent)          /* messages multicast again on request */                      \
  X(retransmits_requested)     /* sequence numbers we put in an rtr list */                   \
  X(messages_delivered)        /* handed to the application */                                \
  X(messages_packed)           /* submitted into a packet other messages wait in */           \
  X(messages_split)            /* submitted as pieces of one packet each */                   \
  X(messages_restarted)        /* split, cut short by a ring change: sent again whole */      \
  X(messages_cut_short)        /* others' split messages dropped unfinished */                \
  X(submit_backpressure)       /* submissions refused: queue or pool full */                  \
  X(send_refused)              /* the backend refused a send (queue or pool full) */          \
  X(packets_malformed)         /* refused by a decoder */                                     \
  X(payloads_malformed)        /* an ordered packet whose messages break the chunk form */    \
  X(seq_collisions)            /* our next seq already held: forged or stray input */         \
  X(packets_spoofed)           /* a join or merge naming another sender than its packet's */  \
  X(gathers)                   /* Gather entered (or re-entered with new sets) */             \
  X(joins_sent)                /* join messages multicast */                                  \
  X(joins_stale)               /* a join sent before its sender saw our ring */               \
  X(joins_deferred)            /* a stranger's join while our ring is being formed */         \
  X(joins_failing_us)          /* a stranger's join failing us, while operational */          \
  X(consensus_timeouts)        /* Gather ran out of time: the silent declared failed */       \
  X(commits_ignored)           /* a commit token for another view, state or hop */            \
  X(rings_too_large)           /* consensus on more members than a commit token holds */      \
  X(rings_installed)           /* regular configurations delivered */                         \
  X(recovery_sent)             /* old-ring messages re-sent in Recovery */                    \
  X(recovery_received)         /* old-ring messages first learned through Recovery */         \
  X(recovery_gaps)             /* a commit claimed deliveries nobody could supply */          \
  X(merge_detects_sent)        /* a representative announced its ring */                      \
  X(foreign_heard)             /* another ring's node heard: Gather to merge */               \
  X(merge_votes_won)           /* every member heard a stranger: Gather to merge */           \
  X(merge_votes_lost)          /* some member did not hear it: no merge (one-way link?) */

struct NodeCounters {
#define RTOTEM_DECLARE_COUNTER(name) std::uint64_t name = 0;
  RTOTEM_NODE_COUNTERS(RTOTEM_DECLARE_COUNTER)
#undef RTOTEM_DECLARE_COUNTER

  template <class Fn>
  void for_each(Fn&& fn) const {
#define RTOTEM_VISIT_COUNTER(name) fn(std::string_view(#name), name);
    RTOTEM_NODE_COUNTERS(RTOTEM_VISIT_COUNTER)
#undef RTOTEM_VISIT_COUNTER
  }
};

}  // namespace rtotem::membership
