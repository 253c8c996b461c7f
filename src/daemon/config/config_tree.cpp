// Line-by-line parse of a config file into a ConfigSection tree; every refusal names its line.
#include "src/daemon/config/config_tree.hpp"

#include <algorithm>
#include <utility>

namespace rtotem::config {
namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

bool is_name_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

// A control byte (NUL, escape...) in a config file is corruption, and would garble the messages
// and logs that quote the line.
const char* find_control(std::string_view line) noexcept {
  const auto* it = std::find_if(line.begin(), line.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && !is_space(c)) || byte == 0x7f;
  });
  return it == line.end() ? nullptr : it;
}

// The parse in progress: open sections form a stack whose bottom is the top level; a closed section
// is moved into its parent, so no reference into a growing vector is ever held.
class TreeBuilder {
 public:
  explicit TreeBuilder(std::string_view origin) : origin_(origin) { open_.emplace_back(); }

  Result<void> line(std::string_view raw, int number) {
    number_ = number;
    if (const char* bad = find_control(raw))
      return fail("control character 0x{:02x} in the line", static_cast<unsigned char>(*bad));
    const std::string_view text = trim(raw);
    if (text.empty() || text.front() == '#') return {};
    if (text == "}") return close();
    if (text.back() == '{') return open(trim(text.substr(0, text.size() - 1)));
    if (text.find_first_of("{}") != std::string_view::npos)
      return fail("'{{' must end a \"name {{\" line and '}}' stand alone on its line");
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return fail("expected \"key: value\", \"name {{\" or \"}}\", got '{}'", text);
    return entry(trim(text.substr(0, colon)), trim(text.substr(colon + 1)));
  }

  Result<ConfigSection> finish() {
    if (open_.size() > 1) {
      const ConfigSection& last = open_.back();
      return Error::make("{}:{}: section '{}' is never closed (end of file; a '}}' is missing)", origin_, last.line,
                         last.name);
    }
    return std::move(open_.front());
  }

 private:
  template <class... Args>
  Error fail(fmt::format_string<Args...> format, Args&&... args) const {
    return Error::make("{}:{}: {}", origin_, number_, fmt::format(format, std::forward<Args>(args)...));
  }

  Result<void> check_name(std::string_view what, std::string_view name) const {
    if (name.empty()) return fail("empty {}", what);
    if (!std::all_of(name.begin(), name.end(), is_name_char))
      return fail("{} '{}': only letters, digits, '_', '-' and '.' are allowed", what, name);
    return {};
  }

  Result<void> open(std::string_view name) {
    if (auto ok = check_name("section name", name); !ok) return ok;
    if (open_.size() > kSectionDepthMax)
      return fail("section '{}' nests deeper than {} levels", name, kSectionDepthMax);
    if (open_.back().sections.size() >= kSectionsPerSectionMax)
      return fail("more than {} sections in one section", kSectionsPerSectionMax);
    open_.push_back(ConfigSection{std::string(name), number_, {}, {}});
    return {};
  }

  Result<void> close() {
    if (open_.size() == 1) return fail("'}}' closes no open section");
    ConfigSection done = std::move(open_.back());
    open_.pop_back();
    open_.back().sections.push_back(std::move(done));
    return {};
  }

  Result<void> entry(std::string_view key, std::string_view value) {
    if (auto ok = check_name("key", key); !ok) return ok;
    ConfigSection& section = open_.back();
    const auto same = std::find_if(section.entries.begin(), section.entries.end(),
                                   [&](const ConfigEntry& e) { return e.key == key; });
    if (same != section.entries.end()) return fail("key '{}' repeated (first on line {})", key, same->line);
    if (section.entries.size() >= kKeysPerSectionMax)
      return fail("more than {} keys in one section", kKeysPerSectionMax);
    section.entries.push_back(ConfigEntry{std::string(key), std::string(value), number_});
    return {};
  }

  std::string_view origin_;
  std::vector<ConfigSection> open_;
  int number_ = 0;
};

}  // namespace

Result<ConfigSection> parse_config_tree(std::string_view text, std::string_view origin) {
  if (text.size() > kConfigBytesMax)
    return Error::make("{}: {} bytes, more than the {} a config file may hold", origin, text.size(), kConfigBytesMax);
  TreeBuilder builder(origin);
  int number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view raw = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (auto ok = builder.line(raw, ++number); !ok) return ok.error();
  }
  return builder.finish();
}

}  // namespace rtotem::config
