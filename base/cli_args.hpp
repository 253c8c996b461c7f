// The one way rtotem's tools read their command line: the options a tool declares, as
// "--name value", "--name=value", "-x value" or a bare flag, and numbers within a range. Every
// refusal names the option or argument at fault; the tools apply the values themselves.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/result.hpp"

namespace rtotem {

// Whether an option takes a value, and whether that value may be empty.
enum class CliValue : std::uint8_t { kNone, kAny, kNonEmpty };

// One option a tool knows. A short name ("-k") and a long one ("--key") are two entries.
struct CliOption {
  std::string_view name;
  CliValue value = CliValue::kNone;
};

// Whether a tool takes words (arguments that are not options), as rtotemctl takes its command.
enum class CliWords : std::uint8_t { kRefused, kTaken };

// One argument read: an option as given (with its value, if it takes one), or a word.
struct CliArg {
  std::string_view name;   // empty for a word
  std::string_view value;  // the option's value, or the word
  bool is_word() const noexcept { return name.empty(); }
};

// main's argv without argv[0]: what CliReader reads.
inline std::span<char* const> cli_arguments(int argc, char* const* argv) noexcept {
  if (argc <= 0) return {};
  return {argv + 1, static_cast<std::size_t>(argc - 1)};
}

// Reads `args` (cli_arguments) one argument at a time. An argument starting with "--" is a long
// option, its value after '=' or in the next argument; a short one is known by its whole text.
// Where words are taken, an unknown "-x" is a word too (a negative number, a text), so only an
// unknown "--x" is refused there. The reader and what it returns view `args` and `options`.
class CliReader {
 public:
  CliReader(std::span<char* const> args, std::span<const CliOption> options, CliWords words = CliWords::kRefused);

  bool done() const noexcept { return next_ == args_.size(); }
  // The next argument; refused if it is an unknown option, a word where none is taken, a
  // flag given a value, or a value missing or empty where the option wants one.
  Result<CliArg> next();

 private:
  const CliOption* find(std::string_view name) const noexcept;
  Result<CliArg> long_option(std::string_view arg);
  Result<CliArg> take(const CliOption& option, std::optional<std::string_view> given);

  std::span<char* const> args_;
  std::span<const CliOption> options_;
  CliWords words_;
  std::size_t next_ = 0;
};

namespace cli_detail {
Result<std::uint64_t> parse_whole(std::string_view option, std::string_view text, std::uint64_t min, std::uint64_t max);
Result<double> parse_real(std::string_view option, std::string_view text, double min, double max);
}  // namespace cli_detail

// `text` as a number in [min, max]: a whole one in decimal or 0x hex, or (T floating) a finite
// decimal one. The refusal names `option`: "'x' is not a number", "9 is out of range [1, 8]".
template <class T>
requires(std::unsigned_integral<T> && !std::same_as<T, bool>) ||
    std::floating_point<T> Result<T> parse_number(std::string_view option, std::string_view text, T min, T max) {
  if constexpr (std::floating_point<T>) {
    auto value = cli_detail::parse_real(option, text, min, max);
    if (!value) return value.error();
    return static_cast<T>(*value);
  } else {
    auto value = cli_detail::parse_whole(option, text, min, max);
    if (!value) return value.error();
    return static_cast<T>(*value);
  }
}

}  // namespace rtotem
