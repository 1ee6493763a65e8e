// `bitline cosmos ...`: the Flash-Cosmos SSD and the paper's evaluation.
//   eval         every point of an experiment file on its systems -> JSON + summary
//                (default: configs/experiments/flash-cosmos-eval.yaml, the paper's)
//   run          one point on one system, with a readable breakdown
//   write-bw     sequential write bandwidth per program mode
//   reliability  the BMI exactness experiment with and without ESP
//   ssb          the Star Schema Benchmark's queries compiled onto Flash-Cosmos operations
// Each subcommand is registered by its own file, src/cli/cosmos/NAME.cpp; what they share is src/cli/cosmos/common.hpp.
#include "cli/common.hpp"
#include "cli/cosmos/common.hpp"

namespace bitline::cli {

void add_cosmos(CLI::App& app, const RunContext& ctx) {
  auto* group = app.add_subcommand("cosmos", "the Flash-Cosmos SSD: in-flash bulk bitwise operations and the paper's evaluation");
  group->require_subcommand(1);
  // The order of `bitline cosmos --help`.
  cosmos_cli::add_eval(*group, ctx);
  cosmos_cli::add_run(*group);
  cosmos_cli::add_write_bw(*group);
  cosmos_cli::add_reliability(*group, ctx);
  cosmos_cli::add_ssb(*group, ctx);
}

}  // namespace bitline::cli
