// `bitline cosmos run`: one workload point on one system, with a readable breakdown.
#include <fmt/format.h>

#include <memory>

#include "cli/cosmos/common.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace bitline::cli::cosmos_cli {
namespace {

using namespace bitline::cosmos;

struct RunOpts {
  std::string workload = "bmi", param, system = "fc", json;
  bool functional = false;
  bool general_device = false;
  std::string device_scheduling = "mqsim";
};

void print_breakdown(const ReadResult& r) {
  const auto& t = r.timing;
  double T = to_s(t.total);
  fmt::print("system {}: time {:.6g} s, energy {:.6g} J ({} accounting), bottleneck: {}\n", to_string(r.system), T, r.energy.total().raw(),
             r.energy.accounting.name(), ssd::to_string(t.bottleneck));
  if (!r.plan.empty()) fmt::print("  plan per page column: {}\n", r.plan);
  fmt::print("  sensings (plane-level) {}, die commands {}, bytes over channels {}, over PCIe {}, events {}\n", t.sensings, r.die_commands,
             t.channel_bytes, t.pcie_bytes, t.events);
  fmt::print("  busy: dies {:.4g} s (sum), channels {:.4g} s (sum), PCIe {:.4g} s, ISP {:.4g} s, host {:.4g} s\n", to_s(t.die_busy),
             to_s(t.channel_busy), to_s(t.pcie_busy), to_s(t.isp_busy), to_s(t.host_busy));
  // The energy breakdown as the stats tree registers it (one line per component, docs/cosmos.md "Energy").
  StatsTree stats;
  r.energy.register_stats(stats);
  const Json e = stats.dump()["energy_j"];
  fmt::print("  energy by component (J), total {:.4g}:\n", e["total"].get<double>());
  for (const auto& [name, v] : e.items())
    if (name != "total")
      fmt::print("    {:<22} {:>10.4g}  {:5.1f}%\n", name, v.get<double>(), 100.0 * v.get<double>() / e["total"].get<double>());
}

/// The point of --workload and --param (default: the experiment's first point of the workload).
Point run_point_of(const RunOpts& o, const EvalMatrix& matrix) {
  Point p;
  p.workload = o.workload;
  p.param = std::string(workload_kind(o.workload).param);
  if (o.param.empty()) return matrix.first(o.workload);
  auto eq = o.param.find('=');
  std::string key = eq == std::string::npos ? "" : o.param.substr(0, eq);
  if (key != p.param) throw ConfigError(fmt::format("--param {}: workload {} takes {}=N", o.param, p.workload, p.param));
  const std::string num = o.param.substr(eq + 1);
  if (!parse_decimal_integer(num, p.value))
    throw ConfigError(fmt::format("--param {}: '{}' is not an integer (a whole number in decimal)", o.param, text_brief(num)));
  if (p.value <= 0) throw ConfigError(fmt::format("--param {}: must be positive", o.param));
  // The experiment file's sweep cap (bad input, exit 2), not a model failure later ("SSD too small", exit 1).
  if (const int64_t max = workload_kind(o.workload).max_value; p.value > max)
    throw ConfigError(fmt::format("--param {}: {} is above the maximum {} of workload {}", o.param, p.value, max, p.workload));
  return p;
}

/// --functional: the wrong result bits against the CPU reference, printed and added to `j`.
void check_functional(const ReadResult& r, const PreparedPoint& pp, Json& j) {
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

void run_cmd(const ConfigOptions& cfg, const RunOpts& o, const ExperimentOption& exp) {
  check_json_output(o.json);
  const EvalMatrix matrix = exp.load();
  const ConfigTree tree = cfg.load(matrix.set);
  check_outputs({{"--json", o.json}}, tree, {{"--experiment", exp.file}});
  EvalConfig c = load_eval_config(tree);
  const Point p = run_point_of(o, matrix);
  check_run_work(p, c.workload, c.nand.geometry.page_size.raw());
  System s = system_from(o.system);
  CosmosSsd ssd(c.nand, c.ssd, c.host, c.cosmos, o.functional, c.seed);
  ssd.time_on_device(o.general_device, ssd::model_options(ssd::device_schedulings().at(o.device_scheduling, "--device-scheduling")));
  PreparedPoint pp = prepare(ssd, p, c.workload, s, c.seed);
  ReadResult r = ssd.read(pp.queries, s, pp.popcount);
  fmt::print("{} {}={} ({} quer{})\n", p.workload, p.param, p.value, pp.queries.size(), pp.queries.size() == 1 ? "y" : "ies");
  print_breakdown(r);
  if (r.device) {
    const double dev = to_s(r.device->total), base = to_s(r.timing.total);
    fmt::print(
        "  with the {} scheduler (the same device, ssd/device.cpp): time {:.6g} s against {:.6g} s with the SSD's ({:+.1f}%); "
        "SSD part {:.6g} s against {:.6g} s; {} jobs, events {}\n",
        o.device_scheduling, dev, base, 100.0 * (dev / base - 1.0), to_s(r.device->ssd_active), to_s(r.timing.ssd_active), r.device->jobs,
        r.device->events);
  }
  Json j = r.to_json();
  if (o.functional) check_functional(r, pp, j);
  j["config"] = config_json(c);
  if (!o.json.empty()) write_json_file(o.json, j);
}

}  // namespace

void add_run(CLI::App& cosmos) {
  auto* cmd = cosmos.add_subcommand("run", "one workload point on one system, with a breakdown");
  auto cfg = std::make_shared<ConfigOptions>();
  auto o = std::make_shared<RunOpts>();
  auto exp = std::make_shared<ExperimentOption>();
  cfg->add_to(*cmd);
  exp->add_to(*cmd, "flash-cosmos-eval", "its first point of the workload is the default --param");
  cmd->add_option("--workload", o->workload, workloads().joined(" | "))->check(CLI::IsMember(names_of(workloads())));
  cmd->add_option("--param", o->param, "the point: months=N (bmi), images=N (ims), k=N (kcs); default: the experiment's first");
  cmd->add_option("--system", o->system, systems().joined(" | "))->check(CLI::IsMember(names_of(systems())));
  cmd->add_flag(
      "--functional", o->functional,
      "store synthetic data and check the result against a CPU reference (use a reduced size, e.g. --set workload.users=8000000)");
  auto* general = cmd->add_flag("--general-device", o->general_device,
                                "also time the read under another transaction scheduler on the same device (--device-scheduling; "
                                "the read's own timing uses the SSD's eager scheduler)");
  // without --general-device there is nothing to schedule: refused (exit 2), not ignored
  cmd->add_option("--device-scheduling", o->device_scheduling,
                  "with --general-device: " + ssd::device_schedulings().joined(" | ") +
                      " (mqsim, the default: a chip starts only while its channel is idle, MQSim's scheduler; eager: when "
                      "it is free, the SSD's own)")
      ->check(CLI::IsMember(names_of(ssd::device_schedulings())))
      ->needs(general);
  cmd->add_option("--json", o->json, "write the result to this file");
  cmd->callback([cfg, o, exp] { run_cmd(*cfg, *o, *exp); });
}

}  // namespace bitline::cli::cosmos_cli
