// Pieces shared by the subcommands: config options (--preset, --config,
// --set), the catalogue of components for `describe`, the top-level check.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/experiment.hpp"
#include "core/params.hpp"

namespace bitline::cli {

/// --preset NAME, --config FILE, --set key=value (repeatable).
struct ConfigOptions {
  std::string preset;
  std::string file;
  std::vector<std::string> sets;
  void add_to(CLI::App& app);
  /// Builds the tree: preset, an experiment's `set:` overrides, then file, then --set; checks top-level sections.
  ConfigTree load(const std::vector<Override>& experiment = {}) const;
};

/// Run-wide parameters (config section `sim`).
struct SimParams {
  int64_t seed = 1;
  template <class V>
  void visit(V& v) {
    v(seed, {.name = "seed", .def = "1", .desc = "seed of every random stream (errors, synthetic data)",
             .source = "bitline", .min = 0});
  }
};

/// A component of the catalogue: its config path and its parameter rows.
struct Component {
  std::string path;
  std::string summary;
  std::vector<ParamRow> (*rows)(const std::string& path);
};
const std::vector<Component>& catalogue();

/// The registered names of a policy kind, e.g. for CLI::IsMember.
std::vector<std::string> names_of(const ImplList& impls);

/// Throws ConfigError for a top-level key that no component owns.
void check_top_level(const ConfigTree& tree);

/// Progress of item `i` of `n` on stderr: one line rewritten in place on a terminal; in a log (stderr not a
/// terminal) a line per tenth of the run, so logs stay readable.
void print_progress(size_t i, size_t n, const std::string& what);

void add_describe(CLI::App& app);
void add_nand(CLI::App& app);
void add_hbf(CLI::App& app);
void add_cosmos(CLI::App& app);
void add_accel(CLI::App& app);
void add_ssd(CLI::App& app);

}  // namespace bitline::cli
