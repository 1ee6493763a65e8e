// Pieces shared by the `bitline cosmos ...` subcommands (src/cli/cosmos/*.cpp, one file per subcommand): the
// evaluation's configuration, its resolved dump, and --experiment. (The namespace is cosmos_cli, not cosmos: inside
// bitline::cli that name would hide bitline::cosmos, the model.)
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.hpp"
#include "core/json_io.hpp"
#include "cosmos/workloads.hpp"

namespace bitline::cli::cosmos_cli {

/// The components of an evaluation (nand, ssd, host, workload, sim.seed) from a loaded tree.
bitline::cosmos::EvalConfig load_eval_config(const ConfigTree& tree);
/// The resolved parameters, as written next to the results.
Json config_json(const bitline::cosmos::EvalConfig& c);

/// --experiment FILE (default: the shipped NAME).
struct ExperimentOption {
  std::string file;
  void add_to(CLI::App& app, const std::string& name, const std::string& what);
  bitline::cosmos::EvalMatrix load() const;
};

// The subcommands, one file each; add_cosmos (cosmos_cmd.cpp) registers them in this order.
void add_eval(CLI::App& cosmos, const RunContext& ctx);
void add_run(CLI::App& cosmos);
void add_write_bw(CLI::App& cosmos);
void add_reliability(CLI::App& cosmos, const RunContext& ctx);
void add_ssb(CLI::App& cosmos, const RunContext& ctx);

}  // namespace bitline::cli::cosmos_cli
