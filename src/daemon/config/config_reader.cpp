// Value parsing with ranges in the message, and the warning list kept in line order.
#include "src/daemon/config/config_reader.hpp"

#include <algorithm>
#include <charconv>

namespace rtotem::config {

void ParseContext::warn(int line, std::string_view text) {
  warnings_.emplace_back(line, fmt::format("{}:{}: {}", origin_, line, text));
}

void ParseContext::warn_ignored_key(std::string_view section, const ConfigEntry& entry) {
  warn(entry.line, fmt::format("{}.{}: ignored (corosync key rtotem does not support)", section, entry.key));
}

void ParseContext::warn_ignored_section(std::string_view parent, const ConfigSection& section) {
  const std::string path = parent.empty() ? section.name : fmt::format("{}.{}", parent, section.name);
  warn(section.line,
       fmt::format("section {}: ignored with all it holds (corosync section rtotem does not support)", path));
}

void ParseContext::keep(std::string key, const ConfigEntry& entry, bool unknown) {
  if (unknown) unknown_.emplace_back(key, entry.line);
  stored_.push_back({std::move(key), entry.value, entry.line});
}

void ParseContext::keep_section(std::string_view path, const ConfigSection& section, bool unknown) {
  for (const ConfigEntry& entry : section.entries) keep(fmt::format("{}.{}", path, entry.key), entry, unknown);
  for (const ConfigSection& inner : section.sections)
    keep_section(fmt::format("{}.{}", path, inner.name), inner, unknown);
}

namespace {

// "nodelist.node.N.rest" with N renumbered by `order`; any other key as it is.
std::string renumber_node(std::string key, std::span<const std::size_t> order) {
  constexpr std::string_view kNode = "nodelist.node.";
  if (!key.starts_with(kNode)) return key;
  std::size_t index = 0;
  const char* first = key.data() + kNode.size();
  const auto [end, ec] = std::from_chars(first, key.data() + key.size(), index);
  if (ec != std::errc{} || *end != '.' || index >= order.size()) return key;
  return fmt::format("{}{}{}", kNode, order[index], std::string_view(end, key.data() + key.size() - end));
}

}  // namespace

std::vector<StoredKey> ParseContext::take_stored(std::span<const std::size_t> order) {
  for (StoredKey& k : stored_) k.key = renumber_node(std::move(k.key), order);
  for (auto& [key, line] : unknown_) key = renumber_node(std::move(key), order);
  // Stable: among equal names the file's last stays, as a second cmap set replaces the first.
  std::stable_sort(stored_.begin(), stored_.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  std::vector<StoredKey> out;
  for (StoredKey& k : stored_) {
    if (!out.empty() && out.back().key == k.key)
      out.back() = std::move(k);
    else
      out.push_back(std::move(k));
  }
  stored_.clear();
  if (!unknown_.empty()) {
    constexpr std::size_t kNamed = 8;
    std::string names;
    for (std::size_t i = 0; i < unknown_.size() && i < kNamed; ++i)
      names += fmt::format("{}{} (line {})", i == 0 ? "" : ", ", unknown_[i].first, unknown_[i].second);
    if (unknown_.size() > kNamed) names += fmt::format(" and {} more", unknown_.size() - kNamed);
    warn(unknown_.front().second,
         fmt::format("not used by rtotem, kept in the key store as corosync keeps them in cmap: {}", names));
    unknown_.clear();
  }
  return out;
}

std::vector<std::string> ParseContext::take_warnings() {
  std::stable_sort(warnings_.begin(), warnings_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  out.reserve(warnings_.size());
  for (auto& [line, text] : warnings_) out.push_back(std::move(text));
  warnings_.clear();
  return out;
}

bool matches_any(std::span<const std::string_view> names, std::string_view key) noexcept {
  return std::any_of(names.begin(), names.end(), [key](std::string_view name) {
    if (name.ends_with('*')) return key.starts_with(name.substr(0, name.size() - 1));
    return key == name;
  });
}

Result<void> refuse_sections(const ParseContext& context, const ConfigSection& section, std::string_view path) {
  if (section.sections.empty()) return {};
  const ConfigSection& first = section.sections.front();
  return context.fail(first.line, "unknown section '{}.{}' ({} holds keys only)", path, first.name, path);
}

void keep_sections(ParseContext& context, const ConfigSection& section, std::string_view path) {
  for (const ConfigSection& inner : section.sections)
    context.keep_section(fmt::format("{}.{}", path, inner.name), inner, true);
}

Result<std::uint32_t> Value::number(std::uint32_t min, std::uint32_t max, std::string_view unit) const {
  const std::string_view digits = text();
  const std::string range =
      unit.empty() ? fmt::format("[{}, {}]", min, max) : fmt::format("[{}, {}] {}", min, max, unit);
  std::uint64_t value = 0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  // from_chars takes no sign or space, so "digits only" is "parsed to the end".
  if (digits.empty() || ec == std::errc::invalid_argument || ptr != end)
    return fail("'{}' is not a number (allowed: {})", digits, range);
  if (ec == std::errc::result_out_of_range || value < min || value > max)
    return fail("{} is out of range {}", digits, range);
  return static_cast<std::uint32_t>(value);
}

Result<bool> Value::boolean() const {
  constexpr std::string_view kWords[] = {"on", "yes", "true", "off", "no", "false"};
  auto index = choice(kWords);
  if (!index) return index.error();
  return *index < 3;
}

Result<std::size_t> Value::choice(std::span<const std::string_view> allowed) const {
  const auto it = std::find(allowed.begin(), allowed.end(), text());
  if (it != allowed.end()) return static_cast<std::size_t>(it - allowed.begin());
  std::string list;
  for (std::string_view word : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", word);
  return fail("'{}' is not one of: {}", text(), list);
}

Result<void> Value::read(std::uint32_t& out, std::uint32_t min, std::uint32_t max, std::string_view unit) const {
  auto value = number(min, max, unit);
  if (!value) return value.error();
  out = *value;
  return {};
}

Result<void> Value::read(bool& out) const {
  auto value = boolean();
  if (!value) return value.error();
  out = *value;
  return {};
}

Result<void> Value::read(std::string& out) const {
  if (text().empty()) return fail("empty value");
  out = std::string(text());
  return {};
}

}  // namespace rtotem::config
