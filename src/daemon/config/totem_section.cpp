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
    "crypto_model",
    "key",
    "ip_version",
    "knet_*",
    "config_version",
    "clear_node_high_bit",
    "seqno_unchanged_const",
    "miss_count_const",
    "downcheck",
    "max_network_delay",
    "heartbeat_failures_allowed",
    "rrp_mode",
    "block_unlisted_ips",
    "threads",
    "vsftype",
    "token_warning",
    "cancel_token_hold_on_retransmit",
};
constexpr std::string_view kInterfaceCorosyncKeys[] = {"knet_*", "broadcast"};
constexpr std::string_view kTransportNames[] = {"udp", "udpu", "rdma", "knet"};
constexpr std::array<TransportKind, 4> kTransportKinds = {TransportKind::kUdp, TransportKind::kUdpu,
                                                          TransportKind::kRdma, TransportKind::kUdpu};

// `section`: where the key is, for the warning.
Result<TransportKind> read_transport_name(ParseContext& context, const Value& value, std::string_view section) {
  auto index = value.choice(kTransportNames);
  if (!index) return index.error();
  if (kTransportNames[*index] == "knet")
    context.warn(value.line(), fmt::format("{}.transport: knet: using udpu (rtotem has no knet)", section));
  return kTransportKinds[*index];
}

Result<bool> read_link_mode(ParseContext& context, const Value& value, DaemonConfig& config) {
  constexpr std::string_view kNames[] = {"passive", "active", "rr"};
  auto index = value.choice(kNames);
  if (!index) return index.error();
  if (kNames[*index] == "rr")
    context.warn(value.line(), "totem.link_mode: rr: rtotem has no round robin, using passive");
  config.link_mode = *index == 1 ? LinkMode::kActive : LinkMode::kPassive;
  return true;
}

// totem.crypto, rtotem's own, and Corosync's secauth, crypto_cipher and crypto_hash read as
// Corosync reads them: secauth on means aes256 and sha256, crypto_cipher and crypto_hash override
// it, a cipher needs a hash, and either not none protects every packet. rtotem protects packets
// one way whatever they name: sealed with XChaCha20-Poly1305, so where Corosync would only
// authenticate (a hash alone) rtotem encrypts too. Both kinds in one file must agree.
struct CryptoSetting {
  std::string_view key;  // "totem.crypto", ...
  std::optional<bool> on;
  std::string text;
  int line = 0;
};
struct CryptoKeys {
  CryptoSetting own{"totem.crypto"};
  CryptoSetting secauth{"totem.secauth"};
  CryptoSetting cipher{"totem.crypto_cipher"};
  CryptoSetting hash{"totem.crypto_hash"};
};

Result<bool> read_crypto(const Value& value, CryptoKeys& keys) {
  const std::string_view key = value.key();
  CryptoSetting& slot = key == "crypto"          ? keys.own
                        : key == "secauth"       ? keys.secauth
                        : key == "crypto_cipher" ? keys.cipher
                                                 : keys.hash;
  slot.line = value.line();
  slot.text = std::string(value.text());
  if (&slot == &keys.own || &slot == &keys.secauth) {
    bool on = false;
    if (auto ok = value.read(on); !ok) return ok.error();
    slot.on = on;
    return true;
  }
  if (value.text().empty()) return value.fail("empty value (none, or a cipher or hash name)");
  slot.on = value.text() != "none";
  return true;
}

void decide(DaemonConfig& config, const CryptoSetting& by, bool on) {
  config.crypto = on;
  config.crypto_key = std::string(by.key);
  config.crypto_line = by.line;
}

Result<void> resolve_crypto(ParseContext& context, const CryptoKeys& keys, DaemonConfig& config) {
  const bool secauth = keys.secauth.on.value_or(false);
  const bool cipher = keys.cipher.on.value_or(secauth);
  const bool hash = keys.hash.on.value_or(secauth);
  if (cipher && !hash) {
    const CryptoSetting& blamed = keys.cipher.on ? keys.cipher : keys.secauth;
    return context.fail(blamed.line,
                        "{}: {} asks for a cipher, which needs a crypto_hash other than none (corosync refuses it too)",
                        blamed.key, blamed.text);
  }
  const bool on = cipher || hash;
  // The Corosync key that decided: the first given that turns protection on (secauth where it
  // stands for a key not given), else the first given.
  const CryptoSetting* by = nullptr;
  if (on) {
    by = keys.cipher.on.value_or(false) ? &keys.cipher : keys.hash.on.value_or(false) ? &keys.hash : &keys.secauth;
    for (const CryptoSetting* each : {&keys.secauth, &keys.cipher, &keys.hash})
      if (each->on.value_or(false) && (each != &keys.secauth || by == each))
        context.warn(each->line,
                     fmt::format("{}: {}: rtotem seals packets with XChaCha20-Poly1305 (crypto on, key "
                                 "from totem.keyfile){}",
                                 each->key, each->text,
                                 each == &keys.hash && !cipher ? "; corosync would authenticate them only" : ""));
  } else {
    for (const CryptoSetting* each : {&keys.cipher, &keys.hash, &keys.secauth})
      if (!by && each->on) by = each;
  }
  if (by && !keys.own.on) decide(config, *by, on);
  if (keys.own.on) {
    if (by && *keys.own.on != on)
      return context.fail(by->line, "{}: turns crypto {}, but totem.crypto is {} (line {})", by->key, on ? "on" : "off",
                          *keys.own.on ? "on" : "off", keys.own.line);
    decide(config, keys.own, *keys.own.on);
  }
  return {};
}

// An address the file names for the whole cluster must parse (a name is resolved now).
Result<void> read_address(const Value& value, std::string& out, bool multicast) {
  if (auto ok = value.read(out); !ok) return ok;
  auto address = transport::InetAddress::parse(out, 0);
  if (!address) return value.fail("{}", address.error().message());
  if (multicast && !address->is_multicast()) return value.fail("{} is not a multicast address", out);
  return {};
}

// A totem.interface as read: its link's values, and which it gave (the rest default per link).
struct InterfaceSection {
  LinkConfig link;
  std::optional<TransportKind> transport;
  bool port_given = false;
};

Result<bool> read_interface_key(ParseContext& context, const Value& value, InterfaceSection& section) {
  const std::string_view key = value.key();
  LinkConfig& link = section.link;
  if (key == "linknumber" || key == "ringnumber") {
    auto number = value.number(0, 255, "");
    if (!number) return number.error();
    if (*number >= transport::kLinksMax)
      return value.fail("link {}: links are numbered 0 to {}, as ring0_addr .. ring{}_addr", *number,
                        transport::kLinksMax - 1, transport::kLinksMax - 1);
    link.number = static_cast<transport::LinkId>(*number);
    return true;
  }
  if (key == "transport") {
    auto kind = read_transport_name(context, value, "totem.interface");
    if (!kind) return kind.error();
    section.transport = *kind;
    return true;
  }
  if (key == "bindnetaddr") return known(read_address(value, link.bindnetaddr, false));
  if (key == "mcastaddr") return known(read_address(value, link.mcastaddr, true));
  if (key == "mcastport") {
    auto port = value.number(1, 65535, "");
    if (!port) return port.error();
    link.mcastport = static_cast<std::uint16_t>(*port);
    section.port_given = true;
    return true;
  }
  if (key == "ttl") {
    auto ttl = value.number(1, 255, "hops");
    if (!ttl) return ttl.error();
    link.ttl = static_cast<int>(*ttl);
    return true;
  }
  if (key == "knet_link_priority") {
    auto priority = value.number(0, 255, "");
    if (!priority) return priority.error();
    link.priority = static_cast<std::uint8_t>(*priority);
    return true;
  }
  // 0, as in corosync, asks for the default.
  if (key == "knet_ping_interval") return known(value.read(link.ping_interval_ms, 0, kMsMax, "ms"));
  if (key == "knet_ping_timeout") return known(value.read(link.ping_timeout_ms, 0, kMsMax, "ms"));
  if (key == "knet_pong_count") return known(value.read(link.pong_count, 0, 255, "pongs"));
  if (key == "knet_ping_precision") return known(value.read(link.ping_precision, 0, 1'000'000, "samples"));
  return false;
}

// The links with an interface, each once, with the defaults of what it does not give.
Result<void> read_interfaces(ParseContext& context, const ConfigSection& totem, DaemonConfig& config) {
  std::vector<LinkConfig> links;
  for (const ConfigSection& section : totem.sections) {
    if (section.name != "interface") {
      context.keep_section(fmt::format("totem.{}", section.name), section, true);
      continue;
    }
    InterfaceSection read;
    read.link.line = section.line;
    auto read_key = [&](const Value& value) { return read_interface_key(context, value, read); };
    if (auto ok = read_entries(context, section, "totem.interface", kInterfaceCorosyncKeys, read_key); !ok) return ok;
    keep_sections(context, section, "totem.interface");
    LinkConfig& link = read.link;
    for (const LinkConfig& other : links) {
      if (other.number == link.number)
        return context.fail(section.line,
                            "totem.interface: link {} is also the interface on line {} (linknumber "
                            "tells the links apart; it is 0 when not given)",
                            link.number, other.line);
    }
    link.transport = read.transport.value_or(config.totem_transport);
    if (!read.port_given) link.mcastport = default_link_port(link.number);
    if (link.pong_count == 0) link.pong_count = LinkConfig{}.pong_count;
    if (link.ping_precision == 0) link.ping_precision = LinkConfig{}.ping_precision;
    links.push_back(std::move(link));
  }
  config.links = std::move(links);  // the nodelist's reader adds those with addresses and no interface
  return {};
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
  if (key == "transport") {
    auto kind = read_transport_name(context, value, "totem");
    if (!kind) return kind.error();
    config.totem_transport = *kind;
    return true;
  }
  if (key == "token_coefficient") {
    config.token_coefficient_given = true;
    return known(value.read(config.token_coefficient_ms, 0, kMsMax, "ms"));
  }
  if (key == "link_mode") return read_link_mode(context, value, config);
  if (key == "fallback") return known(value.read(config.rdma_fallback));
  if (key == "netmtu") return known(value.read(config.netmtu, transport::kMtuMin, transport::kMtuMax, "bytes"));
  if (key == "crypto" || key == "secauth" || key == "crypto_cipher" || key == "crypto_hash")
    return read_crypto(value, crypto);
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
  if (auto ok = resolve_crypto(context, crypto, config); !ok) return ok;
  if (config.cluster_name.empty()) return context.fail(totem.line, "totem: cluster_name is required");
  return read_interfaces(context, totem, config);
}

}  // namespace rtotem::config
