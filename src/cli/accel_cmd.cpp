// `bitline accel ...`: LLM serving on HBF-equipped GPUs, the FlashAccel evaluation.
//   eval      a matrix of models x contexts x SLOs x systems -> JSON + summary
//   ablation  one model at a fixed batch on variants (a kind and parameter overrides each)
//   sessions  multi-turn KV reuse (LRU retention) on several systems
//             (eval, ablation and sessions run an experiment file: by default the paper's,
//              configs/experiments/flashaccel-{eval,ablation,sessions}.yaml; --experiment FILE for another)
//   run       one point (model, system, context, SLO) with a readable breakdown
//   kinds     the GPU kinds found in configs/gpus/, with their descriptions
//   sweep     one point over a grid of parameter values (--vary KEY=V1,V2,...) -> JSON + table
//   validate  the fast step model against the event-driven memory simulation
//   gemm      GEMM kernels alone (M x K x N) on one GPU kind, as the step model times them
//   attention attention kernels alone (FlashAttention prefill, split-KV decode) on one GPU kind
//   collective one collective alone over a group of GPUs of one kind (the kind's llm.network)
// Each GPU kind is a file of configs/gpus/ (h200, csi, cli, a100, h100, b200, ... : discovered, never listed here),
// with --config and --set applied on top.
// Each subcommand is registered by its own file, src/cli/accel/NAME.cpp; what they share is src/cli/accel/common.hpp.
#include "cli/accel/common.hpp"
#include "cli/common.hpp"

namespace bitline::cli {

void add_accel(CLI::App& app, const RunContext& ctx) {
  auto* group = app.add_subcommand("accel", "LLM serving on HBF-equipped GPUs: the FlashAccel evaluation");
  group->require_subcommand(1);
  // The order of `bitline accel --help`.
  accel::add_kinds(*group);
  accel::add_eval(*group, ctx);
  accel::add_ablation(*group);
  accel::add_sessions(*group, ctx);
  accel::add_run(*group);
  accel::add_sweep(*group, ctx);
  accel::add_validate(*group);
  accel::add_gemm(*group);
  accel::add_attention(*group);
  accel::add_collective(*group);
}

}  // namespace bitline::cli
