// Experiment files (configs/experiments/*.yaml): a user's own matrix runs through
// `accel eval`, `accel ablation`, `accel sessions` and `cosmos eval` with
// --experiment, without touching C++; a bad file is a config error (exit 2) that
// names the file, the key and why, and writes no output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/run_bitline.hpp"
#include "../support/temp_dir_test.hpp"

namespace fs = std::filesystem;

namespace {

using ::bitline::test::run_bitline;
using ::bitline::test::shell_quote;

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

class ExperimentCli : public ::bitline::test::TempDirTest {
 protected:
  ExperimentCli() : TempDirTest("bitline-exp-") {}
  /// Runs `bitline CMD --experiment FILE --json OUT EXTRA`; expects success and returns the JSON.
  nlohmann::json run_ok(const std::string& cmd, const fs::path& experiment, const std::string& extra = "") {
    const fs::path out = dir_ / "out.json";
    const auto r =
        run_bitline(cmd + " --experiment " + shell_quote(experiment.string()) + " --json " + shell_quote(out.string()) + " " + extra);
    EXPECT_EQ(r.rc, 0) << r.out;
    std::ifstream in(out);
    EXPECT_TRUE(in.good()) << "no JSON written: " << r.out;
    if (!in) return {};
    return nlohmann::json::parse(in);
  }
  /// A tiny Flash-Cosmos sweep: kcs (k = 8) and bmi (1 month) on `baseline` and fc, compared as fc/baseline; `set:`
  /// shrinks the data.
  fs::path tiny_cosmos_sweep(const std::string& baseline) {
    return write("sweep.yaml", "systems: [" + baseline + ", fc]\nsweep:\n  clique_sizes: [8]\n  months: [1]\ncompare: [fc/" + baseline +
                                   "]\nset: [workload.users=8000000, workload.vertices=1048576, workload.cliques=4]\n");
  }
  /// Expects a config error (exit 2) naming every needle, and no output file.
  void expect_bad(const std::string& cmd, const std::string& yaml, std::vector<std::string> needles) {
    const fs::path file = write("bad.yaml", yaml);
    const fs::path out = dir_ / "bad-out.json";
    fs::remove(out);
    const auto r = run_bitline(cmd + " --experiment " + shell_quote(file.string()) + " --json " + shell_quote(out.string()));
    EXPECT_EQ(r.rc, 2) << cmd << " with\n" << yaml << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "config error")) << r.out;
    EXPECT_TRUE(contains(r.out, "bad.yaml")) << "the message does not name the file: " << r.out;
    for (const auto& n : needles) EXPECT_TRUE(contains(r.out, n)) << "expected '" << n << "' in: " << r.out << "\nfor\n" << yaml;
    EXPECT_FALSE(fs::exists(out)) << "output written despite the error";
  }
};

// A user's matrix: 2 models x 1 context x 1 SLO x 2 systems, one model given by path.
TEST_F(ExperimentCli, AccelEvalRunsAUserMatrix) {
  nlohmann::json m = nlohmann::json::parse(std::ifstream(std::string(BITLINE_SOURCE_DIR) + "/configs/models/tiny-test.json"));
  m["num_hidden_layers"] = 4;
  std::ofstream(dir_ / "tiny-b.json") << m.dump();
  const fs::path e = write("mine.yaml",
                           "# my matrix\n"
                           "models: [tiny-test, " +
                               (dir_ / "tiny-b.json").string() +
                               "]\n"
                               "contexts: [{name: short, input: 512, output: 128}]\n"
                               "slos_ms: [20]\n"
                               "systems: [h200x4, csix4]\n"
                               "baseline: h200x4\n");
  const auto j = run_ok("accel eval --quiet", e);
  ASSERT_EQ(j["points"].size(), 4u);
  const std::vector<std::pair<std::string, std::string>> order = {
      {"tiny-test", "h200x4"}, {"tiny-test", "csix4"}, {"tiny-b", "h200x4"}, {"tiny-b", "csix4"}};
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& p = j["points"][i];
    EXPECT_EQ(p["model"], order[i].first) << i;
    EXPECT_EQ(p["system"], order[i].second) << i;
    EXPECT_EQ(p["context"], "short");
    EXPECT_EQ(p["slo_ms"], 20.0);
    EXPECT_TRUE(p["feasible"].get<bool>()) << p.dump();
  }
  // The summary divides by the file's baseline, for the file's other systems and SLOs only.
  ASSERT_TRUE(j["summary"].contains("throughput_vs_h200x4")) << j["summary"].dump();
  EXPECT_EQ(j["summary"]["throughput_vs_h200x4"].size(), 1u);
  EXPECT_EQ(j["summary"]["throughput_vs_h200x4"]["csix4@20"]["points"], 2);
  const double expect = j["points"][1]["tokens_per_s_per_gpu"].get<double>() / j["points"][0]["tokens_per_s_per_gpu"].get<double>() / 2 +
                        j["points"][3]["tokens_per_s_per_gpu"].get<double>() / j["points"][2]["tokens_per_s_per_gpu"].get<double>() / 2;
  EXPECT_DOUBLE_EQ(j["summary"]["throughput_vs_h200x4"]["csix4@20"]["mean"].get<double>(), expect);
  EXPECT_EQ(j["run"]["experiment"], e.string());
}

// Paths in an experiment file are relative to the file's folder, not to where the command runs: the experiment and
// the model and kind files beside it move together.
TEST_F(ExperimentCli, PathsInAnExperimentAreRelativeToItsFolder) {
  fs::create_directories(dir_ / "study" / "kinds");
  nlohmann::json m = nlohmann::json::parse(std::ifstream(std::string(BITLINE_SOURCE_DIR) + "/configs/models/tiny-test.json"));
  std::ofstream(dir_ / "study" / "tiny-c.json") << m.dump();
  std::ofstream(dir_ / "study" / "kinds" / "h200-500w.yaml")
      << "description: an H200 at 500 W\nbase: h200\nllm: {energy: {gpu_tdp: 500W}}\n";
  std::ofstream(dir_ / "study" / "e.yaml") << "models: [tiny-c.json]\ncontexts: [\"512:128\"]\nslos_ms: [20]\n"
                                              "systems: [h200x4, kinds/h200-500w.yamlx4]\nbaseline: kinds/h200-500w.yamlx4\n";
  const fs::path out = dir_ / "o.json";
  fs::create_directories(dir_ / "elsewhere");
  const auto r = run_bitline("accel eval --quiet --experiment ../study/e.yaml --json " + shell_quote(out.string()),
                             "cd " + shell_quote((dir_ / "elsewhere").string()) + " && ");
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(std::ifstream(out));
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][0]["model"], "tiny-c");  // the model file, found beside the experiment
  // A kind given by path prints as its file's stem, wherever the file lies (the table, the points, the summary).
  EXPECT_EQ(j["points"][1]["system"], "h200-500wx4");
  EXPECT_TRUE(j["summary"].contains("throughput_vs_h200-500wx4")) << j["summary"].dump();
  EXPECT_TRUE(j["summary"]["throughput_vs_h200-500wx4"].contains("h200x4@20")) << j["summary"].dump();
  EXPECT_TRUE(contains(r.out, "h200-500wx4")) << r.out;
  EXPECT_FALSE(contains(r.out, "yamlx4")) << r.out;
}

// Two systems that would print as one name (a kind file named like a shipped kind) are refused: their points and
// summary keys could not be told apart.
TEST_F(ExperimentCli, SystemsThatWouldPrintAsOneNameAreRefused) {
  fs::create_directories(dir_ / "kinds");
  std::ofstream(dir_ / "kinds" / "h200.yaml") << "description: an H200 at 500 W\nbase: h200\nllm: {energy: {gpu_tdp: 500W}}\n";
  expect_bad("accel eval --quiet",
             "models: [tiny-test]\ncontexts: [\"512:128\"]\nslos_ms: [20]\nsystems: [h200x4, kinds/h200.yamlx4]\nbaseline: h200x4\n",
             {"bad.yaml:4", "kinds/h200.yamlx4", "h200x4", "both print as"});
}

// The file's `set:` reaches the components (here the GPU kinds), under the command line's --set.
TEST_F(ExperimentCli, AccelEvalAppliesTheFilesOverridesUnderTheCommandLine) {
  const std::string matrix = "models: [tiny-test]\ncontexts: [\"512:128\"]\nslos_ms: [20]\nsystems: [h200x4]\nbaseline: h200x4\n";
  const fs::path e = write("mine.yaml", matrix + "set: [llm.compute.kernel_overhead=7us]\n");
  EXPECT_EQ(run_ok("accel eval --quiet", e)["config"]["h200"]["llm"]["compute"]["kernel_overhead"], "7us");
  EXPECT_EQ(run_ok("accel eval --quiet", e, "--set llm.compute.kernel_overhead=5us")["config"]["h200"]["llm"]["compute"]["kernel_overhead"],
            "5us");
}

// A tiny Flash-Cosmos sweep: two workloads, two systems, one pair; `set:` shrinks the data.
TEST_F(ExperimentCli, CosmosEvalRunsAUserSweep) {
  const fs::path e = tiny_cosmos_sweep("osp");
  const auto j = run_ok("cosmos eval --quiet", e);
  ASSERT_EQ(j["points"].size(), 4u);
  // Points in the file's order (kcs before bmi here), each on every system in order.
  EXPECT_EQ(j["points"][0]["workload"], "kcs");
  EXPECT_EQ(j["points"][0]["system"], "osp");
  EXPECT_EQ(j["points"][1]["system"], "fc");
  EXPECT_EQ(j["points"][2]["param"]["months"], 1);
  EXPECT_EQ(j["config"]["workload"]["users"], 8000000);
  EXPECT_EQ(j["config"]["workload"]["months"], nlohmann::json::array({1}));
  EXPECT_FALSE(j["config"]["workload"].contains("images"));
  ASSERT_EQ(j["summary"]["speedup"].size(), 1u);
  const auto& s = j["summary"]["speedup"]["fc/osp"];
  EXPECT_DOUBLE_EQ(s["kcs"].get<double>(), j["points"][0]["time_s"].get<double>() / j["points"][1]["time_s"].get<double>());
  EXPECT_TRUE(s.contains("overall"));
  EXPECT_FALSE(s.contains("ims"));
}

// An ablation variant is data: a kind and overrides; the variants run as the file lists them.
TEST_F(ExperimentCli, AblationVariantsAreData) {
  const fs::path e = write("abl.yaml",
                           "model: tiny-test\ngpus: 4\nbatch_per_rank: 8\ncontext: \"512:128\"\nslo_ms: 20\n"
                           "variants:\n"
                           "  - {name: base, description: as preset, kind: csi}\n"
                           "  - {name: slow_flash, description: twice the read time, kind: csi, set: [nand.timing.t_read_slc=10us]}\n"
                           "  - {name: hbm, description: HBM only, kind: h200}\n");
  const auto j = run_ok("accel ablation", e);
  ASSERT_EQ(j["variants"].size(), 3u);
  EXPECT_EQ(j["variants"]["base"]["system"], "csix4");
  EXPECT_EQ(j["variants"]["hbm"]["system"], "h200x4");
  EXPECT_EQ(j["variants"]["slow_flash"]["description"], "twice the read time");
  EXPECT_GT(j["variants"]["slow_flash"]["step_ms"].get<double>(), j["variants"]["base"]["step_ms"].get<double>());
  EXPECT_EQ(j["batch_per_rank"], 8);
  EXPECT_EQ(j["context"]["input"], 512);
  // --batch overrides the file.
  EXPECT_EQ(run_ok("accel ablation", e, "--batch 4")["batch_per_rank"], 4);
}

TEST_F(ExperimentCli, SessionsRunTheFilesSystems) {
  const fs::path e = write("ses.yaml", "model: qwen3-235b\nsystems: [h200x8, csix8]\nset: [sessions.sessions=40]\n");
  const auto j = run_ok("accel sessions", e);
  ASSERT_EQ(j["systems"].size(), 2u);
  EXPECT_TRUE(j["systems"].contains("csix8"));
  EXPECT_EQ(j["config"]["sessions"]["sessions"], 40);
  EXPECT_EQ(j["config"]["sessions"]["model"], "qwen3-235b");
}

TEST_F(ExperimentCli, SessionsSweepTheFilesLoads) {
  const fs::path e =
      write("ses.yaml",
            "model: qwen3-235b\nsystems: [h200x8, csix8]\nset: [sessions.sessions=40, sessions.decoding=0]\nloads:\n"
            "  - {name: slow, set: [sessions.arrival_per_s=0.05]}\n"
            "  - {name: fast, set: [sessions.arrival_per_s=5, sessions.think_time=60s, sessions.think_time_distribution=exponential]}\n");
  const auto j = run_ok("accel sessions", e);
  ASSERT_EQ(j["loads"].size(), 2u);
  EXPECT_EQ(j["loads"][0]["name"], "slow");
  EXPECT_EQ(j["loads"][1]["offered"]["arrival_per_s"], 5.0);
  EXPECT_EQ(j["loads"][1]["offered"]["think_time_s"], 60.0);
  EXPECT_EQ(j["loads"][1]["offered"]["sessions"], 40);  // `set` applies under every load
  for (const auto& l : j["loads"]) {
    ASSERT_EQ(l["systems"].size(), 2u);
    EXPECT_TRUE(l["systems"]["h200x8"].contains("hit_rate"));
    EXPECT_GT(l["trace"]["sessions_alive"].get<double>(), 0.0);
  }
  // Same sessions, arriving 100 x as fast: more of them alive at once.
  EXPECT_GT(j["loads"][1]["trace"]["sessions_alive"].get<double>(), j["loads"][0]["trace"]["sessions_alive"].get<double>());
  // The base load (the file's `set` alone) is still reported as `systems`.
  EXPECT_EQ(j["systems"].size(), 2u);
}

TEST_F(ExperimentCli, BadAccelEvalFilesAreConfigErrors) {
  const std::string ok_models = "models: [tiny-test]\n", ok_ctx = "contexts: [{name: s, input: 512, output: 128}]\n",
                    ok_slo = "slos_ms: [20]\n", ok_sys = "systems: [h200x4, csix4]\n", ok_base = "baseline: h200x4\n";
  const std::string ok = ok_models + ok_ctx + ok_slo + ok_sys + ok_base;
  expect_bad("accel eval --quiet", ok + "modles: [x]\n", {"bad.yaml:6", "modles", "unknown key"});
  expect_bad("accel eval --quiet", ok_models + ok_ctx + "slos_ms: [0]\n" + ok_sys + ok_base, {"slos_ms[0]", "above 0"});
  expect_bad("accel eval --quiet", ok_models + ok_ctx + ok_slo + "systems: [h200x4, v100x8]\n" + ok_base,
             {"systems[1]", "v100x8", "unknown GPU kind"});
  expect_bad("accel eval --quiet", ok_models + ok_ctx + ok_slo + ok_sys + "baseline: clix8\n",
             {"baseline", "clix8", "not one of the systems"});
  expect_bad("accel eval --quiet", ok_models + "contexts: [{name: s, input: 512}]\n" + ok_slo + ok_sys + ok_base,
             {"contexts[0]", "output"});
  expect_bad("accel eval --quiet", ok_models + "contexts: [\"512:0\"]\n" + ok_slo + ok_sys + ok_base, {"contexts[0]", "512:0"});
  expect_bad("accel eval --quiet", ok_models + ok_ctx + ok_slo + ok_sys, {"missing key 'baseline'"});
  expect_bad("accel eval --quiet", "models: [no-such-model]\n" + ok_ctx + ok_slo + ok_sys + ok_base, {"models", "no-such-model"});
  expect_bad("accel eval --quiet", ok + "set: [llm.compute.no_such=1]\n", {"bad.yaml:6", "no_such"});
  expect_bad("accel eval --quiet", ok + "set: [llm.compute.kernel_overhead=fast]\n", {"bad.yaml:6", "kernel_overhead"});
  expect_bad("accel eval --quiet", ok + "set: [llm.compute.kernel_overhead]\n", {"set[0]", "key.path=value"});
  expect_bad("accel eval --quiet", "- a\n- b\n", {"top level"});
}

TEST_F(ExperimentCli, BadAblationAndSessionsFilesAreConfigErrors) {
  const std::string head = "model: tiny-test\ngpus: 4\nbatch_per_rank: 8\ncontext: \"512:128\"\nslo_ms: 20\n";
  expect_bad("accel ablation", head + "variants:\n  - {name: a, description: d, kind: tpu}\n", {"variants[0].kind", "tpu"});
  expect_bad("accel ablation", head + "variants:\n  - {name: a, description: d, kind: csi, set: [hbf.runtime.prefetch=maybe]}\n",
             {"variant 'a'", "bad.yaml:7", "prefetch", "maybe"});
  expect_bad("accel ablation", head + "variants:\n  - {name: a, description: d, kind: csi, colour: red}\n", {"variants[0].colour"});
  expect_bad("accel ablation", head + "variants:\n  - {name: a, description: d, kind: csi}\n  - {name: a, description: e, kind: h200}\n",
             {"appears twice"});
  expect_bad("accel ablation", "model: tiny-test\ngpus: 0\nbatch_per_rank: 8\ncontext: \"512:128\"\nslo_ms: 20\nvariants: []\n", {"gpus"});
  expect_bad("accel sessions", "model: qwen3-235b\nsystems: [csix]\n", {"systems[0]", "csix"});
  const std::string ses = "model: qwen3-235b\nsystems: [h200x8]\nloads:\n";
  expect_bad("accel sessions", ses + "  - {name: a, set: [hbf.runtime.prefetch=false]}\n",
             {"loads[0].set[0]", "hbf.runtime.prefetch", "only sessions.*"});
  expect_bad("accel sessions", ses + "  - {name: a, set: [sessions.arrival_per_s=-1]}\n", {"bad.yaml:4", "arrival_per_s"});
  expect_bad("accel sessions", ses + "  - {name: a, set: [sessions.turns_min=5, sessions.turns_max=2]}\n",
             {"load 'a'", "turns_max is below"});
  expect_bad("accel sessions", ses + "  - {name: a}\n  - {name: a}\n", {"loads[1].name", "appears twice"});
  expect_bad("accel sessions", ses + "  - {name: a, speed: 2}\n", {"loads[0].speed", "unknown key"});
  expect_bad("accel sessions", ses + "  - {name: a, set: [sessions.sessions=600000]}\n  - {name: b, set: [sessions.sessions=600000]}\n",
             {"loads", "more than the 4194304"});
}

// The same sweep also timed on the general SSD (docs/ssd.md, "Flash-Cosmos on the general device"): each point
// gets its time there and the summary the speedups from those times; the pipeline's own results do not move. (At
// paper scale eager scheduling reproduces the pipeline for every system: tests/cosmos/test_general_device.cpp; at
// this toy size ISP's few jobs meet the SRAM slots in a different order.)
TEST_F(ExperimentCli, CosmosEvalOnTheGeneralDevice) {
  const fs::path e = tiny_cosmos_sweep("isp");
  const auto plain = run_ok("cosmos eval --quiet", e);
  EXPECT_FALSE(plain["summary"].contains("speedup_on_general_device"));
  EXPECT_FALSE(plain["points"][0].contains("general_device_time_s"));
  const auto eager = run_ok("cosmos eval --quiet --general-device eager", e);
  const auto mqsim = run_ok("cosmos eval --quiet --general-device mqsim", e);
  for (const auto* j : {&eager, &mqsim}) {
    EXPECT_EQ((*j)["summary"]["speedup"], plain["summary"]["speedup"]);
    const auto& pts = (*j)["points"];  // kcs isp, kcs fc, bmi isp, bmi fc
    ASSERT_EQ(pts.size(), 4u);
    const auto& dev = (*j)["summary"]["speedup_on_general_device"]["fc/isp"];
    EXPECT_DOUBLE_EQ(dev["kcs"].get<double>(),
                     pts[0]["general_device_time_s"].get<double>() / pts[1]["general_device_time_s"].get<double>());
    EXPECT_DOUBLE_EQ(dev["bmi"].get<double>(),
                     pts[2]["general_device_time_s"].get<double>() / pts[3]["general_device_time_s"].get<double>());
  }
  for (size_t i : {1u, 3u})  // FC, eager: the pipeline's time less its fixed PCIe latency (1 us)
    EXPECT_NEAR(eager["points"][i]["general_device_time_s"].get<double>(), eager["points"][i]["time_s"].get<double>(), 1.5e-6);
  // MQSim's scheduler makes ISP's die-by-die streaming slower
  for (size_t i : {0u, 2u})
    EXPECT_GT(mqsim["points"][i]["general_device_time_s"].get<double>(), eager["points"][i]["general_device_time_s"].get<double>());
  const auto bad = run_bitline("cosmos eval --quiet --general-device fast --experiment " + shell_quote(e.string()) + " --json " +
                               shell_quote((dir_ / "bad.json").string()));
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_TRUE(contains(bad.out, "--general-device")) << bad.out;
  EXPECT_FALSE(fs::exists(dir_ / "bad.json"));
}

TEST_F(ExperimentCli, BadCosmosEvalFilesAreConfigErrors) {
  const std::string sys = "systems: [osp, fc]\n";
  expect_bad("cosmos eval --quiet", sys + "sweep: {weeks: [1]}\n", {"sweep.weeks", "unknown key"});
  expect_bad("cosmos eval --quiet", sys + "sweep: {months: [0]}\n", {"sweep.months[0]", "minimum"});
  expect_bad("cosmos eval --quiet", sys + "sweep: {months: [1, 1]}\n", {"sweep.months[1]", "twice"});
  expect_bad("cosmos eval --quiet", "systems: [osp, gpu]\nsweep: {months: [1]}\n", {"systems[1]", "gpu"});
  expect_bad("cosmos eval --quiet", sys + "sweep: {months: [1]}\ncompare: [fc-osp]\n", {"compare[0]", "A/B"});
  expect_bad("cosmos eval --quiet", sys + "sweep: {months: [1]}\nset: [workload.userz=8]\n", {"bad.yaml:3", "userz"});
  expect_bad("cosmos eval --quiet", sys, {"missing key 'sweep'"});
}

TEST_F(ExperimentCli, AMissingExperimentFileIsAConfigError) {
  const auto r = run_bitline("cosmos eval --experiment " + shell_quote((dir_ / "nope.yaml").string()) + " --json " +
                             shell_quote((dir_ / "o.json").string()));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "nope.yaml: cannot open experiment file")) << r.out;
}

}  // namespace
