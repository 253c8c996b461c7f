// The totem packets as a node receives them. An input is a datagram: its transport header when
// it carries a valid one for this cluster (then the payload follows), else a payload alone.
// Checked, beyond "no crash, no bad read":
// - the dispatcher (peek_type, as Node::on_packets uses it) and every decoder agree: a payload the
//   dispatcher refuses, each decoder refuses for the same reason; one it types, every other
//   decoder refuses as of another type; at most one decoder accepts;
// - an accepted header or packet re-encodes to the very same bytes: one canonical form, and no
//   packet is accepted that our own encoder would refuse to write (it asserts);
// - an mcast's payload reads as delivery reads it (chunks, each header re-encoding to its bytes,
//   ending exactly at the payload's end or at the first malformed chunk); in Recovery it is an
//   old ring's packet, checked the same way one level down.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "membership/chunks.hpp"
#include "membership/packets.hpp"
#include "base/assert.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::membership {
namespace {

using Bytes = std::span<const std::byte>;
using enum DecodeError;

// Above the largest packet: a commit token of kMembersMax members.
constexpr std::size_t kPacketMax = 4096;
static_assert(kPacketMax >= 28 + kMembersMax * 32);

bool same(Bytes a, Bytes b) { return std::ranges::equal(a, b); }

// Writes `decoded` with `encode` and checks it comes out as `packet`.
template <class Packet, class Encode>
void check_reencodes(Bytes packet, const Packet& decoded, std::size_t size, Encode encode) {
  RTOTEM_ASSERT(size <= kPacketMax);
  std::array<std::byte, kPacketMax> out;
  RTOTEM_ASSERT(encode(decoded, std::span(out).first(size)) == size);
  RTOTEM_ASSERT(same(std::span(out).first(size), packet));
}

void check_chunks(Bytes payload) {
  ChunkReader reader(payload);
  Chunk chunk;
  std::size_t at = 0;
  while (reader.next(chunk)) {
    const std::size_t header_size = chunk_header_size(chunk.kind);
    RTOTEM_ASSERT(chunk.bytes.data() == payload.data() + at + header_size);
    std::array<std::byte, kPieceHeaderSize> header;
    RTOTEM_ASSERT(encode_chunk_header(chunk.kind, static_cast<std::uint16_t>(chunk.bytes.size()), chunk.total,
                                      chunk.message, header) == header_size);
    RTOTEM_ASSERT(same(std::span(header).first(header_size), payload.subspan(at, header_size)));
    at += header_size + chunk.bytes.size();
  }
  if (reader.error() == kNone)
    RTOTEM_ASSERT(at == payload.size() && !payload.empty());
  else
    RTOTEM_ASSERT(at < payload.size() || payload.empty());
}

void check_packet(Bytes packet, bool inner);

void check_mcast(Bytes packet, const McastHeader& header, Bytes payload, bool inner) {
  check_reencodes(packet.first(mcast_header_size()), header, mcast_header_size(), encode_mcast_header);
  RTOTEM_ASSERT(payload.data() == packet.data() + mcast_header_size());
  RTOTEM_ASSERT(payload.size() == packet.size() - mcast_header_size());
  // A Recovery packet carries an old ring's packet whole (Node::store_recovered), never nested.
  if (header.recovery && !inner)
    check_packet(payload, true);
  else
    check_chunks(payload);
}

void check_packet(Bytes packet, bool inner) {
  PacketType type{};
  DecodeError peeked = kNone;
  const bool typed = peek_type(packet, type, peeked);
  RTOTEM_ASSERT(typed == (peeked == kNone));
  RTOTEM_ASSERT(describe(peeked) != nullptr);

  McastHeader mcast;
  Bytes payload;
  Token token;
  Join join;
  Commit commit;
  MergeDetect merge;
  HoldCancel cancel;
  const std::array<std::pair<PacketType, DecodeError>, 6> results{{
      {PacketType::kMcast, decode_mcast(packet, mcast, payload)},
      {PacketType::kToken, decode_token(packet, token)},
      {PacketType::kJoin, decode_join(packet, join)},
      {PacketType::kCommit, decode_commit(packet, commit)},
      {PacketType::kMergeDetect, decode_merge_detect(packet, merge)},
      {PacketType::kHoldCancel, decode_hold_cancel(packet, cancel)},
  }};
  for (const auto& [decoder_type, error] : results) {
    if (!typed)
      RTOTEM_ASSERT(error == peeked);
    else if (decoder_type != type)
      RTOTEM_ASSERT(error == kWrongType);
  }
  if (!typed) return;
  const auto mine = std::ranges::find(results, type, &std::pair<PacketType, DecodeError>::first);
  if (mine->second != kNone) return;
  switch (type) {
    case PacketType::kMcast: check_mcast(packet, mcast, payload, inner); break;
    case PacketType::kToken: check_reencodes(packet, token, token_size(token), encode_token); break;
    case PacketType::kJoin: check_reencodes(packet, join, join_size(join), encode_join); break;
    case PacketType::kCommit: check_reencodes(packet, commit, commit_size(commit), encode_commit); break;
    case PacketType::kMergeDetect: check_reencodes(packet, merge, merge_detect_size(merge), encode_merge_detect); break;
    case PacketType::kHoldCancel: check_reencodes(packet, cancel, hold_cancel_size(), encode_hold_cancel); break;
  }
}

const std::uint32_t kClusterId = transport::cluster_id_from_name("fuzz");

}  // namespace
}  // namespace rtotem::membership

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rtotem;
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  transport::WireHeader header;
  if (transport::decode_header(input, membership::kClusterId, header) != transport::HeaderCheck::kOk) {
    membership::check_packet(input, false);
    return 0;
  }
  RTOTEM_ASSERT(header.sender != transport::kNoNode);
  RTOTEM_ASSERT(header.payload_len == size - transport::kWireHeaderSize);
  std::array<std::byte, transport::kWireHeaderSize> encoded;
  transport::encode_header(header, encoded);
  RTOTEM_ASSERT(membership::same(encoded, input.first(transport::kWireHeaderSize)));
  membership::check_packet(input.subspan(transport::kWireHeaderSize), false);
  return 0;
}
