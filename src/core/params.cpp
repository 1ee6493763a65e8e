#include "core/params.hpp"
#include "core/param_dump.hpp"
#include "core/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace bitline {
namespace {

const std::string& scalar_of(const ConfigNode& n, std::string_view what) {
  if (n.kind != ConfigNode::Kind::Scalar)
    throw std::invalid_argument(fmt::format("expected a {} value, found a {}", what,
                                            n.kind == ConfigNode::Kind::Map        ? "section"
                                            : n.kind == ConfigNode::Kind::Sequence ? "list"
                                                                                   : "empty value"));
  return n.scalar;
}

double parse_number(const std::string& s) {
  double v = 0;
  if (!parse_decimal_number(s, v)) throw std::invalid_argument(fmt::format("'{}' is not a number (finite, in decimal)", s));
  return v;
}

}  // namespace

double Table::at(double x) const {
  if (points.empty()) return 0.0;
  if (x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  for (size_t i = 1; i < points.size(); ++i) {
    if (x <= points[i].first) {
      auto [x0, y0] = points[i - 1];
      auto [x1, y1] = points[i];
      return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    }
  }
  return points.back().second;
}

double Table::at_log(double x) const {
  if (points.empty()) return 0.0;
  if (x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  for (size_t i = 1; i < points.size(); ++i) {
    if (x <= points[i].first) {
      auto [x0, y0] = points[i - 1];
      auto [x1, y1] = points[i];
      double l0 = std::log10(y0), l1 = std::log10(y1);
      return std::pow(10.0, l0 + (l1 - l0) * (x - x0) / (x1 - x0));
    }
  }
  return points.back().second;
}

void parse_param(const ConfigNode& n, Time& out) { out = parse_time(scalar_of(n, "time")); }
void parse_param(const ConfigNode& n, Bytes& out) { out = parse_bytes(scalar_of(n, "size")); }
void parse_param(const ConfigNode& n, Bandwidth& out) { out = parse_bandwidth(scalar_of(n, "bandwidth")); }
void parse_param(const ConfigNode& n, Energy& out) { out = parse_energy(scalar_of(n, "energy")); }
void parse_param(const ConfigNode& n, Power& out) { out = parse_power(scalar_of(n, "power")); }
void parse_param(const ConfigNode& n, EnergyPerBit& out) { out = parse_energy_per_bit(scalar_of(n, "energy per bit")); }
void parse_param(const ConfigNode& n, Area& out) { out = parse_area(scalar_of(n, "area")); }
void parse_param(const ConfigNode& n, double& out) { out = parse_number(scalar_of(n, "number")); }
void parse_param(const ConfigNode& n, int64_t& out) {
  const std::string& s = scalar_of(n, "integer");
  int64_t v = 0;
  if (!parse_decimal_integer(s, v))
    throw std::invalid_argument(fmt::format("'{}' is not an integer in decimal (no leading 0: YAML 1.1 reads 064 as octal)", s));
  out = v;
}
void parse_param(const ConfigNode& n, bool& out) {
  const std::string& s = scalar_of(n, "boolean");
  if (s == "true" || s == "yes" || s == "on")
    out = true;
  else if (s == "false" || s == "no" || s == "off")
    out = false;
  else
    throw std::invalid_argument(fmt::format("'{}' is not a boolean (true/false)", s));
}
void parse_param(const ConfigNode& n, std::string& out) { out = scalar_of(n, "string"); }
void parse_param(const ConfigNode& n, Table& out) {
  if (n.kind != ConfigNode::Kind::Sequence || n.items.empty())
    throw std::invalid_argument("expected a table [[x, y], ...] with at least one row");
  out.points.clear();
  for (const auto& row : n.items) {
    if (row.kind != ConfigNode::Kind::Sequence || row.items.size() != 2)
      throw std::invalid_argument("each table row must be a pair [x, y]");
    double x = parse_number(scalar_of(row.items[0], "number"));
    double y = parse_number(scalar_of(row.items[1], "number"));
    if (!out.points.empty() && x <= out.points.back().first)
      throw std::invalid_argument(fmt::format("table x values must increase strictly ({} after {})", x, out.points.back().first));
    out.points.emplace_back(x, y);
  }
}

void parse_param(const ConfigNode& n, std::vector<int64_t>& out) {
  if (n.kind != ConfigNode::Kind::Sequence || n.items.empty()) throw std::invalid_argument("expected a list of integers [a, b, ...]");
  out.clear();
  for (const auto& item : n.items) {
    int64_t v = 0;
    parse_param(item, v);
    out.push_back(v);
  }
}

double si_base_value(Time v) { return to_s(v); }
double si_base_value(Bytes v) { return double(v.raw()); }
double si_base_value(Bandwidth v) { return v.raw(); }
double si_base_value(Energy v) { return v.raw(); }
double si_base_value(Power v) { return v.raw(); }
double si_base_value(EnergyPerBit v) { return v.raw(); }
double si_base_value(Area v) { return v.raw(); }
double si_base_value(double v) { return v; }
double si_base_value(int64_t v) { return double(v); }

namespace {
// The resolved configuration must read back as the very values used: format()
// keeps 6 significant digits, so a value it would round is written in the base
// unit instead (integer picoseconds, or the shortest exact decimal).
template <class Q, class Parse>
nlohmann::json exact_text(Q v, Parse parse, std::string_view base_unit) {
  std::string s = format(v);
  try {
    if (parse(s) == v) return s;
  } catch (const std::exception&) {
  }
  return fmt::format("{}{}", v.raw(), base_unit);
}
}  // namespace

nlohmann::json param_json(const Time& v) { return exact_text(v, parse_time, "ps"); }
nlohmann::json param_json(const Bytes& v) { return exact_text(v, parse_bytes, "B"); }
nlohmann::json param_json(const Bandwidth& v) { return exact_text(v, parse_bandwidth, "B/s"); }
nlohmann::json param_json(const Energy& v) { return exact_text(v, parse_energy, "J"); }
nlohmann::json param_json(const Power& v) { return exact_text(v, parse_power, "W"); }
nlohmann::json param_json(const EnergyPerBit& v) { return exact_text(v, parse_energy_per_bit, "J/bit"); }
nlohmann::json param_json(const Area& v) { return exact_text(v, parse_area, "m2"); }
nlohmann::json param_json(const double& v) { return v; }
nlohmann::json param_json(const int64_t& v) { return v; }
nlohmann::json param_json(const bool& v) { return v; }
nlohmann::json param_json(const std::string& v) { return v; }
nlohmann::json param_json(const std::vector<int64_t>& v) { return v; }
nlohmann::json param_json(const Table& v) {
  nlohmann::json a = nlohmann::json::array();
  for (auto [x, y] : v.points) a.push_back({x, y});
  return a;
}

namespace {

/// The SI base unit of a parameter, from the unit its default is written in ("5us" -> " s", "700W" -> " W";
/// "" for a plain number): the range messages give the bound and the value in it.
std::string_view base_unit_of(std::string_view def) {
  size_t i = def.size();
  while (i > 0 && (std::isalpha(static_cast<unsigned char>(def[i - 1])) || def[i - 1] == '/')) --i;
  const std::string_view u = def.substr(i);
  if (u.empty() || i == 0 || !(std::isdigit(static_cast<unsigned char>(def[i - 1])) || def[i - 1] == '.')) return {};
  if (u.size() >= 2 && u.substr(u.size() - 2) == "/s") return " B/s";
  if (u.find("J/bit") != std::string_view::npos) return " J/bit";
  if (u.back() == 'W') return " W";
  if (u.back() == 'J') return " J";
  if (u.back() == 'B') return " B";
  if (u.back() == 's' || u == "min" || u == "h") return " s";
  if (u.find("m2") != std::string_view::npos) return " m2";
  return {};
}

}  // namespace

std::string range_violation(double si, const ParamInfo& info) {
  const std::string_view unit = base_unit_of(info.def);
  if (si < info.min) {
    if (si < 0 && info.min >= 0) return fmt::format("must not be negative (got {}{})", si, unit);
    return fmt::format("must be at least {}{} (got {}{})", info.min, unit, si, unit);
  }
  if (si > info.max) return fmt::format("must be at most {}{} (got {}{})", info.max, unit, si, unit);
  return {};
}

ParamLoader::ParamLoader(const ConfigNode* section, std::string path) : section_(section), path_(std::move(path)) {}

bool ParamLoader::choice_ok(const std::string& v, std::string_view choices) {
  size_t start = 0;
  while (start <= choices.size()) {
    size_t bar = choices.find('|', start);
    auto c = choices.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start);
    if (c == v) return true;
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return false;
}

void ParamLoader::finish() const {
  if (!section_) return;
  for (const auto& [k, v] : section_->keys) {
    if (used_.count(k)) continue;
    std::string best;
    size_t best_d = 3;
    std::string known;
    for (const auto& u : used_) {
      known += (known.empty() ? "" : ", ") + u;
      size_t d = edit_distance(k, u);
      if (d < best_d) best_d = d, best = u;
    }
    throw ConfigError(fmt::format("{}: {}: unknown key{} (known keys here: {})", v.origin, join(k),
                                  best.empty() ? "" : fmt::format(", did you mean '{}'?", best), known));
  }
}

std::string ParamDescriber::range_text(const ParamInfo& info) {
  bool lo = std::isfinite(info.min), hi = std::isfinite(info.max);
  if (lo && hi) return fmt::format("[{}, {}]", info.min, info.max);
  if (lo) return fmt::format(">= {}", info.min);
  if (hi) return fmt::format("<= {}", info.max);
  return "";
}

}  // namespace bitline
