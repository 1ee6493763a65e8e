// `bitline cosmos eval`: every point of an experiment file on its systems -> JSON + summary
// (default: configs/experiments/flash-cosmos-eval.yaml, the paper's).
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "cli/cosmos/common.hpp"
#include "core/distributed.hpp"
#include "core/worker_pool.hpp"

namespace bitline::cli::cosmos_cli {
namespace {

using namespace bitline::cosmos;

struct EvalOpts {
  std::string json, csv, general_device;
  bool quiet = false;
  int threads = WorkerPool::hardware_threads();
};

/// The resolved config of an evaluation: the components', with the experiment's sweeps listed under `workload`.
Json config_json(const EvalConfig& c, const EvalMatrix& m) {
  Json j = cosmos_cli::config_json(c);
  const Json sweep = m.sweep_json();
  for (const auto& [k, v] : sweep.items()) j["workload"][k] = v;
  return j;
}

void print_summary(const Json& j) {
  // Each section of the summary with the line that introduces it; A/B = how many times faster (less energy) A is than B.
  const std::pair<const char*, const char*> sections[] = {
      {"speedup", "speedup A/B (B's time / A's), mean over each workload's points; overall = geometric mean of the three"},
      {"energy_efficiency", "energy efficiency A/B (B's energy / A's), same means"},
      {"speedup_on_general_device",
       "speedup A/B with every point timed under the --general-device scheduler (same device, ssd/device.cpp)"}};
  for (const auto& [what, header] : sections) {
    if (!j["summary"].contains(what)) continue;
    fmt::print("{}\n{:<12} {:>8} {:>8} {:>8} {:>9}\n", header, "A/B", "bmi", "ims", "kcs", "overall");
    for (auto& [pair, v] : j["summary"][what].items())
      fmt::print("{:<12} {:>8.3g} {:>8.3g} {:>8.3g} {:>9.3g}\n", pair, v.value("bmi", 0.0), v.value("ims", 0.0), v.value("kcs", 0.0),
                 v.value("overall", 0.0));
    fmt::print("\n");
  }
}

void run_eval(const ConfigOptions& cfg, const EvalOpts& o, const ExperimentOption& exp, const RunContext& ctx) {
  const Distributed& world = Distributed::world();  // first: under mpirun only rank 0 prints, errors included
  // The setup, agreed by every MPI rank: one rank's error (an output folder only it cannot write) ends them all.
  const EvalMatrix matrix = world.agreed([&] {
    check_json_output(o.json);
    check_json_output(o.csv, "--csv");
    check_distinct_files({{"--json", o.json}, {"--csv", o.csv}}, {{"--experiment", exp.file}});
    return exp.load();
  });
  EvalConfig c = world.agreed([&] {
    const ConfigTree tree = cfg.load(matrix.set);
    check_outputs({{"--json", o.json}, {"--csv", o.csv}}, tree, {{"--experiment", exp.file}});
    EvalConfig ec = load_eval_config(tree);
    if (!o.general_device.empty())
      ec.general_device = ssd::model_options(ssd::device_schedulings().at(o.general_device, "--general-device"));
    check_eval_work(matrix, ec.workload, ec.nand.geometry.page_size.raw());
    check_eval_placement(ec, matrix, o.threads);  // an SSD too small for any point: refused before the first point runs
    return ec;
  });
  auto t0 = std::chrono::steady_clock::now();
  // The points over the MPI ranks (one process without mpirun), each rank on its worker pool.
  const auto points = world.map(
      eval_job_count(matrix), [&](size_t i) { return point_json(run_eval_job(c, matrix, i)).dump(); }, o.threads,
      [&](size_t done, size_t n, size_t i) {
        if (ctx.progress || !o.quiet) {
          const EvalJob job = eval_job(matrix, i);
          ctx.report(o.quiet, done, n, run_label(job.point, job.system));
        }
      });
  if (!world.root()) return;  // rank 0 writes the results
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Json pj = Json::array();
  uint64_t events = 0;
  for (const auto& text : points) {
    pj.push_back(Json::parse(text));
    events += pj.back()["events"].get<uint64_t>();
  }
  const size_t n_points = pj.size();
  Json j = eval_json(std::move(pj), matrix, config_json(c, matrix));
  // The wall time, threads and ranks are printed, not written: same inputs, same bytes.
  j["run"] = {{"events", events}, {"experiment", exp.file}};
  if (!o.json.empty()) write_json_file(o.json, j);
  if (!o.csv.empty()) write_csv_file(o.csv, j["points"]);
  print_summary(j);
  std::string wrote;
  for (const auto& f : {o.json, o.csv})
    if (!f.empty()) wrote += (wrote.empty() ? "; wrote " : ", ") + f;
  fmt::print("{} points, {} events in {:.2f} s ({:.3g} events/s) on {} rank(s) x {} thread(s){}\n", n_points, events, wall,
             wall > 0 ? double(events) / wall : 0.0, world.size(), o.threads, wrote);
}

}  // namespace

void add_eval(CLI::App& cosmos, const RunContext& ctx) {
  auto* cmd = cosmos.add_subcommand("eval", "run every workload point on osp, isp, parabit and fc (timing-only, paper scale)");
  auto cfg = std::make_shared<ConfigOptions>();
  auto o = std::make_shared<EvalOpts>();
  auto exp = std::make_shared<ExperimentOption>();
  cfg->add_to(*cmd);
  exp->add_to(*cmd, "flash-cosmos-eval", "the systems, the workload sweeps and the summary's pairs");
  cmd->add_option("--json", o->json, "write points, summary and the resolved config to this file");
  cmd->add_option("--csv", o->csv, "write the points as CSV (one row per point and system, one column per field) to this file");
  cmd->add_option("--threads", o->threads, "worker threads (results do not depend on it)")
      ->capture_default_str()
      ->check(whole_range(1, 256, "threads"));
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  cmd->add_option("--general-device", o->general_device,
                  "also time every point under another transaction scheduler on the same device (docs/ssd.md): mqsim "
                  "(MQSim's: a chip starts only while its channel is idle) or eager (the SSD's own, as the points' timing); "
                  "adds general_device_time_s to the points and speedup_on_general_device to the summary")
      ->check(CLI::IsMember(names_of(ssd::device_schedulings())));
  cmd->callback([cfg, o, exp, ctx] { run_eval(*cfg, *o, *exp, ctx); });
}

}  // namespace bitline::cli::cosmos_cli
