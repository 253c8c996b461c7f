// Reading a tool's arguments and numbers: see cli_args.hpp.
#include "base/cli_args.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace rtotem {

CliReader::CliReader(std::span<char* const> args, std::span<const CliOption> options, CliWords words)
    : args_(args), options_(options), words_(words) {
  for (const CliOption& option : options_) {
    RTOTEM_ASSERT(option.name.size() >= 2 && option.name.starts_with('-'));
    RTOTEM_ASSERT(option.name.find('=') == std::string_view::npos);
  }
}

Result<CliArg> CliReader::next() {
  RTOTEM_ASSERT(!done());
  const std::string_view arg = args_[next_++];
  if (arg.starts_with("--")) return long_option(arg);
  if (arg.size() > 1 && arg.starts_with('-')) {
    if (const CliOption* option = find(arg)) return take(*option, std::nullopt);
    if (words_ == CliWords::kRefused) return Error::make("unknown option '{}'", arg);
  }
  if (words_ == CliWords::kRefused) return Error::make("unexpected argument '{}'", arg);
  return CliArg{{}, arg};
}

const CliOption* CliReader::find(std::string_view name) const noexcept {
  const auto it = std::ranges::find(options_, name, &CliOption::name);
  return it == options_.end() ? nullptr : &*it;
}

Result<CliArg> CliReader::long_option(std::string_view arg) {
  const auto equals = arg.find('=');
  const std::string_view name = arg.substr(0, equals);
  const CliOption* option = find(name);
  if (option == nullptr) return Error::make("unknown option '{}'", name);
  if (equals == std::string_view::npos) return take(*option, std::nullopt);
  return take(*option, arg.substr(equals + 1));
}

// `given`: the value after '='; without one, a value is the next argument, whatever it is.
Result<CliArg> CliReader::take(const CliOption& option, std::optional<std::string_view> given) {
  if (option.value == CliValue::kNone) {
    if (given) return Error::make("{}: takes no value", option.name);
    return CliArg{option.name, {}};
  }
  if (!given) {
    if (done()) return Error::make("{}: missing value", option.name);
    given = args_[next_++];
  }
  if (option.value == CliValue::kNonEmpty && given->empty()) return Error::make("{}: empty value", option.name);
  return CliArg{option.name, *given};
}

namespace cli_detail {

Result<std::uint64_t> parse_whole(std::string_view option, std::string_view text, std::uint64_t min,
                                  std::uint64_t max) {
  const bool hex = text.starts_with("0x") || text.starts_with("0X");
  const std::string_view digits = hex ? text.substr(2) : text;
  std::uint64_t value = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value, hex ? 16 : 10);
  if (digits.empty() || ec == std::errc::invalid_argument || ptr != end)
    return Error::make("{}: '{}' is not a number", option, text);
  if (ec == std::errc::result_out_of_range || value < min || value > max)
    return Error::make("{}: {} is out of range [{}, {}]", option, text, min, max);
  return value;
}

Result<double> parse_real(std::string_view option, std::string_view text, double min, double max) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value))
    return Error::make("{}: '{}' is not a number", option, text);
  if (value < min || value > max) return Error::make("{}: {} is out of range [{}, {}]", option, text, min, max);
  return value;
}

}  // namespace cli_detail
}  // namespace rtotem
