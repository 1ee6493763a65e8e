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
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/units.hpp"

namespace bitline {

using Json = nlohmann::json;

class StatGroup {
 public:
  /// Registers `value`, read when the tree is dumped.
  template <class T>
  StatGroup& add(std::string name, const T& value, std::string desc) {
    return add_entry(std::move(name), std::move(desc), [&value] { return to_json_value(value); });
  }
  /// Registers a derived figure, computed when the tree is dumped.
  StatGroup& derived(std::string name, std::function<Json()> f, std::string desc) {
    return add_entry(std::move(name), std::move(desc), std::move(f));
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
  Json dump() const {
    Json j = Json::object();
    for (const auto& e : entries_) j[e.name] = e.read();
    for (const auto& [name, child] : children_) j[name] = child->dump();
    return j;
  }
  /// The same tree with each statistic's description in place of its value (for `describe` and the docs).
  Json describe() const {
    Json j = Json::object();
    for (const auto& e : entries_) j[e.name] = e.desc;
    for (const auto& [name, child] : children_) j[name] = child->describe();
    return j;
  }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string name, desc;
    std::function<Json()> read;
  };

  StatGroup& add_entry(std::string name, std::string desc, std::function<Json()> read) {
    for (const auto& e : entries_)
      if (e.name == name) throw std::logic_error("statistic '" + name + "' registered twice");
    if (children_.count(name)) throw std::logic_error("statistic '" + name + "' has the name of a group");
    entries_.push_back({std::move(name), std::move(desc), std::move(read)});
    return *this;
  }

  template <class T>
  static Json to_json_value(const T& v) {
    if constexpr (std::is_same_v<T, Time>)
      return to_s(v);
    else if constexpr (std::is_same_v<T, Energy> || std::is_same_v<T, Bytes>)
      return v.raw();
    else
      return Json(v);
  }

  std::vector<Entry> entries_;
  std::map<std::string, std::unique_ptr<StatGroup>, std::less<>> children_;
};

/// The root of a tree.
using StatsTree = StatGroup;

}  // namespace bitline
