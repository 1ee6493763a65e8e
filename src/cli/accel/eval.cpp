// `bitline accel eval`: a matrix of models x contexts x SLOs x systems (an experiment file, by default the paper's,
// configs/experiments/flashaccel-eval.yaml) -> JSON + summary.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <tuple>

#include "cli/accel/common.hpp"
#include "core/distributed.hpp"
#include "core/error.hpp"
#include "core/worker_pool.hpp"
#include "llm/experiment.hpp"

namespace bitline::cli::accel {
namespace {

using namespace bitline::llm;

struct EvalOpts {
  std::string json, csv, baseline;
  bool quiet = false;
  int threads = WorkerPool::hardware_threads();
};

/// The experiment file with --baseline applied (one of its systems).
EvalExperiment load_experiment(const std::string& file, const std::string& baseline) {
  EvalExperiment ex = load_eval_experiment(file);
  if (!baseline.empty()) {
    if (std::find(ex.systems.begin(), ex.systems.end(), baseline) == ex.systems.end()) {
      std::string systems;
      for (const auto& sys : ex.systems) systems += (systems.empty() ? "" : ", ") + sys;
      throw ConfigError(fmt::format("--baseline {}: not one of the experiment's systems ({})", baseline, systems));
    }
    ex.baseline = baseline;
  }
  return ex;
}

/// Absolute per-GPU decode throughput: one line per model x context x SLO, one column per system (the batch in
/// brackets, "-" where infeasible); then every infeasible point with its reason.
void print_absolute(const Json& j, const EvalExperiment& ex) {
  fmt::print("decode tokens/s per GPU [batch per attention rank] (c = capacity-bound, otherwise SLO-bound):\n");
  fmt::print("{:<32}", "model / context / SLO");
  const std::vector<std::string> labels = system_labels(ex.systems);
  for (const auto& label : labels) fmt::print(" {:>16}", label);
  fmt::print("\n");
  std::map<std::tuple<std::string, std::string, double, std::string>, const Json*> at;
  std::vector<std::tuple<std::string, std::string, double>> rows;
  for (const auto& p : j["points"]) {
    const auto key = std::make_tuple(p["model"].get<std::string>(), p["context"].get<std::string>(), p["slo_ms"].get<double>());
    if (std::find(rows.begin(), rows.end(), key) == rows.end()) rows.push_back(key);
    at[std::tuple_cat(key, std::make_tuple(p["system"].get<std::string>()))] = &p;
  }
  for (const auto& [model, context, slo] : rows) {
    fmt::print("{:<32}", fmt::format("{} / {} / {:g} ms", model, context, slo));
    for (const auto& label : labels) {
      const auto it = at.find({model, context, slo, label});
      if (it == at.end() || !(*it->second)["feasible"].get<bool>()) {
        fmt::print(" {:>16}", "-");
        continue;
      }
      const Json& p = *it->second;
      const bool cap = p.value("bound_by", "") == "capacity";
      fmt::print(" {:>16}", fmt::format("{:.0f} [{}{}]", p["tokens_per_s_per_gpu"].get<double>(), p["requests_per_rank"].get<int64_t>(),
                                        cap ? "c" : ""));
    }
    fmt::print("\n");
  }
  for (const auto& p : j["points"])
    if (!p["feasible"].get<bool>())
      fmt::print("infeasible: {} / {} / {:g} ms on {}: {}\n", p["model"].get<std::string>(), p["context"].get<std::string>(),
                 p["slo_ms"].get<double>(), p["system"].get<std::string>(), p.value("reason", std::string("?")));
  fmt::print("\n");
}

/// The summary table (system@SLO vs the baseline), then the points not on their preferred deployment.
void print_summary(const Json& j, const EvalExperiment& ex) {
  const std::string bl = parse_system(ex.baseline).label;
  fmt::print("{:<18} {:>8} {:>8} {:>6}   (per-GPU decode throughput vs {}; tokens/J vs {}: activity-based, and at board power)\n",
             "system@SLO", "mean", "geomean", "points", bl, bl);
  for (const auto& label : system_labels(ex.systems))
    for (double slo : ex.slos_ms) {
      const std::string key = fmt::format("{}@{:g}", label, slo);
      if (!j["summary"]["throughput_vs_" + bl].contains(key)) continue;
      const Json& v = j["summary"]["throughput_vs_" + bl][key];
      const Json& e = j["summary"]["tokens_per_j_vs_" + bl][key];
      if (v["mean"].is_null()) {
        fmt::print("{:<18} {:>8} {:>8} {:>6}\n", key, "-", "-", 0);
        continue;
      }
      const Json& eb = j["summary"]["tokens_per_j_board_vs_" + bl][key];
      const Json& pb = j["summary"]["board_power_vs_" + bl][key];
      fmt::print("{:<18} {:>7.2f}x {:>7.2f}x {:>6}   tokens/J {:.2f}x, at board power {:.2f}x (power {:.2f}x)\n", key,
                 v["mean"].get<double>(), v["geomean"].get<double>(), v["points"].get<int>(), e["mean"].get<double>(),
                 eb["mean"].is_null() ? 0.0 : eb["mean"].get<double>(), pb["mean"].is_null() ? 0.0 : pb["mean"].get<double>());
      if (v.contains("per_model")) {
        std::string per;
        for (const auto& [model, r] : v["per_model"].items())
          per += fmt::format("{}{} {:.2f}x/{:.2f}x", per.empty() ? "" : ", ", model, r["mean"].get<double>(), r["geomean"].get<double>());
        fmt::print("{:<18} per model (mean/geomean): {}\n", "", per);
      }
    }
  // The deployment search (llm/deployment.hpp): the points not on their preferred deployment.
  for (const auto& p : j["points"])
    if (p.contains("deployment") && p["deployment"].contains("preferred") && !p["deployment"]["preferred"].get<bool>())
      fmt::print("deployment: {} {} @{:g} on {}: {} ({} has no feasible batch)\n", p["model"].get<std::string>(),
                 p["context"].get<std::string>(), p["slo_ms"].get<double>(), p["system"].get<std::string>(),
                 p["deployment"]["label"].get<std::string>(), p["deployment"]["tried"][0]["deployment"].get<std::string>());
}

void run_eval(const KindOptions& k, const EvalOpts& o, const std::string& file, const RunContext& ctx) {
  const Distributed& world = Distributed::world();  // first: under mpirun only rank 0 prints, errors included
  // The setup, agreed by every MPI rank: one rank's error (an output folder only it cannot write) ends them all.
  const EvalExperiment ex = world.agreed([&] {
    check_json_output(o.json);
    check_json_output(o.csv, "--csv");
    check_distinct_files({{"--json", o.json}, {"--csv", o.csv}}, {{"--experiment", file}});
    return load_experiment(file, o.baseline);
  });
  world.agreed([&] {
    check_distinct_files({{"--json", o.json}, {"--csv", o.csv}}, input_files(k, ex.models, ex.systems, {{"--experiment", file}}));
  });
  const auto kinds = world.agreed([&] { return k.load_all(ex.systems, ex.set); });
  if (world.root()) fmt::print("{}", overrides_text(kinds, k, ex.set));
  ModelSet models;
  world.agreed([&] { load_models(models, ex.models, file); });
  Json warnings = Json::object();
  for (const auto& name : ex.models)
    for (const auto& w : models.get(name).warnings) {
      warnings[name].push_back(w);
      if (world.root()) fmt::print(stderr, "warning: model {}: {}\n", name, w);
    }
  const std::vector<std::string> labels = system_labels(ex.systems);
  const auto t0 = std::chrono::steady_clock::now();
  // The jobs (model x system) over the MPI ranks (one process without mpirun), each rank on its worker pool.
  const auto jobs = world.map(
      eval_job_count(ex), [&](size_t i) { return run_eval_job(models, kinds, ex, i).dump(); }, o.threads,
      [&](size_t done, size_t n, size_t i) {
        ctx.report(o.quiet, done, n, ex.models[i / ex.systems.size()] + " on " + labels[i % ex.systems.size()]);
      });
  if (!world.root()) return;  // rank 0 writes the results
  Json j;
  j["points"] = Json::array();
  for (const auto& text : jobs)
    for (auto& p : Json::parse(text)) j["points"].push_back(std::move(p));
  j["summary"] = eval_summary(j["points"], ex);
  if (!warnings.empty()) j["model_warnings"] = warnings;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  j["config"] = config_json(kinds, &k, ex.set);
  // Run metadata (wall time, threads, ranks) is printed, not written: same inputs, same bytes.
  j["run"] = {{"experiment", file}};
  if (!o.json.empty()) write_json_file(o.json, j);
  if (!o.csv.empty()) write_csv_file(o.csv, j["points"]);
  print_absolute(j, ex);
  print_summary(j, ex);
  int infeasible = 0;
  for (const auto& p : j["points"]) infeasible += p["feasible"].get<bool>() ? 0 : 1;
  std::string wrote;
  for (const auto& f : {o.json, o.csv})
    if (!f.empty()) wrote += (wrote.empty() ? "; wrote " : ", ") + f;
  fmt::print("{} points ({} infeasible) in {:.1f} s on {} rank(s) x {} thread(s){}\n", j["points"].size(), infeasible, wall, world.size(),
             o.threads, wrote);
}

}  // namespace

void add_eval(CLI::App& accel, const RunContext& ctx) {
  auto* cmd = accel.add_subcommand("eval", "a whole matrix: models x contexts x SLOs x systems (default: the paper's)");
  auto k = std::make_shared<KindOptions>();
  auto x = std::make_shared<ExperimentOption>();
  auto o = std::make_shared<EvalOpts>();
  k->add_to(*cmd);
  x->add_to(*cmd, "flashaccel-eval", "models, contexts, SLOs, systems, the summary's baseline");
  cmd->add_option("--baseline", o->baseline,
                  "the reference system of the summary, one of the experiment's systems (default: the experiment's baseline:)");
  cmd->add_option("--json", o->json, "write points, summary and the resolved config to this file");
  cmd->add_option("--csv", o->csv, "write the points as CSV (one row per point, one column per field) to this file");
  cmd->add_option("--threads", o->threads, "worker threads")->capture_default_str()->check(whole_range(1, 64, "threads"));
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  cmd->callback([k, o, x, ctx] { run_eval(*k, *o, x->file, ctx); });
}

}  // namespace bitline::cli::accel
