// The totem section and its interface subsection: protocol timings, flow control, transport and
// where the ring's packets go. Relations between values are TotemConfig::resolved()'s to check.
#include <array>
#include <optional>
#include <string>

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

// Corosync's names. Where TotemConfig derives a value from token when it is 0, the key's minimum is
// 1: leaving the key out is how a file asks for the derived value.
constexpr TotemNumber kTotemNumbers[] = {
    {"token", &TotemConfig::token_timeout_ms, 10, kMsMax, "ms"},
    {"token_retransmits_before_loss_const", &TotemConfig::token_retransmits_before_loss, 1, 100, ""},
    {"token_retransmit", &TotemConfig::token_retransmit_ms, 1, kMsMax, "ms"},
    {"hold", &TotemConfig::token_hold_ms, 1, kMsMax, "ms"},
    {"join", &TotemConfig::join_ms, 1, kMsMax, "ms"},
    {"send_join", &TotemConfig::send_join_ms, 0, kMsMax, "ms"},  // 0 is its default: joins at once
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
    "crypto_model", "secauth", "key", "ip_version", "link_mode",
    "knet_*", "config_version", "clear_node_high_bit", "seqno_unchanged_const", "miss_count_const",
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

// What decided totem.crypto: our own key, or corosync's crypto_cipher and crypto_hash (either not
// `none` asks for protection; rtotem seals with XChaCha20-Poly1305 whatever they name). Both
// kinds in one file must agree; our own key decides the line blamed for the key file.
struct CryptoKeys {
  std::optional<bool> own_on;
  int own_line = 0;
  std::optional<bool> corosync_on;  // any corosync key not none
  int corosync_line = 0;            // of the key that decided corosync_on
  std::string corosync_key;
};

Result<bool> read_crypto(ParseContext& context, const Value& value, DaemonConfig& config, CryptoKeys& keys) {
  if (value.key() == "crypto") {
    bool on = false;
    if (auto ok = value.read(on); !ok) return ok.error();
    keys.own_on = on;
    keys.own_line = value.line();
    config.crypto = on;
    config.crypto_key = "totem.crypto";
    config.crypto_line = value.line();
    return true;
  }
  if (value.text().empty()) return value.fail("empty value (none, or a cipher or hash name)");
  const bool on = value.text() != "none";
  if (on)
    context.warn(value.line(), fmt::format("totem.{}: {}: rtotem seals packets with XChaCha20-Poly1305 "
                                           "(crypto on, key from totem.keyfile)", value.key(), value.text()));
  if (!keys.corosync_on || (on && !*keys.corosync_on)) {
    keys.corosync_line = value.line();
    keys.corosync_key = fmt::format("totem.{}", value.key());
  }
  keys.corosync_on = keys.corosync_on.value_or(false) || on;
  if (!keys.own_on) {
    config.crypto = *keys.corosync_on;
    config.crypto_key = keys.corosync_key;
    config.crypto_line = keys.corosync_line;
  }
  return true;
}

Result<void> check_crypto_agree(const ParseContext& context, const CryptoKeys& keys) {
  if (!keys.corosync_on || !keys.own_on || *keys.corosync_on == *keys.own_on) return {};
  return context.fail(keys.corosync_line, "{}: turns crypto {}, but totem.crypto is {} (line {})", keys.corosync_key,
                      *keys.corosync_on ? "on" : "off", *keys.own_on ? "on" : "off", keys.own_line);
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

Result<bool> read_totem_key(ParseContext& context, const Value& value, DaemonConfig& config, CryptoKeys& crypto) {
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
  if (key == "crypto" || key == "crypto_cipher" || key == "crypto_hash")
    return read_crypto(context, value, config, crypto);
  if (key == "keyfile") {
    config.keyfile_line = value.line();
    return known(value.read(config.keyfile));
  }
  return false;
}

}  // namespace

std::span<const TotemNumber> totem_numbers() noexcept { return kTotemNumbers; }

Result<void> read_totem(ParseContext& context, const ConfigSection& totem, DaemonConfig& config) {
  CryptoKeys crypto;
  auto read_key = [&](const Value& value) { return read_totem_key(context, value, config, crypto); };
  if (auto ok = read_entries(context, totem, "totem", kTotemCorosyncKeys, read_key); !ok) return ok;
  if (auto ok = check_crypto_agree(context, crypto); !ok) return ok;
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
