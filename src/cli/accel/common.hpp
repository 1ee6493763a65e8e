// Pieces shared by the `bitline accel ...` subcommands (src/cli/accel/*.cpp, one file per subcommand): the options
// that load GPU kinds (--config, --set) and experiment files (--experiment), --context, and the resolved config
// written into every JSON.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/common.hpp"
#include "core/json_io.hpp"
#include "llm/serving.hpp"

namespace bitline::cli::accel {

/// --preset NAME, --config FILE and --set key=value over each GPU kind's file (configs/gpus/KIND.yaml, or the
/// kind's own file when it is given by path). A preset or file that is itself a GPU kind (a file of configs/gpus/,
/// one inheriting one through `base:`, or one with a `description:`) would change the kind's identity: it is
/// refused when merged over another kind (run it as the kind, `--system FILE`); every parameter the overrides
/// change is reported (overrides()).
struct KindOptions {
  std::string preset, file;
  std::vector<std::string> sets;
  std::string engine;  // a serving engine profile (--engine: configs/engines/NAME.yaml or a path), loaded after the kind
  void add_to(CLI::App& app);
  /// The GPU kind that --preset names, or empty when --preset is not given or names no GPU kind.
  std::string preset_kind() const;
  /// The kind's tree: its preset, an experiment's `set:` overrides, --config, --set.
  ConfigTree tree(const std::string& kind, const std::vector<Override>& experiment = {}) const;
  llm::KindParams load(const std::string& kind, const std::vector<Override>& experiment = {}) const;
  /// The parameters of `kind` the overrides (the experiment's `set:`, --preset, --config, --set) change:
  /// {"section.key": {"kind": value in the kind's file, "run": value of this run}}; empty when none.
  Json overrides(const std::string& kind, const std::vector<Override>& experiment = {}) const;
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
/// One parameter of a GPU kind as it resolves, and where its value comes from.
struct KindValue {
  std::string key;
  Json value;
  std::optional<std::string> origin;  // the file and line that set it (the kind's own file or a base it names); none: the default
  /// {"key", "value", "from"}, `from` the origin or "default".
  Json json() const;
};
/// Every parameter of GPU kind `kind` (a name of configs/gpus/ or a kind's YAML path), in key order
/// (`bitline describe --kind`).
std::vector<KindValue> kind_provenance(const std::string& kind);
/// kind_json of each kind, keyed by its name; with `opts`, each kind's `overridden` parameters (KindOptions::overrides).
Json config_json(const std::map<std::string, llm::KindParams>& kinds, const KindOptions* opts = nullptr,
                 const std::vector<Override>& experiment = {});
/// One line per kind whose parameters the overrides change ("csi: 3 parameters overridden: llm.x a -> b, ..."), for the printout.
std::string overrides_text(const std::map<std::string, llm::KindParams>& kinds, const KindOptions& opts,
                           const std::vector<Override>& experiment = {});

/// A kernel command's --system: one GPU kind (a name of configs/gpus/ or a kind's YAML path); a KIND x N system is
/// refused with ConfigError naming the kind alone, as is an unknown kind. `what`: the kernel, for the message.
void check_one_gpu_kind(const std::string& system, std::string_view what);

/// "AxBx..." with exactly `count` whole numbers in decimal (no leading 0) of at most 8 digits each; otherwise
/// ConfigError(`error`).
std::vector<int64_t> parse_dims(const std::string& arg, size_t count, const std::string& error);

// The subcommands, one file each; add_accel (accel_cmd.cpp) registers them in this order.
void add_kinds(CLI::App& accel);
void add_eval(CLI::App& accel, const RunContext& ctx);
void add_ablation(CLI::App& accel);
void add_sessions(CLI::App& accel, const RunContext& ctx);
void add_run(CLI::App& accel);
void add_sweep(CLI::App& accel, const RunContext& ctx);
void add_validate(CLI::App& accel);
void add_gemm(CLI::App& accel);
void add_attention(CLI::App& accel);
void add_collective(CLI::App& accel);

/// The files a command reads for `models` (names or config.json paths) and `systems` (KIND x GPUS, KIND a name or a
/// YAML path), and --config, then `more` (an experiment, a trace): what no output of the command may be
/// (check_distinct_files).
std::vector<NamedPath> input_files(const KindOptions& k, const std::vector<std::string>& models, const std::vector<std::string>& systems,
                                   std::vector<NamedPath> more = {});

}  // namespace bitline::cli::accel
