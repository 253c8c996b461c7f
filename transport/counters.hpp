// What a backend counts: every packet sent, received or dropped, and why. Plain integers owned by
// the backend's thread; read them for logs, rtotemctl and tests.
#pragma once

#include <cstdint>
#include <string_view>

namespace rtotem::transport {

// X-macro: one list drives the struct and its enumeration, so a new counter is named once.
#define RTOTEM_BACKEND_COUNTERS(X)                                                      \
  X(tx_packets)           /* datagrams or work requests that left */                    \
  X(tx_bytes)             /* wire bytes (our header included) that left */              \
  X(tx_calls)             /* sendmmsg / ibv_post_send calls */                          \
  X(tx_would_block)       /* flushes stopped by a full socket or send queue */          \
  X(tx_errors)            /* sends the kernel or device refused, packet dropped */      \
  X(tx_gso_runs)          /* sends of 2+ datagrams as one (UDP segmentation offload) */ \
  X(tx_gso_refused)       /* such sends the kernel refused: the offload turned off */   \
  X(tx_queue_full)        /* enqueues refused: transmit queue full after a flush */     \
  X(tx_too_large)         /* enqueues refused: payload above the MTU */                 \
  X(tx_unknown_node)      /* unicasts refused: no address for the node */               \
  X(tx_pool_exhausted)    /* acquires refused: no free send buffer */                   \
  X(tx_inline)            /* sends the device copied at post time (RDMA inline) */      \
  X(tx_completion_errors) /* send completions with an error status (RDMA) */            \
  X(rx_packets)           /* packets accepted from the network */                       \
  X(rx_bytes)             /* wire bytes accepted from the network */                    \
  X(rx_calls)             /* recvmmsg calls / completion polls that returned data */    \
  X(rx_loopback)          /* own multicasts delivered through the local path */         \
  X(rx_ring_empty)        /* receives skipped: every receive buffer is held */          \
  X(rx_errors)            /* receive calls that failed with an error */                 \
  X(rx_completion_errors) /* receive completions with an error status (RDMA) */         \
  X(rx_posted)            /* receive WRs posted, the start-up fill too (RDMA) */        \
  X(rx_post_calls)        /* ibv_post_recv calls (RDMA) */                              \
  X(mr_registrations)     /* ibv_reg_mr calls: at open, and per adopted region */       \
  X(link_events)          /* device and connection-manager events (RDMA) */             \
  X(link_failures)        /* what broke the link: QP error, port down, device lost */   \
  X(drop_short)           /* shorter than our header (sealed: than a nonce and tag) */  \
  X(drop_truncated)       /* larger than a receive buffer */                            \
  X(drop_bad_magic)       /* not an rtotem packet */                                    \
  X(drop_bad_version)     /* another wire format version */                             \
  X(drop_foreign_cluster) /* another cluster's packet */                                \
  X(drop_bad_length)      /* header length disagrees with the packet */                 \
  X(drop_no_sender)       /* sender node id 0 */                                        \
  X(drop_self_echo)       /* our own multicast looped back by the network */            \
  X(drop_unknown_sender)  /* sender id not in this backend's node list */               \
  X(drop_wrong_source)    /* a member's id from another address than that member's */   \
  X(drop_auth)            /* not opened: another key, altered, forged, sealed on one    \
                             side only (totem.crypto) */                                \
  X(drop_replay)          /* sealed packet seen before, left of the replay window, of   \
                             an older epoch, or from a sender past the table */

struct BackendCounters {
#define RTOTEM_DECLARE_COUNTER(name) std::uint64_t name = 0;
  RTOTEM_BACKEND_COUNTERS(RTOTEM_DECLARE_COUNTER)
#undef RTOTEM_DECLARE_COUNTER

  std::uint64_t drops() const noexcept {
    return drop_short + drop_truncated + drop_bad_magic + drop_bad_version + drop_foreign_cluster + drop_bad_length +
           drop_no_sender + drop_self_echo + drop_unknown_sender + drop_wrong_source + drop_auth + drop_replay;
  }

  template <class Fn>
  void for_each(Fn&& fn) const {
#define RTOTEM_VISIT_COUNTER(name) fn(std::string_view(#name), name);
    RTOTEM_BACKEND_COUNTERS(RTOTEM_VISIT_COUNTER)
#undef RTOTEM_VISIT_COUNTER
  }
};

}  // namespace rtotem::transport
