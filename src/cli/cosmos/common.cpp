#include "cli/cosmos/common.hpp"
#include "core/param_dump.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace bitline::cli::cosmos_cli {

using namespace bitline::cosmos;

EvalConfig load_eval_config(const ConfigTree& tree) {
  EvalConfig c;
  c.nand = nand::load_nand_params(tree);
  c.ssd = load_params<ssd::SsdParams>(tree, "ssd");
  c.host = load_params<ssd::HostParams>(tree, "host");
  c.cosmos = load_params<CosmosParams>(tree, "cosmos");
  c.workload = load_params<WorkloadParams>(tree, "workload");
  c.seed = uint64_t(load_params<SimParams>(tree, "sim").seed);
  if (c.nand.geometry.planes_per_die > 255) throw ConfigError("nand.geometry.planes_per_die: at most 255 for the SSD model");
  // host.cpu_power is the package power while computing, its idle floor included (cosmos/energy.cpp charges the part
  // above the floor only in the whole_system accounting): below the floor the computation would earn energy back.
  if (c.host.cpu_power < c.host.idle_power) {
    const ConfigNode* at = tree.at("host.cpu_power");
    throw ConfigError(
        fmt::format("{}host.cpu_power = {}: below host.idle_power = {} (the package power while computing includes "
                    "its idle floor)",
                    at ? at->origin + ": " : "", format(c.host.cpu_power), format(c.host.idle_power)));
  }
  return c;
}

Json config_json(const EvalConfig& c) {
  return {{"sim", {{"seed", c.seed}}},   {"nand", dump_params(c.nand)},     {"ssd", dump_params(c.ssd)},
          {"host", dump_params(c.host)}, {"cosmos", dump_params(c.cosmos)}, {"workload", dump_params(c.workload)}};
}

void ExperimentOption::add_to(CLI::App& app, const std::string& name, const std::string& what) {
  file = shipped_experiment(name).string();
  app.add_option("--experiment", file, fmt::format("experiment file: {} (default: the paper's, configs/experiments/{}.yaml)", what, name));
}

EvalMatrix ExperimentOption::load() const { return load_eval_matrix(file); }

}  // namespace bitline::cli::cosmos_cli
