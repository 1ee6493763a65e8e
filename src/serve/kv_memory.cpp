#include "serve/kv_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "serve/block_manager.hpp"

namespace bitline::serve {

Json KvMemory::json() const {
  return {{"kv_bytes_per_token_per_gpu", kv_bytes_per_token},
          {"kv_tokens_per_rank", tokens_per_rank},
          {"attention_ranks", ranks},
          {"kv_blocks", blocks},
          {"max_running_requests", max_seqs},
          {"kv_pool_rule", to_string(rule)},
          {"kv_pool_fraction", fraction}};
}

bool holds_request(const KvMemory& m, const ServeParams& p, int64_t tokens) {
  return BlockManager(m.blocks, p.block_tokens, p.watermark).holds(tokens);
}

KvMemory kv_memory(const llm::Server& s, const ServeParams& p) { return kv_memory(s, p, ideal_engine()); }

namespace {
/// SGLang's mem_fraction_static by tensor-parallel size when the profile leaves it to the engine
/// (python/sglang/srt/server_args.py, ServerArgs.__post_init__).
double sglang_static_fraction(int64_t tp) { return tp >= 16 ? 0.79 : tp >= 8 ? 0.83 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88; }
}  // namespace

KvMemory kv_memory(const llm::Server& s, const ServeParams& p, const EngineSetup& e) {
  KvMemory km;
  km.ranks = std::max<int64_t>(s.deployment().ranks, 1);
  const auto ctx = [](int64_t tokens) { return llm::ContextSpec{"", tokens, 0}; };
  const llm::Capacity one = s.capacity(1, ctx(1));
  km.kv_bytes_per_token = one.kv.raw();
  const auto gb = [](Bytes b) { return double(b.raw()) * 1e-9; };
  if (!s.capacity(1, ctx(p.block_tokens)).fits)
    throw ConfigError(fmt::format(
        "model {} does not fit on {} x {} ({}): weights {:.1f} GB + reserve {:.1f} GB + workspace {:.2f} GB per GPU leave no room for "
        "one KV block of {} tokens ({} exhausted; {:.1f} GB of {})",
        s.model().name, s.deployment().gpus, s.params().kind, s.deployment().describe(), gb(one.weights), gb(one.reserve),
        gb(one.workspace), p.block_tokens, llm::to_string(one.limit).empty() ? "memory" : llm::to_string(one.limit), gb(one.hbm_capacity),
        s.has_hbf() ? "HBM (weights and KV in HBF)" : "HBM"));
  // The workspace is sized for max_num_seqs requests per rank (vLLM profiles its activation peak the same way); an
  // engine that derives its limit from the pool (SGLang) sizes it at one request per rank until the pool is known.
  const int64_t seqs = p.max_num_seqs > 0 ? p.max_num_seqs : km.ranks;
  const int64_t r = (seqs + km.ranks - 1) / km.ranks;
  const llm::Capacity at_r = s.capacity(r, ctx(1));
  if (!at_r.fits)
    throw ConfigError(fmt::format(
        "serve.max_num_seqs = {}: the activation workspace of {} requests per rank does not fit beside model {}'s weights on {}; "
        "lower serve.max_num_seqs",
        seqs, r, s.model().name, s.params().kind));
  km.rule = s.has_hbf() ? KvPoolRule::AllFree : e.kv_pool;  // (on HBF the FTL-less runtime places the KV)
  km.fraction = km.rule == KvPoolRule::AllFree ? 1.0 : e.kv_fraction;
  if (km.rule == KvPoolRule::StaticFraction && km.fraction <= 0) km.fraction = sglang_static_fraction(s.deployment().tp);
  if (km.rule == KvPoolRule::AllFree) {
    km.tokens_per_rank = s.max_context(r) * r;  // the most tokens per request with r requests per rank
  } else {
    // The pool per GPU in bytes; a token's KV takes kv_bytes_per_token on each GPU of its rank.
    const double hbm = double(at_r.hbm_capacity.raw()), weights = double(at_r.weights.raw());
    const double others = double(at_r.reserve.raw()) + double(at_r.workspace.raw());
    double pool = 0;
    switch (km.rule) {
      case KvPoolRule::AllFree:
        break;
      case KvPoolRule::Utilization:  // vLLM: the share of the GPU, less weights, non-torch memory and activation peak
        pool = km.fraction * hbm - weights - others;
        break;
      case KvPoolRule::StaticFraction:  // SGLang: the share holds weights and the pool
        pool = km.fraction * hbm - weights;
        break;
      case KvPoolRule::FreeFraction:  // TensorRT-LLM: the share of what weights, runtime and buffers leave
        pool = km.fraction * (hbm - weights - others);
        break;
    }
    km.tokens_per_rank = pool > 0 ? int64_t(pool / double(km.kv_bytes_per_token)) : 0;
    if (km.tokens_per_rank < p.block_tokens)
      throw ConfigError(fmt::format(
          "engine {}: {} = {:g} leaves {:.2f} GB per GPU for the KV pool of model {} on {} (weights {:.1f} GB of {:.1f} GB): not one "
          "block of {} tokens; raise it, or use more GPUs",
          e.profile, to_string(km.rule), km.fraction, pool * 1e-9, s.model().name, s.params().kind, gb(at_r.weights), gb(at_r.hbm_capacity),
          p.block_tokens));
  }
  km.blocks = km.tokens_per_rank / p.block_tokens * km.ranks;
  // SGLang's limit when the profile leaves it to the engine: half the pool's tokens, at most 4096 requests
  // (its scheduler's max_running_requests from max_total_num_tokens).
  km.max_seqs = p.max_num_seqs > 0 ? p.max_num_seqs : std::clamp<int64_t>(km.tokens_per_rank * km.ranks / 2, 1, 4096);
  return km;
}

const llm::Server* serving_deployment(llm::DeploymentSearch& ds, const ServeParams& p, int64_t longest, std::string* why,
                                      const EngineSetup& e) {
  if (why) why->clear();
  const llm::Server* preferred = ds.preferred();
  if (!preferred) throw ConfigError(ds.setup_error(0));
  const auto holds = [&](const llm::Server& srv) {
    try {
      return holds_request(kv_memory(srv, p, e), p, longest);
    } catch (const ConfigError&) {  // the model, or its workspace at max_num_seqs, does not fit this deployment
      return false;
    }
  };
  if (holds(*preferred)) return preferred;  // (under llm.deployment_search = fixed the preferred one is the only candidate)
  const auto& cands = ds.candidates();
  for (size_t i = 1; i < cands.size(); ++i)
    if (const llm::Server* srv = ds.candidate(i); srv && holds(*srv)) {
      if (why)
        *why = fmt::format("{} instead of the preferred {}: its KV memory cannot hold the longest request ({} tokens)",
                           srv->deployment().describe(), preferred->deployment().describe(), longest);
      return srv;
    }
  return preferred;  // the simulation then refuses the request, naming it and the memory
}

}  // namespace bitline::serve
