// Experiment files: an evaluation matrix or a sweep as data (configs/experiments/*.yaml),
// read with the rules of config files. Every key must be known and every value of the
// right kind; an error names the file:line and the key and is a ConfigError (exit 2).
// The commands that run a paper's evaluation (`cosmos eval`, `accel eval`, ...) read
// their shipped file by default and a user's with `--experiment FILE`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"

namespace bitline {

/// One `set:` override of an experiment file: "key.path=value" (as --set) and where it was written.
struct Override {
  std::string assignment, origin;
};
/// Applies overrides to a config tree; a bad value or key is reported at the override's file:line.
void apply_overrides(ConfigTree& tree, const std::vector<Override>& overrides);

/// The shipped experiment NAME: PRESET_DIR/experiments/NAME.yaml (PRESET_DIR: default_preset_dir()).
std::filesystem::path shipped_experiment(const std::string& name);

/// Reads an experiment file (at most 1 MiB); its top level must be a map. ConfigError otherwise.
ConfigNode read_experiment_file(const std::filesystem::path& file);

/// One map of an experiment file, read key by key. Every key read (or declared with `known`) is known;
/// finish() rejects the others, listing the known keys.
class ExperimentMap {
 public:
  /// `path` names the map in messages ("" for the top level, "variants[2]", ...).
  ExperimentMap(const ConfigNode& node, std::string path);

  const ConfigNode* optional(std::string_view key);
  const ConfigNode& required(std::string_view key);
  std::string string(std::string_view key);
  std::string string_or(std::string_view key, const std::string& def);
  int64_t integer(std::string_view key, int64_t min = 1);
  double number(std::string_view key, double min_exclusive = 0);
  /// A list of strings (at least one, no duplicates).
  std::vector<std::string> strings(std::string_view key);
  /// An optional list of strings (empty when absent).
  std::vector<std::string> strings_or_empty(std::string_view key);
  /// A list of numbers > `min_exclusive` (at least one).
  std::vector<double> numbers(std::string_view key, double min_exclusive = 0);
  /// A list of integers >= `min` (at least one).
  std::vector<int64_t> integers(std::string_view key, int64_t min = 1);
  /// The keys every experiment file may have at its top level and no loader reads: `experiment` (its name) and
  /// `description` (docs/experiments.md). Accepts them (so that finish() does not name them as unknown).
  void accept_header() {
    string_or("experiment", "");
    string_or("description", "");
  }
  /// `set:` overrides of component parameters, a list of "key.path=value" (as `--set`); empty when absent.
  std::vector<Override> overrides(std::string_view key = "set");

  /// The path of a key of this map in messages ("variants[2].kind").
  std::string key_path(std::string_view key) const;
  /// Where the map is ("file.yaml:12").
  const std::string& origin() const { return node_.origin; }
  /// Throws ConfigError for a key that was not read.
  void finish() const;

 private:
  const ConfigNode& node_;
  std::string path_;
  std::set<std::string, std::less<>> used_;
};

/// A ConfigError "ORIGIN: PATH: WHY".
[[noreturn]] void experiment_error(const ConfigNode& at, const std::string& path, const std::string& why);

}  // namespace bitline
