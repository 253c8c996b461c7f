#include "src/ipc/key_value.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>

namespace rtotem::ipc {
namespace {

struct TypeInfo {
  KeyType type;
  std::string_view name;
  std::size_t width;
};

constexpr std::array<TypeInfo, 12> kTypes{{
    {KeyType::kInt8, "i8", 1},
    {KeyType::kUint8, "u8", 1},
    {KeyType::kInt16, "i16", 2},
    {KeyType::kUint16, "u16", 2},
    {KeyType::kInt32, "i32", 4},
    {KeyType::kUint32, "u32", 4},
    {KeyType::kInt64, "i64", 8},
    {KeyType::kUint64, "u64", 8},
    {KeyType::kFloat, "flt", 4},
    {KeyType::kDouble, "dbl", 8},
    {KeyType::kString, "str", 0},
    {KeyType::kBinary, "bin", 0},
}};

const TypeInfo& info(KeyType type) noexcept { return kTypes[static_cast<std::size_t>(type) - 1]; }

bool is_signed(KeyType t) noexcept {
  return t == KeyType::kInt8 || t == KeyType::kInt16 || t == KeyType::kInt32 || t == KeyType::kInt64;
}

// A signed number's value from its bits in `width` bytes.
std::int64_t signed_of(std::uint64_t bits, std::size_t width) noexcept {
  const unsigned shift = 64 - 8 * static_cast<unsigned>(width);
  return static_cast<std::int64_t>(bits << shift) >> shift;
}

std::uint64_t mask_of(std::size_t width) noexcept {
  return width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
}

}  // namespace

std::optional<std::size_t> width_of(std::uint8_t type) noexcept {
  if (type < 1 || type > kTypes.size()) return std::nullopt;
  return kTypes[type - 1].width;
}

bool is_number(KeyType type) noexcept { return type != KeyType::kString && type != KeyType::kBinary; }

bool valid_key_prefix(std::string_view prefix) noexcept {
  if (prefix.size() > kKeyNameMax) return false;
  for (char c : prefix) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '/' || c == '-' || c == ':';
    if (!ok) return false;
  }
  return true;
}

bool valid_key_name(std::string_view name) noexcept { return name.size() >= kKeyNameMin && valid_key_prefix(name); }

std::string_view type_name(KeyType type) noexcept { return info(type).name; }

std::optional<KeyType> type_named(std::string_view name) noexcept {
  for (const TypeInfo& t : kTypes)
    if (t.name == name) return t.type;
  return std::nullopt;
}

std::string value_text(const KeyValue& value) {
  const std::size_t width = info(value.type).width;
  switch (value.type) {
    case KeyType::kString: return value.data;
    case KeyType::kBinary: {
      std::string hex;
      for (unsigned char c : value.data) hex += fmt::format("{:02x}", c);
      return hex;
    }
    case KeyType::kFloat: return fmt::format("{}", std::bit_cast<float>(static_cast<std::uint32_t>(value.bits)));
    case KeyType::kDouble: return fmt::format("{}", std::bit_cast<double>(value.bits));
    default: return is_signed(value.type) ? std::to_string(signed_of(value.bits, width)) : std::to_string(value.bits);
  }
}

std::optional<KeyValue> parse_value(KeyType type, std::string_view text) {
  KeyValue v{type, 0, {}};
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const std::size_t width = info(type).width;
  switch (type) {
    case KeyType::kString:
      if (text.size() > kKeyValueMax) return std::nullopt;
      v.data = std::string(text);
      return v;
    case KeyType::kBinary: {
      if (text.size() % 2 != 0 || text.size() / 2 > kKeyValueMax) return std::nullopt;
      for (std::size_t i = 0; i < text.size(); i += 2) {
        unsigned byte = 0;
        const auto [end, ec] = std::from_chars(first + i, first + i + 2, byte, 16);
        if (ec != std::errc{} || end != first + i + 2) return std::nullopt;
        v.data.push_back(static_cast<char>(byte));
      }
      return v;
    }
    case KeyType::kFloat:
    case KeyType::kDouble: {
      double d = 0;
      const auto [end, ec] = std::from_chars(first, last, d);
      if (ec != std::errc{} || end != last || text.empty()) return std::nullopt;
      if (type == KeyType::kFloat) {
        if (std::abs(d) > std::numeric_limits<float>::max()) return std::nullopt;
        v.bits = std::bit_cast<std::uint32_t>(static_cast<float>(d));
      } else {
        v.bits = std::bit_cast<std::uint64_t>(d);
      }
      return v;
    }
    default: break;
  }
  if (is_signed(type)) {
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(first, last, n);
    if (ec != std::errc{} || end != last || text.empty()) return std::nullopt;
    const std::int64_t max =
        width == 8 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (8 * width - 1)) - 1;
    if (n > max || n < -max - 1) return std::nullopt;
    v.bits = static_cast<std::uint64_t>(n) & mask_of(width);
    return v;
  }
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(first, last, n);
  if (ec != std::errc{} || end != last || text.empty() || n > mask_of(width)) return std::nullopt;
  v.bits = n;
  return v;
}

void put_value(BodyWriter& out, const KeyValue& value) {
  out.u8(static_cast<std::uint8_t>(value.type));
  const std::size_t width = info(value.type).width;
  if (width == 0) {
    out.string(value.data);
    return;
  }
  for (std::size_t i = width; i-- > 0;) out.u8(static_cast<std::uint8_t>(value.bits >> (8 * i)));
}

std::optional<KeyValue> read_value(WireReader& in) {
  const std::uint8_t type = in.get_u8();
  const std::optional<std::size_t> width = width_of(type);
  if (in.short_read() || !width) return std::nullopt;
  KeyValue v{static_cast<KeyType>(type), 0, {}};
  if (*width == 0) {
    const auto data = read_string(in, kKeyValueMax);
    if (!data) return std::nullopt;
    v.data = std::string(*data);
    return v;
  }
  for (std::size_t i = 0; i < *width; ++i) v.bits = (v.bits << 8) | in.get_u8();
  if (in.short_read()) return std::nullopt;
  return v;
}

std::size_t native_bytes(const KeyValue& value, void* out) noexcept {
  const std::size_t width = info(value.type).width;
  if (width == 0) {
    std::memcpy(out, value.data.data(), value.data.size());
    return value.data.size();
  }
  switch (width) {
    case 1: {
      const auto v = static_cast<std::uint8_t>(value.bits);
      std::memcpy(out, &v, 1);
      break;
    }
    case 2: {
      const auto v = static_cast<std::uint16_t>(value.bits);
      std::memcpy(out, &v, 2);
      break;
    }
    case 4: {
      const auto v = static_cast<std::uint32_t>(value.bits);
      std::memcpy(out, &v, 4);
      break;
    }
    default: std::memcpy(out, &value.bits, 8);
  }
  return width;
}

std::optional<KeyValue> from_native(KeyType type, const void* data, std::size_t size) {
  const std::optional<std::size_t> width = width_of(static_cast<std::uint8_t>(type));
  if (!width) return std::nullopt;
  KeyValue v{type, 0, {}};
  if (*width == 0) {
    if (size > kKeyValueMax || (size > 0 && data == nullptr)) return std::nullopt;
    v.data.assign(static_cast<const char*>(data), size);
    return v;
  }
  if (size != *width || data == nullptr) return std::nullopt;
  switch (size) {
    case 1: {
      std::uint8_t n;
      std::memcpy(&n, data, 1);
      v.bits = n;
      break;
    }
    case 2: {
      std::uint16_t n;
      std::memcpy(&n, data, 2);
      v.bits = n;
      break;
    }
    case 4: {
      std::uint32_t n;
      std::memcpy(&n, data, 4);
      v.bits = n;
      break;
    }
    default: std::memcpy(&v.bits, data, 8);
  }
  return v;
}

}  // namespace rtotem::ipc
