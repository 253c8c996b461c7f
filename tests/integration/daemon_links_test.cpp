// rtotemd with two links, link 0 rdma and link 1 udpu, on a host without RDMA (this one): every
// node finds its RDMA link missing, says so, and runs on link 1 in one ring, where a config with
// one rdma link would have fallen back to UDP multicast. In the Soft-RoCE VMs the same config
// runs on both links (tests/rdma/vm_links_test.sh).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

constexpr int kNodes = 3;

std::string rdma_and_udp_links(const DaemonCluster& cluster) {
  std::string text = fmt::format(
      "totem {{\n  cluster_name: {}\n  transport: rdma\n  token: 1000\n  token_coefficient: 0\n"
      "  interface {{\n    linknumber: 0\n    mcastport: {}\n  }}\n"
      "  interface {{\n    linknumber: 1\n    transport: udpu\n    mcastport: {}\n  }}\n}}\n"
      "logging {{\n  to_stderr: yes\n}}\nnodelist {{\n",
      cluster.cluster_name(), cluster.port(), cluster.port() + 1);
  for (int n = 1; n <= kNodes; ++n)
    text += fmt::format("  node {{\n    nodeid: {}\n    ring0_addr: 127.0.0.{}\n    ring1_addr: 127.0.1.{}\n  }}\n", n,
                        n, n);
  return text + "}\n";
}

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

}  // namespace
}  // namespace rtotem::testing
