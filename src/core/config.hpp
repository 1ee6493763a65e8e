// Configuration trees: YAML files with named presets, inheritance (`base:`),
// and `--set key.path=value` overrides. Every node remembers where it came from
// (file:line or "--set") so that errors name the file and the key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace bitline {

// Limits of a configuration (docs/commands.md, "Hardened inputs"). A config is a few hundred values at most
// four levels deep; the limits are far above that and far below what would exhaust memory or time.
/// Values (scalars, lists, maps) in one YAML document after aliases are expanded, and in all that one tree
/// merges (files, presets and `--set` overrides together, each counted as parsed): stops alias bombs, one
/// per document or many small ones spread over overrides.
inline constexpr int64_t kMaxConfigNodes = 100000;
/// Bytes of scalars and keys in one YAML document after aliases are expanded, and in a whole tree (files,
/// presets and overrides together): stops alias bombs of long values. A config file is at most 1 MiB
/// (kMaxConfigFileBytes), so only aliases reach this.
inline constexpr int64_t kMaxConfigExpandedBytes = int64_t(8) << 20;
/// Nesting of one YAML document (a table inside a section inside a section is 5 levels).
inline constexpr int kMaxConfigDepth = 32;
/// Files one tree loads through `base:` (presets inheriting presets): stops fan-out (`base: [a, a, a, ...]`).
inline constexpr int kMaxConfigFiles = 32;
/// The reserved top-level keys of a config file, beside its sections: a one-line description (a GPU kind's is printed
/// by `accel kinds`) and the presets it inherits (`base: NAME` or `base: [A, B]`).
inline constexpr std::string_view kDescriptionKey = "description", kBaseKey = "base";

/// One node of a configuration tree. Maps keep their keys in file order.
struct ConfigNode {
  enum class Kind { Null, Scalar, Sequence, Map };
  Kind kind = Kind::Null;
  std::string scalar;
  std::vector<ConfigNode> items;                         // Sequence
  std::vector<std::pair<std::string, ConfigNode>> keys;  // Map
  std::string origin;                                    // "file.yaml:12" or "--set" or "default"

  // Declared, not implicit: clang++ with libstdc++ (the fuzz preset) otherwise rejects the
  // recursive pair<string, ConfigNode> while ConfigNode is still incomplete.
  ConfigNode() = default;

  const ConfigNode* find(std::string_view key) const;
  ConfigNode* find(std::string_view key);
  bool is_map() const { return kind == Kind::Map; }
  /// Parses YAML text into a node tree (origin = `origin_name:line`).
  static ConfigNode parse(const std::string& text, const std::string& origin_name);
};

/// A resolved configuration: presets and files merged, overrides applied.
class ConfigTree {
 public:
  ConfigTree();

  /// Directory searched for presets (`--preset NAME` loads DIR/NAME.yaml).
  void set_preset_dir(std::filesystem::path dir) { preset_dir_ = std::move(dir); }
  const std::filesystem::path& preset_dir() const { return preset_dir_; }

  /// Merges a named preset from the preset directory.
  void load_preset(const std::string& name);
  /// Merges a YAML file; a `base:` key (a preset name, or a list of them) is merged first.
  void load_file(const std::filesystem::path& path);
  /// Merges YAML text (used by tests); `origin_name` is used in error messages.
  void load_text(const std::string& text, const std::string& origin_name);
  /// Applies one `key.path=value` override. The value is parsed as YAML; `origin` names it in messages
  /// (an experiment file's `set:` passes its file:line).
  void apply_set(const std::string& assignment, const std::string& origin = "--set");

  const ConfigNode& root() const { return root_; }
  /// The node at a dotted path, or nullptr.
  const ConfigNode* at(std::string_view dotted_path) const;

  /// Names of the presets available in the preset directory.
  std::vector<std::string> available_presets() const;
  /// Every file merged so far (presets, --config files and their `base:` chains), canonical paths, in load order.
  const std::vector<std::filesystem::path>& loaded_files() const { return loaded_; }

 private:
  void merge_node(ConfigNode& into, const ConfigNode& from);
  void load_file_impl(const std::filesystem::path& path, std::vector<std::filesystem::path>& chain);
  ConfigNode root_;
  /// Counts what `n` adds to the tree; refuses (naming `origin`) past kMaxConfigNodes or kMaxConfigExpandedBytes.
  void charge(const ConfigNode& n, const std::string& origin);
  int files_loaded_ = 0;      // files read by load_file (base: included), at most kMaxConfigFiles
  int64_t nodes_merged_ = 0;  // values merged so far (files and overrides, as parsed), at most kMaxConfigNodes
  int64_t bytes_merged_ = 0;  // their scalars and keys, at most kMaxConfigExpandedBytes
  std::vector<std::filesystem::path> loaded_;
  std::filesystem::path preset_dir_;
};

/// The preset directory: $BITLINE_CONFIG_DIR when set, else the configs of the tree the program runs from (installed:
/// PREFIX/share/bitline/configs; a clone: its configs/), else the folder compiled in.
std::filesystem::path default_preset_dir();

}  // namespace bitline
