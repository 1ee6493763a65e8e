#include "core/text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/error.hpp"
#include "core/json_io.hpp"

namespace bitline {

namespace {
bool digit(char c) { return c >= '0' && c <= '9'; }
/// The digits at the start of `s` (after an optional '-'): how many, 0 when they have a leading zero before another
/// digit ("07"), which no bitline text may have.
size_t integer_digits(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && digit(s[n])) ++n;
  if (n > 1 && s[0] == '0') return 0;
  return n;
}
}  // namespace

bool parse_decimal_integer(std::string_view s, int64_t& out) {
  const std::string_view body = !s.empty() && s[0] == '-' ? s.substr(1) : s;
  const size_t n = integer_digits(body);
  if (n == 0 || n != body.size()) return false;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return false;
  out = v;
  return true;
}

bool parse_decimal_number(std::string_view s, double& out) {
  std::string_view rest = !s.empty() && s[0] == '-' ? s.substr(1) : s;
  size_t n = integer_digits(rest);
  const bool whole = n > 0;
  rest.remove_prefix(n);
  if (!whole && !rest.empty() && digit(rest[0])) return false;  // a leading zero ("07")
  bool fraction = false;
  if (!rest.empty() && rest[0] == '.') {
    rest.remove_prefix(1);
    n = 0;
    while (n < rest.size() && digit(rest[n])) ++n;
    fraction = n > 0;
    rest.remove_prefix(n);
  }
  if (!whole && !fraction) return false;
  if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E')) {
    rest.remove_prefix(1);
    if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) rest.remove_prefix(1);
    n = 0;
    while (n < rest.size() && digit(rest[n])) ++n;
    if (n == 0) return false;
    rest.remove_prefix(n);
  }
  if (!rest.empty()) return false;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}

std::vector<std::string> split_list(std::string_view text, char sep, std::string_view what) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    const std::string_view item = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const auto bad = [&](std::string_view why) {
      return ConfigError(fmt::format("{} '{}': {} (item {}; give the items separated by '{}', e.g. a{}b)", what, text_brief(text), why,
                                     items.size() + 1, sep, sep));
    };
    if (item.empty()) throw bad("an empty item");
    if (item.front() == ' ' || item.front() == '\t' || item.back() == ' ' || item.back() == '\t') throw bad("blanks around an item");
    items.emplace_back(item);
    if (end == std::string_view::npos) return items;
    start = end + 1;
  }
}

}  // namespace bitline
