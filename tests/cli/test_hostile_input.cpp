// Hostile and mistaken input, end to end: every case must end with exit 2 and a
// message naming the file, key or option and the reason, within 1 GB of memory
// and 10 s (the child runs under ulimit -v and timeout), and must leave no
// output file behind. Classes: YAML (alias bombs, nesting, base: fan-out,
// non-regular files, size), JSON (nesting, huge values in messages), numbers
// (overflow, non-finite values), sizes that would need TBs or hours, keys that
// no command reads, output paths, and the argument parser's exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

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
bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

class Hostile : public ::bitline::test::TempDirTest {
 protected:
  Hostile() : TempDirTest("bitline-hostile-") {}
  std::string path(const std::string& f) const { return (dir_ / f).string(); }
  std::string write(const std::string& f, const std::string& text) const {
    std::ofstream(dir_ / f, std::ios::binary) << text;
    return path(f);
  }
  // Bad input: exit 2 (not a crash, a timeout, success or another code), every needle in the message, no
  // internal error text, and nothing but the inputs in the test folder (no result, no .partial).
  Result expect_bad_input(const std::string& args, std::initializer_list<std::string> needles) {
    const Result r = ::bitline::test::run_bitline_bounded(args);
    EXPECT_EQ(r.rc, 2) << "bitline " << args.substr(0, 300) << "\n" << r.out.substr(0, 2000);
    for (const auto& n : needles)
      EXPECT_TRUE(has(r.out, n)) << "bitline " << args.substr(0, 300) << "\nexpected: " << n << "\ngot: " << r.out.substr(0, 2000);
    EXPECT_FALSE(has(r.out, "internal error")) << r.out;
    EXPECT_FALSE(has(r.out, "bad_alloc")) << r.out;
    EXPECT_LT(r.out.size(), 4000u) << "the message repeats the input: " << r.out.substr(0, 500);
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.is_regular_file()) {
        EXPECT_NE(e.path().extension(), ".partial") << e.path();
      }
      EXPECT_NE(e.path().filename(), "out.json") << "a result was written despite the error";
    }
    return r;
  }
  std::string out() const { return quote(path("out.json")); }
};

// 10 anchors of 10 aliases each, 9 levels deep: 10^9 values once expanded, 400 bytes of YAML.
std::string alias_bomb_flow() {
  std::string s = "{a0: &a0 [x, x, x, x, x, x, x, x, x, x]";
  for (int i = 1; i < 9; ++i) {
    s += ", a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) s += (k ? ", *a" : "*a") + std::to_string(i - 1);
    s += "]";
  }
  return s + "}";
}

}  // namespace

// ---- YAML ----------------------------------------------------------------------------------------------

TEST_F(Hostile, YamlAliasBombInAConfigFile) {
  const std::string f = write("bomb.yaml", "nand: " + alias_bomb_flow() + "\n");
  expect_bad_input("nand rber --config " + quote(f) + " --json " + out(), {"bomb.yaml:1", "more than 100000 values", "alias"});
}

TEST_F(Hostile, YamlAliasBombInSet) {
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context long --slo 100 --set " + quote("llm.x=" + alias_bomb_flow()),
                   {"--set llm.x", "more than 100000 values"});
}

TEST_F(Hostile, YamlAliasBombOfLongScalars) {
  // Few values (9^4 copies of one anchor) but each 3,000 bytes: 20 MB once expanded, from a 3 KB file.
  std::string yaml = "nand:\n  a: &a \"" + std::string(3000, 'x') + "\"\n";
  for (const char* level : {"b", "c", "d", "e"}) {
    const std::string prev(1, char(level[0] - 1));
    yaml += std::string("  ") + level + ": &" + level + " [";
    for (int k = 0; k < 9; ++k) yaml += (k ? ", *" : "*") + prev;
    yaml += "]\n";
  }
  const std::string f = write("long.yaml", yaml);
  expect_bad_input("nand rber --config " + quote(f) + " --json " + out(), {"long.yaml", "more than 8388608 bytes of values", "alias"});
}

TEST_F(Hostile, YamlAliasBombsSpreadOverManySets) {
  // Each override expands to about 9,100 values (under the per-document limit); 20 of them exceed it together.
  std::string bomb =
      "{a: &a [x, x, x, x, x, x, x, x, x], b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a], c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b], "
      "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]}";
  std::string args = "nand rber --json " + out();
  for (int i = 0; i < 20; ++i) args += " --set " + quote("nand.s" + std::to_string(i) + "=" + bomb);
  expect_bad_input(args, {"--set 'nand.s", "more than 100000 values", "--set overrides together"});
}

TEST_F(Hostile, YamlStrayCommaAfterAFlowCollection) {
  // yaml-cpp 0.7 stops advancing at the ',' and yields empty documents forever: it used to run out of memory.
  expect_bad_input("nand rber --json " + out() + " --set " + quote("nand.x=[1],"), {"--set nand.x:1:4", "malformed YAML", "stray ','"});
  const std::string f = write("comma.yaml", "nand: {timing: {t_read_slc: 30us}},\n");
  expect_bad_input("nand rber --config " + quote(f) + " --json " + out(), {"comma.yaml:1:", "malformed YAML"});
}

TEST_F(Hostile, YamlNestingDepth) {
  // Flow nesting deep enough to trip yaml-cpp's own guard, and block nesting just past bitline's limit.
  const std::string flow = write("flow.yaml", "nand: " + std::string(5000, '[') + std::string(5000, ']') + "\n");
  expect_bad_input("nand rber --config " + quote(flow), {"flow.yaml", "nested deeper than 32 levels"});
  std::string block;
  for (int i = 0; i < 40; ++i) block += std::string(size_t(i), ' ') + "k" + std::to_string(i) + ":\n";
  const std::string b = write("block.yaml", "nand:\n" + block);
  expect_bad_input("nand rber --config " + quote(b), {"block.yaml", "nested deeper than 32 levels"});
  std::string dots = "nand";
  for (int i = 0; i < 100; ++i) dots += ".a";
  expect_bad_input("nand rber --set " + quote(dots + "=1"), {"--set", "deeper than 32 levels"});
}

TEST_F(Hostile, YamlBaseFanOutAndBadNames) {
  std::string list;
  for (int i = 0; i < 40; ++i) list += (i ? ", " : "") + std::string("csi");
  const std::string f = write("fan.yaml", "base: [" + list + "]\n");
  expect_bad_input("hbf info --config " + quote(f), {"more than 32 config files", "base:"});
  const std::string up = write("up.yaml", "base: ../configs/csi\n");
  expect_bad_input("hbf info --config " + quote(up), {"up.yaml:1", "base: a preset name"});
  expect_bad_input("hbf info --preset ../csi", {"--preset ../csi", "unknown preset"});
}

TEST_F(Hostile, ConfigMustBeASmallRegularFile) {
  expect_bad_input("nand rber --config /dev/zero", {"/dev/zero", "not a regular file"});
  expect_bad_input("nand rber --config " + quote(dir_.string()), {dir_.string(), "is a directory"});
  expect_bad_input("nand rber --config " + quote(path("missing.yaml")), {"missing.yaml", "no such file"});
  const std::string big = write("big.yaml", "# " + std::string(2 << 20, 'x') + "\n");
  expect_bad_input("nand rber --config " + quote(big), {"big.yaml", "byte limit for a config file"});
  expect_bad_input("accel run --model /dev/zero --system csix8 --context long --slo 100", {"unknown model"});
  expect_bad_input("accel run --model " + quote(path("")) + " --system csix8 --context long --slo 100", {"unknown model"});
  fs::create_directories(dir_ / "m.json");
  expect_bad_input("accel run --model " + quote(path("m.json")) + " --system csix8 --context long --slo 100",
                   {"m.json", "is a directory, not a model description"});
}

// ---- JSON ----------------------------------------------------------------------------------------------

TEST_F(Hostile, JsonNestingInAModelAndATrace) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string m = write("deep.json", "{\"model_type\": \"llama\", \"hidden_size\": " + deep + "}");
  expect_bad_input("accel run --model " + quote(m) + " --system csix8 --context long --slo 100",
                   {"deep.json", "nested deeper than 32 levels"});
  const std::string t = write("deep.jsonl", "{\"session\": 1, \"turn\": " + deep + "}\n");
  expect_bad_input("accel sessions --trace " + quote(t) + " --json " + out(), {"deep.jsonl:1", "nested deeper than 32 levels"});
}

TEST_F(Hostile, JsonMessagesDoNotRepeatHugeValues) {
  std::string list = "[";
  for (int i = 0; i < 100000; ++i) list += (i ? ",1" : "1");
  list += "]";
  const std::string m = write("wide.json", "{\"model_type\": \"llama\", \"hidden_size\": " + list + ", \"num_hidden_layers\": 2}");
  expect_bad_input("accel run --model " + quote(m) + " --system csix8 --context long --slo 100",
                   {"wide.json", "field 'hidden_size'", "a list of 100000 values"});
  const std::string t = write("wide.jsonl", "{\"session\": 1, \"turn\": 1, \"input_tokens\": " + list + "}\n");
  expect_bad_input("accel sessions --trace " + quote(t) + " --json " + out(), {"wide.jsonl:1", "input_tokens", "a list of 100000 values"});
  // A Mooncake line of more hash ids than a line may hold fails while it is parsed (bounded memory).
  std::string ids = "{\"timestamp\": 0, \"input_length\": 1073741824, \"output_length\": 1, \"hash_ids\": [0";
  for (int i = 0; i < (1 << 21); ++i) ids += ",1";
  const std::string w = write("wide-ids.jsonl", ids + "]}\n");
  expect_bad_input("accel sessions --trace " + quote(w) + " --json " + out(), {"wide-ids.jsonl:1", "more than 2097152 JSON values"});
}

// ---- Numbers: overflow, non-finite values ---------------------------------------------------------------

TEST_F(Hostile, SloMustBeFiniteAndBounded) {
  for (const char* slo : {"1e10", "nan", "inf", "-1", "0"})
    expect_bad_input(std::string("accel run --model qwen3-235b --system csix8 --context long --slo ") + slo, {"--slo"});
  expect_bad_input("accel sweep --model qwen3-235b --system csix8 --context long --slo nan --vary serving.seed=1,2", {"--slo"});
  expect_bad_input("accel ablation --slo 1e300 --json " + out(), {"--slo"});
}

TEST_F(Hostile, HugeOrNonFiniteQuantities) {
  expect_bad_input("hbf info --preset csi --set hbf.timing.interface_bandwidth=1e300TB/s",
                   {"hbf.timing.interface_bandwidth", "'1e300TB/s' is too large"});
  expect_bad_input("hbf info --preset csi --set hbf.timing.interface_bandwidth=infGB/s", {"hbf.timing.interface_bandwidth"});
  expect_bad_input("hbf info --preset csi --set hbf.timing.interface_bandwidth=nanGB/s", {"hbf.timing.interface_bandwidth"});
  expect_bad_input("nand rber --set nand.geometry.page_size=1e30TB", {"nand.geometry.page_size", "too large"});
  expect_bad_input("hbf stream --preset csi --bytes 1e30TB", {"--bytes", "too large"});
}

TEST_F(Hostile, TokenCountsCannotWrap) {
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context 9223372036854775807:1 --slo 100",
                   {"context", "at most 1073741824 tokens"});
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context 99999999999999999999:1 --slo 100",
                   {"context '99999999999999999999:1'"});
  const std::string t = write("huge.jsonl",
                              "{\"session\": 1, \"turn\": 1, \"input_tokens\": 9000000000000000000, \"output_tokens\": "
                              "9000000000000000000, \"timestamp\": 0}\n");
  expect_bad_input("accel sessions --trace " + quote(t) + " --json " + out(), {"huge.jsonl:1", "input_tokens", "above the maximum"});
  const std::string u = write("unsigned.jsonl",
                              "{\"session\": 1, \"turn\": 1, \"input_tokens\": 18446744073709551615, "
                              "\"output_tokens\": 1, \"timestamp\": 0}\n");
  expect_bad_input("accel sessions --trace " + quote(u) + " --json " + out(), {"unsigned.jsonl:1", "input_tokens", "above the maximum"});
}

// ---- Sizes inside the declared ranges that would need TBs or hours ---------------------------------------

TEST_F(Hostile, ModelSizesAreCapped) {
  const std::string head =
      R"({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008, )";
  const std::string a = write("layers.json", head + R"("num_hidden_layers": 1099511627776})");
  expect_bad_input("accel run --model " + quote(a) + " --system csix8 --context long --slo 100",
                   {"layers.json", "num_hidden_layers", "above the maximum 1024"});
  const std::string b = write("experts.json", head + R"("num_hidden_layers": 1024, "num_experts": 16384, "num_experts_per_tok": 8, )"
                                                     R"("moe_intermediate_size": 1024})");
  expect_bad_input("accel run --model " + quote(b) + " --system csix8 --context long --slo 100",
                   {"experts.json", "num_experts", "weight tensors, more than the 1048576"});
  const std::string c = write("hidden.json", head + R"("num_hidden_layers": 2, "hidden_size": 1e300})");
  expect_bad_input("accel run --model " + quote(c) + " --system csix8 --context long --slo 100", {"hidden.json", "hidden_size"});
}

TEST_F(Hostile, HbfGeometryIsCapped) {
  expect_bad_input("hbf stream --preset csi --set hbf.geometry.blocks_per_plane=1000000",
                   {"hbf.geometry.blocks_per_plane", "blocks to track, more than 16777216"});
  expect_bad_input(
      "accel run --model qwen3-235b --system csix8 --context long --slo 100 --set hbf.geometry.pages_per_block=1048575 "
      "--set hbf.geometry.page_size=16MiB --set hbf.geometry.planes_per_megaplane=96",
      {"hbf.geometry.pages_per_block", "bytes of flash"});
}

TEST_F(Hostile, BatchAndContextWorkIsCapped) {
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context long --slo 100 --batch 1000000000000", {"--batch"});
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context long --slo 100 --batch 1048576",
                   {"batch 1048576", "reads a step may plan", "--batch"});
  expect_bad_input("accel run --model qwen3-235b --system csi --gpus 1000000000 --context long --slo 100", {"--gpus"});
  expect_bad_input("accel sessions --set sessions.sessions=16000000 --set sessions.turns_max=10000 --json " + out(),
                   {"sessions.sessions x sessions.turns_max", "more than the 4194304"});
}

TEST_F(Hostile, ExperimentSizesAreCapped) {
  expect_bad_input("hbf stream --preset csi --tensor 1B", {"--tensor 1B", "tensors, more than the 1048576"});
  expect_bad_input("hbf write-bw --preset csi --requests 1000000000", {"--requests", "is not a whole number of requests in [1, 16777216]"});
  expect_bad_input("hbf write-bw --preset csi --requests 1000000", {"--requests 1000000", "more requests than"});
  expect_bad_input("hbf stream --preset csi --set hbf.geometry.pages_per_block=65536 --bytes 4TiB", {"--bytes", "megapages"});
  std::string grid;
  for (const char* k : {"serving.seed", "llm.sample_layers", "serving.routing_skew", "hbf.runtime.prefetch_distance", "llm.tp_size"})
    grid += std::string(" --vary ") + k + "=1,2,3,4,5,6,7,8,9,10";
  expect_bad_input("accel sweep --model qwen3-235b --system csix8 --context long --slo 100 --quiet" + grid,
                   {"--vary", "more than 10000 points"});
}

TEST_F(Hostile, FunctionalDataIsCapped) {
  expect_bad_input("nand demo --set nand.geometry.page_size=16MiB --set nand.geometry.wordlines_per_string=256 --json " + out(),
                   {"nand.geometry.page_size", "more than the 512 MiB"});
  expect_bad_input("cosmos run --preset flash-cosmos --functional --json " + out(), {"functional bmi", "workload.users"});
  expect_bad_input("cosmos reliability --preset flash-cosmos --trials 1 --months 1 --json " + out(), {"functional bmi", "512 MiB"});
  expect_bad_input("cosmos reliability --preset flash-cosmos --trials 1000000000 --set workload.users=8000", {"--trials"});
  expect_bad_input("cosmos reliability --preset flash-cosmos --months 100000", {"--months"});
}

TEST_F(Hostile, TimePastItsRangeIsAnError) {
  // 1e9-token contexts on HBM: the step takes longer than 2^63 picoseconds.
  expect_bad_input("accel run --model llama3.1-405b --system h200x8 --context 1000000000:1000 --slo 100 --batch 1000000",
                   {"time overflow", "106 days"});
}

TEST_F(Hostile, HugeTokenCountsAreRefusedNamingTheBound) {
  // Turns at the trace reader's token limit (2^30) are beyond what one request may have in the serving simulation that
  // serves the sessions (2^22 tokens, longer than any model's context): refused before their prefix keys are made
  // (2^21 keys a turn), with the file and the bound, within the memory bound of the run.
  // (One turn per session: a later turn's prompt would have to hold the earlier turn's 2^30 output tokens too.)
  std::string trace;
  for (int s = 0; s < 60; ++s)
    trace += "{\"session\": " + std::to_string(s) +
             ", \"turn\": 1, \"input_tokens\": 1000, \"output_tokens\": 1073741824, "
             "\"timestamp\": " +
             std::to_string(10 * s) + "}\n";
  const std::string f = write("big.jsonl", trace);
  const Result r = ::bitline::test::run_bitline_bounded("accel sessions --trace " + quote(f) + " --json " + out());
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("big.jsonl"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1000 prompt and 1073741824 output tokens: need 1 to 4194304 each"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(path("out.json")));
}

// ---- Keys that the command does not read, negative or repeated options -----------------------------------

TEST_F(Hostile, EveryKeyIsCheckedWhicheverCommandRuns) {
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context long --slo 100 --set nand.timing.t_raed_slc=1us",
                   {"nand.timing.t_raed_slc", "unknown key", "did you mean"});
  expect_bad_input("cosmos run --preset flash-cosmos --set serving.kv_layuot=scatter", {"serving.kv_layuot", "unknown key"});
  expect_bad_input("hbf info --preset csi --set sessions.sesions=3", {"sessions.sesions", "unknown key"});
  expect_bad_input("nand rber --set llm.compute.util_max=7", {"llm.compute.util_max", "at most 1"});
  const std::string f = write("typo.yaml", "workload:\n  userz: 5\n");
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context long --slo 100 --config " + quote(f),
                   {"typo.yaml:2", "workload.userz"});
}

TEST_F(Hostile, NegativeOrRepeatedOptions) {
  expect_bad_input("hbf stream --preset csi --distance -5", {"--distance"});
  expect_bad_input("hbf stream --preset csi --bytes -5GiB", {"--bytes", "must be positive"});
  expect_bad_input("hbf write-bw --preset csi --bytes 0B", {"--bytes", "must be positive"});
  expect_bad_input("cosmos write-bw --preset flash-cosmos --bytes 2TiB", {"--bytes 2TiB", "more than the 256GiB", "estimated 64 s"});
  expect_bad_input("accel validate --models qwen3-235b --systems csix8 --batch -3", {"--batch"});
  expect_bad_input("accel sweep --model qwen3-235b --system csix8 --context long --slo 100 --vary serving.seed=1,2 --vary serving.seed=3",
                   {"--vary serving.seed", "varied twice"});
}

// ---- Output paths and exit codes ------------------------------------------------------------------------

TEST_F(Hostile, UnwritableJsonIsRefusedBeforeTheWork) {
  // A directory, a path under a regular file, a .partial that is a directory: refused at once (the stream
  // would print "simulated" if it had run).
  Result r = expect_bad_input("hbf stream --preset csi --json " + quote(dir_.string()), {"--json", "is a directory"});
  EXPECT_FALSE(has(r.out, "simulated")) << r.out;
  const std::string file = write("file.txt", "x");
  r = expect_bad_input("hbf stream --preset csi --json " + quote(file + "/out.json"), {"--json", "is not a folder"});
  EXPECT_FALSE(has(r.out, "simulated")) << r.out;
  fs::create_directories(dir_ / "res.json.partial");
  r = expect_bad_input("accel run --model qwen3-235b --system csix8 --context long --slo 100 --json " + quote(path("res.json")),
                       {"res.json.partial is a directory"});
  EXPECT_FALSE(has(r.out, "tokens/s")) << r.out;
  fs::remove(dir_ / "res.json.partial");
  for (const char* cmd : {"nand demo", "nand rber", "hbf info", "hbf write-bw --preset csi", "cosmos run --preset flash-cosmos",
                          "cosmos write-bw --preset flash-cosmos", "cosmos eval --preset flash-cosmos", "accel eval", "accel ablation",
                          "accel sessions", "accel validate", "cosmos reliability --preset flash-cosmos", "cosmos ssb --sf 0.001"})
    expect_bad_input(std::string(cmd) + " --json " + quote(dir_.string()), {"--json", "is a directory"});
}

TEST_F(Hostile, ArgumentErrorsExitTwoHelpAndVersionZero) {
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context long --slo 100 --bogus", {"--bogus"});
  expect_bad_input("accel run", {"--model is required"});
  expect_bad_input("accel run --model qwen3-235b --system csix8 --context long --slo abc", {"--slo"});
  expect_bad_input("cosmos reliability --trials x", {"--trials"});
  expect_bad_input("", {"subcommand"});
  expect_bad_input("frobnicate", {"unknown command 'frobnicate'", "commands: "});
  for (const char* ok : {"--help", "--version", "accel run --help", "hbf stream --help", "cosmos eval --help"}) {
    const Result r = ::bitline::test::run_bitline_bounded(ok);
    EXPECT_EQ(r.rc, 0) << ok << "\n" << r.out;
  }
}

TEST_F(Hostile, ServingEngineProfilesAndOptions) {
  // --engine: an unknown name, an option of another engine, a value out of range or of the wrong type, a serve key the
  // engine sets, a profile file with a missing, unknown or misspelt key: exit 2 naming the file, key and value.
  const std::string base = "serve run --model llama2-7b --system h100x1 --rate 4 --requests 20 --input 100 --output 20 --json " + out();
  expect_bad_input(base + " --engine vlm", {"--engine vlm", "unknown engine", "did you mean 'vllm'"});
  expect_bad_input(base + " --engine sglang --set engine.num_scheduler_steps=10",
                   {"engine.num_scheduler_steps", "an option of engine family vllm_v0, not of sglang"});
  expect_bad_input(base + " --engine vllm-v0 --set engine.num_scheduler_steps=0", {"engine.num_scheduler_steps", "at least 1", "got 0"});
  expect_bad_input(base + " --engine vllm --set engine.gpu_memory_utilization=1.5", {"engine.gpu_memory_utilization", "1.5"});
  expect_bad_input(base + " --engine vllm --set engine.enable_prefix_caching=maybe", {"engine.enable_prefix_caching", "maybe"});
  expect_bad_input(base + " --engine vllm --scheduler orca", {"serve.scheduler = orca", "engine family vllm sets it", "--engine ideal"});
  expect_bad_input(base + " --engine vllm --set serve.max_num_seqs=64", {"serve.max_num_seqs = 64", "engine.OPTION"});
  expect_bad_input(base + " --engine vllm-v0 --set engine.enable_chunked_prefill=true --set engine.num_scheduler_steps=4",
                   {"engine.num_scheduler_steps = 4", "enable_chunked_prefill"});
  expect_bad_input(base + " --engine " + quote(path("none.yaml")), {"none.yaml", "no such file"});
  const std::string partial = write("partial.yaml", "engine:\n  family: vllm\n  version: mine\n  max_num_seqs: 64\n");
  expect_bad_input(base + " --engine " + quote(partial),
                   {"partial.yaml", "engine.gpu_memory_utilization", "engine.host.schedule", "missing"});
  const std::string misspelt = write("misspelt.yaml", "engine:\n  family: sglang2\n");
  expect_bad_input(base + " --engine " + quote(misspelt), {"misspelt.yaml:2", "engine.family", "sglang2", "did you mean 'sglang'"});
  const std::string other = write("other.yaml", "engine:\n  family: ideal\nserve:\n  max_num_seqs: 8\n");
  expect_bad_input(base + " --engine " + quote(other), {"other.yaml", "serve", "only the section engine"});
  const std::string unknown = write("unknown.yaml", "engine:\n  family: ideal\n  speed: 2\n");
  expect_bad_input(base + " --engine " + quote(unknown), {"unknown.yaml:3", "engine.speed", "unknown option"});
}
