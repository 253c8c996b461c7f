// The quorum section and nodelist.node.quorum_votes: read as corosync writes them, checked against
// votequorum.5 with the section's line, and what rtotem does not do refused by name.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "src/daemon/config/daemon_config.hpp"

namespace rtotem::config {
namespace {

// Three nodes (node 2 with `votes2`), then a quorum section (line 17 on) holding `quorum`.
std::string with_quorum(std::string_view quorum, std::string_view votes2 = "") {
  return fmt::format(
      "totem {{\n  cluster_name: c\n}}\n"
      "nodelist {{\n"
      "  node {{\n    nodeid: 1\n    ring0_addr: 10.0.0.1\n  }}\n"
      "  node {{\n    nodeid: 2\n    ring0_addr: 10.0.0.2\n    {}\n  }}\n"
      "  node {{\n    nodeid: 3\n    ring0_addr: 10.0.0.3\n  }}\n"
      "}}\n"
      "quorum {{\n{}\n}}\n",
      votes2, quorum);
}

DaemonConfig parsed(std::string_view quorum, std::string_view votes2 = "") {
  auto config = parse_config(with_quorum(quorum, votes2), "t.conf");
  EXPECT_TRUE(config.ok()) << config.error().message();
  return config.ok() ? std::move(*config) : DaemonConfig{};
}

std::string error_of(std::string_view quorum, std::string_view votes2 = "") {
  auto config = parse_config(with_quorum(quorum, votes2), "t.conf");
  return config.ok() ? "<ok>" : config.error().message();
}

TEST(ConfigQuorum, VotequorumWithTheNodelistsVotes) {
  const DaemonConfig config =
      parsed("provider: corosync_votequorum\nlast_man_standing_window: 20000", "quorum_votes: 3");
  ASSERT_TRUE(config.quorum);
  EXPECT_EQ(config.quorum_line, 19);
  EXPECT_EQ(config.quorum->expected_votes, 5u);
  EXPECT_EQ(config.quorum->votes_of(2), 3u);
  EXPECT_EQ(config.quorum->last_man_standing_window_ms, 20000u);
  EXPECT_FALSE(config.quorum->wait_for_all);
}

TEST(ConfigQuorum, EveryVotequorumKeyIsRead) {
  const DaemonConfig config = parsed(
      "provider: corosync_votequorum\nexpected_votes: 4\nwait_for_all: 1\nlast_man_standing: 1\n"
      "auto_tie_breaker: 1\nauto_tie_breaker_node: 3 1");
  ASSERT_TRUE(config.quorum);
  EXPECT_EQ(config.quorum->expected_votes, 4u);
  EXPECT_TRUE(config.quorum->wait_for_all);
  EXPECT_TRUE(config.quorum->last_man_standing);
  EXPECT_EQ(config.quorum->tie_breaker, quorum::TieBreaker::kList);
  EXPECT_EQ(config.quorum->tie_breaker_nodes, (std::vector<membership::NodeId>{3, 1}));
}

TEST(ConfigQuorum, WithoutAProviderThereIsNoQuorumAndTheOperatorIsTold) {
  const DaemonConfig config = parsed("expected_votes: 3");
  EXPECT_FALSE(config.quorum);
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_NE(config.warnings[0].find("t.conf:19: quorum: no provider"), std::string::npos) << config.warnings[0];
}

TEST(ConfigQuorum, WhatVotequorumForbidsIsRefusedWithTheSectionsLine) {
  EXPECT_EQ(error_of("provider: corosync_votequorum\ntwo_node: 1\nauto_tie_breaker: 1"),
            "t.conf:19: quorum.two_node and quorum.auto_tie_breaker cannot both be set: two_node already keeps both "
            "halves quorate and relies on fencing (votequorum.5)");
  EXPECT_EQ(error_of("provider: corosync_votequorum\nlast_man_standing: 1", "quorum_votes: 2"),
            "t.conf:19: quorum.last_man_standing needs every node to have one vote; node 2 has quorum_votes 2 "
            "(votequorum.5)");
  EXPECT_EQ(error_of("provider: corosync_votequorum\nauto_tie_breaker: 1\nauto_tie_breaker_node: 4"),
            "t.conf:19: quorum.auto_tie_breaker_node: node 4 is not in the nodelist");
}

TEST(ConfigQuorum, WhatRtotemDoesNotDoIsRefusedByName) {
  EXPECT_EQ(
      error_of("provider: corosync_votequorum\nallow_downscale: 1"),
      "t.conf:21: quorum.allow_downscale: allow_downscale is not supported by rtotem (remove it, or set it to 0)");
  EXPECT_EQ(error_of("provider: corosync_votequorum\nallow_downscale: 0"), "<ok>");
  EXPECT_NE(error_of("provider: corosync_votequorum\nexpected_votes_tracking: 1").find("not supported"),
            std::string::npos);
  EXPECT_NE(error_of("provider: corosync_qdevice").find("quorum.provider"), std::string::npos);
  EXPECT_NE(error_of("provider: corosync_votequorum\nexpected_votes: 0").find("quorum.expected_votes"),
            std::string::npos);
}

TEST(ConfigQuorum, AQuorumDeviceVotesAsVotequorum5Says) {
  // Three nodes of one vote: the device has two by default, and the expected votes count them.
  const DaemonConfig config = parsed(
      "provider: corosync_votequorum\ndevice {\nmodel: net\ntimeout: 4000\nnet {\nhost: 10.0.0.9\n"
      "algorithm: lms\n}\nheuristics {\nmode: off\n}\n}");
  ASSERT_TRUE(config.quorum && config.quorum->device);
  EXPECT_EQ(config.quorum->device->model, "net");
  EXPECT_EQ(config.quorum->device->votes, 2u);
  EXPECT_EQ(config.quorum->device->timeout_ms, 4000u);
  EXPECT_EQ(config.quorum->device->sync_timeout_ms, 30'000u);
  EXPECT_EQ(config.quorum->expected_votes, 5u);
  EXPECT_TRUE(config.warnings.empty()) << config.warnings[0];
  // Every key is kept for corosync-qdevice, which reads them from cmap.
  auto kept = [&](std::string_view key) {
    return std::ranges::any_of(config.stored_keys, [&](const StoredKey& k) { return k.key == key; });
  };
  EXPECT_TRUE(kept("quorum.device.model") && kept("quorum.device.timeout") && kept("quorum.device.net.host") &&
              kept("quorum.device.net.algorithm") && kept("quorum.device.heuristics.mode"));

  EXPECT_EQ(parsed("provider: corosync_votequorum\ndevice {\nmodel: net\nvotes: 1\n}").quorum->expected_votes, 4u);
  EXPECT_EQ(parsed("provider: corosync_votequorum\nexpected_votes: 7\ndevice {\nmodel: net\nvotes: 1\n}")
                .quorum->expected_votes,
            7u)
      << "the file's expected votes stand";
}

TEST(ConfigQuorum, WhatVotequorumRefusesOfADeviceIsRefused) {
  auto refusal = [](std::string_view quorum, std::string_view votes2 = "") {
    return error_of(fmt::format("provider: corosync_votequorum\n{}", quorum), votes2);
  };
  EXPECT_EQ(refusal("device {\nvotes: 1\n}"), "t.conf:21: quorum.device: no model (corosync-qdevice needs model: net)");
  EXPECT_NE(refusal("two_node: 1\ndevice {\nmodel: net\n}").find("two_node and quorum.device"), std::string::npos);
  EXPECT_NE(refusal("last_man_standing: 1\ndevice {\nmodel: net\n}").find("last_man_standing"), std::string::npos);
  EXPECT_NE(refusal("auto_tie_breaker: 1\ndevice {\nmodel: net\n}").find("auto_tie_breaker"), std::string::npos);
  EXPECT_NE(refusal("expected_votes: 5\ndevice {\nmodel: net\n}").find("quorum.device.votes must be given"),
            std::string::npos);
  EXPECT_NE(refusal("expected_votes: 3\ndevice {\nmodel: net\nvotes: 2\n}").find("too high"), std::string::npos);
  EXPECT_NE(refusal("device {\nmodel: net\n}", "quorum_votes: 2").find("other than one vote"), std::string::npos);
  EXPECT_NE(refusal("device {\nmodel: net\nvotes: 0\n}").find("quorum.device.votes"), std::string::npos);
  EXPECT_NE(refusal("device {\nmodel: net\ntimeout: 0\n}").find("quorum.device.timeout"), std::string::npos);
}

TEST(ConfigQuorum, CorosyncsVotesKeyIsWarnedAboutSinceTheNodelistDecides) {
  const DaemonConfig config = parsed("provider: corosync_votequorum\nvotes: 2");
  ASSERT_TRUE(config.quorum);
  EXPECT_EQ(config.quorum->expected_votes, 3u);
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_NE(config.warnings[0].find("t.conf:21: quorum.votes: ignored"), std::string::npos) << config.warnings[0];
}

}  // namespace
}  // namespace rtotem::config
