// Links in the config, in Corosync 3's syntax: ring0_addr .. ring7_addr, a totem.interface per
// link with its knet_* keys, totem.link_mode. Read and checked with the line to blame; the ping
// timing derived from the token as corosync derives it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "src/daemon/config/daemon_config.hpp"

namespace rtotem::config {
namespace {

using transport::kLinksMax;

// Two nodes; `totem` goes on line 3, node 1's extra keys on line 9, node 2's on line 14.
std::string two_nodes(std::string_view totem, std::string_view node1 = "", std::string_view node2 = "") {
  return fmt::format(
      "totem {{\n  cluster_name: c\n  {}\n}}\n"
      "nodelist {{\n"
      "  node {{\n    nodeid: 1\n    ring0_addr: 10.0.0.1\n    {}\n  }}\n"
      "  node {{\n    nodeid: 2\n    ring0_addr: 10.0.0.2\n    {}\n  }}\n"
      "}}\n",
      totem, node1, node2);
}

constexpr std::string_view kRing1Node1 = "ring1_addr: 10.1.0.1";
constexpr std::string_view kRing1Node2 = "ring1_addr: 10.1.0.2";

DaemonConfig parsed(const std::string& text) {
  auto config = parse_config(text, "t.conf");
  EXPECT_TRUE(config.ok()) << config.error().message();
  return config.ok() ? std::move(*config) : DaemonConfig{};
}

std::string error_of(const std::string& text) {
  auto config = parse_config(text, "t.conf");
  return config.ok() ? "<ok>" : config.error().message();
}

TEST(ConfigLinks, OneLinkByDefaultWithCorosyncsDefaults) {
  const DaemonConfig config = parsed(two_nodes("transport: udp"));
  ASSERT_EQ(config.links.size(), 1u);
  const LinkConfig& link = config.link0();
  EXPECT_EQ(link.number, 0);
  EXPECT_EQ(link.transport, TransportKind::kUdp);
  EXPECT_EQ(link.mcastport, 5405);
  EXPECT_EQ(link.priority, 1);
  EXPECT_EQ(link.pong_count, 2u);
  EXPECT_EQ(config.link_mode, LinkMode::kPassive);
  EXPECT_EQ(config.nodes[1].ring0_addr(), "10.0.0.2");
}

TEST(ConfigLinks, TwoLinksEachWithItsInterface) {
  const DaemonConfig config =
      parsed(two_nodes("transport: rdma\n  link_mode: active\n"
                       "  interface {\n    linknumber: 1\n    transport: udpu\n    knet_link_priority: 5\n"
                       "    knet_ping_interval: 100\n    knet_ping_timeout: 300\n    knet_pong_count: 3\n  }\n"
                       "  interface {\n    mcastport: 6000\n  }",
                       kRing1Node1, kRing1Node2));
  ASSERT_EQ(config.links.size(), 2u);
  EXPECT_EQ(config.link_mode, LinkMode::kActive);
  const LinkConfig& rdma = config.links[0];
  EXPECT_EQ(rdma.number, 0);
  EXPECT_EQ(rdma.transport, TransportKind::kRdma);  // totem.transport
  EXPECT_EQ(rdma.mcastport, 6000);
  EXPECT_EQ(rdma.line, 13);
  const LinkConfig& udp = config.links[1];
  EXPECT_EQ(udp.number, 1);
  EXPECT_EQ(udp.transport, TransportKind::kUdpu);
  EXPECT_EQ(udp.mcastport, 5406);  // 5405 + its number
  EXPECT_EQ(udp.priority, 5);
  EXPECT_EQ(udp.ping_interval_ms, 100u);
  EXPECT_EQ(udp.ping_timeout_ms, 300u);
  EXPECT_EQ(udp.pong_count, 3u);
  EXPECT_EQ(udp.line, 5);
  EXPECT_EQ(config.nodes[0].ring_addrs[1], "10.1.0.1");
}

// As corosync's nodelist: a ringN_addr on every node is a link, with an interface of defaults.
TEST(ConfigLinks, AnAddressOnEveryNodeIsALinkWithoutAnInterface) {
  const DaemonConfig config = parsed(two_nodes("transport: udpu", "ring3_addr: 10.3.0.1", "ring3_addr: 10.3.0.2"));
  ASSERT_EQ(config.links.size(), 2u);
  EXPECT_EQ(config.links[1].number, 3);
  EXPECT_EQ(config.links[1].transport, TransportKind::kUdpu);
  EXPECT_EQ(config.links[1].mcastport, 5408);
  EXPECT_EQ(config.links[1].line, 0);
}

// As pcs writes a two-link knet cluster: the knet keys are the links', knet itself runs as udpu.
TEST(ConfigLinks, ACorosyncConfWithTwoKnetLinksRunsTwoLinks) {
  const DaemonConfig config = parsed(R"(totem {
    version: 2
    cluster_name: hacluster
    transport: knet
    link_mode: passive
    interface {
        linknumber: 0
        knet_transport: udp
        knet_link_priority: 2
    }
    interface {
        linknumber: 1
        knet_transport: udp
        knet_link_priority: 1
        knet_ping_interval: 200
        knet_ping_timeout: 600
    }
}
nodelist {
    node {
        ring0_addr: 192.168.1.11
        ring1_addr: 192.168.2.11
        name: pcmk-1
        nodeid: 1
    }
    node {
        ring0_addr: 192.168.1.12
        ring1_addr: 192.168.2.12
        name: pcmk-2
        nodeid: 2
    }
}
)");
  ASSERT_EQ(config.links.size(), 2u);
  EXPECT_EQ(config.links[0].transport, TransportKind::kUdpu);
  EXPECT_EQ(config.links[1].transport, TransportKind::kUdpu);
  EXPECT_EQ(config.links[0].priority, 2);
  EXPECT_EQ(config.links[1].mcastport, 5406);
  EXPECT_EQ(config.links[1].timing(1000).ping_timeout, 600'000u);
  EXPECT_TRUE(check_links(config, 1000).ok());
  EXPECT_EQ(config.warnings.size(), 3u) << "knet as udpu, and knet_transport twice";
}

TEST(ConfigLinks, EveryNodeHasAnAddressOnEveryLinkAndNoTwoShareOne) {
  EXPECT_EQ(error_of(two_nodes("", kRing1Node1)),
            "t.conf:11: nodelist.node (nodeid 2): no ring1_addr, which node 1 has (line 6): every node needs an "
            "address on every link");
  EXPECT_EQ(error_of(two_nodes("interface {\n    linknumber: 2\n  }", kRing1Node1, kRing1Node2)),
            "t.conf:3: totem.interface: link 2: no node has a ring2_addr");
  EXPECT_EQ(error_of(two_nodes("", kRing1Node1, "ring1_addr: 10.1.0.1")),
            "t.conf:11: nodelist.node (nodeid 2): ring1_addr 10.1.0.1 is also node 1's (line 6)");
  EXPECT_EQ(error_of(two_nodes("", kRing1Node1, "ring1_addr: fd00::2")),
            "t.conf:11: nodelist.node (nodeid 2): ring1_addr fd00::2 is not of the address family of node 1 (line 6): "
            "on a link every node must be IPv4, or every node IPv6");
  // A link may differ in family from another: each link is its own network.
  EXPECT_EQ(parsed(two_nodes("", "ring1_addr: fd00::1", "ring1_addr: fd00::2")).links.size(), 2u);
  // Not a link: kept as any other key rtotem does not use.
  EXPECT_EQ(error_of(two_nodes("", "ring8_addr: 10.8.0.1")), "<ok>");
}

TEST(ConfigLinks, InterfacesAreNumberedOnceEach) {
  EXPECT_EQ(error_of(two_nodes("interface {\n    linknumber: 1\n  }\n  interface {\n    linknumber: 1\n  }",
                               kRing1Node1, kRing1Node2)),
            "t.conf:6: totem.interface: link 1 is also the interface on line 3 (linknumber tells the links apart; it "
            "is 0 when not given)");
  EXPECT_EQ(error_of(two_nodes("interface {\n    linknumber: 8\n  }")),
            "t.conf:4: totem.interface.linknumber: link 8: links are numbered 0 to 7, as ring0_addr .. ring7_addr");
}

TEST(ConfigLinks, LinkModeRoundRobinRunsPassiveWithAWarning) {
  const DaemonConfig config = parsed(two_nodes("link_mode: rr"));
  EXPECT_EQ(config.link_mode, LinkMode::kPassive);
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_EQ(config.warnings[0], "t.conf:3: totem.link_mode: rr: rtotem has no round robin, using passive");
  EXPECT_EQ(error_of(two_nodes("link_mode: both")),
            "t.conf:3: totem.link_mode: 'both' is not one of: passive, active, rr");
}

// corosync's calc_knet_ping_timers: timeout token / pong_count, interval half that, each only
// where the file gives none; 0 for pong count or precision asks for the default.
TEST(ConfigLinks, PingTimingIsDerivedFromTheTokenWhereNotGiven) {
  LinkConfig link;
  transport::LinkTiming timing = link.timing(1000);
  EXPECT_EQ(timing.ping_timeout, 500'000u);
  EXPECT_EQ(timing.ping_interval, 250'000u);
  link.pong_count = 5;
  link.ping_interval_ms = 100;
  timing = link.timing(3000);
  EXPECT_EQ(timing.ping_timeout, 600'000u);
  EXPECT_EQ(timing.ping_interval, 100'000u);
  EXPECT_EQ(timing.pong_count, 5u);
  const DaemonConfig zeros = parsed(two_nodes("interface {\n    knet_pong_count: 0\n    knet_ping_precision: 0\n  }"));
  EXPECT_EQ(zeros.link0().pong_count, 2u);
  EXPECT_EQ(zeros.link0().ping_precision, 2048u);
}

TEST(ConfigLinks, CheckLinksRefusesATimingThatCannotWork) {
  const DaemonConfig bad =
      parsed(two_nodes("interface {\n    knet_ping_interval: 400\n    knet_ping_timeout: 400\n  }"));
  auto refused = check_links(bad, 1000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "t.conf:3: totem.interface (link 0): ping timeout 400 ms is not longer than the "
            "ping interval 400 ms: a link that answers every ping would still go down "
            "between two of them");
  // Derived from a token too short to split: 3 ms / (2 x 2) is 0.
  EXPECT_EQ(check_links(parsed(two_nodes("")), 3).error().message(),
            "t.conf: link 0: ping interval 0: a link would be pinged without pause");
  EXPECT_TRUE(check_links(parsed(two_nodes("")), 1000).ok());
  EXPECT_TRUE(check_links(parsed(two_nodes("transport: rdma")), 1000).ok()) << "one rdma link runs alone";
  EXPECT_TRUE(check_links(parsed(two_nodes("", kRing1Node1, kRing1Node2)), 1000).ok());
  EXPECT_TRUE(check_links(parsed(two_nodes("transport: rdma", kRing1Node1, kRing1Node2)), 1000).ok())
      << "rdma beside a udp link";
}

TEST(ConfigLinks, AnRdmaLinkBesideAUdpLinkHasEachItsOwnAddresses) {
  const DaemonConfig config = parsed(two_nodes(
      "transport: rdma\n  interface {\n    linknumber: 1\n    transport: udpu\n  }", kRing1Node1, kRing1Node2));
  auto rdma = rdma_config_for(config, config.nodes[0], 0);
  ASSERT_TRUE(rdma.ok()) << rdma.error().message();
  auto udp = udp_config_for(config, config.nodes[0], 1);
  ASSERT_TRUE(udp.ok()) << udp.error().message();
  EXPECT_EQ(rdma->bind.host_string(), config.nodes[0].ring_addrs[0]);
  EXPECT_EQ(udp->bind.host_string(), config.nodes[0].ring_addrs[1]);
  EXPECT_EQ(rdma->peers[1].address.host_string(), config.nodes[1].ring_addrs[0]);
  EXPECT_EQ(rdma_config_for(config, config.nodes[0], 1).error().message(), "t.conf: transport is udpu, not rdma");
}

}  // namespace
}  // namespace rtotem::config
