// Pieces shared by the `bitline accel ...` subcommands (src/cli/accel/*.cpp, one file per subcommand): the options
// that load GPU kinds (--config, --set) and experiment files (--experiment), --context, and the resolved config
// written into every JSON.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "core/json_io.hpp"
#include "llm/serving.hpp"

namespace bitline::cli::accel {

/// --config FILE and --set key=value over each GPU kind's file (configs/gpus/KIND.yaml).
struct KindOptions {
  std::string file;
  std::vector<std::string> sets;
  void add_to(CLI::App& app);
  /// The kind's tree: its preset, an experiment's `set:` overrides, --config, --set.
  ConfigTree tree(const std::string& kind, const std::vector<Override>& experiment = {}) const;
  llm::KindParams load(const std::string& kind, const std::vector<Override>& experiment = {}) const;
  /// The kinds of `systems` (KIND x GPUS names) or of `kinds`: those an experiment runs, each loaded once.
  std::map<std::string, llm::KindParams> load_all(const std::vector<std::string>& systems, const std::vector<Override>& experiment = {},
                                                  const std::vector<std::string>& kinds = {}) const;
  /// The `sessions` section (kind-independent: read from the tree of `kind`, the experiment's first system).
  llm::SessionParams sessions(const std::string& kind, const std::vector<Override>& experiment = {}) const;
};

/// --experiment FILE (default: the shipped NAME).
struct ExperimentOption {
  std::string file;
  void add_to(CLI::App& app, const std::string& name, const std::string& what);
};

/// A --context argument: IN:OUT tokens, or a context named in the shipped evaluation experiment (e.g. long).
llm::ContextSpec context_arg(const std::string& s);

/// Loads an experiment's models, naming the experiment file when one cannot be read.
void load_models(llm::ModelSet& models, const std::vector<std::string>& names, const std::string& file);

/// The resolved parameters of one GPU kind, as written next to the results.
Json kind_json(const llm::KindParams& k);
/// kind_json of each kind, keyed by its name.
Json config_json(const std::map<std::string, llm::KindParams>& kinds);

// The subcommands, one file each; add_accel (accel_cmd.cpp) registers them in this order.
void add_kinds(CLI::App& accel);
void add_eval(CLI::App& accel);
void add_ablation(CLI::App& accel);
void add_sessions(CLI::App& accel);
void add_run(CLI::App& accel);
void add_sweep(CLI::App& accel);
void add_validate(CLI::App& accel);

}  // namespace bitline::cli::accel
