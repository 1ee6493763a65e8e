// The one statistics tree. Components count in plain struct members (no
// string-keyed counters in hot loops) and register those members once, by
// reference, with a name and a one-line description, into a group of the tree
// named by their instance path (as SST's registerStatistic and Ramulator 2's
// stats do). The tree is dumped as a JSON object keyed by that path when a
// result is written; derived figures (means, ratios) are registered as
// functions. Units are part of the name ("busy_s", "energy_j", "bytes"), and
// typed quantities are written in their base unit (Time in seconds, Energy in
// joules, Bytes as bytes), so the name never lies about the number.
//
// A group holds pointers into the component that registered: dump it while the
// component lives (typically: build the tree, dump it, drop it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/units.hpp"

namespace bitline {

using Json = nlohmann::json;

/// One statistic's value when the tree is dumped (a number in its base unit, a flag or a text).
using StatValue = std::variant<double, int64_t, uint64_t, bool, std::string>;

/// A typed quantity (core/units.hpp): its raw value is in the base unit, except Time's (picoseconds; written in s).
template <class T>
concept has_raw = requires(const T& v) {
  v.raw();
};

class StatGroup {
 public:
  /// Registers `value`, read when the tree is dumped.
  template <class T>
  StatGroup& add(std::string name, const T& value, std::string desc) {
    return add_entry(std::move(name), std::move(desc), Reader(std::in_place_index<0>, [&value] { return to_stat_value(value); }));
  }
  /// Registers a derived figure, computed when the tree is dumped: `f` returns a number, a typed quantity, a
  /// flag or a text (as `add`), or any JSON value (an object, a list; its caller includes nlohmann/json.hpp).
  template <class F>
  StatGroup& derived(std::string name, F f, std::string desc) {
    using R = std::decay_t<std::invoke_result_t<F&>>;
    // (A JSON value converts to anything, a string included: it is tested first.)
    if constexpr (!std::is_same_v<R, Json> &&
                  (std::is_arithmetic_v<R> || std::is_same_v<R, Time> || has_raw<R> || std::is_convertible_v<R, std::string>))
      return add_entry(std::move(name), std::move(desc),
                       Reader(std::in_place_index<0>, [f = std::move(f)]() mutable { return to_stat_value(f()); }));
    else
      return add_entry(std::move(name), std::move(desc), Reader(std::in_place_index<1>, std::move(f)));
  }
  /// The child group `name` (created on first use); a dotted name walks several levels.
  StatGroup& group(std::string_view name) {
    StatGroup* cur = this;
    while (!name.empty()) {
      const size_t dot = name.find('.');
      auto& slot = cur->children_[std::string(name.substr(0, dot))];
      if (!slot) slot = std::make_unique<StatGroup>();
      cur = slot.get();
      name = dot == std::string_view::npos ? std::string_view{} : name.substr(dot + 1);
    }
    return *cur;
  }

  /// Every statistic and group below this one, as a JSON object.
  Json dump() const;
  /// The same tree with each statistic's description in place of its value (for `describe` and the docs).
  Json describe() const;
  size_t size() const { return entries_.size(); }

 private:
  /// A registered member (read as a StatValue) or a derived figure (a function giving JSON).
  using Reader = std::variant<std::function<StatValue()>, std::function<Json()>>;
  struct Entry {
    std::string name, desc;
    Reader read;
  };

  StatGroup& add_entry(std::string name, std::string desc, Reader read) {
    for (const auto& e : entries_)
      if (e.name == name) throw std::logic_error("statistic '" + name + "' registered twice");
    if (children_.count(name)) throw std::logic_error("statistic '" + name + "' has the name of a group");
    entries_.push_back({std::move(name), std::move(desc), std::move(read)});
    return *this;
  }

  template <class T>
  static StatValue to_stat_value(const T& v) {
    if constexpr (std::is_same_v<T, Time>)
      return to_s(v);
    else if constexpr (has_raw<T>)  // Energy (J), Bytes, Power (W), Bandwidth (B/s): the base unit
      return to_stat_value(v.raw());
    else if constexpr (std::is_same_v<T, bool>)
      return v;
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return int64_t(v);
    else if constexpr (std::is_integral_v<T>)
      return uint64_t(v);
    else if constexpr (std::is_floating_point_v<T>)
      return double(v);
    else
      return std::string(v);
  }

  std::vector<Entry> entries_;
  std::map<std::string, std::unique_ptr<StatGroup>, std::less<>> children_;
};

/// The root of a tree.
using StatsTree = StatGroup;

/// A tree built by `fill` (a record's register_stats), dumped: the json() of a result record.
Json dump_stats(const std::function<void(StatGroup&)>& fill);

}  // namespace bitline
