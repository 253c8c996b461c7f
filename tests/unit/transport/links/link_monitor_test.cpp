// LinkMonitor: pings on schedule, links up on pong_count good pongs in a row, down when the pongs
// stop, and what a late, future-stamped or unknown pong does.
#include "transport/links/link_monitor.hpp"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace rtotem::transport {
namespace {

constexpr Micros kMs = 1000;

struct Recorder final : LinkEvents {
  std::vector<std::tuple<NodeId, LinkId, Micros>> pings;
  std::vector<std::tuple<NodeId, LinkId, bool>> changes;
  void send_ping(NodeId peer, LinkId link, Micros stamp) override { pings.emplace_back(peer, link, stamp); }
  void link_changed(NodeId peer, LinkId link, bool up) override { changes.emplace_back(peer, link, up); }
};

// Corosync's derived timing for a 1000 ms token: interval token / 4, timeout token / 2.
constexpr LinkTiming kTiming{.ping_interval = 250 * kMs, .ping_timeout = 500 * kMs, .pong_count = 2, .precision = 2048};

struct LinkMonitorTest : ::testing::Test {
  Recorder events;
  std::vector<NodeId> peers{3, 2};
  std::vector<LinkTiming> links{kTiming, kTiming};
  LinkMonitor monitor{peers, links, events};

  // Answers the pings of the last tick that went to (peer, link), each after `rtt`.
  void answer(NodeId peer, LinkId link, Micros rtt) {
    for (const auto& [to, on, stamp] : events.pings) {
      if (to == peer && on == link) monitor.on_pong(peer, link, stamp, stamp + rtt);
    }
  }
  Micros tick(Micros now) {
    events.pings.clear();
    return monitor.tick(now);
  }
  // Ticks every ping interval from `from` to `to`, (peer, link) answering each ping after `rtt`.
  void run(Micros from, Micros to, NodeId peer, LinkId link, Micros rtt) {
    for (Micros now = from; now < to; now += kTiming.ping_interval) {
      tick(now);
      answer(peer, link, rtt);
    }
  }
};

TEST_F(LinkMonitorTest, PingsEveryPeerOnEveryLinkAndStartsWithEveryLinkDown) {
  tick(0);
  EXPECT_EQ(events.pings.size(), 4u);
  for (NodeId peer : {2u, 3u}) {
    EXPECT_FALSE(monitor.reachable(peer));
    for (LinkId link : {0, 1}) {
      EXPECT_FALSE(monitor.up(peer, link));
      EXPECT_EQ(monitor.status(peer, link)->pings_sent, 1u);
    }
  }
  EXPECT_EQ(monitor.peers()[0], 2u);  // sorted
}

TEST_F(LinkMonitorTest, ALinkComesUpOnItsPongCountthGoodPong) {
  tick(0);
  answer(2, 1, 5 * kMs);
  EXPECT_FALSE(monitor.up(2, 1)) << "one pong of two";
  tick(250 * kMs);
  answer(2, 1, 5 * kMs);
  EXPECT_TRUE(monitor.up(2, 1));
  EXPECT_TRUE(monitor.reachable(2));
  EXPECT_FALSE(monitor.up(2, 0));
  EXPECT_FALSE(monitor.reachable(3));
  ASSERT_EQ(events.changes.size(), 1u);
  EXPECT_EQ(events.changes[0], std::make_tuple(NodeId{2}, LinkId{1}, true));
  EXPECT_EQ(monitor.status(2, 1)->latency, 5 * kMs);
}

TEST_F(LinkMonitorTest, AnUpLinkGoesDownWhenNoPongCameForTheTimeoutPlusTwiceItsLatency) {
  run(0, 500 * kMs, 2, 0, 10 * kMs);  // pongs at 10 and 260 ms
  ASSERT_TRUE(monitor.up(2, 0));
  const Micros down_at = 260 * kMs + kTiming.ping_timeout + 2 * 10 * kMs;
  EXPECT_EQ(tick(500 * kMs), 500 * kMs + kTiming.ping_interval) << "the next ping is sooner than the deadline";
  EXPECT_EQ(tick(750 * kMs), down_at) << "the deadline is sooner than the next ping";
  tick(down_at - 1);
  EXPECT_TRUE(monitor.up(2, 0));
  tick(down_at);
  EXPECT_FALSE(monitor.up(2, 0));
  ASSERT_EQ(events.changes.size(), 2u);
  EXPECT_EQ(events.changes[1], std::make_tuple(NodeId{2}, LinkId{0}, false));
  EXPECT_EQ(monitor.status(2, 0)->went_down, 1u);
}

// At Corosync's ratio (interval = timeout / 2) a link with a round trip rides out one lost ping,
// not two.
TEST_F(LinkMonitorTest, OneLostPingLeavesALinkUpAndTwoTakeItDown) {
  run(0, 500 * kMs, 2, 0, 1 * kMs);  // the last pong at 251 ms
  tick(500 * kMs);                   // lost
  tick(750 * kMs);
  answer(2, 0, 1 * kMs);
  EXPECT_TRUE(monitor.up(2, 0));
  tick(1000 * kMs);  // lost
  tick(1250 * kMs);  // lost
  EXPECT_TRUE(monitor.up(2, 0));
  tick(1253 * kMs);  // 751 + 500 + 2 x 1
  EXPECT_FALSE(monitor.up(2, 0));
}

TEST_F(LinkMonitorTest, ALateOrFutureStampedPongIsNotCountedAndRestartsTheCount) {
  tick(0);
  answer(3, 0, 1 * kMs);
  ASSERT_EQ(monitor.status(3, 0)->good_in_a_row, 1u);
  monitor.on_pong(3, 0, 0, kTiming.ping_timeout + 1);  // a round trip past the timeout
  EXPECT_EQ(monitor.status(3, 0)->good_in_a_row, 0u);
  monitor.on_pong(3, 0, 900 * kMs, 800 * kMs);  // sent after it came back: not this node's stamp
  EXPECT_EQ(monitor.status(3, 0)->pongs_late, 2u);
  EXPECT_EQ(monitor.status(3, 0)->pongs_good, 1u);
  EXPECT_FALSE(monitor.up(3, 0));
}

TEST_F(LinkMonitorTest, AMissingPongRestartsTheCount) {
  tick(0);
  answer(3, 0, 1 * kMs);  // good pong 1 at 1 ms
  tick(250 * kMs);        // lost
  tick(501 * kMs);        // 500 ms without a good pong: the count starts again
  EXPECT_EQ(monitor.status(3, 0)->good_in_a_row, 0u);
  answer(3, 0, 1 * kMs);
  EXPECT_FALSE(monitor.up(3, 0)) << "one pong since the gap";
  tick(751 * kMs);
  answer(3, 0, 1 * kMs);
  EXPECT_TRUE(monitor.up(3, 0));
}

TEST_F(LinkMonitorTest, APausedHostSendsOnePingPerLinkNotTheMissedOnes) {
  tick(0);
  tick(10'000 * kMs);
  EXPECT_EQ(events.pings.size(), 4u);
  EXPECT_EQ(tick(10'000 * kMs + 1), 10'000 * kMs + kTiming.ping_interval);
  EXPECT_TRUE(events.pings.empty());
}

TEST_F(LinkMonitorTest, APongFromAPeerOrLinkItDoesNotKnowIsCounted) {
  monitor.on_pong(4, 0, 0, 1);
  monitor.on_pong(2, 2, 0, 1);
  EXPECT_EQ(monitor.pongs_unknown(), 2u);
  EXPECT_EQ(monitor.status(2, 2), nullptr);
  EXPECT_FALSE(monitor.up(4, 0));
}

TEST_F(LinkMonitorTest, APeerKeptByANodelistChangeKeepsItsLinksAndANewOneStartsDown) {
  run(0, 500 * kMs, 2, 1, 5 * kMs);
  ASSERT_TRUE(monitor.up(2, 1));
  const std::uint64_t pings = monitor.status(2, 1)->pings_sent;
  const NodeId changed[] = {4, 2};
  monitor.set_peers(changed);
  EXPECT_TRUE(monitor.up(2, 1));
  EXPECT_EQ(monitor.status(2, 1)->pings_sent, pings);
  EXPECT_EQ(monitor.status(3, 0), nullptr) << "node 3 left the nodelist";
  EXPECT_FALSE(monitor.up(4, 0));
  EXPECT_EQ(monitor.peers()[1], 4u);  // sorted
  tick(500 * kMs);
  EXPECT_EQ(events.pings.size(), 4u) << "nodes 2 and 4, on two links each";
  answer(4, 0, 5 * kMs);
  tick(750 * kMs);
  answer(4, 0, 5 * kMs);
  EXPECT_TRUE(monitor.up(4, 0));
}

TEST(LinkMonitor, LatencyIsTheAverageOfAtMostPrecisionSamples) {
  Recorder events;
  const NodeId peers[] = {2};
  const LinkTiming timing{.ping_interval = 100 * kMs, .ping_timeout = 200 * kMs, .pong_count = 1, .precision = 2};
  LinkMonitor monitor(peers, std::span(&timing, 1), events);
  monitor.on_pong(2, 0, 0, 10 * kMs);
  monitor.on_pong(2, 0, 0, 20 * kMs);
  EXPECT_EQ(monitor.status(2, 0)->latency, 15 * kMs);
  monitor.on_pong(2, 0, 0, 40 * kMs);  // weight 1/2 from here on
  EXPECT_EQ(monitor.status(2, 0)->latency, 27'500u);
  EXPECT_EQ(monitor.status(2, 0)->samples, 2u);
}

TEST(LinkTiming, RefusesWhatCannotWork) {
  EXPECT_TRUE(kTiming.validate().ok());
  const auto message = [](LinkTiming timing) { return timing.validate().error().message(); };
  EXPECT_EQ(message({.ping_interval = 0}), "ping interval 0: a link would be pinged without pause");
  EXPECT_EQ(message({.ping_interval = 500 * kMs, .ping_timeout = 500 * kMs}),
            "ping timeout 500 ms is not longer than the ping interval 500 ms: a link that answers every ping would "
            "still go down between two of them");
  EXPECT_EQ(message({.pong_count = 0}), "pong count 0: a link must answer at least one ping to come up");
  EXPECT_EQ(message({.precision = 0}), "ping precision 0: the latency average needs at least one sample");
}

}  // namespace
}  // namespace rtotem::transport
