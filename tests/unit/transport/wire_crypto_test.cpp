// WireCrypto and its replay windows: a sealed packet opens to what was sealed; a flipped bit
// anywhere, another key, a replay, a counter left of the window or an older epoch does not; a
// failed open records nothing.
#include "transport/wire_crypto.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace rtotem::transport {
namespace {

constexpr std::uint32_t kCluster = 0xc0ffee;
constexpr NodeId kSender = 3;
using Bytes = std::vector<std::byte>;

std::shared_ptr<const ClusterKey> make_key() {
  auto key = ClusterKey::random();
  EXPECT_TRUE(key.ok());
  return std::make_shared<const ClusterKey>(std::move(key).value());
}

// A wire packet in the clear, as the protocol leaves it in a send buffer.
Bytes clear_packet(std::size_t payload, std::uint8_t fill = 0x5a, NodeId sender = kSender) {
  WireHeader header;
  header.cluster_id = kCluster;
  header.sender = sender;
  header.payload_len = static_cast<std::uint32_t>(payload);
  Bytes bytes(kWireHeaderSize + payload);
  encode_header(header, std::span<std::byte, kWireHeaderSize>(bytes.data(), kWireHeaderSize));
  for (std::size_t i = 0; i < payload; ++i) bytes[kWireHeaderSize + i] = std::byte(fill + i);
  return bytes;
}

Bytes seal(WireCrypto& crypto, const Bytes& packet) {
  Bytes out(packet.size() + kSealOverhead + 7);  // room to spare: only the prefix is the packet
  const auto sealed = crypto.seal(packet, out);
  return Bytes(sealed.begin(), sealed.end());
}

struct Opened {
  OpenCheck check;
  Bytes packet;  // the buffer after the attempt
};

Opened open(WireCrypto& crypto, Bytes packet, NodeId sender = kSender) {
  std::uint32_t len = 0;
  const OpenCheck check = crypto.open(packet, sender, len);
  if (check == OpenCheck::kOk) {
    EXPECT_EQ(len, packet.size() - kWireHeaderSize - kSealOverhead);
    packet.resize(kWireHeaderSize + len);
  }
  return {check, std::move(packet)};
}

struct WireCryptoTest : ::testing::Test {
  std::shared_ptr<const ClusterKey> key = make_key();
  WireCrypto sender{key, 1000};
  WireCrypto receiver{key, 2000};
};

TEST_F(WireCryptoTest, ASealedPacketOpensInPlaceToExactlyTheClearPacket) {
  for (std::size_t size : {0, 1, 63, 64, 1400, 65000}) {
    const Bytes clear = clear_packet(size);
    const Bytes sealed = seal(sender, clear);
    ASSERT_EQ(sealed.size(), clear.size() + kSealOverhead);
    // On the wire: flagged, the sealed length in the header, the payload not in the clear.
    WireHeader header;
    ASSERT_EQ(decode_header(sealed, kCluster, header), HeaderCheck::kOk);
    EXPECT_EQ(header.flags, kFlagSealed);
    EXPECT_EQ(header.sender, kSender);
    if (size >= 16) {
      EXPECT_FALSE(std::equal(clear.begin() + kWireHeaderSize, clear.end(), sealed.begin() + kWireHeaderSize));
    }
    const Opened opened = open(receiver, sealed);
    ASSERT_EQ(opened.check, OpenCheck::kOk) << size;
    EXPECT_EQ(opened.packet, clear) << size;  // header (flags, payload_len) restored too
  }
}

TEST_F(WireCryptoTest, SealingTheSamePacketTwiceNeverGivesTheSameBytes) {
  const Bytes clear = clear_packet(100);
  WireCrypto same_epoch{key, 1000};  // another node, or a restart that got the same epoch
  const Bytes a = seal(sender, clear), b = seal(sender, clear), c = seal(same_epoch, clear);
  EXPECT_NE(a, b);  // the counter
  EXPECT_NE(a, c);  // the salt
  EXPECT_EQ(sender.sealed_count(), 2u);
}

TEST_F(WireCryptoTest, AnyFlippedBitIsRefusedAndRecordsNothing) {
  const Bytes sealed = seal(sender, clear_packet(200));
  const std::size_t nonce_at = sealed.size() - kSealOverhead;
  // Every byte but the flags' sealed bit (that one says "not sealed": kUnsealed below).
  for (std::size_t at = 0; at < sealed.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      if (at == 3 && bit == 0) continue;
      Bytes bad = sealed;
      bad[at] ^= std::byte(1u << bit);
      const OpenCheck check = open(receiver, bad).check;
      // A flipped epoch or counter bit may also read as an old packet; either way it is refused.
      const bool in_nonce_counters = at >= nonce_at && at < nonce_at + 16;
      if (in_nonce_counters)
        EXPECT_TRUE(check == OpenCheck::kAuth || check == OpenCheck::kReplay) << at << ":" << bit;
      else
        EXPECT_EQ(check, OpenCheck::kAuth) << "byte " << at << " bit " << bit;
    }
  }
  EXPECT_EQ(open(receiver, sealed).check, OpenCheck::kOk);  // the failures took no window slot
}

TEST_F(WireCryptoTest, AnotherKeyCannotOpen) {
  WireCrypto stranger{make_key(), 5000};
  const Bytes clear = clear_packet(64);
  EXPECT_EQ(open(receiver, seal(stranger, clear)).check, OpenCheck::kAuth);
  EXPECT_EQ(open(receiver, seal(sender, clear)).check, OpenCheck::kOk);
}

// A key rotation: while both keys open, a packet of either opens to exactly its clear bytes (a
// failed try with the other key must not have wiped it); once the old one is retired, its
// packets are refused, and the replay window went on across the change.
TEST_F(WireCryptoTest, DuringAKeyChangeEitherKeyOpensThenOnlyTheNewOne) {
  const auto next = make_key();
  const Bytes clear = clear_packet(200);
  const Bytes old_sealed = seal(sender, clear);
  receiver.set_keys(key, next);
  sender.set_keys(next, key);
  const Bytes new_sealed = seal(sender, clear);
  const Bytes late_old = [&] {
    WireCrypto old_only{key, 1000};
    return seal(old_only, clear_packet(200, 0x11, 4));
  }();
  for (const Bytes* sealed : {&new_sealed, &old_sealed}) {
    const Opened opened = open(receiver, *sealed);
    ASSERT_EQ(opened.check, OpenCheck::kOk);
    EXPECT_EQ(opened.packet, clear);
  }
  EXPECT_EQ(open(receiver, new_sealed).check, OpenCheck::kReplay);
  WireCrypto stranger{make_key(), 9};
  EXPECT_EQ(open(receiver, seal(stranger, clear_packet(200, 0x22, 5)), 5).check, OpenCheck::kAuth);
  receiver.set_keys(next, nullptr);
  EXPECT_EQ(open(receiver, late_old, 4).check, OpenCheck::kAuth);
  EXPECT_EQ(open(receiver, seal(sender, clear)).check, OpenCheck::kOk);
}

TEST_F(WireCryptoTest, UnsealedAndShortPacketsAreRefused) {
  EXPECT_EQ(open(receiver, clear_packet(100)).check, OpenCheck::kUnsealed);
  Bytes sealed = seal(sender, clear_packet(0));
  sealed.pop_back();
  EXPECT_EQ(open(receiver, sealed).check, OpenCheck::kShort);
}

TEST_F(WireCryptoTest, APacketOpensOnceThenIsAReplay) {
  const Bytes sealed = seal(sender, clear_packet(64));
  EXPECT_EQ(open(receiver, sealed).check, OpenCheck::kOk);
  EXPECT_EQ(open(receiver, sealed).check, OpenCheck::kReplay);
  EXPECT_EQ(open(receiver, sealed).check, OpenCheck::kReplay);
}

TEST_F(WireCryptoTest, LatePacketsInsideTheWindowOpenOnceThoseLeftOfItNever) {
  std::vector<Bytes> sent;
  for (std::uint64_t i = 0; i <= kReplayWindowBits + 10; ++i) sent.push_back(seal(sender, clear_packet(8)));
  const std::uint64_t top = kReplayWindowBits + 10;
  ASSERT_EQ(open(receiver, sent[top]).check, OpenCheck::kOk);
  // The window's left edge: top - (bits - 1) is the oldest counter still told apart.
  const std::uint64_t edge = top - (kReplayWindowBits - 1);
  EXPECT_EQ(open(receiver, sent[edge]).check, OpenCheck::kOk);
  EXPECT_EQ(open(receiver, sent[edge]).check, OpenCheck::kReplay);
  EXPECT_EQ(open(receiver, sent[edge - 1]).check, OpenCheck::kReplay);  // left of the window
  EXPECT_EQ(open(receiver, sent[0]).check, OpenCheck::kReplay);
  // Reordered within the window: each once, in any order.
  for (std::uint64_t c : {top - 1, top - 5, top - 3, top - 2})
    EXPECT_EQ(open(receiver, sent[c]).check, OpenCheck::kOk) << c;
  for (std::uint64_t c : {top - 1, top - 5, top - 3, top - 2, top})
    EXPECT_EQ(open(receiver, sent[c]).check, OpenCheck::kReplay) << c;
}

TEST_F(WireCryptoTest, ANewerEpochRestartsTheWindowAndTheOlderOneIsRefused) {
  std::vector<Bytes> old_boot;
  for (int i = 0; i < 10; ++i) old_boot.push_back(seal(sender, clear_packet(8)));
  for (int i = 0; i < 5; ++i) ASSERT_EQ(open(receiver, old_boot[i]).check, OpenCheck::kOk);
  WireCrypto restarted{key, sender.epoch() + 1};  // counters start at 0 again
  const Bytes first = seal(restarted, clear_packet(8));
  EXPECT_EQ(open(receiver, first).check, OpenCheck::kOk);
  // The old boot's unseen packets, captured before the restart, are refused from now on.
  for (int i = 5; i < 10; ++i) EXPECT_EQ(open(receiver, old_boot[i]).check, OpenCheck::kReplay) << i;
  EXPECT_EQ(open(receiver, first).check, OpenCheck::kReplay);
  EXPECT_EQ(open(receiver, seal(restarted, clear_packet(8))).check, OpenCheck::kOk);
}

TEST_F(WireCryptoTest, AnOlderEpochIsRefusedEvenBeforeItsFirstPacket) {
  WireCrypto later{key, sender.epoch() + 50};
  ASSERT_EQ(open(receiver, seal(later, clear_packet(8))).check, OpenCheck::kOk);
  EXPECT_EQ(open(receiver, seal(sender, clear_packet(8))).check, OpenCheck::kReplay);
}

TEST_F(WireCryptoTest, WindowsArePerSenderAndTheTableIsBounded) {
  WireCrypto small{key, 7, 2};
  WireCrypto node4{key, 1000}, node5{key, 1000};
  const Bytes from3 = seal(sender, clear_packet(8, 1, 3));
  const Bytes from4 = seal(node4, clear_packet(8, 1, 4));
  const Bytes from5 = seal(node5, clear_packet(8, 1, 5));
  EXPECT_EQ(open(small, from3, 3).check, OpenCheck::kOk);
  EXPECT_EQ(open(small, from4, 4).check, OpenCheck::kOk);      // same counter, another sender: not a replay
  EXPECT_EQ(open(small, from5, 5).check, OpenCheck::kReplay);  // no room for a third sender
  EXPECT_EQ(open(small, seal(sender, clear_packet(8, 1, 3)), 3).check, OpenCheck::kOk);
}

TEST(ReplayWindow, SlidingByAWindowOrMoreForgetsEverything) {
  ReplayWindow window;
  EXPECT_TRUE(window.fresh(1, 0));
  window.record(1, 0);
  window.record(1, 1);
  EXPECT_FALSE(window.fresh(1, 1));
  window.record(1, 1 + kReplayWindowBits);
  EXPECT_FALSE(window.fresh(1, 1));                         // left of the window now
  EXPECT_TRUE(window.fresh(1, 2 + kReplayWindowBits / 2));  // inside, never seen: its bit was cleared
  window.record(1, 5 * kReplayWindowBits);
  for (std::uint64_t c = 4 * kReplayWindowBits + 1; c < 5 * kReplayWindowBits; ++c)
    ASSERT_TRUE(window.fresh(1, c)) << c;
  EXPECT_FALSE(window.fresh(1, 5 * kReplayWindowBits));
  EXPECT_FALSE(window.fresh(0, 5 * kReplayWindowBits + 1));
}

}  // namespace
}  // namespace rtotem::transport
