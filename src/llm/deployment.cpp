#include "llm/deployment.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace bitline::llm {

const Registry<DeploymentPolicy>& deployment_policies() {
  static const Registry<DeploymentPolicy> r(
      "deployment search",
      {{"preferred_or_fastest",
        "the preferred deployment (llm.attention_parallel, llm.tp_size; auto: the spec's table) where it has a feasible batch, "
        "else the feasible attention tensor-parallel degree with the most tokens/s per GPU (an operator measures the "
        "deployments that fit and keeps the fastest)",
        DeploymentPolicy::PreferredOrFastest},
       {"preferred",
        "the preferred deployment (llm.attention_parallel, llm.tp_size; auto: the spec's table) where it has a feasible batch, "
        "else the nearest attention tensor-parallel degree that has one (the smallest change that fits)",
        DeploymentPolicy::Preferred},
       {"fixed", "only the preferred deployment (no search)", DeploymentPolicy::Fixed},
       {"best", "the feasible attention tensor-parallel degree with the most tokens/s per GPU", DeploymentPolicy::Best}});
  return r;
}

Json deployment_json(const Deployment& d) {
  Json j = {{"attention", d.tensor_parallel ? "tensor_parallel" : "data_parallel"},
            {"tp", d.tp},
            {"attention_ranks", d.ranks},
            {"vocab_shards", d.vocab_shards},
            {"description", d.describe()}};
  if (d.ep > 1) {
    j["ep"] = d.ep;
    j["experts_per_gpu"] = d.local_experts;
  }
  return j;
}

std::string DeploymentCandidate::label() const { return tp == 1 ? "dp" : fmt::format("tp{}", tp); }

namespace {

/// The attention tensor-parallel degree llm.attention_parallel / llm.tp_size describe (1: data parallel).
int64_t preferred_degree(const ModelConfig& m, const LlmParams& p, int64_t gpus) {
  const int64_t node = std::min(gpus, p.network.gpus_per_node);
  switch (*p.attention_parallel) {
    case AttentionParallel::Auto:
      return m.is_moe() ? 1 : node;
    case AttentionParallel::Dp:
      return 1;
    case AttentionParallel::Tp:
      return p.tp_size > 0 ? p.tp_size : node;
  }
  throw std::logic_error("unhandled attention parallelism");
}

KindParams with_degree(const KindParams& k, int64_t tp) {
  KindParams out = k;
  out.llm.attention_parallel = tp == 1 ? AttentionParallel::Dp : AttentionParallel::Tp;
  out.llm.tp_size = tp == 1 ? 0 : tp;
  return out;
}

}  // namespace

std::vector<DeploymentCandidate> deployment_candidates(const ModelConfig& m, const KindParams& k, int64_t gpus) {
  std::vector<DeploymentCandidate> out;
  const int64_t pref = preferred_degree(m, k.llm, gpus);
  // The preferred deployment keeps the user's parameters as they are (auto stays auto).
  out.push_back({pref, true, k});
  if (*k.llm.deployment_search == DeploymentPolicy::Fixed) return out;
  std::vector<int64_t> degrees;
  for (int64_t t = 1; t <= std::min(gpus, k.llm.network.gpus_per_node); ++t)
    if (k.llm.network.gpus_per_node % t == 0 && gpus % t == 0 && t != pref) degrees.push_back(t);
  const double lp = std::log2(double(pref));
  std::stable_sort(degrees.begin(), degrees.end(), [&](int64_t a, int64_t b) {
    const double da = std::abs(std::log2(double(a)) - lp), db = std::abs(std::log2(double(b)) - lp);
    if (da != db) return da < db;
    return a > b;  // a tie: the larger degree (less per GPU)
  });
  for (int64_t t : degrees) out.push_back({t, false, with_degree(k, t)});
  return out;
}

DeploymentSearch::DeploymentSearch(const ModelConfig& m, const KindParams& k, int64_t gpus)
    : m_(m), gpus_(gpus), policy_(*k.llm.deployment_search), cands_(deployment_candidates(m, k, gpus)) {
  servers_.resize(cands_.size());
  errors_.resize(cands_.size());
  built_.resize(cands_.size(), false);
}

DeploymentSearch::~DeploymentSearch() = default;

const Server* DeploymentSearch::server(size_t i) {
  if (!built_[i]) {
    built_[i] = true;
    try {
      servers_[i] = std::make_unique<Server>(m_, cands_[i].params, gpus_);
    } catch (const ConfigError& e) {
      errors_[i] = e.what();
    }
  }
  return servers_[i].get();
}

const Server* DeploymentSearch::preferred() { return server(0); }

std::string DeploymentSearch::setup_error(size_t i) {
  server(i);
  return errors_[i];
}

PointResult DeploymentSearch::search(const ContextSpec& c, Time slo) {
  Json tried = Json::array();
  std::vector<PointResult> results(cands_.size());
  std::vector<bool> done(cands_.size(), false);
  size_t pick = cands_.size();
  for (size_t i = 0; i < cands_.size(); ++i) {
    const Server* s = server(i);
    PointResult& p = results[i];
    if (s) {
      p = s->search(c, slo, &memo_[{i, c.input, c.output}]);
    } else {
      p.model = m_.name;
      p.context = c.name;
      p.gpus = gpus_;
      p.slo_ms = to_s(slo) * 1e3;
      p.reason = errors_[i];
      p.bound_by = BoundBy::Deployment;
    }
    done[i] = true;
    Json t = {{"deployment", cands_[i].label()}, {"feasible", p.feasible}};
    if (p.feasible) {
      t["batch"] = p.step.batch;
      t["tokens_per_s_per_gpu"] = p.step.tokens_per_s_per_gpu;
    } else {
      t["reason"] = p.reason;
    }
    tried.push_back(std::move(t));
    if (p.feasible) {
      // Preferred and Fixed stop at the first feasible candidate (candidates are in order of distance from the
      // preferred degree); PreferredOrFastest stops only at the preferred one, else compares all; Best compares all.
      const bool stop = policy_ == DeploymentPolicy::Preferred || policy_ == DeploymentPolicy::Fixed ||
                        (policy_ == DeploymentPolicy::PreferredOrFastest && i == 0);
      if (stop) {
        pick = i;
        break;
      }
      if (pick == cands_.size() || p.step.tokens_per_s_per_gpu > results[pick].step.tokens_per_s_per_gpu) pick = i;
    }
  }
  const bool found = pick < cands_.size();
  const size_t chosen = found ? pick : 0;
  PointResult out = std::move(results[chosen]);
  chosen_ = servers_[chosen].get();
  if (out.deployment.is_null()) out.deployment = {{"description", "cannot be built"}};
  out.deployment["label"] = cands_[chosen].label();
  out.deployment["preferred"] = cands_[chosen].preferred;
  out.deployment["search"] = std::string(Choice<DeploymentPolicy, deployment_policies>(policy_).name());
  out.deployment["tried"] = std::move(tried);
  if (!found && cands_.size() > 1) {
    std::string why;
    bool same = true;  // one reason for every deployment (a property of the kind, e.g. no FP4): said once
    for (const Json& t : out.deployment["tried"]) {
      why += fmt::format("; {}: {}", t["deployment"].get<std::string>(), t["reason"].get<std::string>());
      same = same && t["reason"] == out.deployment["tried"].front()["reason"];
    }
    out.reason = same ? fmt::format("no deployment has a feasible batch (the same for all {} tried): {}", out.deployment["tried"].size(),
                                    out.deployment["tried"].front()["reason"].get<std::string>())
                      : fmt::format("no deployment has a feasible batch{}", why);
  }
  return out;
}

}  // namespace bitline::llm
