// `bitline accel ablation`: one model at a fixed batch on variants (a kind and parameter overrides each), from an
// experiment file (by default the paper's, configs/experiments/flashaccel-ablation.yaml).
#include <fmt/format.h>

#include <memory>

#include "cli/accel/common.hpp"
#include "core/worker_pool.hpp"
#include "llm/experiment.hpp"

namespace bitline::cli::accel {
namespace {

using namespace bitline::llm;

struct AblationOpts {
  std::string json, model, context;
  int64_t batch = 0, gpus = 0;
  double slo = 0;
  int threads = WorkerPool::hardware_threads();
};

void run_ablation_cmd(const KindOptions& k, const AblationOpts& o, const std::string& file) {
  check_json_output(o.json);
  AblationExperiment ex = load_ablation_experiment(file);
  if (!o.model.empty()) ex.model = o.model;
  check_distinct_files({{"--json", o.json}}, input_files(k, {ex.model}, {}, {{"--experiment", file}}));
  if (o.batch > 0) ex.batch_per_rank = o.batch;
  if (o.gpus > 0) ex.gpus = o.gpus;
  if (!o.context.empty()) ex.context = context_arg(o.context);
  if (o.slo > 0) ex.slo_ms = o.slo;
  std::vector<std::string> variant_kinds;
  for (const auto& v : ex.variants) variant_kinds.push_back(v.kind);
  const auto kinds = k.load_all({}, ex.set, variant_kinds);
  const auto params = ablation_params(ex, [&](const std::string& kind) { return k.tree(kind, ex.set); });
  const ModelConfig m = load_model(ex.model);
  Json j = run_ablation(m, ex, params, o.threads);
  j["config"] = config_json(kinds, &k, ex.set);
  if (!o.json.empty()) write_json_file(o.json, j);
  fmt::print("{} on {} GPUs, batch {} per rank, context {}:\n", m.name, ex.gpus, ex.batch_per_rank, ex.context.name);
  for (const auto& [name, v] : j["variants"].items())
    fmt::print("  {:<17} step {:>9.3f} ms{}   {:>8.1f} tokens/s/GPU at {:g} ms\n", name, v["step_ms"].get<double>(),
               v["fits"].get<bool>() ? "" : " (does not fit)", v[fmt::format("tokens_per_s_per_gpu_at_{:g}ms", ex.slo_ms)].get<double>(),
               ex.slo_ms);
  if (!o.json.empty()) fmt::print("wrote {}\n", o.json);
}

}  // namespace

void add_ablation(CLI::App& accel) {
  auto* cmd = accel.add_subcommand("ablation", "one model at a fixed batch on the experiment's variants (default: the paper's, on CSI)");
  auto k = std::make_shared<KindOptions>();
  auto x = std::make_shared<ExperimentOption>();
  auto o = std::make_shared<AblationOpts>();
  k->add_to(*cmd);
  x->add_to(*cmd, "flashaccel-ablation", "model, GPUs, batch, context, SLO and the variants");
  cmd->add_option("--json", o->json, "write the variants to this file");
  cmd->add_option("--model", o->model, "model (default: the experiment's)");
  cmd->add_option("--batch", o->batch, "requests per attention rank (per GPU for data-parallel attention; default: the experiment's)")
      ->check(whole_range(1, kMaxBatchOption, "requests per rank"));
  cmd->add_option("--gpus", o->gpus, "GPUs (default: the experiment's)")->check(whole_range(1, 99999, "GPUs"));
  cmd->add_option("--context", o->context,
                  "a context named in the evaluation experiment (e.g. long) or IN:OUT (default: the experiment's)");
  cmd->add_option("--slo", o->slo, "SLO of the throughput column, ms (default: the experiment's)")->check(slo_ms());
  cmd->add_option("--threads", o->threads, "worker threads (results do not depend on it)")
      ->capture_default_str()
      ->check(whole_range(1, 256, "threads"));
  cmd->callback([k, o, x] { run_ablation_cmd(*k, *o, x->file); });
}

}  // namespace bitline::cli::accel
