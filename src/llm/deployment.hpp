// The deployment of a model on a system, searched as an operator would pick it
// (vLLM, SGLang): the attention tensor-parallel degree t over the divisors of
// the GPUs per node that divide the GPU count (t = 1: data-parallel attention;
// data-parallel ranks = GPUs / t), experts expert parallel over all GPUs.
//
// The preferred deployment is the one llm.attention_parallel / llm.tp_size
// describe (auto: the spec's parallelism table: data-parallel attention for
// MoE models, tensor parallel over a node for dense ones). Under
// llm.deployment_search = preferred it is kept when its batch search finds a
// feasible batch; otherwise the other degrees are tried by distance from the
// preferred one (|log2 t - log2 t_pref|, the larger degree first on a tie,
// since it holds less per GPU) and the first feasible one is chosen: the
// smallest change that fits. `fixed` never changes it; `best` takes the
// feasible degree with the highest tokens/s per GPU. See docs/llm.md
// ("Deployment").
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/stats.hpp"
#include "llm/serving.hpp"

namespace bitline::llm {

/// The deployment as reported in the JSON: {"attention", "tp", "attention_ranks", "ep", "experts_per_gpu",
/// "vocab_shards", "description"}.
Json deployment_json(const Deployment& d);

/// One candidate of the search: the kind's parameters with the attention layout set.
struct DeploymentCandidate {
  int64_t tp = 1;  // attention tensor-parallel degree (1: data parallel)
  bool preferred = false;
  KindParams params;
  std::string label() const;  // "dp" or "tp<t>"
};

/// The candidates for `m` on `gpus` GPUs in the order the search tries them (the preferred one first).
std::vector<DeploymentCandidate> deployment_candidates(const ModelConfig& m, const KindParams& k, int64_t gpus);

/// A model on a system with its deployment searched per point. Servers are built on first use and kept.
class DeploymentSearch {
 public:
  /// `m` must outlive the search (its servers keep a reference, as Server does).
  DeploymentSearch(const ModelConfig& m, const KindParams& k, int64_t gpus);
  /// The search keeps a reference to the model: a temporary would dangle (caught under make asan).
  DeploymentSearch(ModelConfig&& m, const KindParams& k, int64_t gpus) = delete;
  DeploymentSearch(const DeploymentSearch&) = delete;
  DeploymentSearch& operator=(const DeploymentSearch&) = delete;
  ~DeploymentSearch();

  /// The batch search at one point over the deployments (llm.deployment_search). The result's `deployment`
  /// holds the chosen deployment, whether it is the preferred one, and every candidate tried with its outcome.
  /// When none is feasible, the preferred deployment's result (or setup error) is returned with all reasons.
  PointResult search(const ContextSpec& c, Time slo);
  /// The server of the deployment the last search chose (nullptr when that deployment cannot be built).
  const Server* chosen() const { return chosen_; }
  /// The server of the preferred deployment (nullptr when it cannot be built; `setup_error` says why).
  const Server* preferred();
  /// The server of candidate `i` (candidates() order; 0 is the preferred one), nullptr when it cannot be built.
  const Server* candidate(size_t i) { return server(i); }
  std::string setup_error(size_t candidate);
  const std::vector<DeploymentCandidate>& candidates() const { return cands_; }

 private:
  const Server* server(size_t i);
  const ModelConfig& m_;
  int64_t gpus_;
  DeploymentPolicy policy_;
  std::vector<DeploymentCandidate> cands_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::vector<std::string> errors_;
  // Steps timed so far, by candidate and context (input, output tokens): the searches of one context at several SLOs
  // share them.
  std::map<std::tuple<size_t, int64_t, int64_t>, Server::StepMemo> memo_;
  std::vector<bool> built_;
  const Server* chosen_ = nullptr;
};

}  // namespace bitline::llm
