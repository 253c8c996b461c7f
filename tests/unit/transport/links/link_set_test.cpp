// LinkSet over two simulated networks (link 0 and link 1), three nodes: links come up on their
// pings, passive mode uses one link and leaves a cut one within its ping timeout, active mode
// sends on every up link, priorities choose, pings never reach the protocol, and a link missing
// on a node or broken for good leaves the others to carry everything.
#include "transport/links/link_set.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "transport/sim/sim_backend.hpp"
#include "transport/sim/sim_network.hpp"
#include "transport/udp/inet_address.hpp"

namespace rtotem::transport {
namespace {

constexpr Micros kMs = 1000;
constexpr std::uint32_t kCluster = 77;
constexpr LinkTiming kTiming{.ping_interval = 100 * kMs, .ping_timeout = 300 * kMs, .pong_count = 2, .precision = 64};
constexpr std::array<NodeId, 3> kNodes = {1, 2, 3};

struct Collector final : PacketSink {
  std::vector<std::pair<NodeId, std::string>> packets;
  void on_packets(std::span<InboundPacket> batch) override {
    for (const InboundPacket& p : batch)
      packets.emplace_back(p.from, std::string(reinterpret_cast<const char*>(p.payload.data()), p.payload.size()));
  }
  std::size_t count(const std::string& payload) const {
    return static_cast<std::size_t>(std::ranges::count(packets, payload, &std::pair<NodeId, std::string>::second));
  }
};

class LinkSetTest : public ::testing::Test {
 protected:
  // `key`: every link seals with it.
  void open(LinkMode mode, std::array<std::uint8_t, 2> priorities = {1, 1},
            std::shared_ptr<const ClusterKey> key = nullptr) {
    for (std::size_t i = 0; i < kNodes.size(); ++i) {
      const NodeId self = kNodes[i];
      LinkSetConfig config;
      config.params.local_node = self;
      config.params.cluster_id = kCluster;
      config.params.send_buffers = 512;
      for (NodeId other : kNodes)
        if (other != self) config.peers.push_back(other);
      for (std::uint8_t priority : priorities) config.links.push_back({kTiming, priority});
      config.mode = mode;
      config.clock = [this] { return now_; };
      std::vector<std::unique_ptr<Backend>> links;
      for (std::size_t l = 0; l < nets_.size(); ++l) {
        if (missing_[i][l]) {
          config.links[l].missing = "no RDMA device";
          links.push_back(nullptr);
          continue;
        }
        SimNetwork& net = nets_[l];
        BackendParams params;
        params.local_node = self;
        params.cluster_id = kCluster;
        params.send_buffers = 256;
        params.recv_buffers = 256;
        params.local_path = false;
        params.key = key;
        params.epoch = 1;
        auto link = net.attach(params);
        ASSERT_TRUE(link.ok()) << link.error().message();
        links.push_back(std::move(*link));
      }
      auto set = LinkSet::open(config, std::move(links));
      ASSERT_TRUE(set.ok()) << set.error().message();
      sets_[i] = std::move(*set);
    }
  }

  // Runs every node for `duration` in 1 ms steps: timers, receives, sends.
  void run_for(Micros duration) {
    for (const Micros end = now_ + duration; now_ < end;) {
      now_ += kMs;
      for (SimNetwork& net : nets_) net.advance_to(now_);
      for (std::size_t i = 0; i < sets_.size(); ++i) {
        (void)sets_[i]->on_timer(now_);
        while (sets_[i]->poll(sinks_[i]) > 0) {}
        (void)sets_[i]->flush();
      }
    }
  }

  void send(std::size_t from, const std::string& payload, NodeId to = kNoNode, Spread spread = Spread::kRoute) {
    SendBufferRef buffer;
    ASSERT_EQ(sets_[from]->acquire(buffer), Status::kOk);
    std::memcpy(buffer->writable_payload().data(), payload.data(), payload.size());
    buffer->set_payload_size(static_cast<std::uint32_t>(payload.size()));
    ASSERT_EQ(to == kNoNode ? sets_[from]->multicast(buffer, spread) : sets_[from]->unicast(to, buffer), Status::kOk);
    (void)sets_[from]->flush();
  }

  // Node 3's port on link 1 fails, and stays down until node 1's pings have seen it.
  void take_down_link_1_to_3() {
    nets_[1].set_port(3, false);
    run_for(kTiming.ping_timeout + kTiming.ping_interval);
    ASSERT_FALSE(sets_[0]->monitor().up(3, 1));
  }

  // Active mode, link 0's device at node 1 stalled: node 1 sends on past it (the test below).
  void sends_past_a_stalled_link(bool multicasts, bool unicasts);

  std::array<SimNetwork, 2> nets_{SimNetwork(1), SimNetwork(2)};
  std::array<std::array<bool, 2>, 3> missing_{};  // by node index and link: opened without it
  Micros now_ = 0;
  std::array<std::unique_ptr<LinkSet>, 3> sets_;
  std::array<Collector, 3> sinks_;
};

TEST_F(LinkSetTest, LinksComeUpOnTheirPingsWhichNeverReachTheProtocol) {
  open(LinkMode::kPassive);
  EXPECT_EQ(sets_[0]->links_to(2), 0b11u) << "no link up yet: every link";
  run_for(500 * kMs);
  for (const auto& set : sets_) {
    for (NodeId peer : kNodes) {
      if (peer == set->local_node()) continue;
      EXPECT_TRUE(set->monitor().up(peer, 0) && set->monitor().up(peer, 1)) << set->local_node() << " to " << peer;
    }
  }
  for (const Collector& sink : sinks_) EXPECT_TRUE(sink.packets.empty());
  EXPECT_GT(nets_[1].stats().delivered, 0u) << "link 1 carried its pings";
}

TEST_F(LinkSetTest, PassiveSendsEachMulticastOnceOnTheBestLinkAndUnicastsOnEvery) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  EXPECT_EQ(sets_[0]->links_to(2), 0b01u) << "equal priorities: the lowest number";
  send(0, "multicast");
  send(0, "unicast", 3);
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[0].count("multicast"), 1u) << "its own, through the local path, once";
  EXPECT_EQ(sinks_[1].count("multicast"), 1u);
  EXPECT_EQ(sinks_[2].count("multicast"), 1u);
  EXPECT_EQ(sinks_[1].count("unicast"), 0u);
  EXPECT_EQ(sinks_[2].count("unicast"), 2u) << "a unicast (the protocol's token) goes on every up link";
}

// A link that fails (its port down) carries a passive set's multicasts until the pings find out,
// up to a ping timeout. A token, or a retransmission (Spread::kEveryLink), sent meanwhile must not
// wait for that: its copy on the other link arrives at once.
TEST_F(LinkSetTest, PassiveSendsTokensAndRetransmissionsPastALinkItsPingsStillThinkUp) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  nets_[0].set_port(3, false);
  send(0, "token", 3);
  send(0, "multicast");
  send(0, "retransmission", kNoNode, Spread::kEveryLink);
  run_for(5 * kMs);
  ASSERT_TRUE(sets_[0]->monitor().up(3, 0)) << "the pings have not noticed yet";
  EXPECT_EQ(sinks_[2].count("token"), 1u) << "on link 1";
  EXPECT_EQ(sinks_[2].count("multicast"), 0u) << "the bulk keeps to link 0 until the pings say otherwise";
  EXPECT_EQ(sinks_[1].count("multicast"), 1u);
  EXPECT_EQ(sinks_[2].count("retransmission"), 1u) << "on link 1";
  EXPECT_EQ(sinks_[1].count("retransmission"), 2u) << "on both links to a node both reach";
}

TEST_F(LinkSetTest, ACutLinkIsLeftWithinItsPingTimeoutAndTakenBackWhenItHeals) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  nets_[0].partition(std::vector<std::vector<NodeId>>{});  // link 0 reaches no one
  // Down after the timeout plus twice the (sub-ms) latency: before the next ping at most.
  run_for(kTiming.ping_timeout + kTiming.ping_interval);
  EXPECT_FALSE(sets_[0]->monitor().up(2, 0));
  EXPECT_EQ(sets_[0]->links_to(2), 0b10u);
  send(1, "over link 1");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[0].count("over link 1"), 1u);
  EXPECT_EQ(sinks_[2].count("over link 1"), 1u);
  nets_[0].heal();
  run_for(kTiming.pong_count * kTiming.ping_interval + 50 * kMs);
  EXPECT_EQ(sets_[0]->links_to(2), 0b01u) << "back to link 0";
}

TEST_F(LinkSetTest, ActiveSendsEachPacketOnEveryUpLink) {
  open(LinkMode::kActive);
  run_for(500 * kMs);
  EXPECT_EQ(sets_[0]->links_to(3), 0b11u);
  send(0, "twice");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[0].count("twice"), 1u) << "the local path is one";
  EXPECT_EQ(sinks_[1].count("twice"), 2u) << "the protocol drops the copy, as a network's duplicate";
  EXPECT_EQ(sinks_[2].count("twice"), 2u);
}

// A link whose device stops draining (a hung port) while its pings have not yet timed out: in
// active mode every destination still has the other link, so packets go on without waiting for
// the stalled link's queue, long before its ping timeout would take it out of the routes.
// Multicasts take active mode's routes, unicasts (tokens) every live link: each path is shown
// alone, then the two interleaved.
void LinkSetTest::sends_past_a_stalled_link(bool multicasts, bool unicasts) {
  open(LinkMode::kActive);
  run_for(500 * kMs);
  nets_[0].stall_device(1, true);
  constexpr int kPackets = 2 * static_cast<int>(kTxQueueMax);  // more than link 0's queue holds
  for (int i = 0; i < kPackets; ++i) {
    if (multicasts) send(0, fmt::format("m{}", i));
    if (unicasts) send(0, fmt::format("u{}", i), 3);
    if (i % 32 == 31) run_for(kMs);
  }
  run_for(5 * kMs);
  ASSERT_LT(now_, 500 * kMs + kTiming.ping_timeout) << "judged before the stalled link could go down";
  EXPECT_TRUE(sets_[0]->monitor().up(2, 0)) << "link 0 is still up to node 2: only its queue is stuck";
  for (int i = 0; i < kPackets; ++i) {
    if (multicasts) {
      EXPECT_EQ(sinks_[1].count(fmt::format("m{}", i)), 1u) << "multicast " << i << " on link 1 alone";
    }
    if (unicasts) {
      EXPECT_EQ(sinks_[2].count(fmt::format("u{}", i)), 1u) << "unicast " << i << " on link 1 alone";
    }
  }
  EXPECT_GT(sets_[0]->counters().tx_queue_full, 0u) << "each packet left out of the stalled link counts";
  nets_[0].stall_device(1, false);
  run_for(5 * kMs);
  send(0, "both again");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[1].count("both again"), 2u) << "the drained link carries its copy again";
}

TEST_F(LinkSetTest, ActiveModeSendsMulticastsPastAStalledLink) { sends_past_a_stalled_link(true, false); }
TEST_F(LinkSetTest, ActiveModeSendsUnicastsPastAStalledLink) { sends_past_a_stalled_link(false, true); }
TEST_F(LinkSetTest, ActiveModeSendsPastAStalledLink) { sends_past_a_stalled_link(true, true); }

// The monitor lags the wire both ways: link 1 to node 3 has just healed (its pings have not yet
// brought it back up) when link 0 to node 3 fails (its pings have not yet noticed). A token goes
// on every live link whatever the monitor says, so it takes link 1, which works.
TEST_F(LinkSetTest, ATokenGoesOnALinkThePingsHaveNotYetBroughtBackUp) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  ASSERT_NO_FATAL_FAILURE(take_down_link_1_to_3());
  nets_[1].set_port(3, true);
  nets_[0].set_port(3, false);
  send(0, "token", 3);
  run_for(5 * kMs);
  ASSERT_FALSE(sets_[0]->monitor().up(3, 1)) << "not back up yet";
  ASSERT_TRUE(sets_[0]->monitor().up(3, 0)) << "not seen down yet";
  EXPECT_EQ(sinks_[2].count("token"), 1u);
}

// A token whose only other link is one the pings know is down waits for room on the up link,
// rather than go out on the dead one alone.
TEST_F(LinkSetTest, ATokenWaitsForItsUpLinkRatherThanGoOnlyOnADownOne) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  ASSERT_NO_FATAL_FAILURE(take_down_link_1_to_3());
  nets_[0].stall_device(1, true);
  for (std::size_t i = 0; i < kTxQueueMax; ++i) send(0, "bulk");  // fills link 0's queue
  send(0, "token", 3);
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[2].count("token"), 0u) << "still waiting for link 0";
  nets_[0].stall_device(1, false);
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[2].count("token"), 1u) << "out on link 0 once it drained";
}

// Each link seals what it carries, pings and pongs too: their flag survives sealing.
TEST_F(LinkSetTest, SealedLinksCarryPingsAndDataAlike) {
  auto key = ClusterKey::random();
  ASSERT_TRUE(key.ok());
  open(LinkMode::kActive, {1, 1}, std::make_shared<const ClusterKey>(std::move(key).value()));
  run_for(500 * kMs);
  EXPECT_TRUE(sets_[1]->monitor().up(3, 0) && sets_[1]->monitor().up(3, 1));
  EXPECT_EQ(sets_[1]->mtu(), sets_[1]->link(0)->mtu()) << "what a sealed link carries";
  send(1, "sealed");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[0].count("sealed"), 2u);
  EXPECT_EQ(sinks_[2].count("sealed"), 2u);
  EXPECT_EQ(sinks_[0].packets.size(), 2u) << "and nothing else: no ping came up";
}

TEST_F(LinkSetTest, PassivePrefersTheHigherPriority) {
  open(LinkMode::kPassive, {1, 5});
  run_for(500 * kMs);
  EXPECT_EQ(sets_[0]->links_to(2), 0b10u);
}

// Node 1 loses link 0 to node 3 only: its multicasts go on the link up to both (link 1), once.
TEST_F(LinkSetTest, AOneSidedCutMovesMulticastsToTheLinkUpToEveryPeer) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  nets_[0].set_link(1, 3, false);
  run_for(kTiming.ping_timeout + kTiming.ping_interval);
  EXPECT_EQ(sets_[0]->links_to(2), 0b01u);
  EXPECT_EQ(sets_[0]->links_to(3), 0b10u);
  send(0, "around the cut");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[1].count("around the cut"), 1u);
  EXPECT_EQ(sinks_[2].count("around the cut"), 1u);
}

// Node 3 answers nothing on either link (down): node 1 sends to it on every link, and what it
// multicasts still reaches node 2 once.
TEST_F(LinkSetTest, APeerWithNoLinkUpIsSentToOnEveryLink) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  for (SimNetwork& net : nets_) net.partition(std::vector<std::vector<NodeId>>{{1, 2}});
  run_for(kTiming.ping_timeout + kTiming.ping_interval);
  EXPECT_FALSE(sets_[0]->monitor().reachable(3));
  EXPECT_EQ(sets_[0]->links_to(3), 0b11u);
  for (SimNetwork& net : nets_) net.heal();
  send(0, "to all");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[1].count("to all"), 1u);
  EXPECT_EQ(sinks_[2].count("to all"), 2u) << "on link 0 with the multicast, and on link 1";
}

// Node 1's link 0 device fails for good (an RDMA device removed): the set retires that link at
// once and goes on over link 1; the others leave link 0 to node 1 within its ping timeout.
TEST_F(LinkSetTest, ABrokenLinkIsRetiredAndTheOtherCarriesEverything) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  nets_[0].break_device(1, "device removed");
  run_for(2 * kMs);
  EXPECT_EQ(sets_[0]->link_down(0), "device removed");
  EXPECT_EQ(sets_[0]->link_down(1), "");
  EXPECT_TRUE(sets_[0]->link_failure().empty()) << "link 1 still works: the set does";
  EXPECT_EQ(sets_[0]->links_to(2), 0b10u) << "at once, not after a ping timeout";
  send(0, "from the broken side");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[1].count("from the broken side"), 1u);
  EXPECT_EQ(sinks_[2].count("from the broken side"), 1u);
  run_for(kTiming.ping_timeout + kTiming.ping_interval);
  EXPECT_FALSE(sets_[1]->monitor().up(1, 0));
  EXPECT_EQ(sets_[1]->links_to(1), 0b10u);
  send(1, "to the broken side");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[0].count("to the broken side"), 1u);
  EXPECT_EQ(sinks_[2].count("to the broken side"), 1u) << "node 3 by the link up to both";
}

TEST_F(LinkSetTest, EveryLinkBrokenFailsTheSet) {
  open(LinkMode::kActive);
  run_for(500 * kMs);
  nets_[1].break_device(1, "cable pulled");
  run_for(2 * kMs);
  EXPECT_TRUE(sets_[0]->link_failure().empty());
  nets_[0].break_device(1, "device removed");
  run_for(2 * kMs);
  EXPECT_EQ(sets_[0]->link_failure(), "every link failed; link 0: device removed");
}

// Node 1 has no device for link 0 (RDMA missing on its host): it runs on link 1 alone, in the
// same ring, and the others reach it there while using link 0 among themselves.
TEST_F(LinkSetTest, ANodeMissingALinkRunsOnTheOthersInTheSameRing) {
  missing_[0][0] = true;
  open(LinkMode::kPassive);
  EXPECT_EQ(sets_[0]->link(0), nullptr);
  EXPECT_EQ(sets_[0]->link_down(0), "no RDMA device");
  EXPECT_EQ(sets_[0]->links_to(2), 0b10u) << "before any ping: only the link it has";
  run_for(500 * kMs);
  EXPECT_EQ(sets_[1]->links_to(1), 0b10u);
  EXPECT_EQ(sets_[1]->links_to(3), 0b01u);
  send(0, "from the node without");
  send(1, "to everyone");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[1].count("from the node without"), 1u);
  EXPECT_EQ(sinks_[2].count("from the node without"), 1u);
  EXPECT_EQ(sinks_[0].count("to everyone"), 1u) << "the multicast goes on the link up to every peer";
  EXPECT_EQ(sinks_[2].count("to everyone"), 1u);
}

// Every node's address on each of the two links, for `nodes` (addresses are the simulator's own).
std::vector<std::vector<PeerAddress>> nodelist(std::initializer_list<NodeId> nodes) {
  std::vector<PeerAddress> link;
  for (NodeId n : nodes) link.push_back({n, InetAddress::parse(fmt::format("127.0.0.{}", n), 5405).value()});
  return {link, link};
}

// A reload takes node 3 out of nodes 1 and 2's lists, and puts it back: the links to node 2 stay
// up throughout, node 3 is neither heard nor routed to while out, and comes back up on its pings.
TEST_F(LinkSetTest, ANodeTakenOutOfTheNodelistIsNotHeardUntilPutBack) {
  open(LinkMode::kPassive);
  run_for(500 * kMs);
  const auto without_3 = nodelist({1, 2});
  for (std::size_t i : {0u, 1u}) {
    ASSERT_TRUE(sets_[i]->check_peers(without_3).ok());
    sets_[i]->set_peers(without_3);
  }
  EXPECT_TRUE(sets_[0]->monitor().up(2, 0) && sets_[0]->monitor().up(2, 1));
  EXPECT_EQ(sets_[0]->monitor().status(3, 0), nullptr);
  send(2, "from 3");
  send(1, "from 2");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[0].count("from 3"), 0u);
  EXPECT_EQ(sinks_[0].count("from 2"), 1u);
  EXPECT_GT(sets_[0]->link(0)->counters().drop_unknown_sender + sets_[0]->link(1)->counters().drop_unknown_sender, 0u);

  const auto with_3 = nodelist({1, 2, 3});
  for (std::size_t i : {0u, 1u}) sets_[i]->set_peers(with_3);
  EXPECT_FALSE(sets_[0]->monitor().up(3, 0)) << "a node put back starts down";
  run_for(500 * kMs);
  EXPECT_TRUE(sets_[0]->monitor().up(3, 0) && sets_[0]->monitor().up(3, 1));
  send(2, "3 again");
  run_for(5 * kMs);
  EXPECT_EQ(sinks_[0].count("3 again"), 1u);
}

TEST_F(LinkSetTest, RefusesNodelistsThatDisagreeAcrossLinksOrMissALink) {
  open(LinkMode::kPassive);
  auto lists = nodelist({1, 2, 3});
  lists[1].pop_back();
  EXPECT_FALSE(sets_[0]->check_peers(lists).ok());
  lists.pop_back();
  EXPECT_FALSE(sets_[0]->check_peers(lists).ok());
}

TEST(LinkSetOpen, RefusesLinksThatDoNotFit) {
  SimNetwork net(1);
  BackendParams params;
  params.local_node = 1;
  params.cluster_id = kCluster;
  auto with_path = net.attach(params);
  ASSERT_TRUE(with_path.ok());
  LinkSetConfig config;
  config.params = params;
  config.links = {{kTiming, 1}};
  std::vector<std::unique_ptr<Backend>> links;
  links.push_back(std::move(*with_path));
  auto refused = LinkSet::open(config, std::move(links));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(), "link 0 (sim) has a local path of its own");
  EXPECT_EQ(LinkSet::open(config, {}).error().message(),
            "0 links and 1 link settings: 1 to 8 of each, as many of one as of the other");
  std::vector<std::unique_ptr<Backend>> none(1);
  EXPECT_EQ(LinkSet::open(config, std::move(none)).error().message(), "link 0 has no backend, and no reason why");
  config.links[0].missing = "no RDMA device";
  none.resize(1);
  EXPECT_EQ(LinkSet::open(config, std::move(none)).error().message(), "no link opened on this node: no RDMA device");
}

}  // namespace
}  // namespace rtotem::transport
