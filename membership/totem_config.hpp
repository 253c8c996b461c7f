// Protocol parameters: timeouts and flow control, with corosync's names and relations. Defaults
// suit UDP and RDMA and ride out a loaded VM descheduling a healthy node for a few hundred ms.
#pragma once

#include <cstdint>

#include "transport/backend.hpp"
#include "base/result.hpp"

namespace rtotem::membership {

inline constexpr std::uint32_t kMaxMessageSizeLimit = 64u << 20;  // what a chunk's u32 total allows, and sanity
inline constexpr std::uint32_t kSendQueueDefault = 1024;          // packets: the least a derived send_queue_max holds

struct TotemConfig {
  std::uint32_t token_timeout_ms = 3000;  // no token for this long: the ring re-forms
  std::uint32_t token_retransmits_before_loss = 4;
  std::uint32_t token_retransmit_ms = 0;  // 0: token_timeout / (retransmits + 0.2)
  std::uint32_t token_hold_ms = 0;        // idle ring holds the token; 0: 80% of retransmit
  std::uint32_t join_ms = 50;             // Gather: a join is sent again this often
  // Gather: each join waits a random [0, send_join_ms) first (corosync's send_join), so that the
  // joins of many nodes do not all arrive at once. 0: sent at once.
  std::uint32_t send_join_ms = 0;
  std::uint32_t consensus_ms = 0;  // Gather: give up on the silent; 0: 1.2 x token
  std::uint32_t merge_ms = 200;    // a representative announces its ring this often
  // Failure to receive: this node alone has held the ring's aru back, unchanged, for fail_recv_ms
  // and on at least fail_recv_const token visits: it leaves the ring. The time decides (a fast
  // ring makes thousands of visits a second); the visits only make sure the node asked that many
  // times for what it misses. They are no clock: each lost token hop stalls the rotation for a
  // token retransmit period, so a lossy ring makes only tens of visits a second. With corosync's
  // 2500, a deaf member of 3 (default token) held the whole ring back for 49 s at 1 % loss, 113 s
  // at 2 %.
  std::uint32_t fail_recv_const = 10;
  std::uint32_t fail_recv_ms = 0;   // 0: 2 x token
  std::uint32_t window_size = 50;   // new messages per token rotation, all nodes
  std::uint32_t max_messages = 17;  // new messages per token visit, one node
  // Packets submitted and waiting for the token (then -EAGAIN). 0: derived from the backend's MTU
  // (send_queue_for), which RDMA knows only once its port is queried.
  std::uint32_t send_queue_max = 0;
  std::uint32_t sort_queue_capacity = 4096;  // messages held per ring; a power of two
  std::uint32_t max_message_size = 1 << 20;  // bytes; split into packets above one packet

  // Fills the derived values; errors name the key and the rule.
  Result<TotemConfig> resolved() const;
  // Whether a backend of these sizes can carry this protocol without wedging: enough receive
  // buffers for the window and a token, enough send buffers for the reserve, and an MTU that
  // holds a message header and a token with at least one retransmit request.
  Result<void> check(const transport::BackendParams& backend) const;

  // For a backend whose payload MTU is `mtu` (BackendParams::payload_mtu), with a largest message
  // of max_message_size: send_queue_max as set, or when derived the packets of that message and
  // at least kSendQueueDefault.
  std::uint32_t send_queue_for(std::uint32_t mtu) const noexcept;
  // The send buffers such a backend needs (what check() asks: the window, a token's retransmit
  // requests, that message's packets), and at least the default pool.
  std::uint32_t send_buffers_for(std::uint32_t mtu) const noexcept;
};

// Whether a ring of `nodes` members can form over this backend: its commit token (32 bytes a
// member) must fit one packet. A larger cluster would agree on a ring it can never commit and
// stay in Gather for good, so start-up refuses it, naming the MTU it needs. `nodes` <= kMembersMax.
Result<void> check_ring_fits(std::size_t nodes, const transport::BackendParams& backend);

}  // namespace rtotem::membership
