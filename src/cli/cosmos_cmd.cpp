// `bitline cosmos ...`: the Flash-Cosmos SSD and the paper's evaluation.
//   eval         every point of an experiment file on its systems -> JSON + summary
//                (default: configs/experiments/flash-cosmos-eval.yaml, the paper's)
//   run          one point on one system, with a readable breakdown
//   write-bw     sequential write bandwidth per program mode
//   reliability  the BMI exactness experiment with and without ESP
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "cli/common.hpp"
#include "core/distributed.hpp"
#include "core/json_io.hpp"
#include "core/worker_pool.hpp"
#include "cosmos/workloads.hpp"
#include "nand/cost_model.hpp"
#include "ssd/sequential_write.hpp"

namespace bitline::cli {
namespace {

using namespace bitline::cosmos;

EvalConfig load_eval_config(const ConfigTree& tree) {
  EvalConfig c;
  c.nand = nand::load_nand_params(tree);
  c.ssd = load_params<ssd::SsdParams>(tree, "ssd");
  c.host = load_params<ssd::HostParams>(tree, "host");
  c.workload = load_params<WorkloadParams>(tree, "workload");
  c.seed = uint64_t(load_params<SimParams>(tree, "sim").seed);
  if (c.nand.geometry.planes_per_die > 255) throw ConfigError("nand.geometry.planes_per_die: at most 255 for the SSD model");
  return c;
}

Json config_json(const EvalConfig& c) {
  return {{"sim", {{"seed", c.seed}}},
          {"nand", dump_params(c.nand)},
          {"ssd", dump_params(c.ssd)},
          {"host", dump_params(c.host)},
          {"workload", dump_params(c.workload)}};
}

/// The resolved config of an evaluation: the components', with the experiment's sweeps listed under `workload`.
Json config_json(const EvalConfig& c, const EvalMatrix& m) {
  Json j = config_json(c);
  const Json sweep = m.sweep_json();
  for (const auto& [k, v] : sweep.items()) j["workload"][k] = v;
  return j;
}

/// --experiment FILE (default: the shipped NAME).
struct ExperimentOption {
  std::string file;
  void add_to(CLI::App& app, const std::string& name, const std::string& what) {
    file = shipped_experiment(name).string();
    app.add_option("--experiment", file,
                   fmt::format("experiment file: {} (default: the paper's, configs/experiments/{}.yaml)", what, name));
  }
  EvalMatrix load() const { return load_eval_matrix(file); }
};

void print_breakdown(const ReadResult& r) {
  const auto& t = r.timing;
  double T = to_s(t.total);
  fmt::print("system {}: time {:.6g} s, energy {:.6g} J, bottleneck: {}\n", to_string(r.system), T, t.total_energy().raw(), t.bottleneck);
  if (!r.plan.empty()) fmt::print("  plan per page column: {}\n", r.plan);
  fmt::print("  sensings (plane-level) {}, die commands {}, bytes over channels {}, over PCIe {}, events {}\n", t.sensings, r.die_commands,
             t.channel_bytes, t.pcie_bytes, t.events);
  fmt::print("  busy: dies {:.4g} s (sum), channels {:.4g} s (sum), PCIe {:.4g} s, ISP {:.4g} s, host {:.4g} s\n", to_s(t.die_busy),
             to_s(t.channel_busy), to_s(t.pcie_busy), to_s(t.isp_busy), to_s(t.host_busy));
  // The energy breakdown as the stats tree registers it (one line per component, docs/cosmos.md "Energy").
  StatsTree stats;
  t.register_stats(stats);
  const Json e = stats.dump()["energy_j"];
  fmt::print("  energy by component (J), total {:.4g}:\n", e["total"].get<double>());
  for (const auto& [name, v] : e.items())
    if (name != "total")
      fmt::print("    {:<22} {:>10.4g}  {:5.1f}%\n", name, v.get<double>(), 100.0 * v.get<double>() / e["total"].get<double>());
}

}  // namespace

void add_cosmos(CLI::App& app) {
  auto* cosmos = app.add_subcommand("cosmos", "the Flash-Cosmos SSD: in-flash bulk bitwise operations and the paper's evaluation");
  cosmos->require_subcommand(1);

  // eval
  {
    auto* cmd = cosmos->add_subcommand("eval", "run every workload point on osp, isp, parabit and fc (timing-only, paper scale)");
    auto cfg = std::make_shared<ConfigOptions>();
    auto json = std::make_shared<std::string>();
    auto quiet = std::make_shared<bool>(false);
    auto threads = std::make_shared<int>(WorkerPool::hardware_threads());
    auto exp = std::make_shared<ExperimentOption>();
    cfg->add_to(*cmd);
    exp->add_to(*cmd, "flash-cosmos-eval", "the systems, the workload sweeps and the summary's pairs");
    cmd->add_option("--json", *json, "write points, summary and the resolved config to this file")->required();
    cmd->add_option("--threads", *threads, "worker threads (results do not depend on it)")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    cmd->add_flag("--quiet", *quiet, "no progress on stderr");
    cmd->callback([cfg, json, quiet, threads, exp] {
      const Distributed& world = Distributed::world();  // first: under mpirun only rank 0 prints, errors included
      check_json_output(*json);
      const EvalMatrix matrix = exp->load();
      EvalConfig c = load_eval_config(cfg->load(matrix.set));
      auto t0 = std::chrono::steady_clock::now();
      // The points over the MPI ranks (one process without mpirun), each rank on its worker pool.
      const auto points = world.map(
          eval_job_count(matrix), [&](size_t i) { return point_json(run_eval_job(c, matrix, i)).dump(); }, *threads,
          [&](size_t done, size_t n, size_t i) {
            const Point& p = matrix.points[i / matrix.systems.size()];
            if (!*quiet)
              print_progress(
                  done, n,
                  fmt::format("{} {}={} on {}", p.workload, p.param, p.value, to_string(matrix.systems[i % matrix.systems.size()])));
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
      j["run"] = {{"events", events}, {"experiment", exp->file}};
      write_json_file(*json, j);
      fmt::print("{:<12} {:>8} {:>8} {:>8} {:>9}   (speedup; energy efficiency below)\n", "pair", "bmi", "ims", "kcs", "overall");
      for (const char* what : {"speedup", "energy_efficiency"}) {
        for (auto& [pair, v] : j["summary"][what].items())
          fmt::print("{:<12} {:>8.3g} {:>8.3g} {:>8.3g} {:>9.3g}\n", pair, v.value("bmi", 0.0), v.value("ims", 0.0), v.value("kcs", 0.0),
                     v.value("overall", 0.0));
        fmt::print("\n");
      }
      fmt::print("{} points, {} events in {:.2f} s ({:.3g} events/s) on {} rank(s) x {} thread(s); wrote {}\n", n_points, events, wall,
                 wall > 0 ? double(events) / wall : 0.0, world.size(), *threads, *json);
    });
  }

  // run
  {
    auto* cmd = cosmos->add_subcommand("run", "one workload point on one system, with a breakdown");
    auto cfg = std::make_shared<ConfigOptions>();
    auto workload = std::make_shared<std::string>("bmi");
    auto param = std::make_shared<std::string>();
    auto system = std::make_shared<std::string>("fc");
    auto functional = std::make_shared<bool>(false);
    auto json = std::make_shared<std::string>();
    auto exp = std::make_shared<ExperimentOption>();
    cfg->add_to(*cmd);
    exp->add_to(*cmd, "flash-cosmos-eval", "its first point of the workload is the default --param");
    cmd->add_option("--workload", *workload, workloads().joined(" | "))->check(CLI::IsMember(names_of(workloads())));
    cmd->add_option("--param", *param, "the point: months=N (bmi), images=N (ims), k=N (kcs); default: the experiment's first");
    cmd->add_option("--system", *system, systems().joined(" | "))->check(CLI::IsMember(names_of(systems())));
    cmd->add_flag(
        "--functional", *functional,
        "store synthetic data and check the result against a CPU reference (use a reduced size, e.g. --set workload.users=8000000)");
    cmd->add_option("--json", *json, "write the result to this file");
    cmd->callback([=] {
      check_json_output(*json);
      const EvalMatrix matrix = exp->load();
      EvalConfig c = load_eval_config(cfg->load(matrix.set));
      Point p;
      p.workload = *workload;
      p.param = std::string(workload_kind(*workload).param);
      if (param->empty()) p = matrix.first(*workload);
      if (!param->empty()) {
        auto eq = param->find('=');
        std::string key = eq == std::string::npos ? "" : param->substr(0, eq);
        if (key != p.param) throw ConfigError(fmt::format("--param {}: workload {} takes {}=N", *param, p.workload, p.param));
        const std::string num = param->substr(eq + 1);
        size_t used = 0;
        try {
          p.value = std::stoll(num, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (num.empty() || used != num.size()) throw ConfigError(fmt::format("--param {}: '{}' is not an integer", *param, num));
        if (p.value <= 0) throw ConfigError(fmt::format("--param {}: must be positive", *param));
      }
      System s = system_from(*system);
      CosmosSsd ssd(c.nand, c.ssd, c.host, *functional, c.seed);
      PreparedPoint pp = prepare(ssd, p, c.workload, s, c.seed);
      ReadResult r = ssd.read(pp.queries, s, pp.popcount);
      fmt::print("{} {}={} ({} quer{})\n", p.workload, p.param, p.value, pp.queries.size(), pp.queries.size() == 1 ? "y" : "ies");
      print_breakdown(r);
      Json j = r.to_json();
      if (*functional) {
        uint64_t wrong = 0;
        for (size_t i = 0; i < r.results.size(); ++i) {
          BitVector d = r.results[i];
          d ^= pp.reference[i];
          wrong += d.popcount();
        }
        fmt::print("  functional check against the CPU reference: {} wrong result bits ({} cells sensed wrong)\n", wrong, r.bit_errors);
        j["wrong_result_bits"] = wrong;
        if (wrong != 0 && r.bit_errors == 0) throw ModelError("functional result differs from the CPU reference without any bit error");
      }
      j["config"] = config_json(c);
      if (!json->empty()) write_json_file(*json, j);
    });
  }

  // write-bw
  {
    auto* cmd = cosmos->add_subcommand("write-bw", "sequential write bandwidth of the SSD per program mode");
    auto cfg = std::make_shared<ConfigOptions>();
    auto json = std::make_shared<std::string>();
    auto size = std::make_shared<std::string>("1GiB");
    cfg->add_to(*cmd);
    cmd->add_option("--bytes", *size, "data written per mode (default 1GiB)");
    cmd->add_option("--json", *json, "write {\"gb_per_s\": {...}} to this file");
    cmd->callback([=] {
      check_json_output(*json);
      EvalConfig c = load_eval_config(cfg->load());
      Bytes total;
      try {
        total = parse_bytes(*size);
      } catch (const std::exception& e) {
        throw ConfigError(fmt::format("--bytes: {}", e.what()));
      }
      if (total.raw() <= 0) throw ConfigError("--bytes: must be positive");
      Json bw, detail;
      const auto t0 = std::chrono::steady_clock::now();
      nand::NandParams per_page = c.nand;
      per_page.timing.multi_bit_program = nand::MultiBitProgram::PageByPage;
      fmt::print("{:<4} {:>9} {:>11}  {:<9} {:>9}   (nand.timing.multi_bit_program = {})\n", "mode", "GB/s", "tPROG", "bound", "per page",
                 c.nand.timing.multi_bit_program.name());
      for (auto m : {nand::ProgramMode::Slc, nand::ProgramMode::Esp, nand::ProgramMode::Mlc, nand::ProgramMode::Tlc}) {
        const ssd::WriteResult r = ssd::run_sequential_write(c.ssd, c.nand, m, total);
        // One bit per cell or already page by page: the same run.
        const bool same = nand::bits_per_cell(m) == 1 || *c.nand.timing.multi_bit_program == nand::MultiBitProgram::PageByPage;
        const double pp = same ? r.gb_per_s() : ssd::run_sequential_write(c.ssd, per_page, m, total).gb_per_s();
        const double t_prog = to_s(nand::CostModel(c.nand.timing, c.nand.energy, c.nand.geometry.page_size).t_prog(m)) * 1e6;
        bw[nand::to_string(m)] = r.gb_per_s();
        detail[nand::to_string(m)] = {
            {"gb_per_s", r.gb_per_s()},    {"bottleneck", r.bottleneck},
            {"t_prog_us", t_prog},         {"steady_state_gb_per_s", ssd::sequential_write_steady_state(c.ssd, c.nand, m) / 1e9},
            {"page_by_page_gb_per_s", pp}, {"events", r.events}};
        fmt::print("{:<4} {:>9.3f} {:>9.0f}us  {:<9} {:>9.3f}\n", nand::to_string(m), r.gb_per_s(), t_prog, r.bottleneck, pp);
      }
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      fmt::print("{} per mode and scheme, {:.2f} s wall\n", format(total), wall);
      if (!json->empty()) write_json_file(*json, Json{{"gb_per_s", bw}, {"modes", detail}, {"config", config_json(c)}});
    });
  }

  // reliability
  {
    auto* cmd = cosmos->add_subcommand("reliability", "BMI queries on raw SLC (no ESP) vs ESP data with errors on: fraction exact");
    auto cfg = std::make_shared<ConfigOptions>();
    auto json = std::make_shared<std::string>();
    auto months = std::make_shared<int64_t>(0);
    auto trials = std::make_shared<int64_t>(0);
    auto exp = std::make_shared<ExperimentOption>();
    cfg->add_to(*cmd);
    exp->add_to(*cmd, "flash-cosmos-eval", "its reliability: section gives the default --months and --trials");
    cmd->add_option("--months", *months, "BMI window in months (default: the experiment's reliability.months)")
        ->check(CLI::Range(int64_t(1), int64_t(1200)));
    // Each trial writes and reads fresh data: 10,000 of them at the smallest size are already minutes.
    cmd->add_option("--trials", *trials, "queries, each on freshly written data (default: the experiment's reliability.trials)")
        ->check(CLI::Range(int64_t(1), int64_t(10000)));
    auto operands = std::make_shared<int64_t>(0);
    cmd->add_option("--operands", *operands, "AND this many daily vectors instead of --months (the spec's '36 operands' reading)")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 16));
    auto condition = std::make_shared<std::string>("stress");
    cmd->add_option("--condition", *condition,
                    "stress: the paper's worst condition (workload.reliability_pe_cycles, workload.reliability_retention_days: "
                    "10K P/E, 1 year); fresh: the nand.reliability condition of the config (default 0 P/E, no retention); both")
        ->check(CLI::IsMember({"stress", "fresh", "both"}));
    cmd->add_option("--json", *json, "write the result to this file");
    cmd->callback([=] {
      check_json_output(*json);
      const EvalMatrix matrix = exp->load();
      EvalConfig c0 = load_eval_config(cfg->load(matrix.set));
      int64_t m = *months > 0 ? *months : matrix.reliability_months;
      const int64_t n_trials = *trials > 0 ? *trials : matrix.reliability_trials;
      if (m <= 0 || n_trials <= 0) throw ConfigError(fmt::format("{}: no reliability: section; give --months and --trials", exp->file));
      if (*operands > 0) c0.workload.days_per_month = 1, m = *operands;  // one "month" = one day: m operands
      const int64_t d = m * c0.workload.days_per_month;
      const auto& w = c0.workload;
      fmt::print(
          "BMI AND of {} daily vectors, {} users ({} always active = bmi_loyal_fraction {}, others active on a day with "
          "probability bmi_activity {}), {} queries per case, each on freshly written data\n",
          d, w.users, int64_t(double(w.users) * w.bmi_loyal_fraction), w.bmi_loyal_fraction, w.bmi_activity, n_trials);
      Json j;
      std::vector<std::string> conds;
      if (*condition != "fresh") conds.push_back("stress");
      if (*condition != "stress") conds.push_back("fresh");
      for (const auto& cond : conds) {
        EvalConfig c = c0;
        if (cond == "stress") {
          c.nand.reliability.initial_pe_cycles = c.workload.reliability_pe_cycles;
          c.nand.reliability.retention_days = c.workload.reliability_retention_days;
        }
        fmt::print("{}: {} P/E cycles, {} days retention\n", cond, c.nand.reliability.initial_pe_cycles, c.nand.reliability.retention_days);
        Json jc;
        for (bool esp : {false, true}) {
          auto r = run_reliability(c, m, esp, n_trials);
          const char* key = esp ? "esp" : "slc_no_esp";
          const double rber = r.cells_sensed ? double(r.bit_errors) / double(r.cells_sensed) : 0.0;
          const double per_query = double(r.wrong_result_bits) / double(r.trials);
          // Always-active users dominate: their result bit is 1 only if none of their d cells senses wrong.
          const double loyal = double(w.users) * w.bmi_loyal_fraction * (1.0 - std::pow(1.0 - rber, double(d)));
          fmt::print(
              "  {:<11} {}/{} exact ({:.3f}); RBER sensed {:.3g} ({} of {} cells); wrong result bits per query {:.3g} "
              "(always-active users' share, estimated: {:.3g})\n",
              key, r.exact, r.trials, r.fraction_exact(), rber, r.bit_errors, r.cells_sensed, per_query, loyal);
          jc[key] = {{"fraction_exact", r.fraction_exact()},
                     {"trials", r.trials},
                     {"cells_sensed", r.cells_sensed},
                     {"bit_errors", r.bit_errors},
                     {"rber_sensed", rber},
                     {"wrong_result_bits", r.wrong_result_bits},
                     {"wrong_result_bits_per_query", per_query},
                     {"loyal_users_wrong_bits_estimate", loyal}};
        }
        jc["pe_cycles"] = c.nand.reliability.initial_pe_cycles;
        jc["retention_days"] = c.nand.reliability.retention_days;
        j[cond] = jc;
      }
      j["users"] = w.users;
      j["operands"] = d;
      j["data"] = {{"bmi_loyal_fraction", w.bmi_loyal_fraction}, {"bmi_activity", w.bmi_activity}};
      if (!json->empty()) write_json_file(*json, j);
    });
  }
}

}  // namespace bitline::cli
