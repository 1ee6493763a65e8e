#include "core/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace bitline {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string_view closest_name(std::string_view s, const std::vector<std::string_view>& candidates, size_t max_distance) {
  std::string_view best;
  size_t best_d = max_distance + 1;
  for (std::string_view c : candidates) {
    const size_t d = edit_distance(s, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

ImplList::ImplList(std::string_view kind, std::vector<std::string_view> names, std::vector<std::string_view> descs)
    : kind_(kind), names_(std::move(names)), descs_(std::move(descs)) {
  if (names_.empty()) throw std::logic_error(fmt::format("registry of {}: no implementations", kind_));
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i].empty()) throw std::logic_error(fmt::format("registry of {}: an implementation without a name", kind_));
    if (descs_[i].empty()) throw std::logic_error(fmt::format("registry of {}: '{}' has no description", kind_, names_[i]));
    for (size_t j = 0; j < i; ++j)
      if (names_[j] == names_[i]) throw std::logic_error(fmt::format("registry of {}: '{}' registered twice", kind_, names_[i]));
  }
}

std::string ImplList::joined(std::string_view sep) const {
  std::string s;
  for (std::string_view n : names_) {
    if (!s.empty()) s += sep;
    s += n;
  }
  return s;
}

int64_t ImplList::find(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return int64_t(i);
  return -1;
}

std::string ImplList::unknown_message(std::string_view name) const {
  const std::string_view near = closest_name(name, names_);
  return fmt::format("'{}' is not one of {} ({}){}", name, joined(), kind_, near.empty() ? "" : fmt::format("; did you mean '{}'?", near));
}

size_t ImplList::index_of(std::string_view name, std::string_view key) const {
  const int64_t i = find(name);
  if (i >= 0) return size_t(i);
  throw ConfigError(key.empty() ? unknown_message(name) : fmt::format("{}: {}", key, unknown_message(name)));
}

}  // namespace bitline
