// Telling who sent a UD packet without a device: the GRH's source address, own echoes, the peer
// address book; and the receive ring's re-post list.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "transport/buffer_arena.hpp"
#include "transport/rdma/rdma_grh.hpp"
#include "transport/rdma/rdma_peer_table.hpp"
#include "transport/rdma/rdma_recv_ring.hpp"

namespace rtotem::transport {
namespace {

std::uint32_t ip(const char* text) {
  in_addr address{};
  EXPECT_EQ(inet_pton(AF_INET, text, &address), 1);
  return address.s_addr;
}

InetAddress inet(const char* text) { return InetAddress::parse(text, 0).value(); }

// What rxe writes for RoCE v2 over IPv4 (seen in tests/rdmalab): 20 zero bytes, the IPv4 header.
std::array<std::byte, kGrhBytes> grh_from(const char* source, const char* group) {
  std::array<std::byte, kGrhBytes> grh{};
  grh[20] = std::byte{0x45};
  grh[28] = std::byte{64};  // TTL
  const std::uint32_t src = ip(source), dst = ip(group);
  std::memcpy(&grh[32], &src, 4);
  std::memcpy(&grh[36], &dst, 4);
  return grh;
}

TEST(RdmaGrh, SourceAddressIsReadFromTheIpv4Header) {
  const auto grh = grh_from("10.77.0.2", "239.192.0.1");
  EXPECT_EQ(grh_source_ipv4(grh), ip("10.77.0.2"));
}

TEST(RdmaGrh, NotAnIpv4HeaderHasNoSource) {
  std::array<std::byte, kGrhBytes> grh{};
  grh[0] = std::byte{0x60};  // a real (IPv6-style) GRH: RoCE v1 or v2 over IPv6
  EXPECT_FALSE(grh_source_ipv4(grh));
}

TEST(RdmaGrh, OwnEchoNeedsOurQpAndOurAddress) {
  const UdSource self{0x11, ip("10.77.0.1")};
  EXPECT_TRUE(is_own_echo({0x11, ip("10.77.0.1")}, self));
  EXPECT_FALSE(is_own_echo({0x11, ip("10.77.0.2")}, self));  // same small QPN on another node
  EXPECT_FALSE(is_own_echo({0x12, ip("10.77.0.1")}, self));  // another process on our device
}

TEST(RdmaPeerTable, FindsOthersByNodeAndByAddressNotItself) {
  const std::vector<RdmaPeer> peers = {{3, inet("10.77.0.3")}, {1, inet("10.77.0.1")}, {2, inet("10.77.0.20")}};
  RdmaPeerTable table(peers, 1);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.by_node(1), nullptr);
  ASSERT_NE(table.by_node(2), nullptr);
  EXPECT_EQ(table.by_node(2)->ipv4, ip("10.77.0.20"));
  ASSERT_NE(table.by_ipv4(ip("10.77.0.3")), nullptr);
  EXPECT_EQ(table.by_ipv4(ip("10.77.0.3"))->node, 3u);
  EXPECT_EQ(table.by_ipv4(ip("10.77.0.1")), nullptr);
  EXPECT_EQ(table.by_ipv4(ip("10.77.0.4")), nullptr);
  EXPECT_FALSE(table.by_node(3)->reachable());  // until heard from: no QPN, no AH
}

// A nodelist change: a node at its old address keeps the QP number it was heard from; one that
// moved starts unheard, and is found at its new address only; one removed is not found at all.
TEST(RdmaPeerTable, AReplacedTableKeepsWhatItLearnedOfANodeAtItsAddress) {
  const std::vector<RdmaPeer> peers = {{1, inet("10.77.0.1")}, {2, inet("10.77.0.2")}, {3, inet("10.77.0.3")}};
  RdmaPeerTable table(peers, 1);
  table.by_node(2)->qpn = 0x12;
  table.by_node(3)->qpn = 0x13;
  const std::vector<RdmaPeer> changed = {{1, inet("10.77.0.1")}, {2, inet("10.77.0.2")}, {4, inet("10.77.0.4")}};
  table.replace(changed, 1);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.by_node(2)->qpn, 0x12u);
  EXPECT_EQ(table.by_node(3), nullptr);
  EXPECT_EQ(table.by_ipv4(ip("10.77.0.3")), nullptr);
  ASSERT_NE(table.by_ipv4(ip("10.77.0.4")), nullptr);
  EXPECT_EQ(table.by_ipv4(ip("10.77.0.4"))->node, 4u);
  EXPECT_EQ(table.by_node(4)->qpn, 0u);
  EXPECT_FALSE(table.has_departed()) << "none was reachable: no address handle to keep";
  const std::vector<RdmaPeer> moved = {{1, inet("10.77.0.1")}, {2, inet("10.77.0.22")}};
  table.replace(moved, 1);
  EXPECT_EQ(table.by_node(2)->qpn, 0u);
  EXPECT_EQ(table.by_ipv4(ip("10.77.0.2")), nullptr);
  EXPECT_EQ(table.by_ipv4(ip("10.77.0.22"))->node, 2u);
}

TEST(RdmaConfig, RefusesAddressesItCannotTellApart) {
  RdmaConfig config;
  config.params.local_node = 1;
  config.bind = inet("10.77.0.1");
  config.group = inet("239.192.0.1");
  config.peers = {{1, inet("10.77.0.1")}, {2, inet("10.77.0.2")}};
  EXPECT_TRUE(config.validate());
  config.peers.push_back({3, inet("10.77.0.2")});
  EXPECT_FALSE(config.validate());
  config.peers.pop_back();
  config.group = inet("10.77.0.9");
  EXPECT_FALSE(config.validate());
  config.group = inet("ff0e::1");
  EXPECT_FALSE(config.validate());
}

class CountingPoster final : public RecvPoster {
 public:
  explicit CountingPoster(RdmaRecvRing& ring) : ring_(ring) {}
  void post_pending() noexcept override {
    posted += ring_.pending().size();
    ring_.clear_pending();
  }
  std::size_t posted = 0;

 private:
  RdmaRecvRing& ring_;
};

TEST(RdmaRecvRing, EveryBufferStartsPendingAndReleasesArePostedInBatches) {
  constexpr std::uint32_t kCount = 8, kSlot = 256, kBatch = 4;
  BufferArena arena = std::move(BufferArena::map(kCount * kSlot).value());
  RdmaRecvRing ring(arena.carve(kCount * kSlot), kCount, kSlot, kGrhBytes, kBatch);
  EXPECT_EQ(ring.pending().size(), kCount);  // posted at start-up
  EXPECT_EQ(ring.slot_start(ring.buffer(0)) + kGrhBytes, ring.buffer(0).data());
  CountingPoster poster(ring);
  ring.clear_pending();
  ring.set_poster(&poster);

  std::vector<RecvBufferRef> filled;
  for (std::uint32_t i = 0; i < kCount; ++i) filled.push_back(ring.take(i));
  for (std::uint32_t i = 0; i < kBatch - 1; ++i) filled[i].reset();
  EXPECT_EQ(poster.posted, 0u);  // below a batch: waits for the backend's next receive
  EXPECT_EQ(ring.pending().size(), kBatch - 1);
  filled[kBatch - 1].reset();
  EXPECT_EQ(poster.posted, kBatch);
  EXPECT_TRUE(ring.pending().empty());
  ring.set_poster(nullptr);
  filled.clear();
  EXPECT_EQ(ring.pending().size(), kCount - kBatch);  // collected, not posted
}

// rx_ring_empty's condition: the protocol holds every buffer, so no receive WR is on the QP. A
// buffer released but not re-posted yet is not held: the backend's next receive posts it.
TEST(RdmaRecvRing, AllHeldOnlyWhenNoBufferIsPostedOrWaitingToBe) {
  constexpr std::uint32_t kCount = 8, kSlot = 256, kBatch = 4;
  BufferArena arena = std::move(BufferArena::map(kCount * kSlot).value());
  RdmaRecvRing ring(arena.carve(kCount * kSlot), kCount, kSlot, kGrhBytes, kBatch);
  EXPECT_EQ(ring.posted_count(), 0u);
  EXPECT_FALSE(ring.all_held());  // all pending: posted at start-up
  CountingPoster poster(ring);
  poster.post_pending();
  EXPECT_EQ(ring.posted_count(), kCount);
  ring.set_poster(&poster);

  std::vector<RecvBufferRef> filled;
  for (std::uint32_t i = 0; i < kCount - 1; ++i) filled.push_back(ring.take(i));
  EXPECT_EQ(ring.posted_count(), 1u);
  EXPECT_FALSE(ring.all_held());  // one WR still on the QP
  filled.push_back(ring.take(kCount - 1));
  EXPECT_TRUE(ring.all_held());
  filled.pop_back();  // released: waits for the next receive to post it
  EXPECT_EQ(ring.pending().size(), 1u);
  EXPECT_FALSE(ring.all_held());
  poster.post_pending();
  EXPECT_EQ(ring.posted_count(), 1u);
  filled.clear();  // seven more: one batch posted at once, three wait
  EXPECT_EQ(ring.posted_count(), 1u + kBatch);
  EXPECT_EQ(ring.pending().size(), kCount - 1 - kBatch);
  EXPECT_FALSE(ring.all_held());
}

}  // namespace
}  // namespace rtotem::transport
