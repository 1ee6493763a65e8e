// `bitline cosmos reliability`: the BMI exactness experiment with and without ESP.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "cli/cosmos/common.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"

namespace bitline::cli::cosmos_cli {
namespace {

using namespace bitline::cosmos;

/// The conditions the experiment can run at (`--condition NAME`, or `both`: every one, in this order).
constexpr std::string_view kEveryCondition = "both";
enum class Condition { Stress, Fresh };
const Registry<Condition>& conditions() {
  static const Registry<Condition> r(
      "reliability condition",
      {{"stress", "the paper's worst condition (workload.reliability_pe_cycles, workload.reliability_retention_days: 10K P/E, 1 year)",
        Condition::Stress},
       {"fresh", "the nand.reliability condition of the config (default 0 P/E, no retention)", Condition::Fresh}});
  return r;
}

struct ReliabilityOpts {
  std::string json, condition = "stress";
  int64_t months = 0, trials = 0, operands = 0;
  bool quiet = false;
};

/// Progress over the whole run (conditions x {raw SLC, ESP} x trials), to the run's context (stderr unless --quiet).
struct TrialProgress {
  const RunContext& ctx;
  bool quiet = false;
  size_t done = 0, total = 0;
};

/// run_reliability(c, months, esp, n_trials) one trial at a time (trial t is run_reliability's trial t: its seed is
/// c.seed + t x 7919), so that progress can be shown; the same counts.
ReliabilityResult trials_with_progress(const EvalConfig& c, int64_t months, bool esp, int64_t n_trials, TrialProgress& progress,
                                       const std::string& what) {
  ReliabilityResult rr;
  for (int64_t t = 0; t < n_trials; ++t) {
    EvalConfig ct = c;
    ct.seed = c.seed + uint64_t(t) * 7919;
    const ReliabilityResult r = run_reliability(ct, months, esp, 1);
    rr.trials += r.trials, rr.exact += r.exact;
    rr.cells_sensed += r.cells_sensed, rr.bit_errors += r.bit_errors, rr.wrong_result_bits += r.wrong_result_bits;
    progress.ctx.report(progress.quiet, ++progress.done, progress.total, what);
  }
  return rr;
}

/// One condition (its P/E cycles and retention in `c`): raw SLC and ESP, each printed and returned as JSON.
Json reliability_condition(const EvalConfig& c, int64_t months, int64_t operands_per_query, int64_t n_trials, TrialProgress& progress,
                           const std::string& cond) {
  const auto& w = c.workload;
  const int64_t d = operands_per_query;
  Json jc;
  for (bool esp : {false, true}) {
    auto r = trials_with_progress(c, months, esp, n_trials, progress, fmt::format("{} {}", cond, esp ? "esp" : "slc_no_esp"));
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
  return jc;
}

void run_reliability_cmd(const ConfigOptions& cfg, const ReliabilityOpts& o, const ExperimentOption& exp, const RunContext& ctx) {
  check_json_output(o.json);
  const EvalMatrix matrix = exp.load();
  const ConfigTree tree = cfg.load(matrix.set);
  check_outputs({{"--json", o.json}}, tree, {{"--experiment", exp.file}});
  EvalConfig c0 = load_eval_config(tree);
  int64_t m = o.months > 0 ? o.months : matrix.reliability_months;
  const int64_t n_trials = o.trials > 0 ? o.trials : matrix.reliability_trials;
  if (m <= 0 || n_trials <= 0) throw ConfigError(fmt::format("{}: no reliability: section; give --months and --trials", exp.file));
  if (o.operands > 0) c0.workload.days_per_month = 1, m = o.operands;  // one "month" = one day: m operands
  const int64_t d = m * c0.workload.days_per_month;
  const auto& w = c0.workload;
  {
    // The work is the cells sensed: every trial writes and senses d operands of `users` bits, without and with ESP, in
    // each condition; measured ~6e9 cells/s (20 trials of 30 x 8 M users: 9.8e9 cells in 1.7 s). Refused before it runs
    // past kMaxReliabilityCells (about a minute).
    constexpr double kMaxReliabilityCells = 3e11;
    const double conds = o.condition == kEveryCondition ? double(conditions().size()) : 1.0;
    const double cells = conds * 2.0 * double(n_trials) * double(d) * double(w.users);
    if (cells > kMaxReliabilityCells)
      throw ConfigError(
          fmt::format("cosmos reliability: {:g} condition(s) x 2 (SLC, ESP) x {} trials x {} operands x {} users = {:.3g} "
                      "cells to sense, more than the {:.3g} a run may (about a minute at ~6e9 cells/s); use fewer "
                      "--trials, --months or workload.users",
                      conds, n_trials, d, w.users, cells, kMaxReliabilityCells));
  }
  fmt::print(
      "BMI AND of {} daily vectors, {} users ({} always active = bmi_loyal_fraction {}, others active on a day with "
      "probability bmi_activity {}), {} queries per case, each on freshly written data\n",
      d, w.users, int64_t(double(w.users) * w.bmi_loyal_fraction), w.bmi_loyal_fraction, w.bmi_activity, n_trials);
  Json j;
  // --condition: one name of the registry (resolved once), or every condition in its order.
  const bool every = o.condition == kEveryCondition;
  const size_t only = every ? 0 : conditions().index_of(o.condition, "--condition");
  TrialProgress progress{ctx, o.quiet, 0, (every ? conditions().size() : 1) * 2 * size_t(n_trials)};
  for (size_t i = 0; i < conditions().size(); ++i) {
    if (!every && i != only) continue;
    const std::string cond(conditions().names()[i]);
    EvalConfig c = c0;
    switch (conditions().value(i)) {
      case Condition::Stress:
        c.nand.reliability.initial_pe_cycles = c.workload.reliability_pe_cycles;
        c.nand.reliability.retention_days = c.workload.reliability_retention_days;
        break;
      case Condition::Fresh:
        break;
    }
    fmt::print("{}: {} P/E cycles, {} days retention\n", cond, c.nand.reliability.initial_pe_cycles, c.nand.reliability.retention_days);
    j[cond] = reliability_condition(c, m, d, n_trials, progress, cond);
  }
  j["users"] = w.users;
  j["operands"] = d;
  j["data"] = {{"bmi_loyal_fraction", w.bmi_loyal_fraction}, {"bmi_activity", w.bmi_activity}};
  if (!o.json.empty()) write_json_file(o.json, j);
}

}  // namespace

void add_reliability(CLI::App& cosmos, const RunContext& ctx) {
  auto* cmd = cosmos.add_subcommand("reliability", "BMI queries on raw SLC (no ESP) vs ESP data with errors on: fraction exact");
  auto cfg = std::make_shared<ConfigOptions>();
  auto o = std::make_shared<ReliabilityOpts>();
  auto exp = std::make_shared<ExperimentOption>();
  cfg->add_to(*cmd);
  exp->add_to(*cmd, "flash-cosmos-eval", "its reliability: section gives the default --months and --trials");
  cmd->add_option("--months", o->months, "BMI window in months (default: the experiment's reliability.months)")
      ->check(whole_range(1, 1200, "months"));
  // Each trial writes and reads fresh data: 10,000 of them at the smallest size are already minutes.
  cmd->add_option("--trials", o->trials, "queries, each on freshly written data (default: the experiment's reliability.trials)")
      ->check(whole_range(1, 10000, "trials"));
  cmd->add_option("--operands", o->operands, "AND this many daily vectors instead of --months (the spec's '36 operands' reading)")
      ->check(whole_range(1, int64_t(1) << 16, "operands"));
  cmd->add_option("--condition", o->condition,
                  "stress: the paper's worst condition (workload.reliability_pe_cycles, workload.reliability_retention_days: "
                  "10K P/E, 1 year); fresh: the nand.reliability condition of the config (default 0 P/E, no retention); both")
      ->check(CLI::IsMember([] {
        std::vector<std::string> v(conditions().names().begin(), conditions().names().end());
        v.push_back(std::string(kEveryCondition));
        return v;
      }()));
  cmd->add_option("--json", o->json, "write the result to this file");
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  cmd->callback([cfg, o, exp, ctx] { run_reliability_cmd(*cfg, *o, *exp, ctx); });
}

}  // namespace bitline::cli::cosmos_cli
