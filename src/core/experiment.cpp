#include "core/experiment.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "core/input.hpp"
#include "core/params.hpp"
#include "core/registry.hpp"

namespace bitline {

namespace {

constexpr int64_t kMaxExperimentBytes = int64_t(1) << 20;

template <class T>
T parse_as(const ConfigNode& n, const std::string& path) {
  T v{};
  try {
    parse_param(n, v);
  } catch (const std::exception& e) {
    experiment_error(n, path, e.what());
  }
  return v;
}

}  // namespace

void experiment_error(const ConfigNode& at, const std::string& path, const std::string& why) {
  throw ConfigError(fmt::format("{}: {}: {}", at.origin, path, why));
}

std::filesystem::path shipped_experiment(const std::string& name) { return default_preset_dir() / "experiments" / (name + ".yaml"); }

ConfigNode read_experiment_file(const std::filesystem::path& file) {
  ConfigNode n = ConfigNode::parse(read_input_file(file, kMaxExperimentBytes, "experiment file"), file.string());
  if (n.kind != ConfigNode::Kind::Map)
    throw ConfigError(fmt::format("{}: the top level of an experiment file must be a map of keys", file.string()));
  return n;
}

ExperimentMap::ExperimentMap(const ConfigNode& node, std::string path) : node_(node), path_(std::move(path)) {
  if (node.kind != ConfigNode::Kind::Map) experiment_error(node, path_.empty() ? "(top level)" : path_, "expected a map of keys");
}

std::string ExperimentMap::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

const ConfigNode* ExperimentMap::optional(std::string_view key) {
  used_.insert(std::string(key));
  return node_.find(key);
}

const ConfigNode& ExperimentMap::required(std::string_view key) {
  const ConfigNode* n = optional(key);
  if (!n) {
    // A misspelt key is the likelier mistake than a forgotten one: name the unknown key that is close to it.
    std::vector<std::string_view> unread;
    for (const auto& [k, v] : node_.keys)
      if (!used_.count(k)) unread.push_back(k);
    const std::string_view near = closest_name(key, unread, key.size() > 4 ? 2 : 1);
    if (!near.empty())
      experiment_error(*node_.find(near), key_path(near), fmt::format("unknown key; did you mean '{}'? (a required key)", key));
    experiment_error(node_, path_.empty() ? "(top level)" : path_, fmt::format("missing key '{}'", key));
  }
  return *n;
}

std::string ExperimentMap::string(std::string_view key) {
  const std::string s = parse_as<std::string>(required(key), key_path(key));
  if (s.empty()) experiment_error(required(key), key_path(key), "empty string");
  return s;
}

std::string ExperimentMap::string_or(std::string_view key, const std::string& def) { return optional(key) ? string(key) : def; }

int64_t ExperimentMap::integer(std::string_view key, int64_t min) {
  const ConfigNode& n = required(key);
  const int64_t v = parse_as<int64_t>(n, key_path(key));
  if (v < min) experiment_error(n, key_path(key), fmt::format("{} is below the minimum {}", v, min));
  return v;
}

double ExperimentMap::number(std::string_view key, double min_exclusive) {
  const ConfigNode& n = required(key);
  const double v = parse_as<double>(n, key_path(key));
  if (!(v > min_exclusive) || !std::isfinite(v))
    experiment_error(n, key_path(key), fmt::format("{:g} must be a finite number above {:g}", v, min_exclusive));
  return v;
}

namespace {

const ConfigNode& list_node(const ConfigNode& n, const std::string& path) {
  if (n.kind != ConfigNode::Kind::Sequence || n.items.empty()) experiment_error(n, path, "expected a non-empty list [a, b, ...]");
  if (n.items.size() > 100000) experiment_error(n, path, fmt::format("{} items (at most 100000)", n.items.size()));
  return n;
}

}  // namespace

std::vector<std::string> ExperimentMap::strings(std::string_view key) {
  const std::string path = key_path(key);
  const ConfigNode& n = list_node(required(key), path);
  std::vector<std::string> out;
  for (size_t i = 0; i < n.items.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", path, i);
    std::string s = parse_as<std::string>(n.items[i], item);
    if (s.empty()) experiment_error(n.items[i], item, "empty string");
    for (const auto& o : out)
      if (o == s) experiment_error(n.items[i], item, fmt::format("'{}' appears twice", s));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> ExperimentMap::strings_or_empty(std::string_view key) {
  return optional(key) ? strings(key) : std::vector<std::string>{};
}

std::vector<double> ExperimentMap::numbers(std::string_view key, double min_exclusive) {
  const std::string path = key_path(key);
  const ConfigNode& n = list_node(required(key), path);
  std::vector<double> out;
  for (size_t i = 0; i < n.items.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", path, i);
    const double v = parse_as<double>(n.items[i], item);
    if (!(v > min_exclusive) || !std::isfinite(v))
      experiment_error(n.items[i], item, fmt::format("{:g} must be a finite number above {:g}", v, min_exclusive));
    for (double o : out)
      if (o == v) experiment_error(n.items[i], item, fmt::format("{:g} appears twice", v));
    out.push_back(v);
  }
  return out;
}

std::vector<int64_t> ExperimentMap::integers(std::string_view key, int64_t min) {
  const std::string path = key_path(key);
  const ConfigNode& n = list_node(required(key), path);
  std::vector<int64_t> out;
  for (size_t i = 0; i < n.items.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", path, i);
    const int64_t v = parse_as<int64_t>(n.items[i], item);
    if (v < min) experiment_error(n.items[i], item, fmt::format("{} is below the minimum {}", v, min));
    for (int64_t o : out)
      if (o == v) experiment_error(n.items[i], item, fmt::format("{} appears twice", v));
    out.push_back(v);
  }
  return out;
}

std::vector<Override> ExperimentMap::overrides(std::string_view key) {
  const ConfigNode* n = optional(key);
  if (!n || (n->kind == ConfigNode::Kind::Sequence && n->items.empty())) return {};
  const std::vector<std::string> sets = strings(key);
  std::vector<Override> out;
  for (size_t i = 0; i < sets.size(); ++i) {
    const auto eq = sets[i].find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == sets[i].size())
      experiment_error(n->items[i], fmt::format("{}[{}]", key_path(key), i),
                       fmt::format("'{}': expected key.path=value (as --set, e.g. hbf.runtime.prefetch=false)", sets[i]));
    out.push_back({sets[i], n->items[i].origin});
  }
  return out;
}

void apply_overrides(ConfigTree& tree, const std::vector<Override>& overrides) {
  for (const Override& o : overrides) {
    try {
      tree.apply_set(o.assignment, o.origin);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: {}", o.origin, e.what()));
    }
  }
}

void ExperimentMap::finish() const {
  for (const auto& [k, v] : node_.keys) {
    if (used_.count(k)) continue;
    std::string known;
    for (const auto& u : used_) known += (known.empty() ? "" : ", ") + u;
    experiment_error(v, key_path(k), fmt::format("unknown key (known here: {})", known));
  }
}

}  // namespace bitline
