// The generic parse of a corosync-style config file into sections and `key: value` entries, each
// remembering its line; what the keys mean is daemon_config's business.
//
// Syntax, one item per line (as corosync's coroparse reads it):
//   name {          opens a section; sections nest
//   key: value      the value is the rest of the line, trimmed; it may hold spaces or be empty
//   }               closes the innermost open section
//   # text          a comment: only as a whole line, so a value may contain '#'
// Blank lines are skipped and "\r\n" endings accepted. '{' and '}' appear in those two forms only.
// Keys and section names are letters, digits, '_', '-' and '.'; a key appears at most once per
// section, a section name any number of times.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace rtotem::config {

// Bounds on what one file may hold, so that any input costs bounded time and memory.
inline constexpr std::size_t kConfigBytesMax = 1 << 20;      // corosync.conf files are a few KiB
inline constexpr std::size_t kSectionDepthMax = 8;           // corosync's deepest is 3 (nodelist.node)
inline constexpr std::size_t kKeysPerSectionMax = 256;       // keeps the duplicate-key scan trivial
inline constexpr std::size_t kSectionsPerSectionMax = 1024;  // above the most nodes a nodelist names

struct ConfigEntry {
  std::string key;
  std::string value;
  int line = 0;
};

struct ConfigSection {
  std::string name;                     // empty for the file's top level
  int line = 0;                         // of the opening "name {"; 0 for the top level
  std::vector<ConfigEntry> entries;     // in file order
  std::vector<ConfigSection> sections;  // in file order
};

// Parses `text`; `origin` (a file name) opens every error message, as "origin:line: what".
Result<ConfigSection> parse_config_tree(std::string_view text, std::string_view origin);

}  // namespace rtotem::config
