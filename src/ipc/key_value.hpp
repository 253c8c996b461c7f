// A key store value as it travels between rtotemd and its clients: cmap's types (the numbers are
// cmap's CMAP_VALUETYPE_*, so a cmap-compatible library can pass them through), their names as
// corosync-cmapctl writes them, and their text.
//
// Wire form: u8 type, then a number in its width, big-endian (float and double as their IEEE
// bits), or a string/binary as u32 length and bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/ipc/ipc_protocol.hpp"

namespace rtotem::ipc {

enum class KeyType : std::uint8_t {
  kInt8 = 1,
  kUint8 = 2,
  kInt16 = 3,
  kUint16 = 4,
  kInt32 = 5,
  kUint32 = 6,
  kInt64 = 7,
  kUint64 = 8,
  kFloat = 9,
  kDouble = 10,
  kString = 11,
  kBinary = 12,
};

// cmap's bounds on a key's name: 3 to 255 bytes of letters, digits and "._/-:".
inline constexpr std::size_t kKeyNameMin = 3;
inline constexpr std::size_t kKeyNameMax = 255;
// A string or binary value, at most: the key store holds configuration and small state, and an
// answer listing many keys must fit one IPC buffer.
inline constexpr std::size_t kKeyValueMax = 16 * 1024;

struct KeyValue {
  KeyType type = KeyType::kUint8;
  std::uint64_t bits = 0;  // a number: its value in its width (two's complement; IEEE for floats)
  std::string data;        // kString, kBinary

  static KeyValue u8(std::uint8_t v) { return {KeyType::kUint8, v, {}}; }
  static KeyValue i32(std::int32_t v) { return {KeyType::kInt32, static_cast<std::uint32_t>(v), {}}; }
  static KeyValue u32(std::uint32_t v) { return {KeyType::kUint32, v, {}}; }
  static KeyValue u64(std::uint64_t v) { return {KeyType::kUint64, v, {}}; }
  static KeyValue string(std::string_view s) { return {KeyType::kString, 0, std::string(s)}; }
  bool operator==(const KeyValue&) const = default;
};

// The width of a number type in bytes; 0 for kString and kBinary; nullopt for an unknown type.
std::optional<std::size_t> width_of(std::uint8_t type) noexcept;
bool is_number(KeyType type) noexcept;

bool valid_key_name(std::string_view name) noexcept;
// The start of a key name (empty too): a prefix to list or track.
bool valid_key_prefix(std::string_view prefix) noexcept;

// "u32", "str"...: corosync-cmapctl's names; nullopt for a name it does not know.
std::string_view type_name(KeyType type) noexcept;
std::optional<KeyType> type_named(std::string_view name) noexcept;

// The value as corosync-cmapctl prints it: a number in decimal, a string as is, binary in hex.
std::string value_text(const KeyValue& value);
// `text` read as a value of `type` (binary: hex digits); nullopt if it is not one, or out of range.
std::optional<KeyValue> parse_value(KeyType type, std::string_view text);

void put_value(BodyWriter& out, const KeyValue& value);
// A value from `in`; nullopt if its type is unknown, it runs short, or a string is over kKeyValueMax.
std::optional<KeyValue> read_value(WireReader& in);

// The value's bytes as C holds them (a number in host order and its width; a string without
// its terminator), into `out`, which has room for 8 bytes or the data: the size written.
std::size_t native_bytes(const KeyValue& value, void* out) noexcept;
// A value from C's bytes; nullopt if `size` is not the type's width, or too large.
std::optional<KeyValue> from_native(KeyType type, const void* data, std::size_t size);

}  // namespace rtotem::ipc
