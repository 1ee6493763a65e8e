// Pieces shared by the subcommands: config options (--preset, --config,
// --set), the catalogue of components for `describe`, the top-level check.
#pragma once

#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.hpp"
#include "core/config.hpp"
#include "core/experiment.hpp"
#include "core/json_io.hpp"
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
    v(seed, {.name = "seed", .def = "1", .desc = "seed of every random stream (errors, synthetic data)", .source = "bitline", .min = 0});
  }
};

/// A component of the catalogue: its config path, its parameter rows, and a check of its section.
struct Component {
  std::string path;
  std::string summary;
  std::vector<ParamRow> (*rows)(const std::string& path);
  /// Loads the section at `path` (keys, types, units, ranges): ConfigError naming the key.
  void (*check)(const ConfigTree& tree, const std::string& path);
};
const std::vector<Component>& catalogue();

/// The registered names of a policy kind, e.g. for CLI::IsMember.
std::vector<std::string> names_of(const ImplList& impls);

/// Throws ConfigError for a top-level key that no component owns, and for any key or value of any
/// component's section that its parameters reject, whichever command runs (a misspelt `nand.*` key is an
/// error in `accel run` too, not silently unused).
void check_top_level(const ConfigTree& tree);
/// Refuses a section of `tree` that is not one of `allowed` (for a command that reads only some components).
void check_sections(const ConfigTree& tree, std::span<const std::string_view> allowed, std::string_view command);

/// Every file `tree` merged (presets, GPU kinds, --config files and their `base:` chains), as inputs of a command
/// whose outputs must not overwrite them (check_distinct_files), appended to `inputs`.
void add_config_inputs(std::vector<NamedPath>& inputs, const ConfigTree& tree);
/// Refuses (OutputError, before any work) outputs that name one file twice, or name a file the command reads: one that
/// `tree` merged, or one of `more` (compared by device and inode, so links and other spellings are caught).
void check_outputs(const std::vector<NamedPath>& outputs, const ConfigTree& tree, std::vector<NamedPath> more = {});

/// The items of a repeatable comma-separated option (--systems fc,osp --systems isp), each non-empty, in order
/// (core/text.hpp's split_list: ConfigError naming `flag` for an empty item or blanks around one).
std::vector<std::string> list_option(const std::vector<std::string>& values, std::string_view flag);

/// Progress of item `i` of `n` on stderr: one line rewritten in place on a terminal; in a log (stderr not a
/// terminal) a line per tenth of the run, so logs stay readable.
void print_progress(size_t i, size_t n, const std::string& what);

/// A finite number of `unit` in [lo, hi], in decimal (CLI::Range and CLI::PositiveNumber let NaN through and name no
/// unit); the refusal names the value, the range and the unit ("" for a ratio).
CLI::Validator finite_range(double lo, double hi, std::string_view unit);
/// A whole number of `unit` in [lo, hi], in decimal (core/text.hpp: no leading 0, no base prefix); the refusal names the
/// value, the range, the unit and `why` (the reason for the range), when given.
CLI::Validator whole_range(int64_t lo, int64_t hi, std::string_view unit, std::string_view why = {});
/// --slo: a decode-step latency SLO in ms, finite, above 0 and at most an hour.
CLI::Validator slo_ms();
/// Requests per attention rank given on the command line (--batch): at most 2^20, the range of
/// serving.max_requests_per_rank (each request holds per-step state; 2^20 of them fit in memory).
inline constexpr int64_t kMaxBatchOption = int64_t(1) << 20;
/// Most points of an `accel sweep` grid: each is a batch search of tens of milliseconds, so 10,000 points are
/// several minutes on two threads; larger grids are refused before they are built.
inline constexpr size_t kMaxSweepPoints = 10000;

/// One --vary option of a sweep (`accel sweep`, `hbf area`): a parameter and the values it takes.
struct Vary {
  std::string key;
  std::vector<std::string> values;
};
/// "KEY=V1,V2,..." -> Vary; ConfigError for anything else (an empty key or value).
Vary parse_vary(const std::string& text);
/// The --vary options, each key once and none also given a value by one of `sets` (the --set options: the grid
/// would override it at every point), their grid bounded before it is built: more than `max_points` combinations
/// is a ConfigError that gives `why` (what one point costs).
std::vector<Vary> parse_grid(const std::vector<std::string>& texts, size_t max_points, std::string_view why,
                             const std::vector<std::string>& sets);
/// Every combination of the varied values, the last key varying fastest.
std::vector<std::vector<std::string>> combinations(const std::vector<Vary>& vary);
/// "key=value key=value" of one combination.
std::string vary_label(const std::vector<Vary>& vary, const std::vector<std::string>& combo);
/// The varied values as the first columns of a sweep's table: each as wide as its key or longest value.
struct VaryColumns {
  std::vector<size_t> width;
  std::string head;  // the keys, padded, each followed by a space
  /// One combination's values, padded as the head.
  std::string row(const std::vector<std::string>& combo) const;
};
VaryColumns vary_columns(const std::vector<Vary>& vary);

void add_describe(CLI::App& app);
void add_nand(CLI::App& app);
void add_hbf(CLI::App& app);
void add_cosmos(CLI::App& app, const RunContext& ctx);
void add_accel(CLI::App& app, const RunContext& ctx);
void add_ssd(CLI::App& app, const RunContext& ctx);
void add_serve(CLI::App& app, const RunContext& ctx);

}  // namespace bitline::cli
