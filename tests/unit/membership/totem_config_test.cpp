// The send queue and the send pool sized for the largest message in packets of the MTU a backend
// runs with: derived where the file leaves send_queue_max out, refused where it sets one too short.
#include "membership/totem_config.hpp"

#include <gtest/gtest.h>

#include <string>

#include "membership/chunks.hpp"

namespace rtotem::membership {
namespace {

constexpr std::uint32_t kRxeMtu = 1008;  // rxe on a 1500-byte link: 1024-byte messages less our header

transport::BackendParams params_for(const TotemConfig& config, std::uint32_t mtu) {
  transport::BackendParams p;
  p.local_node = 1;
  p.mtu = mtu;
  p.send_buffers = config.send_buffers_for(p.payload_mtu());
  return p;
}

std::string refusal(const TotemConfig& config, const transport::BackendParams& p) {
  auto checked = config.check(p);
  return checked ? std::string() : checked.error().message();
}

// 1 MiB at rxe's MTU is 1116 packets: above the 1024 a fixed queue and pool had, so transport rdma
// refused to start with default settings. Derived, both hold it.
TEST(TotemConfigSizing, TheDefaultsCarryALargestMessageAtRxesMtu) {
  const TotemConfig config = TotemConfig{}.resolved().value();
  ASSERT_EQ(config.max_message_size, 1u << 20);
  ASSERT_EQ(config.send_queue_max, 0u);  // derived
  EXPECT_EQ(pieces_for(config.max_message_size, kRxeMtu), 1116u);
  EXPECT_EQ(config.send_queue_for(kRxeMtu), 1116u);
  EXPECT_EQ(config.send_buffers_for(kRxeMtu), config.window_size + kRtrMax + 3 + 1116);
  EXPECT_EQ(refusal(config, params_for(config, kRxeMtu)), "");
  // One send buffer fewer is what check() refuses: the sizing is the least that works.
  transport::BackendParams short_pool = params_for(config, kRxeMtu);
  --short_pool.send_buffers;
  EXPECT_NE(refusal(config, short_pool).find("send_buffers 1232 must be above"), std::string::npos);
}

// Sealed packets carry 40 bytes less payload: more packets, so more of both.
TEST(TotemConfigSizing, SealedPacketsAreSizedForTheirSmallerPayload) {
  const TotemConfig config = TotemConfig{}.resolved().value();
  const std::uint32_t sealed = kRxeMtu - static_cast<std::uint32_t>(transport::kSealOverhead);
  const std::uint32_t pieces = static_cast<std::uint32_t>(pieces_for(config.max_message_size, sealed));
  EXPECT_GT(pieces, 1116u);
  EXPECT_EQ(config.send_queue_for(sealed), pieces);
  EXPECT_EQ(config.send_buffers_for(sealed), config.window_size + kRtrMax + 3 + pieces);
}

// Where a largest message fits the defaults (UDP's 1400 bytes: 788 packets), they stay as they were.
TEST(TotemConfigSizing, NeverBelowTheDefaultQueueAndPool) {
  const TotemConfig config = TotemConfig{}.resolved().value();
  EXPECT_EQ(pieces_for(config.max_message_size, 1400), 788u);
  EXPECT_EQ(config.send_queue_for(1400), kSendQueueDefault);
  EXPECT_EQ(config.send_buffers_for(1400), transport::BackendParams{}.send_buffers);
  TotemConfig small = config;
  small.max_message_size = 4096;
  EXPECT_EQ(small.send_queue_for(kRxeMtu), kSendQueueDefault);
  EXPECT_EQ(small.send_buffers_for(kRxeMtu), transport::BackendParams{}.send_buffers);
}

// A send_queue_max the file sets is kept as it is: too short for the MTU the backend opened with,
// it is refused with the numbers, never raised behind the user's back.
TEST(TotemConfigSizing, AnExplicitSendQueueTooShortForTheMtuIsRefused) {
  TotemConfig set;
  set.send_queue_max = 1024;
  const TotemConfig config = set.resolved().value();
  EXPECT_EQ(config.send_queue_for(kRxeMtu), 1024u);
  EXPECT_EQ(refusal(config, params_for(config, 1400)), "");
  EXPECT_EQ(refusal(config, params_for(config, kRxeMtu)),
            "max_message_size 1048576 takes 1116 packets of mtu 1008, above send_queue_max 1024");
  set.send_queue_max = 2000;
  EXPECT_EQ(set.resolved().value().send_queue_for(kRxeMtu), 2000u);
  set.send_queue_max = set.max_messages - 1;
  EXPECT_NE(set.resolved().error().message().find("is below max_messages"), std::string::npos);
}

TEST(TotemConfigSizing, AMaxMessageSizeOfZeroIsRefused) {
  TotemConfig zero;
  zero.max_message_size = 0;
  EXPECT_NE(zero.resolved().error().message().find("max_message_size: 0"), std::string::npos);
}

// A stranger's verdicts count only from a join carrying the highest ring seq we know (6e597be):
// its first join of a round may not, its next one, sent after ours reached it, does. Both must fit
// within consensus, however long send_join delays them, or the round ends without its word.
TEST(TotemConfigSizing, TwoJoinsWithTheirSendJoinDelaysMustFitWithinConsensus) {
  TotemConfig set;
  set.token_timeout_ms = 1000;  // consensus 1200
  set.send_join_ms = 549;
  EXPECT_TRUE(set.resolved().ok());
  set.send_join_ms = 550;
  EXPECT_EQ(set.resolved().error().message(),
            "send_join: 550 ms plus join (50 ms), twice, must be below consensus (1200 ms): a stranger's "
            "second join of a round must arrive within it");
  // Without send_join the rule is on join alone, and says so; it is the only rule relating join to
  // consensus, so a consensus below one join meets it too.
  set.send_join_ms = 0;
  set.join_ms = 600;
  EXPECT_EQ(set.resolved().error().message(),
            "join: 600 ms, twice, must be below consensus (1200 ms): a stranger's second join of a round must "
            "arrive within it");
  set.join_ms = 50;
  set.consensus_ms = 40;
  EXPECT_EQ(set.resolved().error().message(),
            "join: 50 ms, twice, must be below consensus (40 ms): a stranger's second join of a round must "
            "arrive within it");
}

// A 64-node nodelist at the default netmtu agreed on a ring whose commit token (2076 bytes) no
// packet carried: every daemon stayed in Gather, multicasting joins, for good.
TEST(TotemConfigSizing, ANodelistWhoseCommitTokenDoesNotFitIsRefusedNamingTheMtu) {
  transport::BackendParams p;
  p.mtu = 1400;
  EXPECT_TRUE(check_ring_fits(42, p).ok());
  EXPECT_EQ(check_ring_fits(43, p).error().message(),
            "43 nodes take a commit token of 1404 bytes, which an mtu of 1400 cannot carry (at most 42 nodes): "
            "raise netmtu to at least 1404");
  EXPECT_NE(check_ring_fits(kMembersMax, p).error().message().find("at least 2076"), std::string::npos);
  p.mtu = 2076;
  EXPECT_TRUE(check_ring_fits(kMembersMax, p).ok());
  // Sealed, the payload is smaller by the seal: the netmtu asked for covers it.
  p.key = std::make_shared<const transport::ClusterKey>(transport::ClusterKey::random().value());
  EXPECT_NE(check_ring_fits(kMembersMax, p).error().message().find("at least 2116"), std::string::npos);
}

}  // namespace
}  // namespace rtotem::membership
