#include "serve/sessions.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/worker_pool.hpp"
#include "serve/report.hpp"

namespace bitline::serve {

Json session_result(const SimResult& r, const llm::Server& s, int64_t gpus) {
  const Json sum = summary(r, Slo{});  // its token counts and reuse rate, and the latencies below
  const int64_t prompt = sum["tokens"]["input"].get<int64_t>();
  const double reused = double(r.cached_tokens), recomputed = double(prompt) - reused;
  Json j;
  j["hit_rate"] = sum["prefix_cache"]["reuse_rate"];
  j["turn_hit_rate"] = r.requests_with_reusable > 0 ? double(r.requests_reusing) / double(r.requests_with_reusable) : 0.0;
  j["prompt_tokens"] = prompt;
  j["reusable_tokens"] = r.reusable_tokens;
  j["reused_tokens"] = r.cached_tokens;
  j["recomputed_tokens"] = recomputed;
  j["recomputed_fraction"] = prompt > 0 ? recomputed / double(prompt) : 0.0;
  j["evictions"] = r.prefix_evictions;
  j["turns"] = int64_t(r.requests.size());
  // The KV memory the cache lives in (shared with the requests running): every GPU's.
  j["retention_bytes"] = double(r.memory.tokens_per_rank) * double(r.memory.kv_bytes_per_token) * double(gpus);
  j["gpus"] = gpus;
  j["deployment"] = s.deployment().describe();
  j["serve"] = {{"ttft_ms", sum["ttft_ms"]},
                {"tpot_ms", sum["tpot_ms"]},
                {"e2e_ms", sum["e2e_ms"]},
                {"queueing_ms", sum["queueing_ms"]},
                {"output_tokens_per_s", sum["output_tokens_per_s"]},
                {"requests_per_s", sum["requests_per_s"]},
                {"mean_requests_in_system", sum["mean_requests_in_system"]},
                {"preemptions", sum["preemptions"]},
                {"makespan_s", r.makespan_s()}};
  return j;
}

Json run_session_loads(const llm::ModelConfig& m, const std::vector<SessionSystem>& systems, const std::vector<llm::SessionLoad>& loads,
                       int threads, const std::function<void(size_t, size_t, const std::string&)>& progress) {
  // The work, before any of it: every output token of every load is decoded on every system.
  double out_tokens = 0;
  std::vector<std::vector<Request>> reqs;
  int64_t longest = 0;
  int64_t keys = 0;
  for (const llm::SessionLoad& l : loads) {
    reqs.push_back(requests_from_trace(l.trace, 0, fmt::format("load '{}'", l.name)));
    for (const Request& q : reqs.back()) {
      out_tokens += double(q.output), longest = std::max(longest, q.input + q.output);
      keys += int64_t(q.prefix.size());
    }
    if (keys > kMaxSessionPrefixKeys)
      throw ConfigError(
          fmt::format("the loads' turns make more than {} prefix keys together (at load '{}'; about 80 B each while "
                      "served); give fewer loads or sessions",
                      kMaxSessionPrefixKeys, l.name));
  }
  const double total = out_tokens * double(systems.size());
  if (total > kMaxSessionOutputTokens)
    throw ConfigError(
        fmt::format("{:.3g} output tokens to simulate ({:.3g} over the {} loads x {} systems), more than the {:.0e} one "
                    "run may take (estimated {:.0f} s on one core); give fewer systems, fewer sessions or a shorter trace",
                    total, out_tokens, loads.size(), systems.size(), kMaxSessionOutputTokens, total * kSessionSecondsPerToken));
  // Each system's deployment, once: the preferred one if its KV memory holds the longest turn.
  std::vector<std::unique_ptr<llm::DeploymentSearch>> searches;
  std::vector<const llm::Server*> servers;
  std::vector<int64_t> gpus;
  for (const SessionSystem& s : systems) {
    const llm::SystemName sn = llm::parse_system(s.name);
    searches.push_back(std::make_unique<llm::DeploymentSearch>(m, s.kind, sn.gpus));
    servers.push_back(serving_deployment(*searches.back(), s.serve, longest, nullptr, s.engine));
    gpus.push_back(sn.gpus);
  }
  const size_t n = systems.size(), jobs = loads.size() * n;
  std::vector<std::string> names;
  for (const SessionSystem& s : systems) names.push_back(s.name);
  const std::vector<std::string> labels = llm::system_labels(names);  // what each prints as (a kind file by its stem)
  const WorkerPool pool(threads);
  const std::vector<Json> results = pool.map<Json>(
      jobs,
      [&](size_t job) {
        const size_t l = job / n, k = job % n;
        ServeParams p = systems[k].serve;
        p.prefix_caching = true;
        Workload w;
        w.requests = reqs[l];
        w.record_itl = w.record_request_energy = false;  // session_result reports neither
        Cluster c;
        c.colocated = servers[k];
        c.engine = systems[k].engine;
        return session_result(simulate(c, p, std::move(w)), *servers[k], gpus[k]);
      },
      [&](size_t done, size_t all, size_t job) {
        if (progress) progress(done, all, fmt::format("{} on {}", loads[job / n].name, labels[job % n]));
      });
  Json out = Json::array();
  for (size_t l = 0; l < loads.size(); ++l) {
    Json j = {{"name", loads[l].name}, {"trace", llm::trace_summary(loads[l].trace)}, {"systems", Json::object()}};
    for (size_t k = 0; k < n; ++k) j["systems"][labels[k]] = results[l * n + k];
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace bitline::serve
