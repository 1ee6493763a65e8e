// The KV memory a serving engine pages (per attention rank, by the engine's memory rule), and the deployment that
// holds a workload's longest request: what the simulation (serve/simulator.hpp) and the capacity search size their
// engines with. See docs/serving.md, "Engines".
#pragma once

#include <cstdint>
#include <string>

#include "core/stats.hpp"
#include "llm/deployment.hpp"
#include "llm/serving.hpp"
#include "serve/engine_profile.hpp"
#include "serve/params.hpp"

namespace bitline::serve {

/// The KV memory the engine pages: per attention rank, from the GPU memory left after the weights, the runtime
/// reserve and the activation workspace at max_num_seqs (Server::capacity), or as the engine's rule sizes its pool
/// (EngineSetup::kv_pool, when the KV lives in HBM).
struct KvMemory {
  int64_t kv_bytes_per_token = 0;  // on one GPU, all layers
  int64_t tokens_per_rank = 0;     // KV tokens one attention rank holds
  int64_t ranks = 1;
  int64_t blocks = 0;    // PagedAttention blocks, all ranks
  int64_t max_seqs = 0;  // the engine's most running requests (serve.max_num_seqs, or SGLang's rule from the pool)
  KvPoolRule rule = KvPoolRule::AllFree;
  double fraction = 1;  // the rule's fraction as applied
  Json json() const;
};
/// ConfigError (exit 2) when the model does not fit with one block of KV, naming the memory.
KvMemory kv_memory(const llm::Server& s, const ServeParams& p, const EngineSetup& e);
KvMemory kv_memory(const llm::Server& s, const ServeParams& p);  // the ideal engine's
/// Whether a request of `tokens` tokens (prompt + output) can ever be served in `m`: its blocks within all the blocks
/// less those the watermark keeps free (the check simulate() makes of every request).
bool holds_request(const KvMemory& m, const ServeParams& p, int64_t tokens);

/// The deployment that serves requests of up to `longest` tokens (prompt + output): the preferred one when its KV
/// memory holds such a request, else (unless llm.deployment_search = fixed) the first other candidate that does, in
/// the order the batch search tries them; `why` says why it is not the preferred one (empty when it is). ConfigError
/// when the preferred deployment cannot be built.
const llm::Server* serving_deployment(llm::DeploymentSearch& ds, const ServeParams& p, int64_t longest, std::string* why,
                                      const EngineSetup& e = ideal_engine());

}  // namespace bitline::serve
