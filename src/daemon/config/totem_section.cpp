// The totem section and its interface subsection: protocol timings, flow control, transport and
// where the ring's packets go. Relations between values are TotemConfig::resolved()'s to check.
#include <array>

#include "src/daemon/config/config_sections.hpp"

namespace rtotem::config {
namespace {

using membership::TotemConfig;

constexpr std::uint32_t kMsMax = 600'000;  // ten minutes: a longer timeout is a typo
// The sort queue (a power of two, not a config key) holds at least four windows.
constexpr std::uint32_t kWindowSizeMax = TotemConfig{}.sort_queue_capacity / 4;
// Entries of the send queue, allocated when the node starts: room for a largest message cut into
// pieces of the smallest MTU, with margin for the pieces' headers.
constexpr std::uint32_t kSendQueueMaxLimit = 1u << 20;
static_assert(TotemConfig{}.window_size <= kWindowSizeMax);
static_assert(TotemConfig{}.send_queue_max <= kSendQueueMaxLimit);
static_assert(2 * (membership::kMaxMessageSizeLimit / transport::kMtuMin) <= kSendQueueMaxLimit);

struct TotemNumber {
  std::string_view key;
  std::uint32_t TotemConfig::*field;
  std::uint32_t min;
  std::uint32_t max;
  std::string_view unit;
};

// Corosync's names. Where TotemConfig derives a value from token when it is 0, the key's minimum is
// 1: leaving the key out is how a file asks for the derived value.
constexpr TotemNumber kTotemNumbers[] = {
    {"token", &TotemConfig::token_timeout_ms, 10, kMsMax, "ms"},
    {"token_retransmits_before_loss_const", &TotemConfig::token_retransmits_before_loss, 1, 100, ""},
    {"token_retransmit", &TotemConfig::token_retransmit_ms, 1, kMsMax, "ms"},
    {"hold", &TotemConfig::token_hold_ms, 1, kMsMax, "ms"},
    {"join", &TotemConfig::join_ms, 1, kMsMax, "ms"},
    {"consensus", &TotemConfig::consensus_ms, 1, kMsMax, "ms"},
    {"merge", &TotemConfig::merge_ms, 1, kMsMax, "ms"},
    {"fail_recv_const", &TotemConfig::fail_recv_const, 1, 1'000'000, "token visits"},
    {"fail_recv_ms", &TotemConfig::fail_recv_ms, 1, kMsMax, "ms"},
    {"window_size", &TotemConfig::window_size, 1, kWindowSizeMax, "messages"},
    {"max_messages", &TotemConfig::max_messages, 1, kWindowSizeMax, "messages"},
    {"send_queue_max", &TotemConfig::send_queue_max, 1, kSendQueueMaxLimit, "packets"},
    {"max_message_size", &TotemConfig::max_message_size, 1, membership::kMaxMessageSizeLimit, "bytes"},
};

constexpr std::string_view kTotemCorosyncKeys[] = {
    "crypto_cipher", "crypto_hash", "crypto_model", "secauth", "keyfile", "key", "ip_version", "link_mode",
    "knet_*", "config_version", "clear_node_high_bit", "send_join", "seqno_unchanged_const", "miss_count_const",
    "downcheck", "max_network_delay", "heartbeat_failures_allowed", "rrp_mode", "block_unlisted_ips", "threads",
    "vsftype", "token_coefficient", "token_warning", "cancel_token_hold_on_retransmit",
};
constexpr std::string_view kInterfaceCorosyncKeys[] = {"knet_*", "broadcast"};

Result<bool> read_transport(ParseContext& context, const Value& value, DaemonConfig& config) {
  constexpr std::string_view kNames[] = {"udp", "udpu", "rdma", "knet"};
  constexpr std::array<TransportKind, 4> kKinds = {TransportKind::kUdp, TransportKind::kUdpu, TransportKind::kRdma,
                                                   TransportKind::kUdpu};
  auto index = value.choice(kNames);
  if (!index) return index.error();
  config.transport = kKinds[*index];
  if (kNames[*index] == "knet") context.warn(value.line(), "totem.transport: knet: using udpu (rtotem has no knet)");
  return true;
}

// An address the file names for the whole cluster must parse (a name is resolved now).
Result<void> read_address(const Value& value, std::string& out, bool multicast) {
  if (auto ok = value.read(out); !ok) return ok;
  auto address = transport::InetAddress::parse(out, 0);
  if (!address) return value.fail("{}", address.error().message());
  if (multicast && !address->is_multicast()) return value.fail("{} is not a multicast address", out);
  return {};
}

Result<bool> read_interface_key(const Value& value, DaemonConfig& config) {
  const std::string_view key = value.key();
  if (key == "linknumber" || key == "ringnumber") {
    auto link = value.number(0, 255, "");
    if (!link) return link.error();
    if (*link != 0) return value.fail("link {}: rtotem runs one ring, on link 0 only", *link);
    return true;
  }
  if (key == "bindnetaddr") return known(read_address(value, config.bindnetaddr, false));
  if (key == "mcastaddr") return known(read_address(value, config.mcastaddr, true));
  if (key == "mcastport") {
    auto port = value.number(1, 65535, "");
    if (!port) return port.error();
    config.mcastport = static_cast<std::uint16_t>(*port);
    return true;
  }
  if (key == "ttl") {
    auto ttl = value.number(1, 255, "hops");
    if (!ttl) return ttl.error();
    config.ttl = static_cast<int>(*ttl);
    return true;
  }
  return false;
}

Result<bool> read_totem_key(ParseContext& context, const Value& value, DaemonConfig& config) {
  const std::string_view key = value.key();
  for (const TotemNumber& number : kTotemNumbers) {
    if (key == number.key) return known(value.read(config.totem.*number.field, number.min, number.max, number.unit));
  }
  if (key == "version") {
    if (value.text() != "2") return value.fail("'{}': the only version is 2", value.text());
    return true;
  }
  if (key == "cluster_name") return known(value.read(config.cluster_name));
  if (key == "transport") return read_transport(context, value, config);
  if (key == "fallback") return known(value.read(config.rdma_fallback));
  if (key == "netmtu") return known(value.read(config.netmtu, transport::kMtuMin, transport::kMtuMax, "bytes"));
  return false;
}

}  // namespace

Result<void> read_totem(ParseContext& context, const ConfigSection& totem, DaemonConfig& config) {
  auto read_key = [&](const Value& value) { return read_totem_key(context, value, config); };
  if (auto ok = read_entries(context, totem, "totem", kTotemCorosyncKeys, read_key); !ok) return ok;
  if (config.cluster_name.empty()) return context.fail(totem.line, "totem: cluster_name is required");
  const ConfigSection* interface = nullptr;
  for (const ConfigSection& section : totem.sections) {
    if (section.name != "interface") return context.fail(section.line, "unknown section 'totem.{}'", section.name);
    // A corosync file names its links; a second interface here is always a second link.
    if (interface)
      return context.fail(section.line, "second totem.interface (first on line {}): rtotem runs one ring, on link 0",
                          interface->line);
    interface = &section;
    auto read_link_key = [&](const Value& value) { return read_interface_key(value, config); };
    if (auto ok = read_entries(context, section, "totem.interface", kInterfaceCorosyncKeys, read_link_key); !ok)
      return ok;
    if (auto ok = refuse_sections(context, section, "totem.interface"); !ok) return ok;
  }
  return {};
}

}  // namespace rtotem::config
