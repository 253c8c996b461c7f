// Typed reading of config entries: numbers in range, booleans, choices, each refusal opening with
// "file:line: section.key:"; and the warnings the parse collects. Internal to daemon_config.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/daemon/config/config_tree.hpp"
#include "src/daemon/config/daemon_config.hpp"
#include "base/result.hpp"

namespace rtotem::config {

// One parse's file name, warnings, and the keys it keeps for the key store.
class ParseContext {
 public:
  explicit ParseContext(std::string_view origin) : origin_(origin) {}

  std::string_view origin() const noexcept { return origin_; }
  // A refusal about `line`: "origin:line: what".
  template <class... Args>
  Error fail(int line, fmt::format_string<Args...> format, Args&&... args) const {
    return Error::make("{}:{}: {}", origin_, line, fmt::format(format, std::forward<Args>(args)...));
  }
  // Stored as "origin:line: text".
  void warn(int line, std::string_view text);
  // Corosync has it, rtotem does not: accepted so that a corosync.conf loads as it is.
  void warn_ignored_key(std::string_view section, const ConfigEntry& entry);
  void warn_ignored_section(std::string_view parent, const ConfigSection& section);
  // A key rtotem does not use, kept under its cmap name `key`. `unknown`: not even corosync's;
  // those are named together in one warning, so that a typo shows without a line per key.
  void keep(std::string key, const ConfigEntry& entry, bool unknown);
  // Every entry of `section` and of the sections within it, under `path`.path.
  void keep_section(std::string_view path, const ConfigSection& section, bool unknown);
  // The kept keys sorted by name, each once with the file's last value; renames each
  // nodelist.node.N. prefix to nodelist.node.order[N]. (N: the node's place in the file).
  std::vector<StoredKey> take_stored(std::span<const std::size_t> order);
  // The warnings in line order (sections are read in a fixed order, not the file's).
  std::vector<std::string> take_warnings();

 private:
  std::string_view origin_;
  std::vector<std::pair<int, std::string>> warnings_;
  std::vector<StoredKey> stored_;
  std::vector<std::pair<std::string, int>> unknown_;  // cmap name, line
};

// Whether `key` is one of `names`; a name ending in '*' matches every key with that prefix.
bool matches_any(std::span<const std::string_view> names, std::string_view key) noexcept;

// The value of one entry `section.key`, read as the type of its key.
class Value {
 public:
  Value(const ParseContext& context, std::string_view section, const ConfigEntry& entry) noexcept
      : context_(context), section_(section), entry_(entry) {}

  std::string_view key() const noexcept { return entry_.key; }
  std::string_view text() const noexcept { return entry_.value; }
  int line() const noexcept { return entry_.line; }

  // Decimal digits only; `unit` (may be empty) is named in the range of a refusal.
  Result<std::uint32_t> number(std::uint32_t min, std::uint32_t max, std::string_view unit) const;
  // on/off, yes/no, true/false.
  Result<bool> boolean() const;
  // The index of the value in `allowed`.
  Result<std::size_t> choice(std::span<const std::string_view> allowed) const;

  // Store the value into `out`, checked as above; a string must not be empty.
  Result<void> read(std::uint32_t& out, std::uint32_t min, std::uint32_t max, std::string_view unit) const;
  Result<void> read(bool& out) const;
  Result<void> read(std::string& out) const;

  // "origin:line: section.key: what".
  template <class... Args>
  Error fail(fmt::format_string<Args...> format, Args&&... args) const {
    return context_.fail(entry_.line, "{}.{}: {}", section_, entry_.key,
                         fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  const ParseContext& context_;
  std::string_view section_;
  const ConfigEntry& entry_;
};

// Section readers answer for each entry whether it was theirs; known(read(...)) makes that "yes".
inline Result<bool> known(Result<void> read) {
  if (!read) return read.error();
  return true;
}

// Refuses any section inside `section` (named `path`), which holds keys only.
Result<void> refuse_sections(const ParseContext& context, const ConfigSection& section, std::string_view path);
// Keeps every section inside `section` under `path` (its cmap name), as unknown keys.
void keep_sections(ParseContext& context, const ConfigSection& section, std::string_view path);

// Reads every entry of `section` (named `path` in messages) with `apply`, a Result<bool>(const
// Value&) that returns false for a key it does not use. Such a key is kept under `store_as`
// (empty: `path`), and warned about on its own line if it is one of `corosync_keys`.
template <class Apply>
Result<void> read_entries(ParseContext& context, const ConfigSection& section, std::string_view path,
                          std::span<const std::string_view> corosync_keys, Apply&& apply,
                          std::string_view store_as = {}) {
  for (const ConfigEntry& entry : section.entries) {
    const Value value(context, path, entry);
    auto taken = apply(value);
    if (!taken) return taken.error();
    if (*taken) continue;
    const bool corosync = matches_any(corosync_keys, entry.key);
    if (corosync) context.warn_ignored_key(path, entry);
    context.keep(fmt::format("{}.{}", store_as.empty() ? path : store_as, entry.key), entry, !corosync);
  }
  return {};
}

}  // namespace rtotem::config
