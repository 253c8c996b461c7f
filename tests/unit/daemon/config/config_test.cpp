// rtotemd's config file: the generic tree, every key into its field, every kind of refusal with its
// line and key, corosync's keys warned about, the node choice, the UDP backend's config, hostile
// input, and every example file in conf/ and tests/data/. One file, past 400 lines: tests/meson.build
// names this file alone for the config.
#include "src/daemon/config/config_tree.hpp"
#include "src/daemon/config/daemon_config.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "transport/wire_header.hpp"

namespace rtotem::config {
namespace {

namespace fs = std::filesystem;
using transport::InetAddress;

// One valid file; each `extra` is one line put into its section, at the line named in the comment.
struct Extra {
  std::string_view totem;    // line 3
  std::string_view node1;    // line 9
  std::string_view logging;  // line 17
  std::string_view ipc;      // line 20
};

std::string config_text(const Extra& extra = {}) {
  return fmt::format(
      "totem {{\n"
      "  cluster_name: test\n"
      "  {}\n"
      "}}\n"
      "nodelist {{\n"
      "  node {{\n"
      "    nodeid: 1\n"
      "    ring0_addr: 10.0.0.1\n"
      "    {}\n"
      "  }}\n"
      "  node {{\n"
      "    nodeid: 2\n"
      "    ring0_addr: 10.0.0.2\n"
      "  }}\n"
      "}}\n"
      "logging {{\n"
      "  {}\n"
      "}}\n"
      "ipc {{\n"
      "  {}\n"
      "}}\n",
      extra.totem, extra.node1, extra.logging, extra.ipc);
}

DaemonConfig parsed(std::string_view text) {
  auto config = parse_config(text, "t.conf");
  EXPECT_TRUE(config.ok()) << config.error().message();
  return config.ok() ? std::move(*config) : DaemonConfig{};
}

// The refusal's message, or "<ok>".
std::string error_of(std::string_view text) {
  auto config = parse_config(text, "t.conf");
  return config.ok() ? "<ok>" : config.error().message();
}

std::string tree_error_of(std::string_view text) {
  auto tree = parse_config_tree(text, "t.conf");
  return tree.ok() ? "<ok>" : tree.error().message();
}

InetAddress address(std::string_view host, std::uint16_t port = 0) {
  auto parsed_address = InetAddress::parse(host, port);
  EXPECT_TRUE(parsed_address.ok());
  return parsed_address.ok() ? *parsed_address : InetAddress{};
}

// The source tree's root, from this file's path as the compiler was given it: absolute, or
// relative to the build directory, which is the working directory under `meson test` and an
// ancestor of this binary.
fs::path source_root() {
  const fs::path self = __FILE__;  // <root>/tests/unit/daemon/config/config_test.cpp
  std::error_code ec;
  std::vector<fs::path> bases = {fs::current_path(ec)};
  for (fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    bases.push_back(dir);
    if (dir == dir.root_path()) break;
  }
  for (const fs::path& base : bases) {
    const fs::path candidate = self.is_absolute() ? self : base / self;
    if (!fs::exists(candidate, ec)) continue;
    for (fs::path root = candidate.parent_path(); !root.empty() && root != root.root_path(); root = root.parent_path())
      if (fs::exists(root / "meson_options.txt", ec)) return root;
  }
  ADD_FAILURE() << "cannot find " << self << " from the working directory or the test binary";
  return {};
}

DaemonConfig loaded(const fs::path& relative) {
  auto config = load_config((source_root() / relative).string());
  EXPECT_TRUE(config.ok()) << config.error().message();
  return config.ok() ? std::move(*config) : DaemonConfig{};
}

bool contains(const std::vector<std::string>& lines, std::string_view text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) { return line == text; });
}

// ---- The generic tree ---------------------------------------------------------------------------

TEST(ConfigTree, ReadsNestedSectionsEntriesAndTheirLines) {
  auto tree = parse_config_tree("# top\n\na {\n  k: v\n  b {\n    x: 1\n  }\n}\n", "t.conf");
  ASSERT_TRUE(tree.ok()) << tree.error().message();
  ASSERT_EQ(tree->sections.size(), 1u);
  const ConfigSection& a = tree->sections[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.line, 3);
  ASSERT_EQ(a.entries.size(), 1u);
  EXPECT_EQ(a.entries[0].key, "k");
  EXPECT_EQ(a.entries[0].value, "v");
  EXPECT_EQ(a.entries[0].line, 4);
  ASSERT_EQ(a.sections.size(), 1u);
  EXPECT_EQ(a.sections[0].name, "b");
  EXPECT_EQ(a.sections[0].line, 5);
  EXPECT_EQ(a.sections[0].entries[0].line, 6);
}

TEST(ConfigTree, ValueIsTheRestOfTheLineTrimmed) {
  auto tree = parse_config_tree(
      "s{\r\n\tpath:   /var/log/my dir/x.log  \r\n url: http://h:1/#a\n empty:\n # only: a comment\n}", "t.conf");
  ASSERT_TRUE(tree.ok()) << tree.error().message();
  const auto& entries = tree->sections[0].entries;
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].value, "/var/log/my dir/x.log");
  EXPECT_EQ(entries[1].value, "http://h:1/#a");  // first ':' splits; '#' inside a value stays
  EXPECT_EQ(entries[2].value, "");
}

TEST(ConfigTree, RefusalsNameFileLineAndWhat) {
  EXPECT_EQ(tree_error_of("a {\n}\n}\n"), "t.conf:3: '}' closes no open section");
  EXPECT_EQ(tree_error_of("a {\n b {\n }\n"), "t.conf:1: section 'a' is never closed (end of file; a '}' is missing)");
  EXPECT_EQ(tree_error_of("a {\n just words\n}\n"),
            "t.conf:2: expected \"key: value\", \"name {\" or \"}\", got 'just words'");
  EXPECT_EQ(tree_error_of("a {\n : v\n}\n"), "t.conf:2: empty key");
  EXPECT_EQ(tree_error_of("{\n}\n"), "t.conf:1: empty section name");
  EXPECT_EQ(tree_error_of("a {\n my key: v\n}\n"),
            "t.conf:2: key 'my key': only letters, digits, '_', '-' and '.' are allowed");
  EXPECT_EQ(tree_error_of("a { k: v }\n"), "t.conf:1: '{' must end a \"name {\" line and '}' stand alone on its line");
  EXPECT_EQ(tree_error_of("a {\n k: 1\n\n k: 2\n}\n"), "t.conf:4: key 'k' repeated (first on line 2)");
  EXPECT_EQ(tree_error_of("a {\n k: v\x01\n}\n"), "t.conf:2: control character 0x01 in the line");
  EXPECT_EQ(tree_error_of(std::string("a {\n k: \0\n}\n", 12)), "t.conf:2: control character 0x00 in the line");
}

TEST(ConfigTree, BoundsDepthKeysAndSize) {
  std::string deep;
  for (std::size_t i = 0; i <= kSectionDepthMax; ++i) deep += "s {\n";
  EXPECT_NE(tree_error_of(deep).find("nests deeper than"), std::string::npos);
  std::string keys = "s {\n";
  for (std::size_t i = 0; i <= kKeysPerSectionMax; ++i) keys += fmt::format("k{}: v\n", i);
  EXPECT_NE(tree_error_of(keys + "}\n").find("more than 256 keys"), std::string::npos);
  EXPECT_NE(tree_error_of(std::string(kConfigBytesMax + 1, '\n')).find("more than"), std::string::npos);
}

// ---- Every key into its field -------------------------------------------------------------------

TEST(DaemonConfig, DefaultsWhereTheFileIsSilent) {
  const DaemonConfig config = parsed(config_text());
  const DaemonConfig defaults;
  EXPECT_EQ(config.path, "t.conf");
  EXPECT_EQ(config.cluster_name, "test");
  EXPECT_EQ(config.link0().transport, TransportKind::kUdpu);
  EXPECT_EQ(config.totem.token_timeout_ms, defaults.totem.token_timeout_ms);
  EXPECT_EQ(config.totem.token_retransmit_ms, 0u);  // derived by resolved(), in the daemon
  EXPECT_EQ(config.netmtu, 1400u);
  EXPECT_EQ(config.link0().mcastaddr, "239.192.0.1");
  EXPECT_EQ(config.link0().mcastport, 5405);
  EXPECT_EQ(config.link0().ttl, 1);
  EXPECT_EQ(config.ipc.name, "rtotem");
  EXPECT_EQ(config.ipc.client_queue_bytes, 64u << 20);
  EXPECT_TRUE(config.logging.to_stderr);
  EXPECT_TRUE(config.warnings.empty());
}

TEST(DaemonConfig, EveryKeyMapsToItsField) {
  const DaemonConfig config = parsed(R"(totem {
  version: 2
  cluster_name: prod east
  transport: udp
  token: 5000
  token_retransmits_before_loss_const: 6
  token_retransmit: 800
  hold: 600
  join: 70
  send_join: 30
  consensus: 6100
  merge: 250
  fail_recv_const: 3000
  fail_recv_ms: 9000
  window_size: 60
  max_messages: 20
  send_queue_max: 2048
  max_message_size: 500000
  netmtu: 9000
  interface {
    ringnumber: 0
    bindnetaddr: 10.0.0.0
    mcastaddr: 239.1.2.3
    mcastport: 6000
    ttl: 4
  }
}
nodelist {
  node {
    nodeid: 7
    name: seven
    ring0_addr: 10.0.0.7
  }
  node {
    nodeid: 3
    name: three
    ring0_addr: 10.0.0.3
  }
}
logging {
  to_stderr: off
  to_syslog: true
  to_logfile: yes
  logfile: /var/log/rtotem/a b.log
  syslog_facility: local3
  debug: on
  timestamp: no
  blackbox: off
}
ipc {
  name: rtotem-2
  client_queue_bytes: 1048576
  total_queue_bytes: 3000000
  max_clients: 17
}
)");
  EXPECT_EQ(config.cluster_name, "prod east");
  EXPECT_EQ(config.link0().transport, TransportKind::kUdp);
  EXPECT_EQ(config.totem.token_timeout_ms, 5000u);
  EXPECT_EQ(config.totem.token_retransmits_before_loss, 6u);
  EXPECT_EQ(config.totem.token_retransmit_ms, 800u);
  EXPECT_EQ(config.totem.token_hold_ms, 600u);
  EXPECT_EQ(config.totem.join_ms, 70u);
  EXPECT_EQ(config.totem.send_join_ms, 30u);
  EXPECT_EQ(config.totem.consensus_ms, 6100u);
  EXPECT_EQ(config.totem.merge_ms, 250u);
  EXPECT_EQ(config.totem.fail_recv_const, 3000u);
  EXPECT_EQ(config.totem.fail_recv_ms, 9000u);
  EXPECT_EQ(config.totem.window_size, 60u);
  EXPECT_EQ(config.totem.max_messages, 20u);
  EXPECT_EQ(config.totem.send_queue_max, 2048u);
  EXPECT_EQ(config.totem.max_message_size, 500000u);
  EXPECT_EQ(config.netmtu, 9000u);
  EXPECT_EQ(config.link0().bindnetaddr, "10.0.0.0");
  EXPECT_EQ(config.link0().mcastaddr, "239.1.2.3");
  EXPECT_EQ(config.link0().mcastport, 6000);
  EXPECT_EQ(config.link0().ttl, 4);
  ASSERT_EQ(config.nodes.size(), 2u);  // sorted by nodeid
  EXPECT_EQ(config.nodes[0].nodeid, 3u);
  EXPECT_EQ(config.nodes[0].name, "three");
  EXPECT_EQ(config.nodes[0].ring0_addr(), "10.0.0.3");
  EXPECT_EQ(config.nodes[0].line, 34);
  EXPECT_EQ(config.nodes[1].nodeid, 7u);
  EXPECT_EQ(config.nodes[1].line, 29);
  EXPECT_FALSE(config.logging.to_stderr);
  EXPECT_TRUE(config.logging.to_syslog);
  EXPECT_TRUE(config.logging.to_logfile);
  EXPECT_EQ(config.logging.logfile, "/var/log/rtotem/a b.log");
  EXPECT_EQ(config.logging.syslog_facility, "local3");
  EXPECT_TRUE(config.logging.debug);
  EXPECT_FALSE(config.logging.timestamp);
  EXPECT_FALSE(config.logging.blackbox);
  EXPECT_EQ(config.ipc.name, "rtotem-2");
  EXPECT_EQ(config.ipc.client_queue_bytes, 1048576u);
  EXPECT_EQ(config.ipc.queue_budget(), 3000000u);
  EXPECT_EQ(config.ipc.max_clients, 17u);
  EXPECT_TRUE(config.warnings.empty());
}

TEST(DaemonConfig, TransportsAndLinknumber) {
  EXPECT_EQ(parsed(config_text({.totem = "transport: udpu"})).link0().transport, TransportKind::kUdpu);
  EXPECT_EQ(parsed(config_text({.totem = "transport: rdma"})).link0().transport, TransportKind::kRdma);
  EXPECT_EQ(parsed(config_text({.totem = "interface {\n linknumber: 0\n}"})).link0().mcastport, 5405);
  EXPECT_EQ(describe(TransportKind::kUdp), "udp");
  EXPECT_EQ(describe(TransportKind::kUdpu), "udpu");
  EXPECT_EQ(describe(TransportKind::kRdma), "rdma");
}

TEST(DaemonConfig, Ring0AddrMayBeIpv6OrAHostName) {
  const DaemonConfig v6 = parsed(R"(totem {
  cluster_name: v6
}
nodelist {
  node {
    nodeid: 1
    ring0_addr: fd00::1
  }
}
)");
  ASSERT_EQ(v6.nodes.size(), 1u);
  EXPECT_EQ(v6.nodes[0].ring0_addr(), "fd00::1");
  const DaemonConfig named =
      parsed("totem {\ncluster_name: n\n}\nnodelist {\nnode {\nnodeid: 1\nring0_addr: localhost\n}\n}\n");
  ASSERT_EQ(named.nodes.size(), 1u);
  EXPECT_EQ(named.nodes[0].ring0_addr(), "localhost");
}

// ---- Refusals: file, line, key, and what is allowed ---------------------------------------------

TEST(DaemonConfigRefusal, ValuesOutOfRangeOrOfTheWrongType) {
  EXPECT_EQ(error_of(config_text({.totem = "token: 5"})), "t.conf:3: totem.token: 5 is out of range [10, 600000] ms");
  EXPECT_EQ(error_of(config_text({.totem = "token: 3s"})),
            "t.conf:3: totem.token: '3s' is not a number (allowed: [10, 600000] ms)");
  EXPECT_EQ(error_of(config_text({.totem = "token: -1"})),
            "t.conf:3: totem.token: '-1' is not a number (allowed: [10, 600000] ms)");
  EXPECT_EQ(error_of(config_text({.totem = "token: 99999999999999999999999"})),
            "t.conf:3: totem.token: 99999999999999999999999 is out of range [10, 600000] ms");
  EXPECT_EQ(error_of(config_text({.totem = "window_size: 2000"})),
            "t.conf:3: totem.window_size: 2000 is out of range [1, 1024] messages");
  EXPECT_EQ(error_of(config_text({.totem = "netmtu: 100"})),
            "t.conf:3: totem.netmtu: 100 is out of range [256, 65000] bytes");
  EXPECT_EQ(error_of(config_text({.totem = "version: 3"})), "t.conf:3: totem.version: '3': the only version is 2");
  EXPECT_EQ(error_of(config_text({.totem = "transport: tcp"})),
            "t.conf:3: totem.transport: 'tcp' is not one of: udp, udpu, rdma, knet");
  EXPECT_EQ(error_of(config_text({.logging = "to_syslog: maybe"})),
            "t.conf:17: logging.to_syslog: 'maybe' is not one of: on, yes, true, off, no, false");
  EXPECT_EQ(error_of(config_text({.logging = "syslog_facility: kern"})),
            "t.conf:17: logging.syslog_facility: 'kern' is not one of: daemon, user, local0, local1, local2, local3, "
            "local4, local5, local6, local7");
  EXPECT_EQ(error_of(config_text({.logging = "logfile:"})), "t.conf:17: logging.logfile: empty value");
  EXPECT_EQ(error_of(config_text({.ipc = "name: a/b"})),
            "t.conf:20: ipc.name: 'a/b': 1 to 64 letters, digits, '_', '-' or '.'");
  EXPECT_EQ(error_of(config_text({.ipc = "max_clients: 0"})),
            "t.conf:20: ipc.max_clients: 0 is out of range [1, 4096]");
}

TEST(DaemonConfigRefusal, InterfaceValues) {
  auto with_interface = [](std::string_view line) {
    return error_of(config_text({.totem = fmt::format("interface {{\n{}\n}}", line)}));
  };
  // The interface opens on line 3; its key is on line 4.
  EXPECT_EQ(with_interface("linknumber: 8"),
            "t.conf:4: totem.interface.linknumber: link 8: links are numbered 0 to "
            "7, as ring0_addr .. ring7_addr");
  EXPECT_EQ(with_interface("linknumber: 1"), "t.conf:3: totem.interface: link 1: no node has a ring1_addr");
  EXPECT_EQ(with_interface("transport: tcp"),
            "t.conf:4: totem.interface.transport: 'tcp' is not one of: udp, udpu, "
            "rdma, knet");
  EXPECT_EQ(with_interface("knet_pong_count: 256"),
            "t.conf:4: totem.interface.knet_pong_count: 256 is out of range "
            "[0, 255] pongs");
  EXPECT_EQ(with_interface("mcastaddr: 10.0.0.1"),
            "t.conf:4: totem.interface.mcastaddr: 10.0.0.1 is not a multicast "
            "address");
  EXPECT_EQ(with_interface("mcastport: 70000"),
            "t.conf:4: totem.interface.mcastport: 70000 is out of range [1, 65535]");
  EXPECT_EQ(with_interface("ttl: 0"), "t.conf:4: totem.interface.ttl: 0 is out of range [1, 255] hops");
  EXPECT_EQ(error_of(config_text({.totem = "interface {\n}\ninterface {\n}"})),
            "t.conf:5: totem.interface: link 0 is also the interface on line 3 (linknumber tells the links apart; it "
            "is 0 when not given)");
}

std::vector<std::pair<std::string, std::string>> kept(const DaemonConfig& config) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const StoredKey& k : config.stored_keys) out.emplace_back(k.key, k.value);
  return out;
}

using KeptList = std::vector<std::pair<std::string, std::string>>;

// As corosync stores every key of its file in cmap: pcs's totem.cluster_uuid, a typo, a section
// of another program's. They load; one warning names them all, with their lines.
TEST(DaemonConfigKept, KeysRtotemDoesNotUseAreKeptUnderTheirCmapNamesWithOneWarning) {
  const DaemonConfig config = parsed("cluster {\n  a: b\n}\n" + config_text({.totem = "tokne: 3000",
                                                                             .node1 = "address: 10.0.0.9",
                                                                             .logging = "target {\n  x: 1\n}",
                                                                             .ipc = "crypto_cipher: aes256"}));
  EXPECT_EQ(kept(config), (KeptList{{"cluster.a", "b"},
                                    {"ipc.crypto_cipher", "aes256"},
                                    {"logging.target.x", "1"},
                                    {"nodelist.node.0.address", "10.0.0.9"},
                                    {"totem.tokne", "3000"}}));
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_EQ(config.warnings[0],
            "t.conf:2: not used by rtotem, kept in the key store as corosync keeps them in cmap: cluster.a (line 2), "
            "totem.tokne (line 6), nodelist.node.0.address (line 12), logging.target.x (line 21), ipc.crypto_cipher "
            "(line 25)");
  const DaemonConfig clean = parsed(config_text());
  EXPECT_TRUE(clean.stored_keys.empty());
  EXPECT_TRUE(clean.warnings.empty());
}

TEST(DaemonConfigKept, SectionsWithinSectionsKeepTheirPathAndALaterValueWins) {
  const DaemonConfig config = parsed(config_text({.totem = "ring {\n  depth {\n    k: v\n  }\n}\n"
                                                           "interface {\n  mtu: 1500\n  member {\n    memberaddr: "
                                                           "10.0.0.1\n  }\n}"}) +
                                     "extra {\n  a: 1\n}\nextra {\n  a: 2\n}\n");
  EXPECT_EQ(kept(config), (KeptList{{"extra.a", "2"},
                                    {"totem.interface.member.memberaddr", "10.0.0.1"},
                                    {"totem.interface.mtu", "1500"},
                                    {"totem.ring.depth.k", "v"}}));
  EXPECT_EQ(config.warnings.size(), 1u);
}

// cmap numbers nodes as config_keys does, in nodeid order, whatever the file's order.
TEST(DaemonConfigKept, ANodesKeysFollowItsPlaceInNodeidOrder) {
  const DaemonConfig config = parsed(
      "totem {\n  cluster_name: t\n}\nnodelist {\n"
      "  node {\n    nodeid: 2\n    ring0_addr: 10.0.0.2\n    second: x\n  }\n"
      "  node {\n    nodeid: 1\n    ring0_addr: 10.0.0.1\n    first: y\n  }\n"
      "  flavour: plain\n}\n");
  EXPECT_EQ(kept(config),
            (KeptList{{"nodelist.flavour", "plain"}, {"nodelist.node.0.first", "y"}, {"nodelist.node.1.second", "x"}}));
}

// What corosync refuses too, and the runtime keys that are the daemon's.
TEST(DaemonConfigRefusal, WhatCorosyncRefusesStaysAnError) {
  EXPECT_EQ(error_of("cluster_name: x\n" + config_text()), "t.conf:1: key 'cluster_name' outside any section");
  EXPECT_EQ(error_of(config_text() + "totem {\n}\n"), "t.conf:22: second totem section (first on line 1)");
  EXPECT_EQ(error_of(config_text() + "runtime {\n  a: b\n}\n"),
            "t.conf:22: section runtime: runtime.* keys are the running daemon's, not the file's");
}

TEST(DaemonConfigRefusal, MissingRequiredParts) {
  EXPECT_EQ(error_of("nodelist {\nnode {\nnodeid: 1\nring0_addr: 10.0.0.1\n}\n}\n"),
            "t.conf: no totem section (cluster_name is required)");
  EXPECT_EQ(error_of("totem {\n  version: 2\n}\n"), "t.conf:1: totem: cluster_name is required");
  EXPECT_EQ(error_of("totem {\ncluster_name: a\n}\n"), "t.conf: no nodelist section (at least one node is required)");
  EXPECT_EQ(error_of("totem {\ncluster_name: a\n}\nnodelist {\n}\n"),
            "t.conf:4: nodelist: no node (at least one is required)");
  EXPECT_EQ(error_of("totem {\ncluster_name: a\n}\nnodelist {\nnode {\nring0_addr: 10.0.0.1\n}\n}\n"),
            "t.conf:5: nodelist.node: nodeid is required");
  EXPECT_EQ(error_of("totem {\ncluster_name: a\n}\nnodelist {\nnode {\nnodeid: 4\n}\n}\n"),
            "t.conf:5: nodelist.node (nodeid 4): ring0_addr is required");
  EXPECT_EQ(error_of(config_text({.logging = "to_logfile: yes"})),
            "t.conf:16: logging: to_logfile is on but no logfile is given");
}

// `text` with its first `from` replaced by `to`.
std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(DaemonConfigRefusal, NodesMustDifferInIdAddressAndName) {
  const std::string text = config_text();
  EXPECT_EQ(error_of(replaced(text, "nodeid: 2", "nodeid: 0")),
            "t.conf:12: nodelist.node.nodeid: 0 is out of range [1, 2147483647]");
  EXPECT_EQ(error_of(replaced(text, "nodeid: 2", "nodeid: 2147483648")),
            "t.conf:12: nodelist.node.nodeid: 2147483648 is out of range [1, 2147483647]");
  EXPECT_EQ(error_of(replaced(text, "nodeid: 2", "nodeid: 1")),
            "t.conf:11: nodelist.node: nodeid 1 is also the node on line 6");
  EXPECT_EQ(error_of(replaced(text, "ring0_addr: 10.0.0.2", "ring0_addr: 10.0.0.1")),
            "t.conf:11: nodelist.node (nodeid 2): ring0_addr 10.0.0.1 is also node 1's (line 6)");
  EXPECT_EQ(error_of(replaced(text, "ring0_addr: 10.0.0.2", "ring0_addr: fd00::2")),
            "t.conf:11: nodelist.node (nodeid 2): ring0_addr fd00::2 is not of the address family of node 1 (line 6): "
            "on a link every node must be IPv4, or every node IPv6");
  EXPECT_EQ(error_of(replaced(config_text({.node1 = "name: a"}), "nodeid: 2", "nodeid: 2\n    name: a")),
            "t.conf:11: nodelist.node (nodeid 2): name 'a' is also node 1's (line 6)");
}

TEST(DaemonConfigRefusal, UnresolvableRing0AddrNamesTheNodeAndLine) {
  const std::string message = error_of(replaced(config_text(), "ring0_addr: 10.0.0.2", "ring0_addr: nosuch.invalid"));
  EXPECT_EQ(message.rfind("t.conf:11: node 2: ring0_addr: cannot resolve 'nosuch.invalid'", 0), 0u) << message;
}

TEST(DaemonConfigRefusal, AtMostOneRingOfNodes) {
  std::string text = "totem {\ncluster_name: big\n}\nnodelist {\n";
  for (int id = 1; id <= 65; ++id) text += fmt::format("node {{\nnodeid: {}\nring0_addr: 10.1.0.{}\n}}\n", id, id);
  EXPECT_EQ(error_of(text + "}\n"), "t.conf:261: nodelist: more than 64 nodes, the most one ring holds");
}

TEST(DaemonConfigRefusal, ClientQueueHoldsOneLargestMessage) {
  EXPECT_EQ(error_of(config_text({.ipc = "client_queue_bytes: 1114112"})), "<ok>");
  EXPECT_EQ(error_of(config_text({.ipc = "client_queue_bytes: 1114111"})),
            "t.conf:19: ipc.client_queue_bytes 1114111 cannot hold one event of totem.max_message_size 1048576 (+65536 "
            "bytes of headers)");
  // The budget of all queues holds at least one; by default 256 MiB, or twice one queue if more.
  EXPECT_EQ(error_of(config_text({.ipc = "client_queue_bytes: 2097152\n  total_queue_bytes: 2097152"})), "<ok>");
  EXPECT_EQ(error_of(config_text({.ipc = "client_queue_bytes: 2097152\n  total_queue_bytes: 2097151"})),
            "t.conf:19: ipc.total_queue_bytes 2097151 is below ipc.client_queue_bytes 2097152: it must hold one "
            "client's queue (twice that lets a client reach its own limit)");
  EXPECT_EQ(parsed(config_text()).ipc.queue_budget(), 256u << 20);
  EXPECT_EQ(parsed(config_text({.ipc = "client_queue_bytes: 1073741824"})).ipc.queue_budget(), std::size_t{2} << 30);
  // Without an ipc section the default queue is checked too, blaming totem.
  EXPECT_EQ(
      error_of("totem {\ncluster_name: a\nmax_message_size: 67108864\n}\nnodelist {\nnode {\nnodeid: 1\n"
               "ring0_addr: 10.0.0.1\n}\n}\n"),
      "t.conf:1: ipc.client_queue_bytes 67108864 cannot hold one event of totem.max_message_size 67108864 (+65536 "
      "bytes of headers)");
}

// ---- Corosync's keys: accepted, with a warning --------------------------------------------------

TEST(DaemonConfigWarning, CorosyncKeysAndSectionsAreWarnedInLineOrder) {
  const DaemonConfig config = parsed(R"(totem {
  cluster_name: c
  transport: knet
  crypto_hash: sha256
  knet_pmtud_interval: 30
  interface {
    knet_link_priority: 1
    broadcast: no
  }
}
quorum {
  provider: corosync_votequorum
}
nodelist {
  node {
    nodeid: 1
    ring0_addr: 10.0.0.1
    ring1_addr: 10.1.0.1
  }
}
logging {
  fileline: off
  debug: trace
  timestamp: hires
  logger_subsys {
    subsys: QUORUM
  }
}
)");
  EXPECT_EQ(config.link0().transport, TransportKind::kUdpu);
  ASSERT_TRUE(config.quorum) << "quorum { provider: corosync_votequorum } is read, not ignored";
  EXPECT_EQ(config.quorum->expected_votes, 1u);
  EXPECT_TRUE(config.logging.debug);
  EXPECT_TRUE(config.logging.timestamp);
  const std::vector<std::string> expected = {
      "t.conf:3: totem.transport: knet: using udpu (rtotem has no knet)",
      "t.conf:4: totem.crypto_hash: sha256: rtotem seals packets with XChaCha20-Poly1305 (crypto on, key from "
      "totem.keyfile); corosync would authenticate them only",
      "t.conf:5: totem.knet_pmtud_interval: ignored (corosync key rtotem does not support)",
      "t.conf:8: totem.interface.broadcast: ignored (corosync key rtotem does not support)",
      "t.conf:22: logging.fileline: ignored (corosync key rtotem does not support)",
      "t.conf:23: logging.debug: trace: accepted as on (rtotem has no trace level)",
      "t.conf:24: logging.timestamp: hires: accepted as on (rtotem's timestamps have one precision)",
      "t.conf:25: section logging.logger_subsys: ignored with all it holds (corosync section rtotem does not support)",
  };
  EXPECT_EQ(config.warnings, expected);
}

// ---- Which node this daemon is ------------------------------------------------------------------

std::string three_nodes(std::string_view transport) {
  return fmt::format(
      "totem {{\ncluster_name: trio\ntransport: {}\ninterface {{\nmcastaddr: 239.192.9.9\n"
      "mcastport: 6000\nttl: 3\n}}\n}}\nnodelist {{\n"
      "node {{\nnodeid: 1\nring0_addr: 10.0.0.1\n}}\n"
      "node {{\nnodeid: 2\nring0_addr: 10.0.0.2\n}}\n"
      "node {{\nnodeid: 3\nring0_addr: 10.0.0.3\n}}\n}}\n",
      transport);
}

// As corosync's totemconfig: token + (nodes - 2) x token_coefficient past two nodes, and what
// derives from the token derives from the sum; the file's own totem.token stays as written.
TEST(DaemonConfig, TokenGrowsByTheCoefficientForEachNodeBeyondTwoAsInCorosync) {
  const DaemonConfig three = parsed(three_nodes("udpu"));
  EXPECT_EQ(three.totem.token_timeout_ms, 3000u);
  auto in_force = three.totem_in_force().resolved();
  ASSERT_TRUE(in_force.ok());
  EXPECT_EQ(in_force->token_timeout_ms, 3650u);
  EXPECT_EQ(in_force->consensus_ms, 4380u);                                          // 1.2 x 3650
  EXPECT_EQ(in_force->token_retransmit_ms, static_cast<std::uint32_t>(3650 / 4.2));  // 869

  std::string text = three_nodes("udpu");
  text.replace(text.find("transport: udpu\n"), 16,
               "transport: udpu\ntoken: 1000\ntoken_coefficient: 100\nconsensus: 5000\n");
  const DaemonConfig given = parsed(text);
  EXPECT_EQ(given.totem_in_force().token_timeout_ms, 1100u);
  EXPECT_EQ(given.totem_in_force().consensus_ms, 5000u);  // given, not derived
  text.replace(text.find("token_coefficient: 100"), 22, "token_coefficient: 0  ");
  EXPECT_EQ(parsed(text).totem_in_force().token_timeout_ms, 1000u);

  std::string two = three_nodes("udpu");
  two.erase(two.find("node {\nnodeid: 3"), std::string_view("node {\nnodeid: 3\nring0_addr: 10.0.0.3\n}\n").size());
  EXPECT_EQ(parsed(two).totem_in_force().token_timeout_ms, 3000u);
}

TEST(LocalNode, IsTheOneNodeWithAnAddressOfThisHost) {
  const DaemonConfig config = parsed(three_nodes("udpu"));
  const std::vector<InetAddress> host = {address("127.0.0.1"), address("10.0.0.2"), address("fe80::1")};
  auto self = local_node(config, std::nullopt, host);
  ASSERT_TRUE(self.ok()) << self.error().message();
  EXPECT_EQ(self->nodeid, 2u);
  EXPECT_EQ(self->ring0_addr(), "10.0.0.2");
}

TEST(LocalNode, NodeidChoosesAndMustBeListed) {
  const DaemonConfig config = parsed(three_nodes("udpu"));
  auto chosen = local_node(config, 3u, {});
  ASSERT_TRUE(chosen.ok()) << chosen.error().message();
  EXPECT_EQ(chosen->nodeid, 3u);
  auto missing = local_node(config, 9u, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "t.conf: node 9 is not in the nodelist: 1 (10.0.0.1, line 11), "
            "2 (10.0.0.2, line 15), 3 (10.0.0.3, line 19)");
}

TEST(LocalNode, NoneOrSeveralLocalSuggestNodeid) {
  const DaemonConfig config = parsed(three_nodes("udpu"));
  const std::vector<InetAddress> none = {address("192.168.1.1")};
  auto no_match = local_node(config, std::nullopt, none);
  ASSERT_FALSE(no_match.ok());
  EXPECT_EQ(no_match.error().message(),
            "t.conf: no node's ring0_addr is an address of this host (nodes: 1 (10.0.0.1, line 11), 2 (10.0.0.2, line "
            "15), 3 (10.0.0.3, line 19)); pass --nodeid to choose one");
  const std::vector<InetAddress> two = {address("10.0.0.1"), address("10.0.0.3")};
  auto several = local_node(config, std::nullopt, two);
  ASSERT_FALSE(several.ok());
  EXPECT_EQ(several.error().message(),
            "t.conf: several nodes have a ring0_addr of this host (1 (10.0.0.1, line 11), "
            "3 (10.0.0.3, line 19)); pass --nodeid to choose one");
}

TEST(LocalNode, HostAddressesAreInternetAddresses) {
  auto addresses = host_addresses();
  ASSERT_TRUE(addresses.ok()) << addresses.error().message();
  for (const InetAddress& a : *addresses) {
    EXPECT_TRUE(a.family() == AF_INET || a.family() == AF_INET6);
    EXPECT_EQ(a.port(), 0);
  }
}

// ---- What the UDP backend opens -----------------------------------------------------------------

TEST(UdpConfigFor, UdpuIsUnicastToEveryNodeOnMcastport) {
  const DaemonConfig config = parsed(three_nodes("udpu"));
  auto udp = udp_config_for(config, config.nodes[1]);
  ASSERT_TRUE(udp.ok()) << udp.error().message();
  EXPECT_EQ(udp->mode, transport::UdpMode::kUnicast);
  EXPECT_EQ(udp->bind, address("10.0.0.2", 6000));
  ASSERT_EQ(udp->peers.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(udp->peers[i].node, i + 1);
    EXPECT_EQ(udp->peers[i].address, address(fmt::format("10.0.0.{}", i + 1), 6000));
  }
  EXPECT_EQ(udp->params.local_node, 2u);
  EXPECT_EQ(udp->params.mtu, 1400u);
  EXPECT_EQ(udp->params.cluster_id, transport::cluster_id_from_name("trio"));
}

TEST(UdpConfigFor, UdpIsTheMulticastGroupWithTtl) {
  const DaemonConfig config = parsed(three_nodes("udp"));
  auto udp = udp_config_for(config, config.nodes[0]);
  ASSERT_TRUE(udp.ok()) << udp.error().message();
  EXPECT_EQ(udp->mode, transport::UdpMode::kMulticast);
  EXPECT_EQ(udp->group, address("239.192.9.9", 6000));
  EXPECT_EQ(udp->ttl, 3);
  EXPECT_EQ(udp->bind, address("10.0.0.1", 6000));
  EXPECT_EQ(udp->peers.size(), 3u);
}

TEST(UdpConfigFor, RefusesRdmaAndAStranger) {
  const DaemonConfig rdma = parsed(three_nodes("rdma"));
  auto refused = udp_config_for(rdma, rdma.nodes[0]);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(), "t.conf: transport is rdma, not udp or udpu");
  const DaemonConfig udpu = parsed(three_nodes("udpu"));
  NodeEntry stranger{9, "", {"10.0.0.9"}, 1};
  EXPECT_FALSE(udp_config_for(udpu, stranger).ok());
}

TEST(ChooseTransport, RdmaWithAUsableDeviceStaysRdma) {
  const DaemonConfig config = parsed(three_nodes("rdma"));
  EXPECT_TRUE(config.rdma_fallback);  // the default
  auto choice = choose_transport(config, "");
  ASSERT_TRUE(choice.ok()) << choice.error().message();
  EXPECT_EQ(choice->kind, TransportKind::kRdma);
  EXPECT_EQ(choice->warning, "");
}

TEST(ChooseTransport, RdmaWithoutADeviceFallsBackToUdpMulticastWithOneWarning) {
  DaemonConfig config = parsed(three_nodes("rdma"));
  auto choice = choose_transport(config, "no RDMA device");
  ASSERT_TRUE(choice.ok()) << choice.error().message();
  EXPECT_EQ(choice->kind, TransportKind::kUdp);
  EXPECT_EQ(choice->warning,
            "t.conf: transport rdma: no RDMA device; running on udp multicast 239.192.9.9:6000 "
            "instead, in a ring only with nodes on udp: nodes on rdma do not hear this one "
            "(with totem.fallback: no it stops instead)");
  config.link0().transport = choice->kind;
  auto udp = udp_config_for(config, config.nodes[0]);
  ASSERT_TRUE(udp.ok()) << udp.error().message();
  EXPECT_EQ(udp->mode, transport::UdpMode::kMulticast);
  EXPECT_EQ(udp->group, address("239.192.9.9", 6000));
}

TEST(RdmaConfigFor, BindsTheNodesAddressAndJoinsTheGroup) {
  const DaemonConfig config = parsed(three_nodes("rdma"));
  auto rdma = rdma_config_for(config, config.nodes[1]);
  ASSERT_TRUE(rdma.ok()) << rdma.error().message();
  EXPECT_EQ(rdma->params.local_node, config.nodes[1].nodeid);
  EXPECT_EQ(rdma->params.mtu, config.netmtu);  // an upper bound: the backend lowers it to the port's
  EXPECT_TRUE(rdma->bind.same_host(address("10.0.0.2", 0)));
  EXPECT_TRUE(rdma->group.same_host(address("239.192.9.9", 0)));
  EXPECT_EQ(rdma->peers.size(), 3u);
  EXPECT_FALSE(rdma_config_for(parsed(three_nodes("udp")), config.nodes[0]).ok());
}

TEST(RdmaConfigFor, Ipv6GroupIsRefused) {
  const DaemonConfig config = parsed(replaced(three_nodes("rdma"), "239.192.9.9", "ff15::9"));
  auto rdma = rdma_config_for(config, config.nodes[0]);
  ASSERT_FALSE(rdma.ok());
  EXPECT_EQ(rdma.error().message(), "t.conf: rdma: group ff15::9 is not an IPv4 multicast address");
}

TEST(ChooseTransport, FallbackNoRefusesToStartWithoutADevice) {
  const DaemonConfig config = parsed(replaced(three_nodes("rdma"), "transport: rdma", "transport: rdma\nfallback: no"));
  EXPECT_FALSE(config.rdma_fallback);
  auto refused = choose_transport(config, "no RDMA device");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(), "t.conf: transport rdma: no RDMA device; not starting (totem.fallback is no)");
}

TEST(ChooseTransport, OtherTransportsIgnoreTheProbe) {
  const DaemonConfig config = parsed(three_nodes("udpu"));
  auto choice = choose_transport(config, "no RDMA device");
  ASSERT_TRUE(choice.ok()) << choice.error().message();
  EXPECT_EQ(choice->kind, TransportKind::kUdpu);
  EXPECT_EQ(choice->warning, "");
}

TEST(ChooseTransport, FallbackIsABoolean) {
  EXPECT_EQ(error_of(replaced(three_nodes("rdma"), "transport: rdma", "transport: rdma\nfallback: maybe")),
            "t.conf:4: totem.fallback: 'maybe' is not one of: on, yes, true, off, no, false");
}

TEST(UdpConfigFor, MulticastGroupOfAnotherFamilyIsRefused) {
  const DaemonConfig config = parsed(replaced(three_nodes("udp"), "239.192.9.9", "ff15::9"));
  auto udp = udp_config_for(config, config.nodes[0]);
  ASSERT_FALSE(udp.ok());
  EXPECT_EQ(udp.error().message().rfind("t.conf: udp: group [ff15::9]:6000 and bind 10.0.0.1:6000 differ in family", 0),
            0u)
      << udp.error().message();
}

// ---- Who may use the IPC --------------------------------------------------------------------------

TEST(IpcAccess, AllowListsTakeNamesAndIdsSortedOnce) {
  const DaemonConfig config = parsed(config_text({.ipc = "allow_uid: 1234, root 1234\n  allow_gid: root,77"}));
  EXPECT_EQ(config.ipc.allow.uids, (std::vector<std::uint32_t>{0, 1234}));
  EXPECT_EQ(config.ipc.allow.gids, (std::vector<std::uint32_t>{0, 77}));
  EXPECT_TRUE(parsed(config_text()).ipc.allow.uids.empty());
}

TEST(IpcAccess, UnknownNamesAndEmptyListsAreRefusedWithTheirLine) {
  EXPECT_EQ(error_of(config_text({.ipc = "allow_uid: nosuch-user-rtotem"})),
            "t.conf:20: ipc.allow_uid: no user 'nosuch-user-rtotem'");
  EXPECT_EQ(error_of(config_text({.ipc = "allow_gid: nosuch-group-rtotem"})),
            "t.conf:20: ipc.allow_gid: no group 'nosuch-group-rtotem'");
  EXPECT_EQ(error_of(config_text({.ipc = "allow_uid: ,"})),
            "t.conf:20: ipc.allow_uid: a list of user or group names or ids, separated by ',' or spaces");
}

// Corosync's uidgid sections, any number of them, add to the lists.
TEST(IpcAccess, CorosyncUidgidSectionsAddToTheLists) {
  const DaemonConfig config =
      parsed(config_text() + "uidgid {\n  uid: 1001\n}\nuidgid {\n  uid: 1002\n  gid: root\n}\n");
  EXPECT_EQ(config.ipc.allow.uids, (std::vector<std::uint32_t>{1001, 1002}));
  EXPECT_EQ(config.ipc.allow.gids, (std::vector<std::uint32_t>{0}));
  EXPECT_TRUE(config.warnings.empty());
}

// As corosync's /etc/corosync/uidgid.d: one file per package, next to the config file.
TEST(IpcAccess, UidgidFilesNextToTheConfigAddToo) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("rtotem-uidgid-{}", getpid());
  fs::create_directories(dir / "uidgid.d");
  { std::ofstream(dir / "rtotem.conf") << config_text({.ipc = "allow_uid: 5"}); }
  { std::ofstream(dir / "uidgid.d" / "pacemaker") << "# pacemaker's daemons\nuidgid {\n  uid: 189\n  gid: 189\n}\n"; }
  { std::ofstream(dir / "uidgid.d" / "other") << "uidgid {\n  gid: 7\n}\n"; }
  auto config = load_config((dir / "rtotem.conf").string());
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->ipc.allow.uids, (std::vector<std::uint32_t>{5, 189}));
  EXPECT_EQ(config->ipc.allow.gids, (std::vector<std::uint32_t>{7, 189}));
  { std::ofstream(dir / "uidgid.d" / "broken") << "totem {\n}\n"; }
  auto refused = load_config((dir / "rtotem.conf").string());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            (dir / "uidgid.d" / "broken").string() + ":1: section 'totem': a uidgid.d file holds uidgid sections only");
  fs::remove_all(dir);
}

// ---- Hostile input ------------------------------------------------------------------------------

// Any input is parsed or refused with a message naming the origin; never a crash or a read past
// the end (the sanitizer build checks the latter).
void expect_handled(std::string_view text) {
  auto config = parse_config(text, "fuzz");
  if (!config.ok()) {
    EXPECT_EQ(config.error().message().rfind("fuzz", 0), 0u) << config.error().message();
  }
}

TEST(ConfigHostileInput, RandomBytesAreRefusedNotCrashedOn) {
  std::mt19937 rng(20240611);
  for (int round = 0; round < 2000; ++round) {
    std::string text(std::uniform_int_distribution<std::size_t>(0, 512)(rng), '\0');
    for (char& c : text) c = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    expect_handled(text);
  }
}

TEST(ConfigHostileInput, ShuffledConfigWordsAreHandled) {
  // No ring0_addr among the words: no node is ever complete, so nothing is sent to DNS.
  constexpr std::string_view kWords[] = {"{",
                                         "}",
                                         ":",
                                         "#",
                                         "\n",
                                         " ",
                                         "\r",
                                         "\t",
                                         std::string_view("\0", 1),
                                         "totem",
                                         "nodelist",
                                         "node",
                                         "interface",
                                         "logging",
                                         "ipc",
                                         "quorum",
                                         "token",
                                         "nodeid",
                                         "cluster_name",
                                         "1",
                                         "99999999999999999999",
                                         "knet_x",
                                         "debug",
                                         "trace",
                                         "on",
                                         "\xff"};
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const auto count = std::uniform_int_distribution<int>(0, 80)(rng);
    for (int i = 0; i < count; ++i)
      text += kWords[std::uniform_int_distribution<std::size_t>(0, std::size(kWords) - 1)(rng)];
    expect_handled(text);
  }
}

TEST(ConfigHostileInput, MutatedValidFilesAreHandled) {
  const std::string base = config_text({.totem = "interface {\nmcastport: 5405\n}", .logging = "debug: on"});
  // Mutations stay above the nodelist, so no mutated host name is sent to DNS.
  const std::size_t mutable_end = base.find("nodelist");
  constexpr std::string_view kBytes = "{}:#\n \0a9-";
  std::mt19937 rng(11);
  for (int round = 0; round < 3000; ++round) {
    std::string text = base;
    for (int m = std::uniform_int_distribution<int>(1, 4)(rng); m > 0; --m) {
      const auto at = std::uniform_int_distribution<std::size_t>(0, mutable_end - 1)(rng);
      text[at] = kBytes[std::uniform_int_distribution<std::size_t>(0, kBytes.size() - 1)(rng)];
    }
    expect_handled(text);
  }
}

// ---- The example files --------------------------------------------------------------------------

std::vector<fs::path> example_files() {
  std::vector<fs::path> files = {"tests/data/corosync.conf"};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(source_root() / "conf", ec))
    if (entry.path().extension() == ".conf") files.push_back(fs::relative(entry.path(), source_root()));
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const fs::path& relative) {
  std::string text;
  auto handle = std::unique_ptr<std::FILE, int (*)(std::FILE*)>(std::fopen((source_root() / relative).c_str(), "rb"),
                                                                &std::fclose);
  if (!handle) return text;
  char block[4096];
  for (std::size_t n; (n = std::fread(block, 1, sizeof block, handle.get())) > 0;) text.append(block, n);
  return text;
}

TEST(ExampleFiles, EveryFileInConfLoadsWithoutWarnings) {
  const auto files = example_files();
  EXPECT_GE(files.size(), 5u);  // the four in conf/ and corosync.conf
  for (const fs::path& file : files) {
    if (file.filename() == "corosync.conf") continue;
    const DaemonConfig config = loaded(file);
    EXPECT_TRUE(config.warnings.empty()) << file << ": " << (config.warnings.empty() ? "" : config.warnings[0]);
    EXPECT_FALSE(config.nodes.empty()) << file;
  }
}

TEST(ExampleFiles, TruncatedAtAnyByteTheyAreHandled) {
  for (const fs::path& file : example_files()) {
    const std::string text = read_text(file);
    ASSERT_FALSE(text.empty()) << file;
    for (std::size_t size = 0; size < text.size(); ++size) expect_handled(std::string_view(text).substr(0, size));
  }
}

TEST(ExampleFiles, RtotemConfIsAThreeNodeUdpuClusterOnTenDotZero) {
  const DaemonConfig config = loaded("conf/rtotem.conf");
  EXPECT_EQ(config.link0().transport, TransportKind::kUdpu);
  ASSERT_EQ(config.nodes.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(config.nodes[i].ring0_addr(), fmt::format("10.0.0.{}", i + 1));
  EXPECT_EQ(config.totem.token_timeout_ms, 3000u);
  EXPECT_TRUE(udp_config_for(config, config.nodes[0]).ok());
  EXPECT_TRUE(config.totem.resolved().ok());
}

TEST(ExampleFiles, UdpAndRdmaFilesNameTheirTransport) {
  const DaemonConfig udp = loaded("conf/rtotem-udp.conf");
  EXPECT_EQ(udp.link0().transport, TransportKind::kUdp);
  EXPECT_TRUE(udp_config_for(udp, udp.nodes[2]).ok());
  const DaemonConfig rdma = loaded("conf/rtotem-rdma.conf");
  EXPECT_EQ(rdma.link0().transport, TransportKind::kRdma);
  EXPECT_EQ(rdma.nodes.size(), 3u);
  auto backend = rdma_config_for(rdma, rdma.nodes[0]);
  ASSERT_TRUE(backend.ok()) << backend.error().message();
  // What the RDMA backend lowers netmtu to on RoCE over a 1500-byte link (active_mtu 1024), and
  // the send pool rtotemd sizes for it there (RdmaConfig::size_pools): the default 1 MiB fits.
  backend->params.mtu = 1024 - transport::kWireHeaderSize;
  auto totem = rdma.totem.resolved();
  ASSERT_TRUE(totem.ok()) << totem.error().message();
  EXPECT_EQ(totem->max_message_size, 1u << 20);
  backend->params.send_buffers = totem->send_buffers_for(backend->params.payload_mtu());
  auto fits = totem->check(backend->params);
  EXPECT_TRUE(fits.ok()) << fits.error().message();
}

TEST(ExampleFiles, DemoIsThreeDaemonsOnLoopback) {
  const DaemonConfig config = loaded("conf/demo-3node.conf");
  EXPECT_EQ(config.link0().transport, TransportKind::kUdpu);
  EXPECT_EQ(config.totem.token_timeout_ms, 1000u);
  EXPECT_EQ(config.ipc.name, IpcConfig{}.name);  // each daemon gets --ipc-name
  EXPECT_TRUE(config.logging.to_stderr);
  EXPECT_FALSE(config.logging.to_syslog);
  EXPECT_FALSE(config.logging.to_logfile);
  ASSERT_EQ(config.nodes.size(), 3u);
  const std::vector<InetAddress> loopback = {address("127.0.0.1"), address("127.0.0.2"), address("127.0.0.3")};
  EXPECT_FALSE(local_node(config, std::nullopt, loopback).ok());  // all three local: --nodeid decides
  for (const NodeEntry& node : config.nodes) {
    EXPECT_EQ(node.ring0_addr(), fmt::format("127.0.0.{}", node.nodeid));
    auto self = local_node(config, node.nodeid, loopback);
    ASSERT_TRUE(self.ok());
    EXPECT_TRUE(udp_config_for(config, *self).ok());
  }
}

TEST(ExampleFiles, ACorosyncConfLoadsWithWarnings) {
  const DaemonConfig config = loaded("tests/data/corosync.conf");
  EXPECT_EQ(config.cluster_name, "hacluster");
  EXPECT_EQ(config.link0().transport, TransportKind::kUdpu);
  EXPECT_EQ(config.totem.token_retransmits_before_loss, 10u);
  EXPECT_EQ(config.totem.consensus_ms, 3600u);
  ASSERT_EQ(config.nodes.size(), 3u);
  EXPECT_EQ(config.nodes[2].name, "pcmk-3");
  EXPECT_TRUE(config.logging.to_logfile);
  EXPECT_EQ(config.logging.logfile, "/var/log/cluster/corosync.log");
  EXPECT_FALSE(config.logging.to_stderr);
  const std::string prefix = (source_root() / "tests/data/corosync.conf").string() + ":";
  EXPECT_TRUE(contains(config.warnings, prefix + "6: totem.transport: knet: using udpu (rtotem has no knet)"));
  EXPECT_TRUE(contains(config.warnings, prefix + "14: totem.crypto_cipher: aes256: rtotem seals packets with "
                                                 "XChaCha20-Poly1305 (crypto on, key from totem.keyfile)"));
  EXPECT_TRUE(config.crypto);  // crypto_cipher: aes256, with corosync's key file (the key derived from it)
  EXPECT_EQ(config.keyfile, "/etc/corosync/authkey");
  ASSERT_TRUE(config.quorum);  // quorum { provider: corosync_votequorum; wait_for_all: 1 }
  EXPECT_EQ(config.quorum->expected_votes, 3u);
  EXPECT_TRUE(config.quorum->wait_for_all);
  // Its link keys are read: knet_ping_* are the link monitor's.
  EXPECT_EQ(config.link_mode, LinkMode::kPassive);
  ASSERT_EQ(config.links.size(), 1u);
  EXPECT_EQ(config.link0().ping_interval_ms, 200u);
  EXPECT_EQ(config.link0().ping_timeout_ms, 400u);
  EXPECT_GE(config.warnings.size(), 14u);
}

}  // namespace
}  // namespace rtotem::config
