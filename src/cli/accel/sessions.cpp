// `bitline accel sessions`: multi-turn KV reuse on several systems, from an experiment file (by default the paper's,
// configs/experiments/flashaccel-sessions.yaml) or a trace: every load served on every system by the request-level
// simulation with prefix caching (serve/sessions.hpp).
#include <fmt/format.h>

#include <memory>
#include <variant>

#include "cli/accel/common.hpp"
#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/params.hpp"
#include "core/worker_pool.hpp"
#include "llm/experiment.hpp"
#include "llm/sessions.hpp"
#include "serve/sessions.hpp"

namespace bitline::cli::accel {
namespace {

using namespace bitline::llm;

struct SessionsOpts {
  std::string json, trace, model;
  int threads = WorkerPool::hardware_threads();
  bool quiet = false;
};

/// The base load (the experiment's `set`), then, for the synthetic trace, each load of the sweep; with --trace, the
/// trace alone.
std::vector<SessionLoad> session_loads(const KindOptions& k, const SessionsExperiment& ex, const std::string& kind, const SessionParams& sp,
                                       const std::string& trace, const std::string& file) {
  std::vector<SessionLoad> loads;
  if (!trace.empty()) {
    loads.push_back({"trace", sp, read_any_trace(trace, sp.block_tokens)});
    return loads;
  }
  std::vector<SessionParams> ps = {sp};
  int64_t turns = synthetic_turns_max(sp);
  for (const auto& l : ex.loads) {
    std::vector<Override> set = ex.set;
    set.insert(set.end(), l.set.begin(), l.set.end());
    SessionParams lp = k.sessions(kind, set);
    lp.model = sp.model;
    try {
      turns += synthetic_turns_max(lp);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: load '{}': {}", file, l.name, e.what()));
    }
    if (turns > kMaxTraceTurns)
      throw ConfigError(
          fmt::format("{}: loads: up to {} turns over all loads, more than the {} they may have together", file, turns, kMaxTraceTurns));
    ps.push_back(lp);
  }
  loads.push_back({"base", sp, synthetic_trace(sp)});
  for (size_t i = 0; i < ex.loads.size(); ++i) loads.push_back({ex.loads[i].name, ps[i + 1], synthetic_trace(ps[i + 1])});
  return loads;
}

/// The results of run_session_loads as written: the base trace and systems, then each load with what it offered.
Json sessions_json(const Json& r, const std::vector<SessionLoad>& loads, const std::string& trace) {
  Json j;
  j["trace"] = r[0]["trace"];
  j["trace"]["source"] = trace.empty() ? "synthetic" : trace;
  j["systems"] = r[0]["systems"];
  j["loads"] = Json::array();
  for (size_t i = 1; i < r.size(); ++i) {
    Json l = r[i];
    const SessionParams& lp = loads[i].params;
    l["offered"] = {{"arrival_per_s", session_arrival_per_s(lp)},
                    {"decoding", lp.decoding},
                    {"think_time_s", to_s(lp.think_time)},
                    {"think_time_distribution", std::string(lp.think_time_distribution.name())},
                    {"think_time_p90_s", to_s(lp.think_time_p90)},
                    {"turns_min", lp.turns_min},
                    {"turns_max", lp.turns_max},
                    {"sessions", lp.sessions}};
    j["loads"].push_back(std::move(l));
  }
  return j;
}

void print_sessions(const Json& j, const SessionsExperiment& ex, const std::string& model, bool replayed_trace) {
  const Json& t = j["trace"];
  if (t.contains("sessions"))
    fmt::print("{} sessions, {} turns (mean prompt {:.0f} tokens, mean output {:.0f}), model {}\n", t["sessions"].get<int64_t>(),
               t["turns"].get<int64_t>(), t["mean_input_tokens"].get<double>(), t["mean_output_tokens"].get<double>(), model);
  else
    fmt::print("{} requests, {} prompt blocks of {} tokens (mean prompt {:.0f} tokens, mean output {:.0f}), model {}\n",
               t["turns"].get<int64_t>(), t["blocks"].get<int64_t>(), t["block_tokens"].get<int64_t>(),
               t["mean_input_tokens"].get<double>(), t["mean_output_tokens"].get<double>(), model);
  for (const auto& [name, v] : j["systems"].items())
    fmt::print(
        "  {:<8} KV memory {:>8.1f} GB: hit rate {:.3f}, recomputed {:.4g} tokens ({:.1f}% of prompts), TTFT mean {:.0f} ms, "
        "p99 {:.0f} ms\n",
        name, v["retention_bytes"].get<double>() * 1e-9, v["hit_rate"].get<double>(), v["recomputed_tokens"].get<double>(),
        100 * v["recomputed_fraction"].get<double>(), v["serve"]["ttft_ms"]["mean"].get<double>(),
        v["serve"]["ttft_ms"]["p99"].get<double>());
  if (replayed_trace && !ex.loads.empty())
    fmt::print("(the experiment's {} loads vary the synthetic trace; a trace is served at its own load)\n", ex.loads.size());
  if (j["loads"].empty()) return;
  fmt::print(
      "hit rate (recomputed share of prompt tokens) by offered load; alive = sessions waiting for a next turn "
      "(Little's law):\n  {:<16} {:>8} {:>6}",
      "load", "sess/s", "alive");
  const std::vector<std::string> labels = system_labels(ex.systems);
  for (const auto& label : labels) fmt::print(" {:>12}", label);
  fmt::print("\n");
  for (const auto& l : j["loads"]) {
    fmt::print("  {:<16} {:>8.4g} {:>6.0f}", l["name"].get<std::string>(), l["offered"]["arrival_per_s"].get<double>(),
               l["trace"]["sessions_alive"].get<double>());
    for (const auto& label : labels) {
      const Json& v = l["systems"][label];
      fmt::print(" {:>5.3f} ({:>3.0f}%)", v["hit_rate"].get<double>(), 100 * v["recomputed_fraction"].get<double>());
    }
    fmt::print("\n");
  }
}

void run_sessions(const KindOptions& k, const SessionsOpts& o, const std::string& file, const RunContext& ctx) {
  check_json_output(o.json);
  const SessionsExperiment ex = load_sessions_experiment(file);
  const auto kinds = k.load_all(ex.systems, ex.set);
  const std::string kind = parse_system(ex.systems.front()).kind;
  SessionParams sp = k.sessions(kind, ex.set);
  if (!o.model.empty()) sp.model = o.model;
  if (sp.model.empty()) sp.model = ex.model;
  check_distinct_files({{"--json", o.json}}, input_files(k, {sp.model}, ex.systems, {{"--experiment", file}, {"--trace", o.trace}}));
  const ModelConfig m = load_model(sp.model);
  const std::vector<SessionLoad> loads = session_loads(k, ex, kind, sp, o.trace, file);
  std::vector<serve::SessionSystem> systems;
  for (const std::string& name : ex.systems) {
    const std::string kn = parse_system(name).kind;
    const ConfigTree tree = k.tree(kn, ex.set);
    serve::SessionSystem s{name, kinds.at(kn), load_params<serve::ServeParams>(tree, "serve")};
    s.engine = serve::load_engine(tree, s.serve, serve::engine_context(s.kind));
    if (!k.engine.empty()) s.engine.profile = k.engine;
    systems.push_back(std::move(s));
  }
  // Every load on every system, in parallel, with progress on stderr.
  Json runs;
  try {
    runs = serve::run_session_loads(m, systems, loads, o.threads,
                                    [&](size_t done, size_t all, const std::string& what) { ctx.report(o.quiet, done, all, what); });
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", o.trace.empty() ? file : "--trace " + o.trace, e.what()));
  }
  Json j = sessions_json(runs, loads, o.trace);
  j["config"] = config_json(kinds, &k, ex.set);
  j["config"]["sessions"] = dump_params(sp);
  for (const serve::SessionSystem& s : systems) {
    j["config"][std::string(parse_system(s.name).kind)]["serve"] = dump_params(s.serve);
    if (!s.engine.ideal()) j["config"][std::string(parse_system(s.name).kind)]["engine"] = s.engine.json();
  }
  if (!o.json.empty()) write_json_file(o.json, j);
  print_sessions(j, ex, m.name, !o.trace.empty());
  if (!o.json.empty()) fmt::print("wrote {}\n", o.json);
}

}  // namespace

void add_sessions(CLI::App& accel, const RunContext& ctx) {
  auto* cmd = accel.add_subcommand("sessions",
                                   "multi-turn KV reuse on the serving simulation: prefix-cache hit rate, recomputed tokens and latency");
  auto k = std::make_shared<KindOptions>();
  auto x = std::make_shared<ExperimentOption>();
  auto o = std::make_shared<SessionsOpts>();
  k->add_to(*cmd);
  x->add_to(*cmd, "flashaccel-sessions", "the model and the systems");
  cmd->add_option("--json", o->json, "write the per-system results to this file");
  cmd->add_option("--trace", o->trace,
                  "JSONL trace: bitline's (session, turn, input_tokens, output_tokens, timestamp) or Mooncake's (timestamp, "
                  "input_length, output_length, hash_ids); default: synthetic agentic sessions at each load of the experiment");
  cmd->add_option("--model", o->model, "model (default: sessions.model, else the experiment's)");
  cmd->add_option("--engine", k->engine,
                  "the serving engine (a profile of configs/engines/ or a path; default: the idealized engine, kernels only, as the "
                  "experiment compares the systems' hardware; a profile other than ideal sets serve's scheduler and limits itself)");
  cmd->add_option("--threads", o->threads, "simulations run at once (default: the machine's threads); the results are the same")
      ->check(whole_range(1, 1024, "threads"));
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  cmd->callback([k, o, x, ctx] { run_sessions(*k, *o, x->file, ctx); });
}

}  // namespace bitline::cli::accel
