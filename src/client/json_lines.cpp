#include "src/client/json_lines.hpp"

#include <cctype>
#include <charconv>
#include <optional>

namespace rtotem::client {
namespace {

class Flattener {
 public:
  explicit Flattener(std::string_view in) : in_(in) {}

  std::optional<std::string> run() {
    skip();
    if (!value("")) return std::nullopt;
    skip();
    if (pos_ != in_.size()) return std::nullopt;
    return out_;
  }

 private:
  void skip() {
    while (pos_ < in_.size() && std::isspace(static_cast<unsigned char>(in_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < in_.size() && in_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // A scalar's text (strings unquoted), or nullopt.
  std::optional<std::string> scalar() {
    skip();
    if (pos_ >= in_.size()) return std::nullopt;
    if (in_[pos_] == '"') {
      std::string s;
      for (++pos_; pos_ < in_.size() && in_[pos_] != '"'; ++pos_) {
        if (in_[pos_] == '\\' && pos_ + 1 < in_.size()) {
          ++pos_;
          // \u00XX: one byte (the daemon writes every other byte this way, json_quote.hpp).
          unsigned value = 0;
          if (in_[pos_] == 'u' && pos_ + 4 < in_.size() &&
              std::from_chars(in_.data() + pos_ + 1, in_.data() + pos_ + 5, value, 16).ptr == in_.data() + pos_ + 5 &&
              value <= 0xff) {
            s += static_cast<char>(value);
            pos_ += 4;
            continue;
          }
        }
        s += in_[pos_];
      }
      if (pos_ >= in_.size()) return std::nullopt;
      ++pos_;
      return s;
    }
    const std::size_t start = pos_;
    while (pos_ < in_.size() &&
           (std::isalnum(static_cast<unsigned char>(in_[pos_])) || in_[pos_] == '-' || in_[pos_] == '.'))
      ++pos_;
    if (pos_ == start) return std::nullopt;
    return std::string(in_.substr(start, pos_ - start));
  }
  // An object's members on one line, "k=v k=v": for objects inside arrays.
  std::optional<std::string> inline_object() {
    std::string s;
    if (eat('}')) return s;
    do {
      const auto key = scalar();
      if (!key || !eat(':')) return std::nullopt;
      const auto v = scalar();
      if (!v) return std::nullopt;
      s += (s.empty() ? "" : " ") + *key + "=" + *v;
    } while (eat(','));
    if (!eat('}')) return std::nullopt;
    return s;
  }
  bool value(const std::string& key) {
    if (eat('{')) {
      if (eat('}')) return line(key, "{}");
      do {
        const auto name = scalar();
        if (!name || !eat(':') || !value(key.empty() ? *name : key + "." + *name)) return false;
      } while (eat(','));
      return eat('}');
    }
    if (eat('[')) {
      std::string items;
      if (!eat(']')) {
        do {
          const auto item = eat('{') ? inline_object() : scalar();
          if (!item) return false;
          items += (items.empty() ? "" : ", ") + *item;
        } while (eat(','));
        if (!eat(']')) return false;
      }
      return line(key, items);
    }
    const auto v = scalar();
    return v && line(key, *v);
  }
  bool line(const std::string& key, const std::string& v) {
    out_ += key + ": " + v + "\n";
    return true;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  std::string out_;
};

}  // namespace

std::string json_lines(std::string_view json) {
  auto flat = Flattener(json).run();
  return flat ? *flat : std::string(json) + "\n";
}

}  // namespace rtotem::client
