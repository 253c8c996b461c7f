// Sealing and opening packets with the cluster key, below the protocol: every backend's packets
// go through it (Backend::flush seals, Backend::accept opens), so UDP, the simulator and RDMA are
// protected alike and the protocol never knows.
//
// A sealed packet, all of it one datagram:
//
//   header (16)    as in the clear, flags | kFlagSealed, payload_len = sealed bytes after it
//   ciphertext     the payload, XChaCha20 (same length)
//   nonce (24)     epoch u64, counter u64 (big-endian), salt (8 random bytes): in the clear
//   tag (16)       Poly1305 over header (associated data) and ciphertext, keyed by the nonce
//
// crypto_aead_xchacha20poly1305_ietf (libsodium). The header is authenticated, not encrypted:
// backends must read the sender and cluster id before they know which key and window apply. The
// nonce is authenticated by the tag too (it derives the Poly1305 key), so epoch and counter cannot
// be changed to get past the replay window. The nonce and tag trail the ciphertext so that a
// packet opens in place and its plaintext lands where an unsealed payload sits: no copy, and a
// receive buffer's payload() is the plaintext.
//
// Nonce uniqueness under one key shared by every node: within one WireCrypto, the counter never
// repeats; between two of them (two nodes, or two starts of one node), the epoch (the start time in
// nanoseconds, or better) differs, and the 64-bit salt drawn at construction differs too unless
// chance picks the same one: a reuse needs the same epoch, the same salt and the same counter.
// XChaCha20's 192-bit nonce is what makes room for all three. A per-packet random nonce would be
// safe as well, but costs a getrandom call per packet.
//
// Replay: the epoch must grow across restarts of a node (the daemon persists a floor for it); a
// receiver keeps a ReplayWindow per sender and drops older epochs, counters left of the window, and
// counters seen, before decrypting. Only packets that open are recorded.
//
// Threading: one thread, the backend's. Nothing here allocates after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "transport/cluster_key.hpp"
#include "transport/replay_window.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::transport {

inline constexpr std::size_t kSealNonceSize = 24;
inline constexpr std::size_t kSealTagSize = 16;
inline constexpr std::size_t kSealOverhead = kSealNonceSize + kSealTagSize;
// Senders one node keeps replay windows for: corosync's PROCESSOR_COUNT_MAX, as kUdpPeersMax.
inline constexpr std::size_t kSealSendersMax = 384;

enum class OpenCheck : std::uint8_t {
  kOk,
  kShort,     // sealed, but too short to hold a nonce and a tag
  kUnsealed,  // not sealed, and this node seals: a node with crypto off, or a forger
  kAuth,      // does not open: another key, altered on the way, or forged
  kReplay,    // opens (or would), but already seen, left of the window, of an older epoch, or no
              // room to track another sender
};

class WireCrypto {
 public:
  // `epoch` > 0: this node's start, greater than any epoch it used before under this key.
  WireCrypto(std::shared_ptr<const ClusterKey> key, std::uint64_t epoch, std::size_t senders_max = kSealSendersMax);
  WireCrypto(const WireCrypto&) = delete;
  WireCrypto& operator=(const WireCrypto&) = delete;

  // Seals `packet` (a wire packet in the clear: header, payload) into `out`, which holds at least
  // packet.size() + kSealOverhead bytes; returns the sealed packet, a prefix of `out`.
  std::span<const std::byte> seal(std::span<const std::byte> packet, std::span<std::byte> out) noexcept;
  // Opens the sealed `packet` in place. Its header has passed decode_header (sender `sender`). On
  // kOk the payload is plaintext, the header's flags and payload_len say so, and `payload_len`
  // holds its length; otherwise nothing is recorded and the bytes are not to be read.
  OpenCheck open(std::span<std::byte> packet, NodeId sender, std::uint32_t& payload_len) noexcept;

  // A key change with no ring change (reload_round.hpp's rotation): seal with `seal_with` from
  // now on, and open what either it or `also_open` (null: none) sealed. Nonces and replay
  // windows go on across the change: they do not depend on the key.
  void set_keys(std::shared_ptr<const ClusterKey> seal_with, std::shared_ptr<const ClusterKey> also_open) noexcept;

  std::uint64_t epoch() const noexcept { return epoch_; }
  std::uint64_t sealed_count() const noexcept { return counter_; }

 private:
  std::shared_ptr<const ClusterKey> key_;
  std::shared_ptr<const ClusterKey> also_open_;
  std::uint64_t epoch_;
  std::uint64_t salt_;
  std::uint64_t counter_ = 0;  // the next packet's
  ReplayTable replay_;
};

}  // namespace rtotem::transport
