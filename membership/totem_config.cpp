// Derived defaults and the relations between protocol parameters.
#include "membership/totem_config.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include <fmt/format.h>

#include "membership/chunks.hpp"
#include "membership/packets.hpp"
#include "base/assert.hpp"

namespace rtotem::membership {

Result<TotemConfig> TotemConfig::resolved() const {
  TotemConfig c = *this;
  if (c.token_timeout_ms < 10) return Error::make("token: {} ms is below 10 ms", c.token_timeout_ms);
  if (c.token_retransmits_before_loss < 1) return Error::make("token_retransmits_before_loss_const must be at least 1");
  if (c.token_retransmit_ms == 0)
    c.token_retransmit_ms = static_cast<std::uint32_t>(c.token_timeout_ms / (c.token_retransmits_before_loss + 0.2));
  if (c.token_retransmit_ms == 0 || c.token_retransmit_ms >= c.token_timeout_ms)
    return Error::make("token_retransmit: {} ms must be above 0 and below token ({} ms)", c.token_retransmit_ms,
                       c.token_timeout_ms);
  if (c.token_hold_ms == 0) c.token_hold_ms = c.token_retransmit_ms * 8 / 10;
  if (c.token_hold_ms >= c.token_retransmit_ms)
    return Error::make("hold: {} ms must be below token_retransmit ({} ms)", c.token_hold_ms, c.token_retransmit_ms);
  if (c.join_ms == 0 || c.join_ms >= c.token_timeout_ms)
    return Error::make("join: {} ms must be above 0 and below token ({} ms)", c.join_ms, c.token_timeout_ms);
  if (c.consensus_ms == 0) c.consensus_ms = c.token_timeout_ms * 12 / 10;
  // Two joins of each node must fit within consensus: a stranger's verdicts count only from a
  // join carrying the highest ring seq we know, which its first join of a round may lack.
  if (2 * (std::uint64_t{c.join_ms} + c.send_join_ms) >= c.consensus_ms) {
    const std::string joins = c.send_join_ms == 0
                                  ? fmt::format("join: {} ms", c.join_ms)
                                  : fmt::format("send_join: {} ms plus join ({} ms)", c.send_join_ms, c.join_ms);
    return Error::make(
        "{}, twice, must be below consensus ({} ms): a stranger's second join of a round must "
        "arrive within it",
        joins, c.consensus_ms);
  }
  if (c.merge_ms == 0) return Error::make("merge: must be above 0 ms");
  if (c.fail_recv_const == 0) return Error::make("fail_recv_const must be at least 1");
  if (c.fail_recv_ms == 0) c.fail_recv_ms = 2 * c.token_timeout_ms;
  if (c.window_size == 0) return Error::make("window_size must be at least 1");
  if (c.max_messages == 0 || c.max_messages > c.window_size)
    return Error::make("max_messages: {} must be in [1, window_size {}]", c.max_messages, c.window_size);
  if (c.max_message_size == 0 || c.max_message_size > kMaxMessageSizeLimit)
    return Error::make("max_message_size: {} must be in [1, {}]", c.max_message_size, kMaxMessageSizeLimit);
  if (c.send_queue_max != 0 && c.send_queue_max < c.max_messages)
    return Error::make("send_queue_max: {} is below max_messages {}", c.send_queue_max, c.max_messages);
  if (!std::has_single_bit(c.sort_queue_capacity) || c.sort_queue_capacity < 4 * c.window_size)
    return Error::make("sort_queue_capacity: {} must be a power of two of at least 4 x window_size ({})",
                       c.sort_queue_capacity, 4 * c.window_size);
  return c;
}

Result<void> TotemConfig::check(const transport::BackendParams& backend) const {
  const std::uint32_t mtu = backend.payload_mtu();  // what the protocol may fill: sealing takes the rest
  if (rtr_max_for_mtu(mtu) < 1 || members_max_for_mtu(mtu) < 1 || mtu <= 2 * mcast_header_size() + kPieceHeaderSize)
    return Error::make("mtu {} cannot carry a token with a retransmit request and a message", mtu);
  // A quarter of the receive ring for the window: Recovery holds an old ring's messages as well.
  if (backend.recv_buffers / 4 < 2 * window_size)
    return Error::make("recv_buffers {} must be at least 8 x window_size ({})", backend.recv_buffers, 8 * window_size);
  // A message of max_message_size must fit the send queue and the send buffers left to submit().
  // A derived send queue always does; one the file sets may be too short for this MTU.
  const std::size_t pieces = pieces_for(max_message_size, mtu);
  if (pieces > send_queue_for(mtu))
    return Error::make("max_message_size {} takes {} packets of mtu {}, above send_queue_max {}", max_message_size,
                       pieces, mtu, send_queue_max);
  if (backend.send_buffers <= window_size + kRtrMax + 2 + pieces)
    return Error::make(
        "send_buffers {} must be above window_size + {} + the {} packets of a max_message_size "
        "message ({})",
        backend.send_buffers, kRtrMax + 2, pieces, window_size + kRtrMax + 2 + pieces);
  return {};
}

std::uint32_t TotemConfig::send_queue_for(std::uint32_t mtu) const noexcept {
  if (send_queue_max != 0) return send_queue_max;
  return std::max<std::uint32_t>(kSendQueueDefault, static_cast<std::uint32_t>(pieces_for(max_message_size, mtu)));
}

std::uint32_t TotemConfig::send_buffers_for(std::uint32_t mtu) const noexcept {
  const std::size_t needed = window_size + kRtrMax + 3 + pieces_for(max_message_size, mtu);
  return static_cast<std::uint32_t>(std::max<std::size_t>(transport::BackendParams{}.send_buffers, needed));
}

Result<void> check_ring_fits(std::size_t nodes, const transport::BackendParams& backend) {
  RTOTEM_ASSERT(nodes <= kMembersMax);  // the nodelist refuses more
  if (nodes <= members_max_for_mtu(backend.payload_mtu())) return {};
  Commit commit;
  commit.count = static_cast<std::uint16_t>(nodes);
  const std::size_t needed = commit_size(commit) + (backend.mtu - backend.payload_mtu());
  return Error::make(
      "{} nodes take a commit token of {} bytes, which an mtu of {} cannot carry "
      "(at most {} nodes): raise netmtu to at least {}",
      nodes, commit_size(commit), backend.payload_mtu(), members_max_for_mtu(backend.payload_mtu()), needed);
}

}  // namespace rtotem::membership
