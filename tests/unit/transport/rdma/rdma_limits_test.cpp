// The MTU a port's active_mtu allows, and the clamp of the configured one: no device needed.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <vector>

#include "transport/rdma/rdma_limits.hpp"

namespace rtotem::transport {
namespace {

TEST(RdmaMtu, MessageBytesFollowTheVerbsEnum) {
  EXPECT_EQ(ud_message_bytes(IBV_MTU_256), 256u);
  EXPECT_EQ(ud_message_bytes(IBV_MTU_1024), 1024u);  // rxe on a 1500-byte Ethernet
  EXPECT_EQ(ud_message_bytes(IBV_MTU_4096), 4096u);  // rxe on a 9000-byte Ethernet
  EXPECT_EQ(ud_message_bytes(0), 0u);                // not a valid enum: no message fits
  EXPECT_EQ(ud_message_bytes(6), 0u);
}

TEST(RdmaMtu, PayloadLeavesRoomForOurHeader) {
  EXPECT_EQ(ud_payload_mtu(IBV_MTU_1024), 1024u - kWireHeaderSize - kCryptoTagBytes);
  EXPECT_EQ(ud_payload_mtu(IBV_MTU_4096), 4096u - kWireHeaderSize - kCryptoTagBytes);
  EXPECT_EQ(ud_payload_mtu(0), 0u);
}

TEST(RdmaMtu, ConfiguredMtuIsLoweredToThePortNeverRaised) {
  EXPECT_EQ(clamp_mtu(1400, IBV_MTU_1024), 1008u);  // the daemon's default netmtu on rxe
  EXPECT_EQ(clamp_mtu(512, IBV_MTU_1024), 512u);
  EXPECT_EQ(clamp_mtu(9000, IBV_MTU_4096), 4080u);
}

TEST(RdmaLogging, RepeatedErrorsAreLoggedAtPowersOfTwo) {
  std::vector<std::uint64_t> logged;
  for (std::uint64_t count = 1; count <= 100; ++count)
    if (worth_logging(count)) logged.push_back(count);
  EXPECT_EQ(logged, (std::vector<std::uint64_t>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_FALSE(worth_logging(0));
}

}  // namespace
}  // namespace rtotem::transport
