#include "src/corosync/cpg/group_name.hpp"

#include <cstring>

#include "rtotem/rtotem.h"

namespace rtotem::corosync {

namespace {
constexpr char kRaw = '\x01';
constexpr char kEscape = '\x02';
}  // namespace

std::optional<std::string> rtotem_group_name(const cpg_name& name) {
  if (name.length > CPG_MAX_NAME_LENGTH) return std::nullopt;
  const std::string_view bytes(name.value, name.length);
  const bool terminated =
      bytes.size() >= 2 && bytes.back() == '\0' && bytes.find('\0') == bytes.size() - 1 && bytes.front() != kRaw;
  std::string out;
  if (terminated) {
    out.assign(bytes.substr(0, bytes.size() - 1));
  } else {
    out.push_back(kRaw);
    for (char c : bytes) {
      if (c == '\0' || c == kEscape) {
        out.push_back(kEscape);
        out.push_back(c == '\0' ? '0' : '2');
      } else {
        out.push_back(c);
      }
    }
  }
  if (out.size() > RTOTEM_GROUP_NAME_MAX) return std::nullopt;
  return out;
}

std::optional<cpg_name> cpg_group_name(std::string_view rtotem_name) {
  cpg_name out{};
  std::string bytes;
  if (rtotem_name.empty() || rtotem_name.front() != kRaw) {
    bytes.assign(rtotem_name);
    bytes.push_back('\0');
  } else {
    for (std::size_t i = 1; i < rtotem_name.size(); ++i) {
      char c = rtotem_name[i];
      if (c == kEscape) {
        if (++i == rtotem_name.size()) return std::nullopt;
        if (rtotem_name[i] != '0' && rtotem_name[i] != '2') return std::nullopt;
        c = rtotem_name[i] == '0' ? '\0' : kEscape;
      }
      bytes.push_back(c);
    }
  }
  if (bytes.size() > CPG_MAX_NAME_LENGTH) return std::nullopt;
  out.length = static_cast<uint32_t>(bytes.size());
  std::memcpy(out.value, bytes.data(), bytes.size());
  return out;
}

}  // namespace rtotem::corosync
