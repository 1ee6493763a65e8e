// `bitline serve ...`: request-level serving simulation (src/serve/, docs/serving.md).
//   run       one workload on one system: latency percentiles, throughput, goodput -> stdout, --json, --requests-out
//   capacity  the highest arrival rate whose p90 TTFT and p99 TPOT meet their SLOs (bisection on the rate)
//   sweep     one open-loop run per arrival rate: the throughput-latency curve and latency CDFs -> --json, --csv
// The GPU kind's parameters load as in `accel` (--preset, --config, --set over configs/gpus/KIND.yaml); the `serve`
// section (scheduler, limits, block manager) comes with them.
// Each subcommand is registered by its own file, src/cli/serve/NAME.cpp; what they share is src/cli/serve/common.hpp.
#include "cli/common.hpp"
#include "cli/serve/common.hpp"

namespace bitline::cli {

void add_serve(CLI::App& app, const RunContext& ctx) {
  auto* group = app.add_subcommand("serve", "request-level LLM serving: arrivals, continuous batching, latency percentiles, goodput");
  group->require_subcommand(1);
  serve_cli::add_run(*group, ctx);
  serve_cli::add_capacity(*group);
  serve_cli::add_sweep(*group, ctx);
}

}  // namespace bitline::cli
