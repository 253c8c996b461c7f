// Parsing of rtotem-bench-udp's options: every refusal names the option.
#include "bench/bench_options.hpp"

#include <algorithm>
#include <span>

#include "base/cli_args.hpp"
#include "transport/backend.hpp"

namespace rtotem::bench {

Result<BenchOptions> parse_options(int argc, char** argv) {
  constexpr CliValue kValue = CliValue::kAny;
  constexpr CliOption kOptions[] = {{"--crypto"},         {"--messages", kValue}, {"--window", kValue},
                                    {"--rounds", kValue}, {"--port", kValue},     {"--sizes", kValue}};
  BenchOptions o;
  const std::span<char* const> args = cli_arguments(argc, argv);
  for (CliReader reader(args, kOptions); !reader.done();) {
    auto arg = reader.next();
    if (!arg) return arg.error();
    const auto [option, value] = *arg;
    if (option == "--crypto") {
      o.crypto = true;
    } else if (option == "--messages") {
      auto n = parse_number<std::uint64_t>(option, value, 1000, 1'000'000'000);
      if (!n) return n.error();
      o.messages = *n;
    } else if (option == "--window") {
      auto n = parse_number<std::uint32_t>(option, value, 1, 1024);
      if (!n) return n.error();
      o.window = *n;
    } else if (option == "--rounds") {
      auto n = parse_number<unsigned>(option, value, 1, 99);
      if (!n) return n.error();
      o.rounds = *n;
    } else if (option == "--port") {
      auto n = parse_number<std::uint16_t>(option, value, 1024, 65000);
      if (!n) return n.error();
      o.port = *n;
    } else if (option == "--sizes") {
      o.sizes.clear();
      for (std::size_t start = 0; start <= value.size();) {
        const std::size_t comma = std::min(value.find(',', start), value.size());
        auto n = parse_number<std::uint32_t>(option, value.substr(start, comma - start), 1, transport::kMtuMax);
        if (!n) return n.error();
        o.sizes.push_back(*n);
        start = comma + 1;
      }
    }
  }
  if (o.crypto)
    for (std::uint32_t size : o.sizes)
      if (size > transport::kMtuMax - transport::kSealOverhead)
        return Error::make("--sizes: {} does not fit a sealed packet (at most {})", size,
                           transport::kMtuMax - transport::kSealOverhead);
  return o;
}

}  // namespace rtotem::bench
