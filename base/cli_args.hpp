// The one way rtotem's tools read "--name value" and "--name=value": known names only, a missing
// value named. Header-only; the tools' parsers apply the values themselves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>

#include "base/result.hpp"

namespace rtotem {

struct CliOption {
  std::string_view name;
  std::string_view value;
};

// Reads the option at args[i] (advancing i past its value when that is the next argument).
inline Result<CliOption> next_cli_option(std::span<char* const> args, std::size_t& i,
                                         std::span<const std::string_view> known) {
  const std::string_view arg = args[i];
  if (!arg.starts_with('-')) return Error::make("unexpected argument '{}'", arg);
  const auto equals = arg.find('=');
  const std::string_view name = arg.substr(0, equals);
  if (std::find(known.begin(), known.end(), name) == known.end()) return Error::make("unknown option '{}'", name);
  if (equals != std::string_view::npos) return CliOption{name, arg.substr(equals + 1)};
  if (i + 1 < args.size()) return CliOption{name, args[++i]};
  return Error::make("{}: missing value", name);
}

}  // namespace rtotem
