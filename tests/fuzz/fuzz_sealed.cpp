// WireCrypto::open, the decoder every sealed datagram meets before anything else reads it. The
// first byte picks the mode, the rest is the input:
// - 0 (hostile): the rest is a datagram off the network; it goes through decode_header and, if
//   valid, open. With a key the fuzzer does not know, nothing may open (a forgery), and a refusal
//   must leave the replay state as it was: the same datagram gets the same answer again.
// - 1 (ours): the rest is a payload that a sender seals; its second byte, if any, picks a byte of
//   the sealed packet to flip (0: none). Unflipped, it opens to exactly the payload, once, and is a
//   replay after; flipped, it is refused.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "base/assert.hpp"
#include "transport/wire_crypto.hpp"

namespace rtotem::transport {
namespace {

constexpr std::uint32_t kClusterId = 0x7274;
constexpr std::size_t kPacketMax = 65536;

std::shared_ptr<const ClusterKey> fixed_key() {
  std::array<std::byte, kClusterKeySize> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i * 7 + 1);
  auto key = ClusterKey::from_bytes(bytes);
  RTOTEM_ASSERT(key.ok());
  return std::make_shared<const ClusterKey>(std::move(key).value());
}

struct Crypto {
  std::shared_ptr<const ClusterKey> key = fixed_key();
  WireCrypto sender{key, 1};
  WireCrypto receiver{key, 2};
};

Crypto& crypto() {
  static Crypto instance;  // across inputs: replay windows fill as in a long-running node
  return instance;
}

void hostile(std::span<const std::byte> input) {
  WireHeader header;
  if (decode_header(input, kClusterId, header) != HeaderCheck::kOk) return;
  std::vector<std::byte> packet(input.begin(), input.end());
  std::uint32_t len = 0;
  const OpenCheck first = crypto().receiver.open(packet, header.sender, len);
  RTOTEM_ASSERT(first != OpenCheck::kOk);  // a forgery under a key the fuzzer cannot know
  std::vector<std::byte> again(input.begin(), input.end());
  RTOTEM_ASSERT(crypto().receiver.open(again, header.sender, len) == first);  // nothing recorded
}

void ours(std::span<const std::byte> input) {
  if (input.size() + kWireHeaderSize + kSealOverhead > kPacketMax) return;
  const std::size_t flip = input.empty() ? 0 : std::size_t(input[0]);
  WireHeader header;
  header.cluster_id = kClusterId;
  header.sender = 9;
  header.payload_len = static_cast<std::uint32_t>(input.size());
  std::vector<std::byte> clear(kWireHeaderSize + input.size());
  encode_header(header, std::span<std::byte, kWireHeaderSize>(clear.data(), kWireHeaderSize));
  if (!input.empty()) std::memcpy(clear.data() + kWireHeaderSize, input.data(), input.size());
  std::vector<std::byte> out(clear.size() + kSealOverhead);
  const auto sealed = crypto().sender.seal(clear, out);
  std::vector<std::byte> packet(sealed.begin(), sealed.end());
  // Byte 3's low bit is the sealed flag: flipped, the packet reads as unsealed, refused too.
  if (flip != 0) packet[(flip * 131) % packet.size()] ^= std::byte(1u << (flip % 8));
  std::vector<std::byte> copy = packet;
  std::uint32_t len = 0;
  const OpenCheck check = crypto().receiver.open(packet, header.sender, len);
  if (flip != 0) {
    RTOTEM_ASSERT(check != OpenCheck::kOk);
    return;
  }
  RTOTEM_ASSERT(check == OpenCheck::kOk);
  RTOTEM_ASSERT(len == input.size());
  RTOTEM_ASSERT(std::memcmp(packet.data(), clear.data(), clear.size()) == 0);
  RTOTEM_ASSERT(crypto().receiver.open(copy, header.sender, len) == OpenCheck::kReplay);
}

}  // namespace
}  // namespace rtotem::transport

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    rtotem::transport::hostile(rest);
  else
    rtotem::transport::ours(rest);
  return 0;
}
