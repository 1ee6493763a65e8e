// The FlashAccel experiments as data: the evaluation matrix, the ablation and the
// multi-turn sessions experiment, each read from an experiment file
// (configs/experiments/flashaccel-*.yaml; format in docs/experiments.md). The code
// holds the mechanisms (serving.hpp, sessions.hpp); the models, contexts, SLOs,
// systems and variants of the paper live in those files.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/experiment.hpp"
#include "llm/serving.hpp"

namespace bitline::llm {

/// `accel eval`: every model x context x SLO on every system (configs/experiments/flashaccel-eval.yaml).
struct EvalExperiment {
  std::vector<std::string> models;    // names in configs/models/ or config.json paths
  std::vector<ContextSpec> contexts;  // named (input, output) token settings, in report order
  std::vector<double> slos_ms;        // decode-step latency SLOs
  std::vector<std::string> systems;   // KIND x GPUS, in report order
  std::string baseline;               // the system the summary's ratios divide by (one of `systems`)
  std::vector<Override> set;          // overrides of component parameters (as --set), for every GPU kind
};
EvalExperiment load_eval_experiment(const std::filesystem::path& file);

/// One ablation variant: a system kind and parameter overrides on top of the experiment's config.
struct AblationVariant {
  std::string name, description, kind;
  std::vector<Override> set;
};

/// `accel ablation`: one model at a fixed batch on several variants (configs/experiments/flashaccel-ablation.yaml).
struct AblationExperiment {
  std::string model;
  int64_t gpus = 0, batch_per_rank = 0;
  ContextSpec context;
  double slo_ms = 0;  // the SLO of the throughput column
  std::vector<AblationVariant> variants;
  std::vector<Override> set;
};
AblationExperiment load_ablation_experiment(const std::filesystem::path& file);

/// One offered load of the sessions experiment: a name and overrides of sessions.* parameters (over `set`).
struct SessionsLoadSpec {
  std::string name;
  std::vector<Override> set;
};

/// `accel sessions`: multi-turn KV reuse on several systems (configs/experiments/flashaccel-sessions.yaml).
struct SessionsExperiment {
  std::string model;                 // used unless sessions.model or --model names one
  std::vector<std::string> systems;  // KIND x GPUS
  std::vector<Override> set;
  std::vector<SessionsLoadSpec> loads;  // the load sweep of the synthetic trace (may be empty)
};
SessionsExperiment load_sessions_experiment(const std::filesystem::path& file);

/// Each variant's parameters: `base(kind)` builds the kind's config tree (preset, experiment and user
/// overrides); the variant's own `set:` goes on top. A bad override is a ConfigError naming the variant.
std::vector<KindParams> ablation_params(const AblationExperiment& e, const std::function<ConfigTree(const std::string& kind)>& base);

// ---- running them ------------------------------------------------------------

/// The jobs of the matrix: one per model x system (model i / systems, system i % systems).
size_t eval_job_count(const EvalExperiment& e);
/// Job i: every context x SLO of its model on its system, as a JSON array of points (PointResult::json) in
/// context, SLO order. `models` must hold the experiment's models; `kinds` maps each GPU kind of its systems to parameters.
/// `accel eval` runs the jobs over core/distributed.hpp (MPI ranks x worker threads), concatenates their
/// points in job order and adds eval_summary.
Json run_eval_job(const ModelSet& models, const std::map<std::string, KindParams>& kinds, const EvalExperiment& e, size_t i);
/// Summary ratios vs the baseline system, per system and SLO, over the points (PointResult::json) where both are feasible.
Json eval_summary(const Json& points, const EvalExperiment& e);

/// The ablation: each variant (with its parameters, ablation_params) timed at the experiment's batch and
/// searched at its SLO, on `threads` workers.
Json run_ablation(const ModelConfig& m, const AblationExperiment& e, const std::vector<KindParams>& params, int threads = 1);

}  // namespace bitline::llm
