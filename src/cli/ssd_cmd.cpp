// `bitline ssd run`: the general SSD on MQSim's inputs (device XML, workload XML, traces); `bitline ssd fio`: fio's job
// files on it, with fio's JSON.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/json_io.hpp"
#include "core/param_dump.hpp"
#include "ssd/device.hpp"
#include "ssd/fio_report.hpp"
#include "ssd/mqsim_result.hpp"
#include "ssd/mqsim_xml.hpp"

namespace bitline::cli {

namespace {

void print_summary(const nlohmann::json& j) {
  size_t i = 1;  // counted from 1, as the messages and MQSim's NAME_scenario_N.xml files count them
  for (auto& sc : j["scenarios"]) {
    fmt::print(
        "scenario {}: {:.3f} s simulated, {} requests, {:.0f} IOPS, WA {:.3f}, {} GC, {} erases "
        "({:.2f} s wall, {:.0f} requests/s)\n",
        i++, sc["simulated_s"].get<double>(), sc["requests"].get<int64_t>(), sc["iops"].get<double>(),
        sc["ftl"]["write_amplification"].get<double>(), sc["ftl"]["gc_executions"].get<int64_t>(), sc["ftl"]["erases"].get<int64_t>(),
        sc["wall"]["seconds"].get<double>(), sc["wall"]["requests_per_second"].get<double>());
    for (auto& f : sc["flows"])
      fmt::print(
          "  flow {} ({}): {} requests ({} reads, {} writes), {:.0f} IOPS, {:.1f} MB/s, device response "
          "{:.1f} us (p99 {:.1f}), end-to-end {:.1f} us\n",
          f["flow"].get<int>(), f["kind"].get<std::string>(), f["requests"].get<int64_t>(), f["reads"].get<int64_t>(),
          f["writes"].get<int64_t>(), f["iops"].get<double>(), f["bandwidth_Bps"].get<double>() / 1e6,
          f["device_response_time"]["mean_us"].get<double>(), f["device_response_time"]["p99_us"].get<double>(),
          f["end_to_end_delay"]["mean_us"].get<double>());
  }
}

/// An SSD run's progress (ssd::Progress: a scenario's, about every 2 s of wall time) for a RunContext's callback, as
/// requests over the whole run: `done` the requests completed (a scenario's count restarts from 0, so those of the
/// scenarios before it are added and `done` never goes back), `total` the estimate (an upper bound; WorkEstimate) of
/// what is left on top, the count itself once the run ends.
class RequestProgress {
 public:
  explicit RequestProgress(const RunContext& ctx, size_t later = 0) : ctx_(ctx), later_(later) {}
  /// A report of the running scenario. Where scenarios follow one another unseen (ssd run), a count below the last
  /// one starts the next scenario: the last count is added (a lower bound of what the one before completed).
  void running(const ssd::Progress& p) {
    if (size_t(p.requests_done) < last_) base_ += last_;
    last_ = size_t(p.requests_done);
    ctx_.report(true, base_ + last_, base_ + std::max(last_, size_t(p.requests_estimate)) + later_,
                fmt::format("{:.3f} s simulated", p.simulated_s));
  }
  /// A scenario ended with `requests` completed; `later`: the estimate of the scenarios still to run.
  void ended(size_t requests, size_t later, const std::string& what) {
    base_ += requests, last_ = 0, later_ = later;
    ctx_.report(true, base_, base_ + later_, what);
  }

 private:
  const RunContext& ctx_;
  size_t base_ = 0, last_ = 0, later_ = 0;
};

/// `bitline ssd fio`'s options.
struct FioOpts {
  std::string job_file, device, json;
  std::vector<std::string> sets;
  bool quiet = false;
  double occupancy = 0;
  int64_t max_transactions = ssd::kDefaultMaxTransactions;
  double throughput_bin = 0;
};

/// Each group's run options with its share of the work budget: --max-transactions per group, and twice it over the
/// file (as a workload's scenarios under ssd run), every group's work checked before the first runs; `estimates` gets
/// each group's requests, at most (the progress callback's total).
std::vector<ssd::RunOptions> group_budgets(const FioOpts& o, const ssd::fio::Plan& plan, const ssd::DeviceXml& d,
                                           const ssd::RunOptions& opt, std::vector<size_t>& estimates) {
  const double total_budget = 2.0 * double(o.max_transactions);
  double spent = 0;
  std::vector<ssd::RunOptions> per_run;
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    ssd::RunOptions ro = opt;
    ro.max_transactions = std::min<int64_t>(o.max_transactions, int64_t(std::max(0.0, total_budget - spent)));
    if (ro.max_transactions < o.max_transactions)
      ro.budget_note = fmt::format(", what the file's {:.0f} (2 x --max-transactions) leaves after the groups before it", total_budget);
    const std::string label = fmt::format("{}: group {} (jobs run at once up to a stonewall)", o.job_file, i + 1);
    if (ro.max_transactions < 1)
      throw ConfigError(
          fmt::format("{}: the groups before it used the file's budget of {:.0f} page transactions (2 x "
                      "--max-transactions); split the file or raise --max-transactions",
                      label, total_budget));
    const ssd::WorkEstimate e = ssd::estimate_scenario(d, plan.runs[i].scenario, ro, label);
    spent += double(e.page_transactions);
    estimates.push_back(size_t(e.requests));
    per_run.push_back(ro);
  }
  return per_run;
}

/// Runs the job file's groups on the device, writes fio's JSON and logs, prints the summary.
void run_fio(const FioOpts& o, const RunContext& ctx) {
  check_json_output(o.json);
  check_distinct_files({{"--json", o.json}}, {{"JOBFILE", o.job_file}, {"--device", o.device}});
  // fio's logs (write_bw_log, ...) go beside the JSON output, or in the current directory without --json
  const std::filesystem::path log_dir = o.json.empty() ? std::filesystem::path() : std::filesystem::path(o.json).parent_path();
  ConfigTree tree;
  for (const auto& set : o.sets) tree.apply_set(set);
  static constexpr std::array<std::string_view, 2> kSections{"ssd_device", "ssd_model"};
  check_sections(tree, kSections, "ssd fio");
  ssd::DeviceXml d = ssd::read_device_xml(o.device, o.sets);
  if (o.occupancy > 0) d.preconditioning = true;  // the flows' Initial_Occupancy needs the device's preconditioning
  std::vector<std::string> notes;
  const ssd::fio::JobFile file = ssd::fio::read_job_file(o.job_file);
  const std::vector<ssd::fio::Job> jobs = ssd::fio::resolve_jobs(file, &notes);
  const ssd::fio::Plan plan = ssd::fio::plan_jobs(file, jobs, d, o.occupancy / 100.0);
  for (auto& n : notes) std::cerr << "bitline: note: " << n << "\n";
  std::vector<std::filesystem::path> log_paths;
  {
    std::vector<NamedPath> outs{{"--json", o.json}};
    for (const std::string& name : ssd::fio::log_names(plan)) {
      log_paths.push_back(log_dir / name);
      check_json_output(log_paths.back(), "a fio log (write_*_log)");
      outs.push_back({fmt::format("fio log {}", name), log_paths.back()});
    }
    check_distinct_files(outs, {{"JOBFILE", o.job_file}, {"--device", o.device}});
  }
  ssd::RunOptions opt;
  opt.model = load_params<ssd::SsdModelOptions>(tree, "ssd_model");
  opt.io_stats = true;
  opt.throughput_bin = sec(o.throughput_bin);
  std::vector<size_t> estimates;  // each group's requests, at most (the progress callback's total)
  std::vector<ssd::RunOptions> per_run = group_budgets(o, plan, d, opt, estimates);
  std::vector<ssd::ScenarioRun> runs;
  const auto later = [&](size_t i) { return std::accumulate(estimates.begin() + std::ptrdiff_t(i), estimates.end(), size_t(0)); };
  RequestProgress counted(ctx, later(0));
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    if (ctx.progress)
      per_run[i].progress = [&counted](const ssd::Progress& p) { counted.running(p); };
    else if (!o.quiet)
      per_run[i].progress = [](const ssd::Progress& p) {
        std::cerr << fmt::format("ssd fio: {:.3f} s simulated, {} I/Os done (at most ~{} estimated)\n", p.simulated_s, p.requests_done,
                                 p.requests_estimate);
      };
    runs.push_back(ssd::run_scenario(d, plan.runs[i].scenario, per_run[i], fmt::format("{}: group {}", o.job_file, i + 1)));
    counted.ended(size_t(runs.back().result["requests"].get<int64_t>()), later(i + 1),
                  fmt::format("group {} of {}", i + 1, plan.runs.size()));
  }
  nlohmann::ordered_json j = ssd::fio::fio_json(plan, runs);
  j["bitline"]["device"] = d.file;
  j["bitline"]["occupancy_percent"] = o.occupancy;
  j["bitline"]["defaults_used"] = d.defaulted;
  const nlohmann::json resolved = {{"ssd_device", dump_params(static_cast<const ssd::DeviceParams&>(d))},
                                   {"ssd_model", dump_params(opt.model)}};
  j["bitline"]["resolved"] = nlohmann::ordered_json::parse(resolved.dump());
  if (!o.quiet) {
    fmt::print("{}", ssd::fio::summary(j));
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto& w = runs[i].result["wall"];
      fmt::print("group {}: {:.6g} s simulated, {} requests ({:.2f} s wall)\n", i + 1, runs[i].result["simulated_s"].get<double>(),
                 runs[i].result["requests"].get<int64_t>(), w["seconds"].get<double>());
    }
  }
  if (!o.json.empty()) {
    // fio's key order kept (write_json_file takes a sorted json)
    write_text_file(o.json, j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    if (!o.quiet) fmt::print("wrote {}\n", o.json);
  }
  const std::vector<std::string> texts = ssd::fio::log_texts(plan, runs);
  for (size_t i = 0; i < log_paths.size(); ++i) {
    write_text_file(log_paths[i], texts[i]);
    if (!o.quiet) fmt::print("wrote {}\n", log_paths[i].string());
  }
}

/// `bitline ssd fio JOBFILE --device DRIVE.xml`: the job file's jobs, group by group (stonewall), on the device.
void add_ssd_fio(CLI::App& ssd, const RunContext& ctx) {
  auto* fio = ssd.add_subcommand("fio", "run a fio job file on a device XML; fio's JSON output (docs/ssd.md, \"fio job files\")");
  auto o = std::make_shared<FioOpts>();
  fio->add_option("JOBFILE", o->job_file, "fio job file ([global] and job sections)")->required();
  fio->add_option("--device", o->device, "MQSim device configuration XML (the drive)")->required();
  fio->add_option("--json", o->json, "write fio's JSON result (fio --output-format=json) to this file");
  fio->add_option("--occupancy", o->occupancy,
                  "percent of each job's share of the drive already written before the jobs run (analytic preconditioning; "
                  "default 0, a fresh drive; 100: full, reads of written pages and writes that make garbage collection)")
      ->check(CLI::Range(0.0, 100.0));
  fio->add_option("--max-transactions", o->max_transactions,
                  "refuse a group of jobs whose estimated flash page transactions exceed this (default 2^26; docs/ssd.md, "
                  "\"Work budget\")")
      ->check(whole_range(1, int64_t(1) << 40, "transactions"));
  fio->add_flag("--quiet", o->quiet, "no summary on stdout, no progress on stderr");
  fio->add_option("--throughput-bin", o->throughput_bin,
                  "also write each group's bytes completed per bin of this many seconds of simulated time (bitline.runs[i]."
                  "throughput, as ssd run --throughput-bin)")
      ->check(CLI::Range(1e-9, 1e6));
  fio->add_option("--set", o->sets, "ssd_device.KEY=VALUE or ssd_model.KEY=VALUE, as bitline ssd run --set (repeatable)");
  fio->callback([o, ctx] { run_fio(*o, ctx); });
}

}  // namespace

void add_ssd(CLI::App& app, const RunContext& ctx) {
  auto* ssd = app.add_subcommand("ssd", "a general SSD (page-level FTL, GC, NVMe queues) on MQSim's input files");
  ssd->require_subcommand(1);
  auto* run = ssd->add_subcommand("run", "simulate a workload XML (MQSim_IO_Scenarios) on a device XML (Execution_Parameter_Set)");
  struct Opts {
    std::string device, workload, json, mqsim_xml;
    std::vector<std::string> sets;
    bool quiet = false;
    int64_t max_transactions = ssd::kDefaultMaxTransactions;
    double throughput_bin = 0;
  };
  auto o = std::make_shared<Opts>();
  run->add_option("--device", o->device, "MQSim device configuration XML")->required();
  run->add_option("--workload", o->workload, "MQSim workload XML")->required();
  run->add_option("--json", o->json, "write the results to this JSON file");
  run->add_option("--mqsim-xml", o->mqsim_xml,
                  "also write MQSim's result XML (<MQSim_Results>) to this file; with several scenarios, "
                  "one file each, NAME_scenario_N.xml as MQSim names them");
  run->add_option("--max-transactions", o->max_transactions,
                  "refuse a scenario whose estimated flash page transactions exceed this (default 2^26 = 67108864; "
                  "docs/ssd.md, \"Work budget\")")
      ->check(whole_range(1, int64_t(1) << 40, "transactions"));
  run->add_flag("--quiet", o->quiet, "no progress on stderr");
  run->add_option("--throughput-bin", o->throughput_bin,
                  "also write the bytes completed per bin of this many seconds of simulated time (the result's "
                  "`throughput`: bandwidth over time; at most 65536 bins, wider when the run is longer)")
      ->check(CLI::Range(1e-9, 1e6));
  run->add_option("--set", o->sets,
                  "override a device value of the file, ssd_device.KEY=VALUE, or switch one mechanism of the model, "
                  "ssd_model.KEY=VALUE (repeatable; `bitline describe ssd_device` / `ssd_model` list them)");
  run->callback([o, ctx] {
    check_json_output(o->json);
    ssd::DeviceXml d = ssd::read_device_xml(o->device, o->sets);
    std::vector<std::string> notes;
    ssd::WorkloadXml w = ssd::read_workload_xml(o->workload, &notes);
    // MQSim's result files: one per scenario, named as MQSim does when there are several
    std::vector<std::string> xml_files;
    if (!o->mqsim_xml.empty()) {
      for (size_t i = 0; i < w.scenarios.size(); ++i) {
        if (w.scenarios.size() == 1) {
          xml_files.push_back(o->mqsim_xml);
        } else {
          std::filesystem::path p(o->mqsim_xml);
          xml_files.push_back((p.parent_path() / fmt::format("{}_scenario_{}.xml", p.stem().string(), i + 1)).string());
        }
        check_json_output(xml_files.back(), "--mqsim-xml");
      }
    }
    {
      std::vector<NamedPath> outs{{"--json", o->json}}, ins{{"--device", o->device}, {"--workload", o->workload}};
      for (const auto& x : xml_files) outs.push_back({"--mqsim-xml", x});
      for (const auto& sc : w.scenarios)
        for (const auto& fl : sc.flows)
          if (!fl.trace_path.empty()) ins.push_back({"the workload's trace (File_Path)", fl.trace_path});
      check_distinct_files(outs, ins);
    }
    for (auto& n : notes) std::cerr << "bitline: note: " << n << "\n";
    if (!d.defaulted.empty())
      std::cerr << fmt::format("bitline: note: {}: {} elements absent, at MQSim's defaults: {}\n", d.file, d.defaulted.size(),
                               fmt::join(d.defaulted, ", "));
    ssd::RunOptions opt;
    ConfigTree tree;
    for (const auto& set : o->sets) tree.apply_set(set);
    static constexpr std::array<std::string_view, 2> kSections{"ssd_device", "ssd_model"};
    check_sections(tree, kSections, "ssd run");
    opt.model = load_params<ssd::SsdModelOptions>(tree, "ssd_model");
    opt.max_transactions = o->max_transactions;
    opt.throughput_bin = sec(o->throughput_bin);
    RequestProgress counted(ctx);
    if (ctx.progress)
      opt.progress = [&counted](const ssd::Progress& p) { counted.running(p); };
    else if (!o->quiet)
      opt.progress = [](const ssd::Progress& p) {
        std::cerr << fmt::format("ssd: {:.3f} s simulated, {} requests done (at most ~{} estimated)\n", p.simulated_s, p.requests_done,
                                 p.requests_estimate);
      };
    nlohmann::json j = ssd::simulate_workload(d, w, opt);
    size_t requests = 0;
    for (const auto& sc : j["scenarios"]) requests += size_t(sc["requests"].get<int64_t>());
    ctx.report(true, requests, requests, fmt::format("{} scenario(s) done", j["scenarios"].size()));
    print_summary(j);
    // Run metadata (wall time, requests per wall second) is printed, never written into the result: the same inputs
    // give the same bytes. The event count is a result of the model and stays.
    for (auto& sc : j["scenarios"]) {
      sc["events"] = sc["wall"]["events"];
      sc.erase("wall");
    }
    if (!o->json.empty()) {
      write_json_file(o->json, j);
      fmt::print("wrote {}\n", o->json);
    }
    for (size_t i = 0; i < xml_files.size(); ++i) {
      write_text_file(xml_files[i], ssd::mqsim_result_xml(j["scenarios"][i], w.scenarios[i]));
      fmt::print("wrote {}\n", xml_files[i]);
    }
  });
  add_ssd_fio(*ssd, ctx);
}

}  // namespace bitline::cli
