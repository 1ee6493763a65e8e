// `bitline cosmos ...`: the Flash-Cosmos SSD and the paper's evaluation.
//   eval         every workload point on all four systems -> JSON + summary
//   run          one point on one system, with a readable breakdown
//   write-bw     sequential write bandwidth per program mode
//   reliability  the BMI exactness experiment with and without ESP
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "cli/common.hpp"
#include "core/json_io.hpp"
#include "cosmos/workloads.hpp"

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

void print_breakdown(const ReadResult& r) {
  const auto& t = r.timing;
  double T = to_s(t.total);
  fmt::print("system {}: time {:.6g} s, energy {:.6g} J, bottleneck: {}\n", to_string(r.system), T, t.total_energy().raw(),
             t.bottleneck);
  if (!r.plan.empty()) fmt::print("  plan per page column: {}\n", r.plan);
  fmt::print("  sensings (plane-level) {}, die commands {}, bytes over channels {}, over PCIe {}, events {}\n", t.sensings,
             r.die_commands, t.channel_bytes, t.pcie_bytes, t.events);
  fmt::print("  busy: dies {:.4g} s (sum), channels {:.4g} s (sum), PCIe {:.4g} s, ISP {:.4g} s, host {:.4g} s\n", to_s(t.die_busy),
             to_s(t.channel_busy), to_s(t.pcie_busy), to_s(t.isp_busy), to_s(t.host_busy));
  fmt::print("  energy (J): NAND sensing {:.4g}, NAND I/O {:.4g}, PCIe {:.4g}, ISP {:.4g}, controller {:.4g}, host CPU {:.4g}, "
             "host DRAM {:.4g}\n",
             t.nand_sense.raw(), t.nand_io.raw(), t.pcie.raw(), t.isp.raw(), t.controller.raw(), t.host_cpu.raw(), t.host_dram.raw());
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
    cfg->add_to(*cmd);
    cmd->add_option("--json", *json, "write points, summary and the resolved config to this file")->required();
    cmd->add_flag("--quiet", *quiet, "no progress on stderr");
    cmd->callback([cfg, json, quiet] {
      check_json_output(*json);
      EvalConfig c = load_eval_config(cfg->load());
      auto t0 = std::chrono::steady_clock::now();
      auto results = run_eval(c, [&](size_t i, size_t n, const std::string& what) {
        if (!*quiet) print_progress(i, n, what);
      });
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      Json j = eval_json(results, config_json(c));
      uint64_t events = 0;
      for (const auto& r : results) events += r.read.timing.events;
      j["run"] = {{"events", events}};  // the wall time is printed, not written: same inputs, same bytes
      write_json_file(*json, j);
      fmt::print("{:<12} {:>8} {:>8} {:>8} {:>9}   (speedup; energy efficiency below)\n", "pair", "bmi", "ims", "kcs", "overall");
      for (const char* what : {"speedup", "energy_efficiency"}) {
        for (auto& [pair, v] : j["summary"][what].items())
          fmt::print("{:<12} {:>8.3g} {:>8.3g} {:>8.3g} {:>9.3g}\n", pair, v.value("bmi", 0.0), v.value("ims", 0.0), v.value("kcs", 0.0),
                     v.value("overall", 0.0));
        fmt::print("\n");
      }
      fmt::print("{} points, {} events in {:.2f} s ({:.3g} events/s); wrote {}\n", results.size(), events, wall,
                 wall > 0 ? double(events) / wall : 0.0, *json);
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
    cfg->add_to(*cmd);
    cmd->add_option("--workload", *workload, "bmi | ims | kcs")->check(CLI::IsMember({"bmi", "ims", "kcs"}));
    cmd->add_option("--param", *param, "the point: months=N (bmi), images=N (ims), k=N (kcs); default: the first of the config's list");
    cmd->add_option("--system", *system, "osp | isp | parabit | fc")->check(CLI::IsMember({"osp", "isp", "parabit", "fc"}));
    cmd->add_flag("--functional", *functional,
                  "store synthetic data and check the result against a CPU reference (use a reduced size, e.g. --set workload.users=8000000)");
    cmd->add_option("--json", *json, "write the result to this file");
    cmd->callback([=] {
      check_json_output(*json);
      EvalConfig c = load_eval_config(cfg->load());
      Point p;
      p.workload = *workload;
      auto pts = eval_points(c.workload);
      for (const auto& x : pts)
        if (x.workload == p.workload) {
          p = x;
          break;
        }
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
        if (num.empty() || used != num.size())
          throw ConfigError(fmt::format("--param {}: '{}' is not an integer", *param, num));
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
      Json bw;
      for (auto m : {nand::ProgramMode::Slc, nand::ProgramMode::Esp, nand::ProgramMode::Mlc, nand::ProgramMode::Tlc}) {
        double v = write_bandwidth(c, m, total) / 1e9;
        bw[nand::to_string(m)] = v;
        fmt::print("{:<4} {:.3f} GB/s\n", nand::to_string(m), v);
      }
      if (!json->empty()) write_json_file(*json, Json{{"gb_per_s", bw}, {"config", config_json(c)}});
    });
  }

  // reliability
  {
    auto* cmd = cosmos->add_subcommand("reliability", "BMI queries on raw SLC (no ESP) vs ESP data with errors on: fraction exact");
    auto cfg = std::make_shared<ConfigOptions>();
    auto json = std::make_shared<std::string>();
    auto months = std::make_shared<int64_t>(36);
    auto trials = std::make_shared<int64_t>(20);
    cfg->add_to(*cmd);
    cmd->add_option("--months", *months, "BMI window in months (default 36)")->check(CLI::Range(int64_t(1), int64_t(1200)));
    // Each trial writes and reads fresh data: 10,000 of them at the smallest size are already minutes.
    cmd->add_option("--trials", *trials, "queries (each on freshly written data, default 20)")->check(CLI::Range(int64_t(1), int64_t(10000)));
    auto operands = std::make_shared<int64_t>(0);
    cmd->add_option("--operands", *operands,
                    "AND this many daily vectors instead of --months (the spec's '36 operands' reading)")
        ->check(CLI::Range(int64_t(1), int64_t(1) << 16));
    cmd->add_option("--json", *json, "write the result to this file");
    cmd->callback([=] {
      check_json_output(*json);
      EvalConfig c = load_eval_config(cfg->load());
      int64_t m = *months;
      if (*operands > 0) c.workload.days_per_month = 1, m = *operands;  // one "month" = one day: m operands
      Json j;
      for (bool esp : {false, true}) {
        auto r = run_reliability(c, m, esp, *trials);
        const char* key = esp ? "esp" : "slc_no_esp";
        fmt::print("{:<11} {}/{} queries exact ({:.3f}); {} cells sensed, {} sensed wrong, {} wrong result bits\n", key, r.exact, r.trials,
                   r.fraction_exact(), r.cells_sensed, r.bit_errors, r.wrong_result_bits);
        j[key] = {{"fraction_exact", r.fraction_exact()}, {"trials", r.trials},         {"cells_sensed", r.cells_sensed},
                  {"bit_errors", r.bit_errors},           {"wrong_result_bits", r.wrong_result_bits}};
      }
      j["users"] = c.workload.users;
      j["operands"] = m * c.workload.days_per_month;
      if (!json->empty()) write_json_file(*json, j);
    });
  }
}

}  // namespace bitline::cli
