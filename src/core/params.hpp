// Parameters declared where they are used.
//
// A component's parameter struct lists its fields once, in a `visit` template:
//
//   struct Timing {
//     Time t_read;
//     template <class V> void visit(V& v) {
//       v(t_read, {.name = "tR", .def = "22.5us", .desc = "SLC page read latency",
//                  .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology", .min = 0});
//     }
//   };
//
// The same declaration drives three visitors: ParamLoader (reads a config
// section, checks units and ranges, rejects unknown keys), ParamDescriber
// (`bitline describe`) and ParamDumper (the resolved configuration written next
// to every result, core/param_dump.hpp). Nested sections use `v.section("name", member)`.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "core/units.hpp"

namespace bitline {

/// Declaration of one parameter. `def` uses the config syntax ("22.5us").
struct ParamInfo {
  std::string_view name;
  std::string_view def;
  std::string_view desc;
  std::string_view source;  // "PAPER, part: ...", "datasheet: ...", "derived: ...", "assumption: ..." (docs/papers.md)
  double min = -std::numeric_limits<double>::infinity();  // in SI base units
  double max = std::numeric_limits<double>::infinity();
  std::string_view choices = {};  // for a plain string that selects no code: "a|b|c" (a policy is a Choice<>, core/registry.hpp)
};

/// A piecewise-linear table y(x), e.g. tMWS/tR against wordlines sensed.
/// Config syntax: [[x0, y0], [x1, y1], ...] with strictly increasing x.
struct Table {
  std::vector<std::pair<double, double>> points;
  /// Linear interpolation, clamped to the end points.
  double at(double x) const;
  /// Interpolation of log10(y) (for quantities spanning decades, e.g. RBER).
  double at_log(double x) const;
};

// ---- value conversion ------------------------------------------------------
void parse_param(const ConfigNode& n, Time& out);
void parse_param(const ConfigNode& n, Bytes& out);
void parse_param(const ConfigNode& n, Bandwidth& out);
void parse_param(const ConfigNode& n, Energy& out);
void parse_param(const ConfigNode& n, Power& out);
void parse_param(const ConfigNode& n, EnergyPerBit& out);
void parse_param(const ConfigNode& n, Area& out);
void parse_param(const ConfigNode& n, double& out);
void parse_param(const ConfigNode& n, int64_t& out);
void parse_param(const ConfigNode& n, bool& out);
void parse_param(const ConfigNode& n, std::string& out);
void parse_param(const ConfigNode& n, Table& out);
void parse_param(const ConfigNode& n, std::vector<int64_t>& out);

double si_base_value(Time v);
double si_base_value(Bytes v);
double si_base_value(Bandwidth v);
double si_base_value(Energy v);
double si_base_value(Power v);
double si_base_value(EnergyPerBit v);
double si_base_value(Area v);
double si_base_value(double v);
double si_base_value(int64_t v);

template <class T>
constexpr std::string_view param_type_name() {
  if constexpr (std::is_same_v<T, Time>)
    return "time";
  else if constexpr (std::is_same_v<T, Bytes>)
    return "bytes";
  else if constexpr (std::is_same_v<T, Bandwidth>)
    return "bandwidth";
  else if constexpr (std::is_same_v<T, Energy>)
    return "energy";
  else if constexpr (std::is_same_v<T, Power>)
    return "power";
  else if constexpr (std::is_same_v<T, EnergyPerBit>)
    return "energy/bit";
  else if constexpr (std::is_same_v<T, Area>)
    return "area";
  else if constexpr (std::is_same_v<T, double>)
    return "number";
  else if constexpr (std::is_same_v<T, int64_t>)
    return "integer";
  else if constexpr (std::is_same_v<T, bool>)
    return "bool";
  else if constexpr (std::is_same_v<T, std::string>)
    return "choice";
  else if constexpr (is_choice_v<T>)
    return "choice";
  else if constexpr (std::is_same_v<T, Table>)
    return "table";
  else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
    return "list of integers";
  else
    return "?";
}

/// Formats the reason a value is out of range; empty when it is in range.
std::string range_violation(double si, const ParamInfo& info);

/// Reads one config section into a parameter struct.
class ParamLoader {
 public:
  /// `section` may be null (section absent: every parameter takes its default).
  ParamLoader(const ConfigNode* section, std::string path);

  template <class T>
  void operator()(T& field, const ParamInfo& info) {
    const std::string key = join(info.name);
    used_.insert(std::string(info.name));
    const ConfigNode* n = section_ ? section_->find(info.name) : nullptr;
    ConfigNode def_node;
    if (!n) {
      def_node = ConfigNode::parse(std::string(info.def), "default");
      def_node.origin = "built-in default";
      n = &def_node;
    }
    try {
      if constexpr (is_choice_v<T>) {
        // A policy: resolved here, once, through its registry.
        std::string name;
        parse_param(*n, name);
        field = T::named(name);
      } else {
        parse_param(*n, field);
      }
    } catch (const std::exception& e) {
      throw ConfigError(fmt::format("{}: {}: {}", n->origin, key, e.what()));
    }
    if constexpr (std::is_same_v<T, std::string>) {
      if (!info.choices.empty() && !choice_ok(field, info.choices))
        throw ConfigError(fmt::format("{}: {}: '{}' is not one of {}", n->origin, key, field, info.choices));
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      for (int64_t x : field) {
        std::string why = range_violation(double(x), info);
        if (!why.empty()) throw ConfigError(fmt::format("{}: {}: {}", n->origin, key, why));
      }
    } else if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, Table> && !is_choice_v<T>) {
      std::string why = range_violation(si_base_value(field), info);
      if (!why.empty()) throw ConfigError(fmt::format("{}: {}: {}", n->origin, key, why));
    }
  }

  template <class P>
  void section(std::string_view name, P& sub) {
    used_.insert(std::string(name));
    const ConfigNode* n = section_ ? section_->find(name) : nullptr;
    if (n && n->kind != ConfigNode::Kind::Map && n->kind != ConfigNode::Kind::Null)
      throw ConfigError(fmt::format("{}: {}: expected a section (a map of keys)", n->origin, join(name)));
    ParamLoader child(n && n->kind == ConfigNode::Kind::Map ? n : nullptr, join(name));
    sub.visit(child);
    child.finish();
  }

  /// Declares a key that the caller reads itself (e.g. an implementation name).
  void also_known(std::string_view name) { used_.insert(std::string(name)); }
  /// Throws for every key of the section that no parameter declared.
  void finish() const;
  const std::string& path() const { return path_; }

 private:
  std::string join(std::string_view name) const { return path_.empty() ? std::string(name) : path_ + "." + std::string(name); }
  static bool choice_ok(const std::string& v, std::string_view choices);
  const ConfigNode* section_;
  std::string path_;
  std::set<std::string> used_;
};

/// One implementation a policy key can choose (`bitline describe` lists them under the key).
struct ChoiceRow {
  std::string name, desc;
};

/// One row of `bitline describe`.
struct ParamRow {
  std::string path, type, def, desc, source, range;
  std::string kind;                // policies: the kind of implementation chosen (e.g. "KV layout")
  std::vector<ChoiceRow> choices;  // policies: every registered implementation
};

/// Collects the declarations of a parameter struct (for `bitline describe`).
class ParamDescriber {
 public:
  explicit ParamDescriber(std::string path) : path_(std::move(path)) {}
  template <class T>
  void operator()(T&, const ParamInfo& info) {
    ParamRow r;
    r.path = join(info.name);
    r.type = std::string(param_type_name<T>());
    r.def = std::string(info.def);
    r.desc = std::string(info.desc);
    r.source = std::string(info.source);
    r.range = range_text(info);
    if (!info.choices.empty()) r.range = std::string(info.choices);
    if constexpr (is_choice_v<T>) {
      const auto& reg = T::registry();
      r.range = reg.joined();
      r.kind = std::string(reg.kind());
      for (size_t i = 0; i < reg.size(); ++i) r.choices.push_back({std::string(reg.names()[i]), std::string(reg.descriptions()[i])});
    }
    rows_.push_back(std::move(r));
  }
  template <class P>
  void section(std::string_view name, P& sub) {
    ParamDescriber child(join(name));
    sub.visit(child);
    for (auto& r : child.rows_) rows_.push_back(std::move(r));
  }
  void also_known(std::string_view) {}
  const std::vector<ParamRow>& rows() const { return rows_; }

 private:
  std::string join(std::string_view name) const { return path_.empty() ? std::string(name) : path_ + "." + std::string(name); }
  static std::string range_text(const ParamInfo& info);
  std::string path_;
  std::vector<ParamRow> rows_;
};

/// Loads a parameter struct from the section at `path` of a config tree.
template <class P>
P load_params(const ConfigTree& tree, const std::string& path) {
  P p;
  const ConfigNode* n = tree.at(path);
  if (n && n->kind != ConfigNode::Kind::Map && n->kind != ConfigNode::Kind::Null)
    throw ConfigError(fmt::format("{}: {}: expected a section (a map of keys)", n->origin, path));
  ParamLoader loader(n && n->kind == ConfigNode::Kind::Map ? n : nullptr, path);
  p.visit(loader);
  loader.finish();
  return p;
}

/// The defaults of a parameter struct (every parameter at its declared default).
template <class P>
P default_params() {
  P p;
  ParamLoader loader(nullptr, "");
  p.visit(loader);
  return p;
}

template <class P>
std::vector<ParamRow> describe_params(const std::string& path) {
  P p{};
  ParamDescriber d(path);
  p.visit(d);
  return d.rows();
}

}  // namespace bitline
