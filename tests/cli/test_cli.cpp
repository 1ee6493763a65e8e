// The bitline executable: --help, --version, describe, nand demo, and the
// config errors a user sees (each names the file or --set, the key and why).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include "../support/run_bitline.hpp"
#include "../support/temp_dir_test.hpp"

namespace fs = std::filesystem;

namespace {

using Result = ::bitline::test::CliRun;
std::string quote(const std::string& s) { return ::bitline::test::shell_quote(s); }
// Runs `bitline ARGS` (ARGS already shell-quoted where needed).
Result run(const std::string& args) { return ::bitline::test::run_bitline(args); }

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

class Cli : public ::bitline::test::TempDirTest {
 protected:
  Cli() : TempDirTest("bitline-cli-") {}
  // A config error: exit code 2 (not a crash, not success), "config error",
  // and every needle in the message.
  void expect_config_error(const std::string& args, std::initializer_list<std::string> needles) {
    Result r = run(args);
    EXPECT_EQ(r.rc, 2) << "bitline " << args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "config error")) << r.out;
    for (const auto& n : needles) EXPECT_TRUE(contains(r.out, n)) << "bitline " << args << "\nexpected: " << n << "\ngot: " << r.out;
    EXPECT_FALSE(contains(r.out, "AND of")) << "the demo ran despite the error:\n" << r.out;
  }
  nlohmann::json demo_json(const std::string& extra_args) {
    fs::path out = dir_ / "demo.json";
    Result r = run("nand demo --json " + quote(out.string()) + " " + extra_args);
    EXPECT_EQ(r.rc, 0) << r.out;
    std::ifstream in(out);
    EXPECT_TRUE(in.good()) << "no JSON written: " << r.out;
    if (!in) return {};
    return nlohmann::json::parse(in);  // throws (failing the test) on invalid JSON
  }
};

}  // namespace

TEST_F(Cli, Version) {
  Result r = run("--version");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("bitline ", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, BITLINE_VERSION)) << r.out;
}

TEST_F(Cli, HelpForEverySubcommand) {
  for (std::string args : {"--help", "describe --help", "nand --help", "nand demo --help", "nand rber --help"}) {
    Result r = run(args);
    EXPECT_EQ(r.rc, 0) << args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "Usage:")) << args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "--help")) << args << "\n" << r.out;
  }
  EXPECT_TRUE(contains(run("--help").out, "describe"));
  EXPECT_TRUE(contains(run("--help").out, "nand"));
  Result demo = run("nand demo --help");
  for (const char* opt : {"--preset", "--config", "--set", "--json"}) EXPECT_TRUE(contains(demo.out, opt)) << opt << "\n" << demo.out;
  EXPECT_TRUE(contains(run("nand --help").out, "demo"));
  EXPECT_TRUE(contains(run("nand --help").out, "rber"));
}

TEST_F(Cli, NoOrUnknownSubcommandFails) {
  EXPECT_NE(run("").rc, 0);
  EXPECT_NE(run("nosuch").rc, 0);
  EXPECT_NE(run("nand").rc, 0);
  EXPECT_NE(run("nand demo --no-such-option").rc, 0);
}

TEST_F(Cli, DescribeNand) {
  Result r = run("describe nand");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "nand.timing.t_read_slc  (time")) << r.out;
  // The t_read_slc entry: default, description, source.
  auto at = r.out.find("nand.timing.t_read_slc");
  ASSERT_NE(at, std::string::npos);
  std::string entry = r.out.substr(at, r.out.find("nand.timing.t_read_mlc") - at);
  EXPECT_TRUE(contains(entry, "default: 22.5us")) << entry;
  EXPECT_TRUE(contains(entry, "source: Flash-Cosmos (MICRO 2022), Evaluation Methodology")) << entry;
  EXPECT_TRUE(contains(r.out, "nand.geometry.page_size  (bytes")) << r.out;
  EXPECT_TRUE(contains(r.out, "default: 16KiB")) << r.out;
  EXPECT_TRUE(contains(r.out, "nand.timing.channel_rate  (bandwidth")) << r.out;
  EXPECT_TRUE(contains(r.out, "nand.energy.io_energy  (energy/bit")) << r.out;
  EXPECT_FALSE(contains(r.out, "sim.seed")) << "describe nand lists only nand";
}

TEST_F(Cli, DescribeEveryParameterHasDefaultTypeAndSource) {
  Result r = run("describe --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  EXPECT_GT(j.size(), 30u);
  bool seen_seed = false, seen_tr = false;
  for (const auto& row : j) {
    const std::string key = row.at("key");
    EXPECT_FALSE(row.at("default").get<std::string>().empty()) << key;
    EXPECT_FALSE(row.at("type").get<std::string>().empty()) << key;
    EXPECT_FALSE(row.at("source").get<std::string>().empty()) << key;
    EXPECT_FALSE(row.at("description").get<std::string>().empty()) << key;
    seen_seed |= key == "sim.seed";
    if (key == "nand.timing.t_read_slc") {
      seen_tr = true;
      EXPECT_EQ(row.at("default"), "22.5us");
      EXPECT_EQ(row.at("type"), "time");
    }
  }
  EXPECT_TRUE(seen_seed);
  EXPECT_TRUE(seen_tr);
  // Without an argument: the component list, then every parameter.
  Result all = run("describe");
  EXPECT_EQ(all.rc, 0);
  EXPECT_TRUE(contains(all.out, "Components")) << all.out;
  EXPECT_TRUE(contains(all.out, "sim.seed")) << all.out;
  EXPECT_TRUE(contains(all.out, "nand.command.max_inter_block")) << all.out;
}

// Issue 27: a source is a citation a reader can follow from a clone (docs/papers.md): never the
// developers' notes outside the repository (a "spec:" prefix, ../shared/spec).
TEST_F(Cli, DescribeSourcesAreCitationsThatTravelWithTheClone) {
  Result r = run("describe --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  size_t flashaccel = 0, flash_cosmos = 0;
  for (const auto& row : nlohmann::json::parse(r.out)) {
    const std::string key = row.at("key"), source = row.at("source");
    EXPECT_FALSE(contains(source, "spec:")) << key << ": " << source;
    EXPECT_FALSE(contains(source, "shared/spec")) << key << ": " << source;
    flashaccel += contains(source, "FlashAccel");
    flash_cosmos += contains(source, "Flash-Cosmos");
  }
  EXPECT_GT(flashaccel, 20u) << "the HBF and LLM parameters cite the FlashAccel paper by its parts";
  EXPECT_GT(flash_cosmos, 5u);
}

TEST_F(Cli, DescribeByPrefix) {
  Result r = run("describe nand.timing");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "nand.timing.t_erase")) << r.out;
  EXPECT_FALSE(contains(r.out, "nand.geometry")) << r.out;
  Result one = run("describe nand.timing.t_read_slc");
  ASSERT_EQ(one.rc, 0) << one.out;
  EXPECT_TRUE(contains(one.out, "default: 22.5us")) << one.out;
  EXPECT_FALSE(contains(one.out, "t_read_mlc")) << one.out;
  // A prefix must end at a dot: "nand.tim" is not a component.
  EXPECT_NE(run("describe nand.tim").rc, 0);
}

// A policy key lists its registered implementations, each with its description (core/registry.hpp).
TEST_F(Cli, DescribeListsThePolicyChoices) {
  Result r = run("describe serving.kv_layout");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "serving.kv_layout  (choice of KV layout, flashaccel|scatter|paged)")) << r.out;
  EXPECT_TRUE(contains(r.out, "default: flashaccel")) << r.out;
  EXPECT_TRUE(contains(r.out, "choices:")) << r.out;
  EXPECT_TRUE(contains(r.out, "paged       PagedAttention: serving.kv_block_bytes blocks")) << r.out;
  // --impls: only the policies, every one of them, and those chosen outside the config.
  Result impls = run("describe --impls");
  ASSERT_EQ(impls.rc, 0) << impls.out;
  for (const char* key : {"nand.reliability.model", "hbf.runtime.weight_layout", "hbf.runtime.granularity", "hbf.runtime.kv_span",
                          "llm.attention_parallel", "serving.capacity_context", "serving.kv_layout", "serving.step_model",
                          "serving.kv_offload", "model_type", "torch_dtype", "quant_method", "--workload", "--system"})
    EXPECT_TRUE(contains(impls.out, key)) << key << "\n" << impls.out;
  EXPECT_TRUE(contains(impls.out, "qwen3_moe")) << impls.out;
  EXPECT_FALSE(contains(impls.out, "nand.timing.t_read_slc")) << "not a policy: " << impls.out;
  // JSON: the choices with their descriptions.
  Result js = run("describe --impls --json");
  ASSERT_EQ(js.rc, 0) << js.out;
  const auto j = nlohmann::json::parse(js.out);
  bool seen = false;
  for (const auto& row : j) {
    ASSERT_TRUE(row.contains("choices")) << row.dump();
    EXPECT_FALSE(row.at("choices").empty()) << row.dump();
    for (const auto& c : row.at("choices")) EXPECT_FALSE(c.at("description").get<std::string>().empty()) << row.dump();
    if (row.at("key") == "hbf.runtime.granularity") {
      seen = true;
      EXPECT_EQ(row.at("choices").size(), 2u);
      EXPECT_EQ(row.at("choices")[1].at("name"), "plane");
    }
  }
  EXPECT_TRUE(seen) << js.out;
  // A component prefix narrows --impls to its policies.
  Result hbf = run("describe --impls hbf");
  ASSERT_EQ(hbf.rc, 0) << hbf.out;
  EXPECT_TRUE(contains(hbf.out, "hbf.runtime.kv_span")) << hbf.out;
  EXPECT_FALSE(contains(hbf.out, "serving.kv_layout")) << hbf.out;
}

TEST_F(Cli, UnknownPolicyNameListsTheChoicesAndTheNearestOne) {
  expect_config_error("nand demo --set nand.reliability.model=rber_tabel",
                      {"--set", "nand.reliability.model", "'rber_tabel' is not one of rber_table|none", "did you mean 'rber_table'?"});
}

TEST_F(Cli, DescribeUnknownComponentFails) {
  Result r = run("describe nosuch");
  EXPECT_NE(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "unknown component 'nosuch'")) << r.out;
  EXPECT_TRUE(contains(r.out, "nand")) << "lists the known components: " << r.out;
}

TEST_F(Cli, NandDemoWritesValidJsonAndComputesCorrectly) {
  nlohmann::json j = demo_json("");
  ASSERT_TRUE(j.contains("operations")) << j.dump(2);
  ASSERT_TRUE(j["operations"].is_array());
  EXPECT_GE(j["operations"].size(), 5u);
  for (const auto& op : j["operations"]) {
    EXPECT_EQ(op.at("mismatched_bits"), 0) << op.dump();
    EXPECT_EQ(op.at("result_bits"), 16384 * 8) << op.dump();
    EXPECT_GT(op.at("latency_s").get<double>(), 0.0) << op.dump();
    EXPECT_GT(op.at("energy_j").get<double>(), 0.0) << op.dump();
  }
  // The resolved configuration travels with the result.
  EXPECT_EQ(j["config"]["nand"]["timing"]["t_read_slc"], "22.5us");
  EXPECT_EQ(j["config"]["nand"]["geometry"]["page_size"], "16KiB");
  EXPECT_EQ(j["config"]["sim"]["seed"], 1);
  EXPECT_TRUE(j.contains("die"));
}

TEST_F(Cli, PresetFig7) {
  nlohmann::json j = demo_json("--preset fig7");
  EXPECT_EQ(j["config"]["nand"]["timing"]["t_read_slc"], "60us");
  EXPECT_EQ(j["config"]["nand"]["timing"]["channel_rate"], "1.2GB/s");  // inherited from flash-cosmos
  EXPECT_EQ(j["config"]["nand"]["geometry"]["page_size"], "16KiB");
  for (const auto& op : j["operations"]) EXPECT_EQ(op.at("mismatched_bits"), 0) << op.dump();
  // A single-wordline-sensing operation takes tR = 60 us per sense: the ParaBit
  // AND of 8 wordlines senses 8 times, so it takes more than 8 x 60 us.
  bool found = false;
  for (const auto& op : j["operations"]) {
    if (op.at("operation").get<std::string>().rfind("ParaBit", 0) == 0) {
      found = true;
      EXPECT_GE(op.at("latency_s").get<double>(), 8 * 60e-6) << op.dump();
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(Cli, OverridesApplyInOrder) {
  // preset < file (which may start from a preset) < --set.
  fs::path f = write("mine.yaml", "base: fig7\nnand:\n  timing:\n    t_prog_slc: 300us\nsim:\n  seed: 5\n");
  nlohmann::json j = demo_json("--config " + quote(f.string()));
  EXPECT_EQ(j["config"]["nand"]["timing"]["t_read_slc"], "60us");
  EXPECT_EQ(j["config"]["nand"]["timing"]["t_prog_slc"], "300us");
  EXPECT_EQ(j["config"]["sim"]["seed"], 5);
  j = demo_json("--preset fig7 --set nand.timing.t_read_slc=30us");
  EXPECT_EQ(j["config"]["nand"]["timing"]["t_read_slc"], "30us");
  j = demo_json("--config " + quote(f.string()) + " --set sim.seed=9 --set nand.timing.t_read_slc=45us");
  EXPECT_EQ(j["config"]["nand"]["timing"]["t_read_slc"], "45us");
  EXPECT_EQ(j["config"]["sim"]["seed"], 9);
  for (const auto& op : j["operations"]) EXPECT_EQ(op.at("mismatched_bits"), 0) << op.dump();
}

TEST_F(Cli, SameSeedSameResult) {
  nlohmann::json a = demo_json("--set sim.seed=3");
  nlohmann::json b = demo_json("--set sim.seed=3");
  EXPECT_EQ(a, b);
}

// ---- bad configs: non-zero exit, and the message names file, key and reason ----

TEST_F(Cli, BadConfigUnknownKey) {
  fs::path f = write("typo.yaml", "nand:\n  timing:\n    t_raed_slc: 22.5us\n");
  expect_config_error("nand demo --config " + quote(f.string()),
                      {f.string() + ":3", "nand.timing.t_raed_slc", "unknown key", "did you mean 't_read_slc'?"});
}

TEST_F(Cli, BadConfigBadUnit) {
  fs::path f = write("unit.yaml", "nand:\n  timing:\n    t_read_slc: 22.5uss\n");
  expect_config_error("nand demo --config " + quote(f.string()), {f.string() + ":3", "nand.timing.t_read_slc", "unknown time unit 'uss'"});
  fs::path g = write("nounit.yaml", "nand:\n  geometry:\n    page_size: 16384\n");
  expect_config_error("nand demo --config " + quote(g.string()), {g.string() + ":3", "nand.geometry.page_size", "has no unit"});
}

TEST_F(Cli, BadConfigNegativeSize) {
  fs::path f = write("neg.yaml", "nand:\n  geometry:\n    page_size: -16KiB\n");
  expect_config_error("nand demo --config " + quote(f.string()), {f.string() + ":3", "nand.geometry.page_size", "must not be negative"});
}

TEST_F(Cli, BadConfigImpossibleGeometry) {
  fs::path f = write("blocks.yaml", "nand:\n  geometry:\n    blocks_per_plane: 4\n  command:\n    max_inter_block: 8\n");
  expect_config_error("nand demo --config " + quote(f.string()),
                      {f.string() + ":5", "nand.command.max_inter_block", "impossible geometry", "only 4 blocks"});
  fs::path g = write("page.yaml", "nand:\n  geometry:\n    page_size: 12B\n");
  expect_config_error("nand demo --config " + quote(g.string()), {g.string() + ":3", "nand.geometry.page_size", "impossible geometry"});
}

TEST_F(Cli, BadConfigUnknownSection) {
  fs::path f = write("section.yaml", "sim:\n  seed: 1\nnandd:\n  geometry:\n    page_size: 16KiB\n");
  expect_config_error("nand demo --config " + quote(f.string()), {f.string() + ":3", "nandd", "unknown section", "nand"});
}

TEST_F(Cli, BadConfigMalformedYaml) {
  fs::path f = write("broken.yaml", "nand:\n  timing:\n    t_read_slc: 22.5us\n   t_prog_slc: [200us\n");
  expect_config_error("nand demo --config " + quote(f.string()), {f.string() + ":", "malformed YAML"});
  fs::path g = write("dup.yaml", "nand:\n  timing:\n    t_read_slc: 22.5us\n    t_read_slc: 30us\n");
  expect_config_error("nand demo --config " + quote(g.string()), {g.string() + ":4", "'t_read_slc' appears twice"});
}

TEST_F(Cli, BadConfigMissingFile) {
  expect_config_error("nand demo --config " + quote((dir_ / "absent.yaml").string()), {"absent.yaml", "cannot open"});
}

TEST_F(Cli, BadSetOverride) {
  expect_config_error("nand demo --set nand.timing.t_raed_slc=30us", {"--set", "nand.timing.t_raed_slc", "unknown key", "t_read_slc"});
  expect_config_error("nand demo --set nand.timing.t_read_slc=30uss", {"--set", "nand.timing.t_read_slc", "unknown time unit"});
  expect_config_error("nand demo --set foo.bar=1", {"--set", "foo", "unknown section"});
  expect_config_error("nand demo --set nand.timing.t_read_slc", {"expected key.path=value"});
  expect_config_error("nand demo --set nand.reliability.model=magic", {"--set", "nand.reliability.model", "'magic' is not one of"});
  expect_config_error("nand demo --set nand.geometry.planes_per_die=0", {"--set", "nand.geometry.planes_per_die", "must be at least 1"});
  expect_config_error("nand demo --set sim.seed=-1", {"--set", "sim.seed", "must not be negative"});
}

TEST_F(Cli, UnknownPreset) {
  expect_config_error("nand demo --preset nosuch", {"--preset nosuch", "unknown preset", "fig7", "flash-cosmos"});
  fs::path f = write("base.yaml", "base: nosuch\n");
  expect_config_error("nand demo --config " + quote(f.string()), {f.string() + ":1", "unknown preset 'nosuch'"});
}

TEST_F(Cli, RberBadConfigToo) {
  fs::path f = write("typo.yaml", "nand:\n  reliability:\n    rber_slcc: 1e-5\n");
  expect_config_error("nand rber --config " + quote(f.string()),
                      {f.string() + ":3", "nand.reliability.rber_slcc", "did you mean 'rber_slc'?"});
  Result ok = run("nand rber");
  EXPECT_EQ(ok.rc, 0) << ok.out;
}

TEST_F(Cli, CosmosEnergyAccountingIsChosenByNameAndReported) {
  // One BMI point on FC under both accountings: the same time, more energy when every floor is charged over the run;
  // the resolved config names the accounting, and `cosmos run` prints it.
  auto run_fc = [&](const std::string& accounting, const std::string& name) {
    const fs::path out = dir_ / name;
    Result r =
        run("cosmos run --workload bmi --param months=1 --system fc --set workload.users=8000000 --set "
            "cosmos.energy_accounting=" +
            accounting + " --json " + quote(out.string()));
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "(" + accounting + " accounting)")) << r.out;
    std::ifstream in(out);
    return nlohmann::json::parse(in);
  };
  const nlohmann::json paper = run_fc("paper", "p.json"), whole = run_fc("whole_system", "w.json");
  EXPECT_EQ(paper["config"]["cosmos"]["energy_accounting"], "paper");
  EXPECT_EQ(whole["config"]["cosmos"]["energy_accounting"], "whole_system");
  const auto& pr = paper;
  const auto& wr = whole;
  EXPECT_EQ(pr["time_s"], wr["time_s"]);
  EXPECT_EQ(pr["energy_j"]["host_package_idle"].get<double>(), 0.0);
  EXPECT_GT(wr["energy_j"]["host_package_idle"].get<double>(), 0.0);
  EXPECT_GT(wr["energy_j"]["total"].get<double>(), pr["energy_j"]["total"].get<double>());
  // A misspelt accounting is a config error naming the choices.
  expect_config_error("cosmos run --set cosmos.energy_accounting=papr",
                      {"energy_accounting", "paper|whole_system", "did you mean 'paper'"});
}

TEST_F(Cli, CosmosWriteBandwidthOrdersTheModesAsThePaper) {
  // The paper's configuration (the defaults): each page its own tPROG, so SLC > ESP > MLC > TLC.
  const fs::path out = dir_ / "wbw.json";
  Result r = run("cosmos write-bw --bytes 256MiB --json " + quote(out.string()));
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["multi_bit_program"], "page_by_page");
  const auto& g = j["gb_per_s"];
  EXPECT_GT(g["slc"].get<double>(), g["esp"].get<double>());
  EXPECT_GT(g["esp"].get<double>(), g["mlc"].get<double>());
  EXPECT_GT(g["mlc"].get<double>(), g["tlc"].get<double>());
  // Both schemes are reported for the multi-bit modes: one shot writes MLC faster than ESP.
  EXPECT_GT(j["modes"]["mlc"]["one_shot_gb_per_s"].get<double>(), g["esp"].get<double>());
  EXPECT_EQ(j["modes"]["mlc"]["page_by_page_gb_per_s"], g["mlc"]);
}

TEST_F(Cli, DescribePapersNamesBothPapers) {
  Result r = run("describe --papers");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "Flash-Cosmos (MICRO 2022)")) << r.out;
  EXPECT_TRUE(contains(r.out, "arxiv.org/abs/2209.05566")) << r.out;
  EXPECT_TRUE(contains(r.out, "FlashAccel (arXiv 2607.10186)")) << r.out;
  EXPECT_TRUE(contains(r.out, "arxiv.org/abs/2607.10186")) << r.out;
}

TEST_F(Cli, MisspeltCommandsAndOptionsGetTheClosestName) {
  for (const auto& [cmd, says] : std::vector<std::pair<std::string, std::string>>{
           {"serve swep", "bitline serve: unknown command 'swep'; did you mean 'sweep'?"},
           {"sevre run", "unknown command 'sevre'; did you mean 'serve'?"},
           {"serve run --rates 1 --model llama2-7b --system h100x1", "bitline serve run: unknown option --rates; did you mean --rate?"},
           {"accel run --modle llama2-7b", "unknown option --modle; did you mean --model?"},
           {"serve nothing-like-it", "unknown command 'nothing-like-it' (commands: "}}) {
    const Result r = run(cmd);
    EXPECT_EQ(r.rc, 2) << cmd;
    EXPECT_TRUE(contains(r.out, says)) << cmd << "\n" << r.out;
  }
  // What is right is untouched: an option's value that looks like a command name is a value.
  EXPECT_EQ(run("describe serve").rc, 0);
}

TEST_F(Cli, StandardOutputThatCannotBeWrittenIsAnError) {
  // /dev/full takes nothing: the printout is lost, so the run must not report success.
  EXPECT_EQ(run("describe >/dev/full").rc, 2);
  EXPECT_EQ(run("cosmos write-bw --bytes 16MiB >/dev/full").rc, 2);
  // A reader that closes the pipe early (`| head -c 1`): no SIGPIPE death, the result file is complete.
  const fs::path out = dir_ / "wbw.json";
  const std::string cmd = "bash -c " + quote("( BITLINE_CONFIG_DIR=" + quote(std::string(BITLINE_SOURCE_DIR) + "/configs") + " " +
                                             quote(BITLINE_BINARY) + " cosmos write-bw --bytes 16MiB --json " + quote(out.string()) +
                                             " 2>/dev/null; echo rc=$? >" + quote((dir_ / "rc").string()) + " ) | head -c 1 >/dev/null");
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream rc(dir_ / "rc");
  std::string line;
  std::getline(rc, line);
  EXPECT_TRUE(line == "rc=0" || line == "rc=2") << line << " (141 would be death by SIGPIPE)";
  std::ifstream in(out);
  ASSERT_TRUE(in.good());
  nlohmann::json j;
  EXPECT_NO_THROW(j = nlohmann::json::parse(in));
  EXPECT_TRUE(j.contains("gb_per_s"));
  EXPECT_FALSE(fs::exists(dir_ / "wbw.json.partial"));
  // The closed pipe is not worth a message: `describe | head -1` (more than a pipe holds) prints the line and nothing on stderr.
  const fs::path err = dir_ / "err";
  const std::string head = "bash -c " + quote("BITLINE_CONFIG_DIR=" + quote(std::string(BITLINE_SOURCE_DIR) + "/configs") + " " +
                                              quote(BITLINE_BINARY) + " describe 2>" + quote(err.string()) + " | head -1 >/dev/null");
  ASSERT_EQ(std::system(head.c_str()), 0);
  EXPECT_EQ(fs::file_size(err), 0u);
}

// ---- GPU kinds of a user's own: in a copy of the preset folder, by path, and overrides that change a kind ----

TEST_F(Cli, AGpuKindAddedToTheConfigFolderIsFoundByName) {
  // A copy of configs/ with one more kind, as the README says to add one (a YAML in configs/gpus, no source change).
  const fs::path cfg = dir_ / "configs";
  fs::copy(std::string(BITLINE_SOURCE_DIR) + "/configs", cfg, fs::copy_options::recursive);
  std::ofstream(cfg / "gpus" / "h100fast.yaml")
      << "description: an H100 with faster HBM\nbase: h100\nhbm:\n  bandwidth_per_stack: 800GB/s\n";
  Result kinds = ::bitline::test::run_bitline("accel kinds", "", cfg.string());
  ASSERT_EQ(kinds.rc, 0) << kinds.out;
  for (const char* k : {"h100fast", "h100", "h200", "csi", "cli"}) EXPECT_TRUE(contains(kinds.out, k)) << k << "\n" << kinds.out;
  Result r = ::bitline::test::run_bitline("accel run --model llama2-7b --system h100fastx1 --context 512:128 --slo 50", "", cfg.string());
  EXPECT_EQ(r.rc, 0) << r.out;
}

TEST_F(Cli, AGpuKindGivenByPath) {
  const fs::path kind = write("h100fast.yaml", "description: an H100 with faster HBM\nbase: h100\nhbm:\n  bandwidth_per_stack: 800GB/s\n");
  const fs::path out = dir_ / "run.json";
  Result r = run("accel run --model llama2-7b --system " + quote(kind.string()) + " --gpus 1 --context 512:128 --slo 50 --json " +
                 quote(out.string()));
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["system"], "h100fastx1");  // a kind given by path prints as its file's stem
  EXPECT_EQ(j["config"]["hbm"]["bandwidth_per_stack"], "800GB/s");
  // describe --kind: where each value comes from (the file, the kind it builds on, the default).
  Result d = run("describe --kind " + quote(kind.string()));
  ASSERT_EQ(d.rc, 0) << d.out;
  EXPECT_TRUE(contains(d.out, "hbm.bandwidth_per_stack") && contains(d.out, "800GB/s") && contains(d.out, "h100fast.yaml:4")) << d.out;
  EXPECT_TRUE(contains(d.out, "gpus/h100.yaml:")) << d.out;  // gpu.bf16_flops, from its base
  Result dj = run("describe --json --kind " + quote(kind.string()));
  ASSERT_EQ(dj.rc, 0) << dj.out;
  bool from_base = false, from_default = false;
  for (const auto& row : nlohmann::json::parse(dj.out)) {
    if (row["key"] == "gpu.bf16_flops") from_base = row["from"].get<std::string>().find("gpus/h100.yaml:") != std::string::npos;
    if (row["key"] == "serving.max_requests_per_rank") from_default = row["from"] == "default";
  }
  EXPECT_TRUE(from_base && from_default) << dj.out;
  // KINDxN with a path works too; a missing file is named.
  EXPECT_EQ(run("accel run --model llama2-7b --system " + quote(kind.string() + "x1") + " --context 512:128 --slo 50").rc, 0);
  Result missing = run("accel run --model llama2-7b --system ./nothere.yaml --gpus 1 --context 512:128 --slo 50");
  EXPECT_EQ(missing.rc, 2) << missing.out;
  EXPECT_TRUE(contains(missing.out, "nothere.yaml")) << missing.out;
}

TEST_F(Cli, AnOverrideThatIsAnotherKindIsRefusedAndChangesAreReported) {
  // --config with a GPU kind of its own merged over csi would run an H100 labelled csix1: refused, naming both.
  const fs::path other = write("h100fast.yaml", "description: an H100\nbase: h100\n");
  Result r = run("accel run --model llama2-7b --system csix1 --config " + quote(other.string()) + " --context 512:128 --slo 50");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "GPU kind of its own")) << r.out;
  EXPECT_TRUE(contains(r.out, "csi")) << r.out;
  // A plain override file: run, and every parameter it changes is reported in the printout and the JSON.
  const fs::path tweak = write("tweak.yaml", "llm:\n  compute:\n    kernel_overhead: 3us\n");
  const fs::path out = dir_ / "o.json";
  Result ok = run("accel run --model llama2-7b --system h100x1 --config " + quote(tweak.string()) +
                  " --set hbm.latency=200ns --context 512:128 --slo 50 --json " + quote(out.string()));
  ASSERT_EQ(ok.rc, 0) << ok.out;
  EXPECT_TRUE(contains(ok.out, "kind h100: 2 parameters overridden")) << ok.out;
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_TRUE(j["config"].contains("overridden")) << j["config"].dump();
  EXPECT_EQ(j["config"]["overridden"]["llm.compute.kernel_overhead"]["run"], "3us");
  EXPECT_EQ(j["config"]["overridden"]["hbm.latency"]["kind"], "100ns");
  EXPECT_EQ(j["config"]["overridden"].size(), 2u);
}

TEST_F(Cli, PresetNamesTheKindOfAnAccelRun) {
  // One convention for every command: --preset csi names the kind, as --system csi does.
  Result r = run("accel run --model llama2-7b --preset csi --gpus 1 --context 512:128 --slo 50");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "csix1")) << r.out;
  // Two different kinds named: refused.
  Result both = run("accel run --model llama2-7b --preset csi --system h200x1 --context 512:128 --slo 50");
  EXPECT_EQ(both.rc, 2) << both.out;
  // A GPU kind merged over an evaluation's kinds: refused.
  EXPECT_EQ(run("accel eval --preset csi --quiet").rc, 2);
}

TEST_F(Cli, UnmodelledModelFeaturesAreReportedNotIgnored) {
  // A Mistral-7B-shaped config.json with a 4096-token sliding window, run at 8000 tokens: full attention is timed,
  // so the run says so (printout and JSON), instead of a silent difference.
  const fs::path model = write("mistral-7b.json", R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
    "hidden_act": "silu", "sliding_window": 4096, "torch_dtype": "bfloat16"})");
  const fs::path out = dir_ / "m.json";
  Result r =
      run("accel run --model " + quote(model.string()) + " --system h100x1 --context 8000:500 --slo 100 --json " + quote(out.string()));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "warning: model mistral-7b: sliding_window 4096 is not modelled")) << r.out;
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.contains("model_warnings")) << j.dump();
  EXPECT_NE(j["model_warnings"][0].get<std::string>().find("sliding_window 4096"), std::string::npos);
  // Qwen3's use_sliding_window: false means no window: no warning.
  Result q = run("accel run --model qwen3-235b --system h200x8 --context 2000:200 --slo 100");
  EXPECT_FALSE(contains(q.out, "sliding_window")) << q.out;
}

TEST_F(Cli, PlotScriptDrawsAResultAndRefusesWhatItCannotDraw) {
  const fs::path out = dir_ / "wbw.json", png = dir_ / "wbw.png";
  ASSERT_EQ(run("cosmos write-bw --bytes 16MiB --json " + quote(out.string())).rc, 0);
  const std::string script = quote(std::string(BITLINE_SOURCE_DIR) + "/scripts/plot.py");
  EXPECT_EQ(std::system(("/usr/bin/python3 " + script + " " + quote(out.string()) + " " + quote(png.string()) + " >/dev/null").c_str()), 0);
  EXPECT_GT(fs::file_size(png), 1000u);
  const fs::path bad = write("bad.json", R"({"points": []})");
  const int rc = std::system(("/usr/bin/python3 " + script + " " + quote(bad.string()) + " 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 2);
}

// docs/validation.md is written by `make validate`, which copies the hand-written notes (the known gaps and how the
// figures moved) in as they are: a note edited without rerunning `make validate` leaves the generated page behind.
TEST(Docs, ValidationPageCarriesTheHandWrittenNotesAsTheyAre) {
  const auto slurp = [](const std::string& name) {
    std::ifstream f(std::string(BITLINE_SOURCE_DIR) + "/docs/" + name);
    EXPECT_TRUE(f.good()) << name;
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::string page = slurp("validation.md");
  for (const char* note : {"validation-gaps.md", "validation-changes.md"}) {
    const std::string text = slurp(note);
    ASSERT_FALSE(text.empty()) << note;
    EXPECT_NE(page.find(text), std::string::npos) << "docs/" << note << " changed since docs/validation.md was made: run make validate";
  }
}
