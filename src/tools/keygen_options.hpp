// rtotem-keygen's command line: where the key goes and whether an existing one may be replaced.
#pragma once

#include <span>
#include <string>

#include "base/result.hpp"

namespace rtotem::tools {

struct KeygenOptions {
  std::string path;    // default kDefaultKeyFile
  bool force = false;  // replace an existing file
  bool help = false;
};

// Parses argv[1..]; the error names the argument at fault.
Result<KeygenOptions> parse_keygen_options(std::span<char* const> args);
// The man-page-like --help text.
std::string keygen_usage();

}  // namespace rtotem::tools
