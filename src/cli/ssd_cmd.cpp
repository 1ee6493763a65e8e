// `bitline ssd run`: the general SSD on MQSim's inputs (device XML, workload XML, traces).
#include <fmt/format.h>

#include <array>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/json_io.hpp"
#include "ssd/device.hpp"
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

}  // namespace

void add_ssd(CLI::App& app) {
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
  run->callback([o] {
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
    if (!o->quiet)
      opt.progress = [](const ssd::Progress& p) {
        std::cerr << fmt::format("ssd: {:.3f} s simulated, {} requests done (at most ~{} estimated)\n", p.simulated_s, p.requests_done,
                                 p.requests_estimate);
      };
    nlohmann::json j = ssd::simulate_workload(d, w, opt);
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
}

}  // namespace bitline::cli
