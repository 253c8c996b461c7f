// Parsing of the group bench's options: every refusal names the option at fault.
#include "bench/group_bench_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "base/cli_args.hpp"
#include "bench/group_bench_payload.hpp"

namespace rtotem::bench {

std::string bench_usage(std::string_view program, std::string_view daemon) {
  return fmt::format(
      "usage: {0} [options]\n"
      "Joins a group through the local {1}, waits for --senders members, multicasts for\n"
      "--duration seconds, then sends an end marker and waits for every member's. Run one per node.\n"
      "Exit 0: done, every member's end marker came, per-sender FIFO held; 1: not; 2: bad usage.\n"
      "  --ipc-name NAME              the daemon's IPC name (rtotem-bench only; default: $RTOTEM_IPC,\n"
      "                               else \"rtotem\")\n"
      "  --group G                    the group (default bench)\n"
      "  --size BYTES                 message size, 32 (the bench header) up to the cluster's\n"
      "                               largest message (default 1024)\n"
      "  --duration SECONDS           how long to send, receive or watch (default 10)\n"
      "  --order agreed|safe          delivery order (default agreed)\n"
      "  --mode MODE                  throughput: send as fast as the ring admits; latency: send\n"
      "                               --rate messages/s and time each from its first mcast attempt\n"
      "                               to its delivery here; receive: send nothing, receive and\n"
      "                               check; watch: print each group and ring change with its\n"
      "                               CLOCK_REALTIME time, one JSON line each, until --duration ends\n"
      "                               (default throughput)\n"
      "  --senders N                  members the group must have before the run starts (default 1);\n"
      "                               start N instances (receive members count)\n"
      "  --rate MSGS_PER_S            latency mode: the pace (default 1000)\n"
      "  --json                       one JSON object instead of text lines\n"
      "  -h, --help                   this text\n",
      program, daemon);
}

namespace {

constexpr CliValue kValue = CliValue::kAny;
constexpr CliOption kOptions[] = {{"-h"},
                                  {"--help"},
                                  {"--json"},
                                  {"--ipc-name", CliValue::kNonEmpty},
                                  {"--group", kValue},
                                  {"--size", kValue},
                                  {"--duration", kValue},
                                  {"--order", kValue},
                                  {"--mode", kValue},
                                  {"--senders", kValue},
                                  {"--rate", kValue}};
constexpr std::size_t kGroupNameMax = 128;  // rtotem.h: a group name is 1..128 bytes
constexpr std::uint32_t kDurationMax_s = 3600;
constexpr std::uint32_t kRateMax = 1'000'000;
constexpr std::string_view kModeNames[] = {"throughput", "latency", "receive", "watch"};  // BenchMode's order

// Sets the one option `c.name` names; the reader has checked that it is one of kOptions.
Result<void> apply(BenchOptions& o, const CliArg& c) {
  const auto number = [&c]<class T>(T& out, T min, T max) -> Result<void> {
    auto n = parse_number<T>(c.name, c.value, min, max);
    if (!n) return n.error();
    out = *n;
    return {};
  };
  if (c.name == "-h" || c.name == "--help") {
    o.help = true;
  } else if (c.name == "--json") {
    o.json = true;
  } else if (c.name == "--ipc-name") {
    o.ipc_name = c.value;
  } else if (c.name == "--group") {
    if (c.value.empty() || c.value.size() > kGroupNameMax)
      return Error::make("--group: a group name is 1..{} bytes", kGroupNameMax);
    o.group = c.value;
  } else if (c.name == "--size") {
    return number(o.size_bytes, kPayloadHeaderBytes, kSizeMax);
  } else if (c.name == "--duration") {
    return number(o.duration_s, std::uint32_t{1}, kDurationMax_s);
  } else if (c.name == "--senders") {
    return number(o.senders, std::uint32_t{1}, static_cast<std::uint32_t>(kSendersMax));
  } else if (c.name == "--rate") {
    return number(o.rate_per_s, std::uint32_t{1}, kRateMax);
  } else if (c.name == "--order") {
    if (c.value != "agreed" && c.value != "safe") return Error::make("--order: '{}' is not agreed or safe", c.value);
    o.order = c.value == "safe" ? RTOTEM_SAFE : RTOTEM_AGREED;
  } else if (c.name == "--mode") {
    const auto mode = std::ranges::find(kModeNames, c.value);
    if (mode == std::end(kModeNames))
      return Error::make("--mode: '{}' is not throughput, latency, receive or watch", c.value);
    o.mode = static_cast<BenchMode>(mode - std::begin(kModeNames));
  }
  return {};
}

}  // namespace

Result<BenchOptions> parse_bench_options(int argc, char** argv) {
  BenchOptions o;
  const std::span<char* const> args = cli_arguments(argc, argv);
  for (CliReader reader(args, kOptions); !reader.done();) {
    auto option = reader.next();
    if (!option) return option.error();
    if (auto applied = apply(o, *option); !applied) return applied.error();
  }
  if (o.mode == BenchMode::kLatency && std::uint64_t{o.rate_per_s} * o.duration_s > kLatencySamplesMax)
    return Error::make("--rate {} x --duration {}: more than {} latency samples", o.rate_per_s, o.duration_s,
                       kLatencySamplesMax);
  return o;
}

std::string_view mode_name(BenchMode mode) noexcept { return kModeNames[static_cast<std::size_t>(mode)]; }

std::string_view order_name(rtotem_order order) noexcept { return order == RTOTEM_SAFE ? "safe" : "agreed"; }

}  // namespace rtotem::bench
