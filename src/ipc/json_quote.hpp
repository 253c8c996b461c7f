// A JSON string literal of arbitrary bytes, for the daemon's documents and rtotemctl's output.
// Bytes are not assumed to be UTF-8 (group names and payloads are any bytes): each byte outside
// printable ASCII is written as \u00XX, so the output is always valid JSON and reads back to the
// same byte values (as Latin-1 code points).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace rtotem::ipc {

inline std::string json_quoted(std::string_view bytes) {
  std::string out = "\"";
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace rtotem::ipc
