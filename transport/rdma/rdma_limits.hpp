// The numbers an RDMA UD link imposes: the largest message a port carries, the GRH in front of
// every receive, and the sizes of the backend's fixed work-request arrays. Pure arithmetic, so it
// is tested without a device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/backend.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::transport {

// Every UD receive begins with the 40-byte Global Route Header (RoCE: unused bytes, then the IP
// header); the packet follows it.
inline constexpr std::uint32_t kGrhBytes = 40;
// The MAC of wire encryption, once it exists; the payload MTU leaves room for it.
inline constexpr std::uint32_t kCryptoTagBytes = 0;

inline constexpr std::uint32_t kSendQueueDepth = 256;    // send WRs in flight on the QP
inline constexpr std::size_t kSendChainMax = 32;         // WRs chained into one ibv_post_send
inline constexpr std::size_t kRecvPostBatch = 32;        // receive WRs chained into one ibv_post_recv
inline constexpr std::size_t kSendCompletionBatch = 32;  // send completions per ibv_poll_cq
inline constexpr std::uint32_t kInlineWanted = 256;      // bytes asked for IBV_SEND_INLINE (tokens, joins)
inline constexpr std::uint32_t kMulticastQpn = 0xFFFFFF;
// Only the last WR of a chain is signalled; a completion releases every earlier WR (a UD send
// queue completes in order). So at most kSendChainMax - 1 unsignalled WRs precede a signalled
// one, and a full send queue always holds a signalled WR whose completion makes room.
static_assert(kSendChainMax <= kSendQueueDepth);
static_assert(kTxQueueMax <= kSendQueueDepth);  // one flush of a full transmit queue fits
static_assert(kRecvPostBatch <= kRxBatchMax);

// Bytes in the largest UD message of a port whose active_mtu is `ibv_mtu` (IBV_MTU_256 = 1 ...
// IBV_MTU_4096 = 5): 128 << ibv_mtu. A larger send completes successfully and reaches nobody.
constexpr std::uint32_t ud_message_bytes(int ibv_mtu) noexcept {
  return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128u << ibv_mtu : 0;
}

// The largest payload (BackendParams::mtu) a port of active_mtu `ibv_mtu` carries: the message
// less our header and the crypto tag.
constexpr std::uint32_t ud_payload_mtu(int ibv_mtu) noexcept {
  const std::uint32_t message = ud_message_bytes(ibv_mtu);
  const std::uint32_t overhead = static_cast<std::uint32_t>(kWireHeaderSize) + kCryptoTagBytes;
  return message > overhead ? message - overhead : 0;
}

// The payload MTU the backend runs with: what was configured, lowered to what the port carries.
constexpr std::uint32_t clamp_mtu(std::uint32_t configured, int ibv_mtu) noexcept {
  const std::uint32_t port = ud_payload_mtu(ibv_mtu);
  return configured < port ? configured : port;
}

// A repeated error is logged the first time and then at the 2nd, 4th, 8th...: a burst (every
// flushed WR of a failed QP) leaves a few lines, not thousands; the counters keep the exact count.
constexpr bool worth_logging(std::uint64_t count) noexcept { return count != 0 && (count & (count - 1)) == 0; }

}  // namespace rtotem::transport
