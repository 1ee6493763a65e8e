// `bitline accel sweep`: one point over a grid of parameter values (--vary KEY=V1,V2,...) -> JSON + table.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli/accel/common.hpp"
#include "core/distributed.hpp"
#include "core/error.hpp"
#include "core/worker_pool.hpp"
#include "hbf/area.hpp"
#include "llm/deployment.hpp"

namespace bitline::cli::accel {
namespace {

using namespace bitline::llm;

struct SweepOpts {
  std::string model, system, context, json;
  double slo = 0;
  std::vector<std::string> vary;
  int threads = WorkerPool::hardware_threads();
  bool quiet = false;
};

/// The table: the varied values, then the point.
void print_table(const std::vector<Vary>& vary, const std::vector<std::vector<std::string>>& combos, const std::vector<Json>& points) {
  const VaryColumns cols = vary_columns(vary);
  const std::string& head = cols.head;
  fmt::print("{}{:>7} {:>9} {:>12}  {}\n", head, "batch", "step ms", "tok/s/GPU", "bound by");
  for (size_t i = 0; i < combos.size(); ++i) {
    const std::string row = cols.row(combos[i]);
    const Json& p = points[i];
    if (p["feasible"].get<bool>())
      fmt::print("{}{:>7} {:>9.2f} {:>12.1f}  {}\n", row, p["batch"].get<int64_t>(), p["step_ms"].get<double>(),
                 p["tokens_per_s_per_gpu"].get<double>(), p["bound_by"].get<std::string>());
    else
      fmt::print("{}{:>7} {:>9} {:>12}  infeasible: {}\n", row, "-", "-", "-", p["reason"].get<std::string>());
  }
}

/// A point's HBF stack footprint and density beside HBM3e (bitline hbf area has the breakdown); null without HBF.
Json hbf_area_summary(const hbf::HbfParams& h) {
  if (h.stacks == 0) return nullptr;
  const Json a = hbf::stack_area(h).json();
  return {{"stack_footprint_mm2", a["hbf_stack"]["footprint_mm2"]},
          {"limited_by", a["hbf_stack"]["limited_by"]},
          {"density_gib_per_mm2", a["hbf_stack"]["density_gib_per_mm2"]},
          {"area_vs_hbm3e", a["comparison"]["area_ratio"]},
          {"density_vs_hbm3e", a["comparison"]["density_ratio"]}};
}

void run_sweep(const KindOptions& k, const SweepOpts& o, const RunContext& ctx) {
  const Distributed& world = Distributed::world();  // first: under mpirun only rank 0 prints, errors included
  // The setup, agreed by every MPI rank: one rank's error (an output folder only it cannot write) ends them all.
  world.agreed([&] {
    check_json_output(o.json);
    check_distinct_files({{"--json", o.json}}, input_files(k, {o.model}, {o.system}));
  });
  const SystemName sn = world.agreed([&] { return parse_system(o.system); });
  const ContextSpec c = world.agreed([&] { return context_arg(o.context); });
  const ModelConfig m = world.agreed([&] { return load_model(o.model); });
  const std::vector<Vary> vary =
      world.agreed([&] { return parse_grid(o.vary, kMaxSweepPoints, "a sweep that large runs for hours; split it", k.sets); });
  const auto combos = combinations(vary);
  // Every combination's parameters are loaded (and so checked) before anything runs: no partial sweeps.
  std::vector<KindParams> params;
  std::vector<Json> areas;  // each point's HBF stack area and density (hbf/area.hpp); null for a GPU without HBF
  params.reserve(combos.size());
  world.agreed([&] {
    for (const auto& combo : combos) {
      KindOptions ko = k;
      for (size_t i = 0; i < vary.size(); ++i) ko.sets.push_back(vary[i].key + "=" + combo[i]);
      try {
        params.push_back(ko.load(sn.kind));
        areas.push_back(hbf_area_summary(params.back().system.hbf));
      } catch (const ConfigError& e) {
        throw ConfigError(fmt::format("--vary ({}): {}", vary_label(vary, combo), e.what()));
      }
    }
  });
  // The grid over the MPI ranks (one process without mpirun), each rank on its worker pool.
  const auto texts = world.map(
      combos.size(),
      [&](size_t i) {
        DeploymentSearch ds(m, params[i], sn.gpus);
        PointResult p = ds.search(c, bitline::ms(o.slo));
        p.system = sn.label;
        Json j = p.json();
        Json values = Json::object();
        for (size_t v = 0; v < vary.size(); ++v) values[vary[v].key] = combos[i][v];
        j["values"] = values;
        if (!areas[i].is_null()) j["hbf_area"] = areas[i];
        return j.dump();
      },
      o.threads, [&](size_t done, size_t n, size_t i) { ctx.report(o.quiet, done, n, vary_label(vary, combos[i])); });
  if (!world.root()) return;  // rank 0 prints and writes the results
  std::vector<Json> points;
  for (const auto& t : texts) points.push_back(Json::parse(t));
  print_table(vary, combos, points);
  if (o.json.empty()) return;
  Json vj = Json::object();
  for (const auto& v : vary) vj[v.key] = v.values;
  Json out = {{"model", m.name},
              {"system", sn.label},
              {"context", c.name},
              {"slo_ms", o.slo},
              {"vary", vj},
              {"points", points},
              {"config", kind_json(k.load(sn.kind))}};  // threads and ranks: not written (same bytes)
  write_json_file(o.json, out);
  fmt::print("wrote {} ({} rank(s) x {} thread(s))\n", o.json, world.size(), o.threads);
}

}  // namespace

void add_sweep(CLI::App& accel, const RunContext& ctx) {
  auto* cmd = accel.add_subcommand("sweep", "one point (model, system, context, SLO) over a grid of parameter values");
  auto k = std::make_shared<KindOptions>();
  auto o = std::make_shared<SweepOpts>();
  k->add_to(*cmd);
  cmd->add_option("--model", o->model, "a model of configs/models/ by name, or a config.json path")->required();
  cmd->add_option("--system", o->system, "KIND x GPUS (csix8, clix16, ...)")->required();
  cmd->add_option("--context", o->context,
                  "a context named in the evaluation experiment (e.g. long) or IN:OUT (average input and output tokens)")
      ->required();
  cmd->add_option("--slo", o->slo, "decode-step latency SLO, ms")->required()->check(slo_ms());
  cmd->add_option("--vary", o->vary, "a parameter and its values, KEY=V1,V2,... (repeatable: the grid is every combination)")->required();
  cmd->add_option("--json", o->json, "write the points (and the resolved base config) to this file");
  cmd->add_option("--threads", o->threads, "worker threads")->check(whole_range(1, 256, "threads"))->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  cmd->callback([k, o, ctx] { run_sweep(*k, *o, ctx); });
}

}  // namespace bitline::cli::accel
