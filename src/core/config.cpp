#include "core/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

#ifndef BITLINE_CONFIG_DIR
#define BITLINE_CONFIG_DIR "configs"
#endif

namespace bitline {
namespace {

ConfigNode convert(const YAML::Node& n, const std::string& origin_name) {
  ConfigNode out;
  out.origin = fmt::format("{}:{}", origin_name, n.Mark().line + 1);
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out.kind = ConfigNode::Kind::Null;
      break;
    case YAML::NodeType::Scalar:
      out.kind = ConfigNode::Kind::Scalar;
      out.scalar = n.Scalar();
      break;
    case YAML::NodeType::Sequence:
      out.kind = ConfigNode::Kind::Sequence;
      for (const auto& item : n) out.items.push_back(convert(item, origin_name));
      break;
    case YAML::NodeType::Map:
      out.kind = ConfigNode::Kind::Map;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          throw ConfigError(fmt::format("{}:{}: map keys must be plain names", origin_name, kv.first.Mark().line + 1));
        std::string key = kv.first.Scalar();
        for (const auto& [k, _] : out.keys)
          if (k == key)
            throw ConfigError(fmt::format("{}:{}: key '{}' appears twice", origin_name, kv.first.Mark().line + 1, key));
        // A value's origin is the line of its key: for a section or an empty
        // value, yaml-cpp marks the line after the key.
        ConfigNode value = convert(kv.second, origin_name);
        value.origin = fmt::format("{}:{}", origin_name, kv.first.Mark().line + 1);
        out.keys.emplace_back(key, std::move(value));
      }
      break;
  }
  return out;
}

}  // namespace

const ConfigNode* ConfigNode::find(std::string_view key) const {
  for (const auto& [k, v] : keys)
    if (k == key) return &v;
  return nullptr;
}
ConfigNode* ConfigNode::find(std::string_view key) {
  for (auto& [k, v] : keys)
    if (k == key) return &v;
  return nullptr;
}

ConfigNode ConfigNode::parse(const std::string& text, const std::string& origin_name) {
  try {
    YAML::Node n = YAML::Load(text);
    return convert(n, origin_name);
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}:{}:{}: malformed YAML: {}", origin_name, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

std::filesystem::path default_preset_dir() {
  if (const char* env = std::getenv("BITLINE_CONFIG_DIR"); env && *env) return env;
  return BITLINE_CONFIG_DIR;
}

ConfigTree::ConfigTree() : preset_dir_(default_preset_dir()) {
  root_.kind = ConfigNode::Kind::Map;
  root_.origin = "default";
}

void ConfigTree::merge_node(ConfigNode& into, const ConfigNode& from) {
  if (into.kind == ConfigNode::Kind::Map && from.kind == ConfigNode::Kind::Map) {
    for (const auto& [k, v] : from.keys) {
      if (ConfigNode* existing = into.find(k)) merge_node(*existing, v);
      else into.keys.emplace_back(k, v);
    }
    return;
  }
  if (from.kind == ConfigNode::Kind::Null && into.kind == ConfigNode::Kind::Map) return;  // empty section
  into = from;
}

void ConfigTree::load_text(const std::string& text, const std::string& origin_name) {
  ConfigNode n = ConfigNode::parse(text, origin_name);
  if (n.kind == ConfigNode::Kind::Null) return;
  if (n.kind != ConfigNode::Kind::Map)
    throw ConfigError(fmt::format("{}: the top level of a config must be a map of sections", origin_name));
  merge_node(root_, n);
}

void ConfigTree::load_file_impl(const std::filesystem::path& path, int depth) {
  if (depth > 8) throw ConfigError(fmt::format("{}: 'base:' chain deeper than 8 (a cycle?)", path.string()));
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open config file", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  ConfigNode n = ConfigNode::parse(ss.str(), path.string());
  if (n.kind == ConfigNode::Kind::Null) return;
  if (n.kind != ConfigNode::Kind::Map)
    throw ConfigError(fmt::format("{}: the top level of a config must be a map of sections", path.string()));
  // Inheritance: `base: NAME` or `base: [A, B]` merges presets first.
  for (auto it = n.keys.begin(); it != n.keys.end(); ++it) {
    if (it->first != "base") continue;
    std::vector<std::string> bases;
    if (it->second.kind == ConfigNode::Kind::Scalar) bases.push_back(it->second.scalar);
    else if (it->second.kind == ConfigNode::Kind::Sequence)
      for (const auto& b : it->second.items) bases.push_back(b.scalar);
    else throw ConfigError(fmt::format("{}: base: must be a preset name or a list of names", it->second.origin));
    for (const auto& b : bases) {
      auto p = preset_dir_ / (b + ".yaml");
      if (!std::filesystem::exists(p))
        throw ConfigError(fmt::format("{}: base: unknown preset '{}' (no {})", it->second.origin, b, p.string()));
      load_file_impl(p, depth + 1);
    }
    n.keys.erase(it);
    break;
  }
  merge_node(root_, n);
}

void ConfigTree::load_file(const std::filesystem::path& path) { load_file_impl(path, 0); }

void ConfigTree::load_preset(const std::string& name) {
  auto p = preset_dir_ / (name + ".yaml");
  if (!std::filesystem::exists(p)) {
    std::string avail;
    for (const auto& a : available_presets()) avail += (avail.empty() ? "" : ", ") + a;
    throw ConfigError(fmt::format("--preset {}: unknown preset (available in {}: {})", name, preset_dir_.string(), avail));
  }
  load_file(p);
}

std::vector<std::string> ConfigTree::available_presets() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(preset_dir_, ec))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

void ConfigTree::apply_set(const std::string& assignment, const std::string& origin) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(fmt::format("--set '{}': expected key.path=value", assignment));
  std::string path = assignment.substr(0, eq);
  std::string value = assignment.substr(eq + 1);
  ConfigNode v = ConfigNode::parse(value, "--set " + path);
  v.origin = origin;
  // Walk/create the map path.
  ConfigNode* cur = &root_;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) throw ConfigError(fmt::format("--set '{}': empty key in path", assignment));
    if (cur->kind != ConfigNode::Kind::Map) {
      if (cur->kind == ConfigNode::Kind::Null) cur->kind = ConfigNode::Kind::Map;
      else throw ConfigError(fmt::format("--set '{}': '{}' is not a section", assignment, path.substr(0, start - 1)));
    }
    ConfigNode* next = cur->find(key);
    if (!next) {
      cur->keys.emplace_back(key, ConfigNode{});
      next = &cur->keys.back().second;
      next->origin = origin;
    }
    if (dot == std::string::npos) {
      merge_node(*next, v);
      next->origin = v.origin;
      return;
    }
    cur = next;
    start = dot + 1;
  }
}

const ConfigNode* ConfigTree::at(std::string_view dotted_path) const {
  const ConfigNode* cur = &root_;
  if (dotted_path.empty()) return cur;
  size_t start = 0;
  while (cur) {
    size_t dot = dotted_path.find('.', start);
    auto key = dotted_path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    cur = cur->kind == ConfigNode::Kind::Map ? cur->find(key) : nullptr;
    if (dot == std::string_view::npos) return cur;
    start = dot + 1;
  }
  return nullptr;
}

}  // namespace bitline
