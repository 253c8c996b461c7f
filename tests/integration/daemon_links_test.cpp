// rtotemd with two links, link 0 rdma and link 1 udpu, on a host without RDMA (this one): every
// node finds its RDMA link missing, says so, and runs on link 1 in one ring, where a config with
// one rdma link would have fallen back to UDP multicast. In the Soft-RoCE VMs the same config
// runs on both links (tests/rdma/vm_links_test.sh).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string_view>

#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kNodes = 3;

// Two links, link 1 udpu; link 0 `link0` ("rdma" or "udpu"); nodes 1 .. nodes.
std::string two_links(const DaemonCluster& cluster, std::string_view link0 = "rdma", int nodes = kNodes) {
  std::string text = fmt::format(
      "totem {{\n  cluster_name: {}\n  transport: {}\n  token: 1000\n  token_coefficient: 0\n"
      "  interface {{\n    linknumber: 0\n    mcastport: {}\n  }}\n"
      "  interface {{\n    linknumber: 1\n    transport: udpu\n    mcastport: {}\n  }}\n}}\n"
      "logging {{\n  to_stderr: yes\n}}\nnodelist {{\n",
      cluster.cluster_name(), link0, cluster.port(), cluster.port() + 1);
  for (int n = 1; n <= nodes; ++n)
    text += fmt::format("  node {{\n    nodeid: {}\n    ring0_addr: 127.0.0.{}\n    ring1_addr: 127.0.1.{}\n  }}\n", n,
                        n, n);
  return text + "}\n";
}

std::string rdma_and_udp_links(const DaemonCluster& cluster) { return two_links(cluster); }

TEST(DaemonLinks, NodesWithoutRdmaRunOnTheirUdpLinkInOneRing) {
  DaemonCluster cluster(kNodes);
  const std::string path = cluster.dir() + "/links.conf";
  std::ofstream(path) << rdma_and_udp_links(cluster);
  for (int n = 1; n <= kNodes; ++n) cluster.use_config(n, path);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, kNodes, clients));
  ASSERT_NO_FATAL_FAILURE(join_group(clients, "links"));
  for (int i = 0; i < 50; ++i)
    for (std::size_t n = 0; n < clients.size(); ++n)
      ASSERT_EQ(clients[n]->send("links", fmt::format("{}:{}", n, i)), 0);
  ASSERT_TRUE(pump_until(raw(clients), [&] {
    return std::all_of(clients.begin(), clients.end(), [](const auto& c) { return c->messages.size() >= 150; });
  }));
  for (const auto& c : clients) EXPECT_EQ(c->messages, clients[0]->messages);
  for (int n = 1; n <= kNodes; ++n) {
    EXPECT_NE(cluster.log(n).find("link 0 (rdma): no RDMA device"), std::string::npos) << cluster.log(n);
    EXPECT_NE(cluster.log(n).find("this node runs on its other links"), std::string::npos);
    const std::string status = cluster.ctl_json(n, "status");
    EXPECT_NE(status.find("\"0\": {\"transport\": null, \"address\": null, \"out_of_service\": \"no RDMA device"),
              std::string::npos)
        << status;
    EXPECT_NE(status.find("\"1\": {\"transport\": \"udp\""), std::string::npos) << status;
    // Per link: the missing one has no counters, link 1 carried the ring: every message this node
    // multicast went out on it, and its peers' came in on it.
    const std::string stats = cluster.ctl_json(n, "stats");
    const std::size_t links = stats.find("\"links\": {\"0\": null, \"1\": {");
    ASSERT_NE(links, std::string::npos) << stats;
    const std::string link1 = stats.substr(links);
    EXPECT_GT(json_counter(stats, "messages_sent"), 0u) << stats;
    EXPECT_GE(json_counter(link1, "tx_packets"), json_counter(stats, "messages_sent")) << stats;
    EXPECT_GT(json_counter(link1, "rx_packets"), 0u) << stats;
  }
}

// totem.fallback: no asks for RDMA or nothing: a node without it does not start.
TEST(DaemonLinks, WithFallbackOffAMissingRdmaLinkStopsTheStart) {
  DaemonCluster cluster(1);
  const std::string path = cluster.dir() + "/links.conf";
  std::string text = rdma_and_udp_links(cluster);
  text.replace(text.find("  token: 1000\n"), 14, "  token: 1000\n  fallback: no\n");
  std::ofstream(path) << text;
  cluster.use_config(1, path);
  cluster.start(1);
  EXPECT_TRUE(
      eventually([&] { return cluster.log(1).find("not starting (totem.fallback is no)") != std::string::npos; },
                 std::chrono::seconds(10)))
      << cluster.log(1);
}

// Grow and shrink on two links, with no restart: the three add node 4 to their files and reload,
// keeping their ring until node 4 joins, which they then see up by its pings on each link they
// run (link 0 rdma is missing on this host: link 1 only). Node 4 leaves, the three take it out of
// their files and reload: its links' state goes from status and the key store, with no ring
// change but its own leave.
void add_and_remove_node_4(std::string_view link0, int links_up) {
  DaemonCluster cluster(4);
  const std::string path = cluster.dir() + "/links.conf";
  const std::string four = cluster.dir() + "/four.conf";
  std::ofstream(path) << two_links(cluster, link0, 3);
  std::ofstream(four) << two_links(cluster, link0, 4);
  for (int n = 1; n <= 3; ++n) cluster.use_config(n, path);
  cluster.use_config(4, four);
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 3, clients));
  const auto rings = [&] {
    std::uint64_t sum = 0;
    for (int n = 1; n <= 3; ++n) sum += json_counter(cluster.ctl_json(n, "stats"), "rings_installed");
    return sum;
  };
  const auto links_to_4 = [&](int n) {
    const std::string status = cluster.ctl_json(n, "status");
    int up = 0;
    for (std::size_t at = 0; (at = status.find("\"4\": {\"connected\": true", at)) != std::string::npos; ++at) ++up;
    return up;
  };
  const std::uint64_t rings_before = rings();

  std::ofstream(path) << two_links(cluster, link0, 4);
  std::string out;
  ASSERT_EQ(cluster.ctl(2, "reload", out), 0) << out;
  for (int n = 1; n <= 3; ++n)
    EXPECT_NE(out.find(fmt::format("node {}: nodelist: node 4 added", n)), std::string::npos) << out;
  EXPECT_EQ(rings(), rings_before) << "the three re-formed for a reload";
  cluster.start(4);
  ASSERT_TRUE(all_on_ring(clients, {1, 2, 3, 4})) << cluster.log(4);
  for (int n = 1; n <= 3; ++n)
    EXPECT_TRUE(eventually([&] { return links_to_4(n) == links_up; })) << n << ": " << cluster.ctl_json(n, "status");
  ASSERT_NO_FATAL_FAILURE(join_group(clients, "links"));
  for (int i = 0; i < 20; ++i)
    for (std::size_t n = 0; n < clients.size(); ++n)
      ASSERT_EQ(clients[n]->send("links", fmt::format("{}:{}", n, i)), 0);
  ASSERT_TRUE(pump_until(raw(clients), [&] {
    return std::all_of(clients.begin(), clients.end(), [](const auto& c) { return c->messages.size() >= 60; });
  }));
  for (const auto& c : clients) EXPECT_EQ(c->messages, clients[0]->messages);
  out.clear();
  EXPECT_EQ(cluster.ctl(1, "get runtime.links.1.4.connected", out), 0) << out;

  cluster.kill(4, SIGTERM);
  ASSERT_TRUE(all_on_ring(clients, {1, 2, 3}));
  const std::uint64_t rings_three = rings();
  std::ofstream(path) << two_links(cluster, link0, 3);
  out.clear();
  ASSERT_EQ(cluster.ctl(3, "reload", out), 0) << out;
  EXPECT_NE(out.find("node 1: nodelist: node 4 removed"), std::string::npos) << out;
  for (int n = 1; n <= 3; ++n) {
    EXPECT_EQ(cluster.ctl_json(n, "status").find("\"4\": {\"connected\""), std::string::npos)
        << cluster.ctl_json(n, "status");
    out.clear();
    EXPECT_NE(cluster.ctl(n, "get runtime.links.1.4.connected", out), 0) << out;
  }
  EXPECT_EQ(rings(), rings_three) << "a ring change besides node 4's own leave";
}

TEST(DaemonLinks, ANodeIsAddedAndRemovedOnTwoUdpLinksWithAReload) { add_and_remove_node_4("udpu", 2); }

TEST(DaemonLinks, ANodeIsAddedAndRemovedBesideAMissingRdmaLink) { add_and_remove_node_4("rdma", 1); }

}  // namespace
}  // namespace rtotem::testing
