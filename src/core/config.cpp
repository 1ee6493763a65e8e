#include "core/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "core/input.hpp"

#ifndef BITLINE_CONFIG_DIR
#define BITLINE_CONFIG_DIR "configs"
#endif

namespace bitline {
namespace {

// YAML -> ConfigNode, bounded: aliases are expanded here (yaml-cpp shares aliased nodes), so the node count is
// checked after expansion, and the depth is checked before recursing.
class Converter {
 public:
  explicit Converter(const std::string& origin_name) : origin_name_(origin_name) {}

  ConfigNode convert(const YAML::Node& n, int depth) {
    if (n.IsScalar()) bytes_ += static_cast<int64_t>(n.Scalar().size());
    if (bytes_ > kMaxConfigExpandedBytes)
      throw ConfigError(
          fmt::format("{}:{}: more than {} bytes of values (counting each alias as a copy of what it names); a "
                      "config file is at most {} bytes: an alias bomb of long values?",
                      origin_name_, n.Mark().line + 1, kMaxConfigExpandedBytes, kMaxConfigFileBytes));
    if (++nodes_ > kMaxConfigNodes)
      throw ConfigError(
          fmt::format("{}:{}: more than {} values (counting each alias as a copy of what it names); a config "
                      "holds a few hundred: an alias bomb?",
                      origin_name_, n.Mark().line + 1, kMaxConfigNodes));
    if (depth > kMaxConfigDepth)
      throw ConfigError(fmt::format("{}:{}: nested deeper than {} levels", origin_name_, n.Mark().line + 1, kMaxConfigDepth));
    ConfigNode out;
    out.origin = fmt::format("{}:{}", origin_name_, n.Mark().line + 1);
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
        for (const auto& item : n) out.items.push_back(convert(item, depth + 1));
        break;
      case YAML::NodeType::Map: {
        out.kind = ConfigNode::Kind::Map;
        std::unordered_set<std::string> seen;
        for (const auto& kv : n) {
          if (!kv.first.IsScalar())
            throw ConfigError(fmt::format("{}:{}: map keys must be plain names", origin_name_, kv.first.Mark().line + 1));
          std::string key = kv.first.Scalar();
          bytes_ += static_cast<int64_t>(key.size());
          if (!seen.insert(key).second)
            throw ConfigError(fmt::format("{}:{}: key '{}' appears twice", origin_name_, kv.first.Mark().line + 1, key));
          // A value's origin is the line of its key: for a section or an empty
          // value, yaml-cpp marks the line after the key.
          ConfigNode value = convert(kv.second, depth + 1);
          value.origin = fmt::format("{}:{}", origin_name_, kv.first.Mark().line + 1);
          out.keys.emplace_back(std::move(key), std::move(value));
        }
        break;
      }
    }
    return out;
  }

 private:
  const std::string& origin_name_;
  int64_t nodes_ = 0;
  int64_t bytes_ = 0;  // scalars and keys, aliases expanded
};

/// A preset name given to `base:` or `--preset`: a plain file name (no folders), so it stays in the preset folder.
/// A preset name: a path relative to the preset folder without .yaml (csi, nand/xl-flash), each part a plain
/// name, so that `base:` and --preset can never reach outside that folder.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 200 || s.find('\\') != std::string::npos) return false;
  size_t start = 0;
  while (true) {
    const size_t slash = s.find('/', start);
    const std::string part = s.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

/// A preset's file: DIR/NAME.yaml, else a GPU kind's, DIR/gpus/NAME.yaml (so `base: h200` and `--preset csi`
/// find the kinds of configs/gpus/); DIR/NAME.yaml when neither exists (named in the error).
std::filesystem::path preset_file(const std::filesystem::path& dir, const std::string& name) {
  const auto top = dir / (name + ".yaml");
  if (std::filesystem::exists(top)) return top;
  const auto gpu = dir / "gpus" / (name + ".yaml");
  return std::filesystem::exists(gpu) ? gpu : top;
}

/// Counts the documents of a YAML stream and keeps where the last two start; ignores the rest.
struct DocumentStarts : YAML::EventHandler {
  size_t count = 0;
  YAML::Mark last, before_last;
  void OnDocumentStart(const YAML::Mark& m) override { before_last = last, last = m, ++count; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};
/// Documents counted before the message says "more than": one is allowed, so this only sizes the message.
constexpr size_t kMaxDocumentsCounted = 100;

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
    // Every document is read (events only, aliases not expanded), so that a second one ('---') is an error rather
    // than silently unread; then the first is loaded. Not YAML::LoadAll: at a stray ',' after a flow collection
    // (`[1],`) yaml-cpp 0.7 stops advancing and yields empty documents at the same place forever, which LoadAll
    // collects until memory runs out (found by the config fuzzer in CI). A document that starts where the one
    // before it started is that loop.
    DocumentStarts starts;
    {
      std::istringstream in(text);
      YAML::Parser parser(in);
      while (starts.count <= kMaxDocumentsCounted && parser.HandleNextDocument(starts)) {
        if (starts.count >= 2 && starts.last.pos == starts.before_last.pos) {
          const YAML::Mark& m = starts.last;
          throw ConfigError(
              fmt::format("{}:{}:{}: malformed YAML: a token where no value can follow (a stray ',' after a "
                          "list or map?)",
                          origin_name, m.line + 1, m.column + 1));
        }
      }
    }
    if (starts.count > 1)
      throw ConfigError(
          fmt::format("{}: {}{} YAML documents (separated by '---'); a config or experiment file is one document "
                      "(merge them, or give the others as their own files)",
                      origin_name, starts.count > kMaxDocumentsCounted ? "more than " : "", std::min(starts.count, kMaxDocumentsCounted)));
    return Converter(origin_name).convert(starts.count == 0 ? YAML::Node() : YAML::Load(text), 0);
  } catch (const YAML::Exception& e) {
    // yaml-cpp stops deep recursion with the message "bad file" (its DeepRecursion type is not exported).
    if (e.msg == YAML::ErrorMsg::BAD_FILE)
      throw ConfigError(
          fmt::format("{}:{}:{}: nested deeper than {} levels", origin_name, e.mark.line + 1, e.mark.column + 1, kMaxConfigDepth));
    throw ConfigError(fmt::format("{}:{}:{}: malformed YAML: {}", origin_name, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

namespace {
/// The shipped configs seen from the running program: an installed tree's (PREFIX/bin/bitline ->
/// PREFIX/share/bitline/configs) or a clone's (CLONE/build/PRESET/src/cli/bitline, or a test under
/// CLONE/build/PRESET/tests -> CLONE/configs), found by walking up at most five folders from the program's own;
/// empty when neither is there (a binary copied alone). A folder is the configs when it holds the shipped evaluation
/// experiment, so an unrelated `configs/` above the binary is not taken.
std::filesystem::path configs_near_program() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  std::filesystem::path dir = exe.parent_path();
  for (int up = 0; up < 5 && !dir.empty(); ++up) {
    for (const auto& c : {dir / "share" / "bitline" / "configs", dir / "configs"})
      if (std::filesystem::is_regular_file(c / "experiments" / "flashaccel-eval.yaml", ec)) return c;
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return {};
}
}  // namespace

std::filesystem::path default_preset_dir() {
  if (const char* env = std::getenv("BITLINE_CONFIG_DIR"); env && *env) return env;
  // Found once from where the program is (immutable after), so a copied, moved or installed tree uses its own
  // configs; the folder compiled in (the clone's configs/ when it was built) only when nothing is found there.
  static const std::filesystem::path near = configs_near_program();
  return near.empty() ? std::filesystem::path(BITLINE_CONFIG_DIR) : near;
}

ConfigTree::ConfigTree() : preset_dir_(default_preset_dir()) {
  root_.kind = ConfigNode::Kind::Map;
  root_.origin = "default";
}

void ConfigTree::merge_node(ConfigNode& into, const ConfigNode& from) {
  if (into.kind == ConfigNode::Kind::Map && from.kind == ConfigNode::Kind::Map) {
    // An index of `into`'s keys keeps the merge linear for maps of any size.
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < into.keys.size(); ++i) index.emplace(into.keys[i].first, i);
    for (const auto& [k, v] : from.keys) {
      if (auto it = index.find(k); it != index.end())
        merge_node(into.keys[it->second].second, v);
      else {
        index.emplace(k, into.keys.size());
        into.keys.emplace_back(k, v);
      }
    }
    return;
  }
  if (from.kind == ConfigNode::Kind::Null && into.kind == ConfigNode::Kind::Map) return;  // empty section
  into = from;
}

namespace {
void tally(const ConfigNode& n, int64_t& nodes, int64_t& bytes) {
  ++nodes;
  bytes += static_cast<int64_t>(n.scalar.size());
  for (const auto& item : n.items) tally(item, nodes, bytes);
  for (const auto& [k, v] : n.keys) {
    bytes += static_cast<int64_t>(k.size());
    tally(v, nodes, bytes);
  }
}
}  // namespace

void ConfigTree::charge(const ConfigNode& n, const std::string& origin) {
  tally(n, nodes_merged_, bytes_merged_);
  if (nodes_merged_ > kMaxConfigNodes)
    throw ConfigError(
        fmt::format("{}: the configuration now holds more than {} values (files and --set overrides "
                    "together, aliases expanded); a config holds a few hundred",
                    origin, kMaxConfigNodes));
  if (bytes_merged_ > kMaxConfigExpandedBytes)
    throw ConfigError(
        fmt::format("{}: the configuration now holds more than {} bytes of values (files and --set "
                    "overrides together, aliases expanded)",
                    origin, kMaxConfigExpandedBytes));
}

void ConfigTree::load_text(const std::string& text, const std::string& origin_name) {
  ConfigNode n = ConfigNode::parse(text, origin_name);
  if (n.kind == ConfigNode::Kind::Null) return;
  if (n.kind != ConfigNode::Kind::Map)
    throw ConfigError(fmt::format("{}: the top level of a config must be a map of sections", origin_name));
  charge(n, origin_name);
  merge_node(root_, n);
}

void ConfigTree::load_file_impl(const std::filesystem::path& path, std::vector<std::filesystem::path>& chain) {
  std::error_code ec;
  const std::filesystem::path canon = std::filesystem::weakly_canonical(path, ec);
  for (const auto& p : chain)
    if (p == canon) {
      std::string cycle;
      for (const auto& q : chain) cycle += q.filename().string() + " -> ";
      throw ConfigError(fmt::format("{}: base: inheritance cycle ({}{})", path.string(), cycle, path.filename().string()));
    }
  if (++files_loaded_ > kMaxConfigFiles)
    throw ConfigError(fmt::format("{}: base: more than {} config files loaded through base: (presets inheriting presets)", path.string(),
                                  kMaxConfigFiles));
  ConfigNode n = ConfigNode::parse(read_input_file(path, kMaxConfigFileBytes, "config file"), path.string());
  loaded_.push_back(canon);
  // An empty file (or only comments) would run every default under the file's name: most likely the wrong file.
  if (n.kind == ConfigNode::Kind::Null)
    throw ConfigError(
        fmt::format("{}: empty config file (no sections): it would change nothing; give at least one section "
                    "(or leave the file out to run the defaults)",
                    path.string()));
  if (n.kind != ConfigNode::Kind::Map)
    throw ConfigError(fmt::format("{}: the top level of a config must be a map of sections", path.string()));
  if (std::all_of(n.keys.begin(), n.keys.end(), [](const auto& kv) { return kv.first == kDescriptionKey; }))
    throw ConfigError(
        fmt::format("{}: only a description, no section and no base: it would run every default under this file's name; give at "
                    "least one section or a base",
                    path.string()));
  // Inheritance: `base: NAME` or `base: [A, B]` merges presets first.
  for (auto it = n.keys.begin(); it != n.keys.end(); ++it) {
    if (it->first != kBaseKey) continue;
    std::vector<std::string> bases;
    const auto add = [&](const ConfigNode& b) {
      if (b.kind != ConfigNode::Kind::Scalar || !plain_name(b.scalar))
        throw ConfigError(
            fmt::format("{}: base: a preset name (a file in {} without .yaml, e.g. csi or nand/xl-flash)", b.origin, preset_dir_.string()));
      bases.push_back(b.scalar);
    };
    if (it->second.kind == ConfigNode::Kind::Scalar)
      add(it->second);
    else if (it->second.kind == ConfigNode::Kind::Sequence)
      for (const auto& b : it->second.items) add(b);
    else
      throw ConfigError(fmt::format("{}: base: must be a preset name or a list of names", it->second.origin));
    chain.push_back(canon);
    for (const auto& b : bases) {
      auto p = preset_file(preset_dir_, b);
      if (!std::filesystem::exists(p))
        throw ConfigError(fmt::format("{}: base: unknown preset '{}' (no {})", it->second.origin, b, p.string()));
      load_file_impl(p, chain);
    }
    chain.pop_back();
    n.keys.erase(it);
    break;
  }
  charge(n, path.string());
  merge_node(root_, n);
}

void ConfigTree::load_file(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> chain;
  load_file_impl(path, chain);
}

void ConfigTree::load_preset(const std::string& name) {
  auto p = preset_file(preset_dir_, name);
  if (!plain_name(name) || !std::filesystem::exists(p)) {
    std::string avail;
    for (const auto& a : available_presets()) avail += (avail.empty() ? "" : ", ") + a;
    throw ConfigError(fmt::format("--preset {}: unknown preset (available in {}: {})", name, preset_dir_.string(), avail));
  }
  load_file(p);
}

std::vector<std::string> ConfigTree::available_presets() const {
  std::vector<std::string> out;
  file_stems(preset_dir_, ".yaml", out);
  file_stems(preset_dir_ / "gpus", ".yaml", out);  // GPU kinds (configs/gpus/)
  std::sort(out.begin(), out.end());
  return out;
}

void ConfigTree::apply_set(const std::string& assignment, const std::string& origin) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError(fmt::format("--set '{}': expected key.path=value", assignment));
  std::string path = assignment.substr(0, eq);
  std::string value = assignment.substr(eq + 1);
  if (std::count(path.begin(), path.end(), '.') >= kMaxConfigDepth)
    throw ConfigError(fmt::format("--set '{}...': a key path deeper than {} levels", path.substr(0, 40), kMaxConfigDepth));
  ConfigNode v = ConfigNode::parse(value, "--set " + path);
  charge(v, fmt::format("--set '{}'", path));
  v.origin = origin;
  // Walk/create the map path.
  ConfigNode* cur = &root_;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) throw ConfigError(fmt::format("--set '{}': empty key in path", assignment));
    if (cur->kind != ConfigNode::Kind::Map) {
      if (cur->kind == ConfigNode::Kind::Null)
        cur->kind = ConfigNode::Kind::Map;
      else
        throw ConfigError(fmt::format("--set '{}': '{}' is not a section", assignment, path.substr(0, start - 1)));
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
