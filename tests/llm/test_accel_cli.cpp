// `bitline accel ...` end to end: the JSON shapes of eval / ablation /
// sessions / run, and bad input (clear messages; non-zero exit where it is an
// error, feasible: false with the reason where it is a result).
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

namespace fs = std::filesystem;

namespace {

using Result = ::bitline::test::CliRun;
std::string quote(const std::string& s) { return ::bitline::test::shell_quote(s); }
Result run(const std::string& args) { return ::bitline::test::run_bitline(args); }

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

class AccelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / (std::string("bitline-accel-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                                        "-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& f) const { return (dir_ / f).string(); }
  nlohmann::json read(const std::string& f) const {
    std::ifstream in(dir_ / f);
    return nlohmann::json::parse(in);
  }
  fs::path dir_;
};

}  // namespace

TEST_F(AccelCli, EvalWritesTheWholeMatrix) {
  const Result r = run("accel eval --quiet --json " + quote(path("eval.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = read("eval.json");
  ASSERT_EQ(j["points"].size(), 4u * 2 * 2 * 8);
  int infeasible = 0;
  for (const auto& p : j["points"]) {
    for (const char* k : {"model", "context", "slo_ms", "system", "gpus", "batch", "tokens_per_s_per_gpu", "bound_by", "feasible"})
      ASSERT_TRUE(p.contains(k)) << k << " in " << p.dump();
    if (p["feasible"].get<bool>()) {
      for (const char* k : {"step_ms", "breakdown_ms", "tokens_per_j", "kv_write_bytes_per_s"}) ASSERT_TRUE(p.contains(k)) << k;
      for (const char* k : {"weights", "kv", "compute", "communication", "exposed_flash_latency"})
        ASSERT_TRUE(p["breakdown_ms"].contains(k)) << k;
      EXPECT_LE(p["step_ms"].get<double>(), p["slo_ms"].get<double>() + 1e-9);
    } else {
      ++infeasible;
      EXPECT_FALSE(p["reason"].get<std::string>().empty());
    }
  }
  EXPECT_GT(infeasible, 0);  // Qwen3-Coder-480B does not fit 8 x H200 with data-parallel attention
  for (const char* k : {"csix8@100", "csix8@50", "clix16@100", "h200x16@50"}) {
    ASSERT_TRUE(j["summary"]["throughput_vs_h200x8"].contains(k)) << k;
    EXPECT_TRUE(j["summary"]["throughput_vs_h200x8"][k].contains("mean"));
    EXPECT_TRUE(j["summary"]["throughput_vs_h200x8"][k].contains("geomean"));
    EXPECT_TRUE(j["summary"]["tokens_per_j_vs_h200x8"].contains(k));
  }
  EXPECT_TRUE(j["config"]["csi"]["llm"].contains("compute"));
  EXPECT_TRUE(has(r.out, "csix8@100"));
}

TEST_F(AccelCli, AblationAndSessionsShapes) {
  Result r = run("accel ablation --json " + quote(path("abl.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto a = read("abl.json");
  for (const char* k : {"full", "no_prefetch", "no_weight_layout", "no_kv_layout", "plain_hbf", "hbm_only"}) {
    ASSERT_TRUE(a["variants"].contains(k)) << k;
    EXPECT_TRUE(a["variants"][k].contains("step_ms"));
    EXPECT_TRUE(a["variants"][k].contains("breakdown_ms"));
    EXPECT_TRUE(a["variants"][k].contains("tokens_per_s_per_gpu_at_100ms"));
  }
  r = run("accel sessions --set sessions.sessions=20 --json " + quote(path("s.json")));  // the shape, not the statistics
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto s = read("s.json");
  for (const char* k : {"h200x8", "h200x16", "csix8", "clix8"}) {
    ASSERT_TRUE(s["systems"].contains(k)) << k;
    EXPECT_TRUE(s["systems"][k].contains("hit_rate"));
    EXPECT_TRUE(s["systems"][k].contains("recomputed_tokens"));
  }
  // A trace file in the documented JSONL format.
  std::ofstream(path("t.jsonl")) << R"({"session": "a", "turn": 1, "input_tokens": 1000, "output_tokens": 100, "timestamp": 0})"
                                 << "\n"
                                 << R"({"session": "a", "turn": 2, "input_tokens": 1300, "output_tokens": 100, "timestamp": 60})"
                                 << "\n";
  r = run("accel sessions --trace " + quote(path("t.jsonl")) + " --json " + quote(path("t.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_DOUBLE_EQ(read("t.json")["systems"]["csix8"]["hit_rate"].get<double>(), 1.0);
  std::ofstream(path("bad.jsonl")) << R"({"session": "a", "turn": 1, "input_tokens": -5, "output_tokens": 1, "timestamp": 0})"
                                   << "\n";
  r = run("accel sessions --trace " + quote(path("bad.jsonl")) + " --json " + quote(path("x.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "bad.jsonl:1: field 'input_tokens'")) << r.out;
  // Mooncake's format: the shipped example, then a malformed one.
  const std::string sample = (fs::path(BITLINE_SOURCE_DIR) / "configs" / "traces" / "mooncake-example.jsonl").string();
  r = run("accel sessions --trace " + quote(sample) + " --json " + quote(path("m.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto m = read("m.json");
  EXPECT_EQ(m["trace"]["format"], "mooncake");
  EXPECT_EQ(m["trace"]["turns"], 38);
  EXPECT_GT(m["systems"]["h200x8"]["reusable_tokens"].get<double>(), 0.0);
  EXPECT_GT(m["systems"]["h200x8"]["reused_tokens"].get<double>(), 0.0);  // the shared system prompt, at least
  EXPECT_GT(m["systems"]["h200x8"]["serve"]["ttft_ms"]["mean"].get<double>(), 0.0);
  EXPECT_TRUE(m["loads"].empty());  // a trace is served at its own load
  std::ofstream(path("badm.jsonl")) << R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]})"
                                    << "\n"
                                    << R"({"timestamp": 10, "input_length": 600, "output_length": 5, "hash_ids": [0, -1]})"
                                    << "\n";
  r = run("accel sessions --trace " + quote(path("badm.jsonl")) + " --json " + quote(path("y.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "badm.jsonl:2: field 'hash_ids[1]'")) << r.out;
  EXPECT_FALSE(fs::exists(path("y.json")));
}

TEST_F(AccelCli, AReasonEveryDeploymentSharesIsSaidOnce) {
  // FP4 on a GPU without FP4 tensor cores fails every deployment for the same reason: printed once, not once per deployment.
  const Result r = run("accel run --model llama2-7b --system h100x8 --context 300:50 --slo 50 --precision fp4");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(has(r.out, "the same for all 4 tried")) << r.out;
  size_t n = 0;
  for (size_t at = r.out.find("no FP4 tensor cores"); at != std::string::npos; at = r.out.find("no FP4 tensor cores", at + 1)) ++n;
  EXPECT_EQ(n, 1u) << r.out;
}

TEST_F(AccelCli, RunPrintsABreakdown) {
  const Result r = run("accel run --model llama3.1-405b --system csix8 --context 15000:6000 --slo 50 --json " + quote(path("p.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(has(r.out, "step on its critical path (ms, adding up to the step): weights")) << r.out;
  const auto p = read("p.json");
  EXPECT_TRUE(p["feasible"].get<bool>());
  EXPECT_EQ(p["system"], "csix8");
  EXPECT_GT(p["batch"].get<int>(), 30);
}

// A grid of parameter values around one point: every combination, in order, with its values; more interface
// bandwidth or fill offload can only help; a bad value anywhere stops the sweep before it starts.
TEST_F(AccelCli, SweepRunsEveryCombination) {
  Result r =
      run("accel sweep --model qwen3-235b --system csix8 --context long --slo 100 --quiet"
          " --vary hbf.timing.interface_bandwidth=384GB/s,768GB/s --vary serving.kv_offload=mean,fill --json " +
          quote(path("s.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = read("s.json");
  ASSERT_EQ(j["points"].size(), 4u);
  EXPECT_EQ(j["system"], "csix8");
  EXPECT_EQ(j["vary"]["serving.kv_offload"], nlohmann::json::array({"mean", "fill"}));
  const auto& p = j["points"];
  EXPECT_EQ(p[0]["values"]["hbf.timing.interface_bandwidth"], "384GB/s");
  EXPECT_EQ(p[1]["values"]["serving.kv_offload"], "fill");
  EXPECT_EQ(p[2]["values"]["hbf.timing.interface_bandwidth"], "768GB/s");
  for (const auto& x : p) EXPECT_TRUE(x["feasible"].get<bool>());
  auto batch = [&](int i) { return p[i]["batch"].get<int>(); };
  EXPECT_LT(batch(0), batch(2));  // twice the interface bandwidth
  EXPECT_LE(batch(0), batch(1));  // fill offload
  EXPECT_LE(batch(2), batch(3));
  // The mean offload at 768 GB/s is the default point.
  r = run("accel run --model qwen3-235b --system csix8 --context long --slo 100 --json " + quote(path("p.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(read("p.json")["batch"], p[2]["batch"]);

  r = run("accel sweep --model qwen3-235b --system csix8 --context long --slo 100 --vary serving.kv_offload=mean,bogus --json " +
          quote(path("bad.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "--vary (serving.kv_offload=bogus)")) << r.out;
  EXPECT_FALSE(fs::exists(path("bad.json")));
  r = run("accel sweep --model qwen3-235b --system csix8 --context long --slo 100 --vary serving.kv_offload");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "expected KEY=V1,V2")) << r.out;
}

// Same config and seed, same results, bit for bit, whatever the number of worker threads: a sweep here (the whole
// evaluation on one and five threads, a 12-point matrix, is SameBytes.AccelEvalWithOneOrFiveThreads, byte for byte).
TEST_F(AccelCli, ResultsDoNotDependOnThreads) {
  const std::string sweep = "accel sweep --quiet --model deepseek-v3 --system clix8 --context agent --slo 50 --vary hbf.stacks=3,4,5 ";
  Result r = run(sweep + "--threads 1 --json " + quote(path("s1.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  r = run(sweep + "--threads 3 --json " + quote(path("s3.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  nlohmann::json s1 = read("s1.json"), s3 = read("s3.json");
  EXPECT_FALSE(s1.contains("run"));  // how it ran (threads, ranks) is printed, not written
  EXPECT_EQ(s1.dump(), s3.dump());
}

TEST_F(AccelCli, BadInputIsExplained) {
  Result r = run("accel run --model no-such-model --system csix8 --context long --slo 100");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "unknown model 'no-such-model'")) << r.out;
  EXPECT_TRUE(has(r.out, "qwen3-235b")) << r.out;  // lists the known models

  r = run("accel run --model qwen3-235b --system tpu8 --context long --slo 100");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "unknown system 'tpu8'")) << r.out;

  r = run("accel run --model qwen3-235b --system csix8 --context forever --slo 100");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "context 'forever'")) << r.out;

  std::ofstream(path("broken.json")) << "{\"hidden_size\": 64,\n \"num_hidden_layers\": }";
  r = run("accel run --model " + quote(path("broken.json")) + " --system csix8 --context long --slo 100");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "broken.json: malformed JSON")) << r.out;

  std::ofstream(path("nolayers.json"))
      << R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 8})";
  r = run("accel run --model " + quote(path("nolayers.json")) + " --system csix8 --context long --slo 100");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "field 'num_hidden_layers': missing")) << r.out;

  // A result, not an error, in eval; for one point `run` reports it and exits non-zero.
  r = run("accel run --model qwen3-coder-480b --system h200x8 --context agent --slo 100 --set llm.deployment_search=fixed");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.out, "cannot fit even at batch 1")) << r.out;

  r = run("accel run --model llama3.1-405b --system clix4 --context long --slo 50");
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.out, "no batch meets the SLO")) << r.out;

  r = run("accel eval --json " + quote(path("e.json")) + " --set serving.kv_layout=tiles");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "serving.kv_layout")) << r.out;

  r = run("accel eval --json " + quote(path("e.json")) + " --set llm.no_such_key=1");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "no_such_key")) << r.out;
}

// Bring your own GPU and model: a kind and a model written into a fresh config folder run with no source change.
TEST_F(AccelCli, ANewKindAndModelInAConfigFolderRun) {
  fs::create_directories(dir_ / "cfg" / "gpus");
  fs::create_directories(dir_ / "cfg" / "models");
  {
    std::ofstream k(dir_ / "cfg" / "gpus" / "toy.yaml");
    k << "description: a made-up GPU for this test\n"
         "gpu: {bf16_flops: 100e12, onchip_sram: 20MB}\n"
         "hbm: {stacks: 2, capacity_per_stack: 8GB, bandwidth_per_stack: 500GB/s}\n"
         "hbf: {stacks: 0}\n"
         "llm: {energy: {gpu_tdp: 300W, tdp_hbm_stacks: 2}}\n";
    std::ofstream m(dir_ / "cfg" / "models" / "toy-llama.json");
    m << R"({"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_attention_heads": 8,
             "num_hidden_layers": 4, "num_key_value_heads": 4, "head_dim": 64, "vocab_size": 1000,
             "torch_dtype": "bfloat16"})";
  }
  const std::string cfg = (dir_ / "cfg").string();
  // The kind does not give every key a GPU kind must (it would have run on the H200's SMs, L2, FP8 rate, NVLink and HBM
  // energy): refused, naming each missing key and how to inherit them.
  const Result partial = ::bitline::test::run_bitline("accel run --model toy-llama --system toyx2 --context 1000:100 --slo 20", "", cfg);
  EXPECT_EQ(partial.rc, 2) << partial.out;
  for (const char* key : {"hbm.energy", "llm.compute.sms", "llm.compute.l2_bandwidth", "llm.compute.fp8_speedup", "llm.network.nvlink ",
                          "llm.network.nvlink_sharp", "llm.network.nvls_busbw", "toy.yaml", "7 keys", "base: h100"})
    EXPECT_TRUE(has(partial.out, key)) << key << "\n" << partial.out;
  {
    // Given whole, it runs.
    std::ofstream k(dir_ / "cfg" / "gpus" / "toy.yaml");
    k << "description: a made-up GPU for this test\n"
         "gpu: {bf16_flops: 100e12, onchip_sram: 20MB}\n"
         "hbm: {stacks: 2, capacity_per_stack: 8GB, bandwidth_per_stack: 500GB/s, energy: 4pJ/bit}\n"
         "hbf: {stacks: 0}\n"
         "llm:\n"
         "  compute: {sms: 40, l2_bandwidth: 3TB/s, fp8_speedup: 2}\n"
         "  network: {nvlink: 100GB/s, nvlink_sharp: false}\n"
         "  energy: {gpu_tdp: 300W, tdp_hbm_stacks: 2}\n";
  }
  const Result r = ::bitline::test::run_bitline(
      "accel run --model toy-llama --system toyx2 --context 1000:100 --slo 20 --json " + quote(path("toy.json")), "", cfg);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(has(r.out, "toy-llama on toyx2")) << r.out;
  const auto j = read("toy.json");
  EXPECT_TRUE(j["feasible"].get<bool>());
  EXPECT_EQ(j["system"], "toyx2");
  EXPECT_DOUBLE_EQ(j["config"]["gpu"]["bf16_flops"].get<double>(), 100e12);
  EXPECT_EQ(j["config"]["hbm"]["stacks"].get<int64_t>(), 2);
  EXPECT_GT(j["batch"].get<int64_t>(), 0);
  // `--system toy --gpus 2` finds the kind by its file too; a kind that is not there names those that are.
  EXPECT_EQ(::bitline::test::run_bitline("accel run --model toy-llama --system toy --gpus 2 --context 1000:100 --slo 20", "", cfg).rc, 0);
  const Result bad = ::bitline::test::run_bitline("accel run --model toy-llama --system h200x8 --context 1000:100 --slo 20", "", cfg);
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_TRUE(has(bad.out, "unknown GPU kind 'h200'") && has(bad.out, "toy")) << bad.out;
  const Result kinds = ::bitline::test::run_bitline("accel kinds", "", cfg);
  EXPECT_EQ(kinds.rc, 0) << kinds.out;
  EXPECT_TRUE(has(kinds.out, "toy        a made-up GPU for this test")) << kinds.out;
  EXPECT_FALSE(has(kinds.out, "h200")) << kinds.out;

  // A model of another architecture (GPT-2 keys: MHA, 2-matrix GELU FFN, biases, learned positions, tied
  // embeddings) in the same folder runs on the same kind, with its prefill.
  {
    std::ofstream g(dir_ / "cfg" / "models" / "toy-gpt2.json");
    g << R"({"model_type": "gpt2", "n_embd": 512, "n_head": 8, "n_layer": 4, "n_inner": null, "n_positions": 2048,
             "vocab_size": 1000, "activation_function": "gelu_new", "torch_dtype": "float16"})";
  }
  const Result gr = ::bitline::test::run_bitline(
      "accel run --model toy-gpt2 --system toyx2 --context 1000:100 --slo 20 --breakdown --json " + quote(path("gpt2.json")), "", cfg);
  ASSERT_EQ(gr.rc, 0) << gr.out;
  EXPECT_TRUE(has(gr.out, "toy-gpt2 on toyx2")) << gr.out;
  EXPECT_TRUE(has(gr.out, "time to first token")) << gr.out;
  const auto gj = read("gpt2.json");
  EXPECT_TRUE(gj["feasible"].get<bool>());
  EXPECT_GT(gj["batch"].get<int64_t>(), 0);
  EXPECT_GT(gj["prefill"]["time_ms"].get<double>(), 0);
  EXPECT_EQ(gj["breakdown_by_class"]["decode"]["layers_ms"].size(), 4u);
}

// accel run reports the prefill (time to first token), the request-level latency and, with --breakdown, both
// steps by operator class, per layer and per step.
TEST_F(AccelCli, RunReportsTtftLatencyAndBreakdown) {
  const Result r = run("accel run --model llama3.1-405b --system h200x8 --context 15000:6000 --slo 50 --breakdown --json " +
                       quote(path("p.json")) + " --set serving.prefill.chunk=4096");
  ASSERT_EQ(r.rc, 0) << r.out;
  for (const char* s : {"time to first token", "TTFT", "TPOT", "end to end", "projection_gemms", "kv_reads", "weight_reads", "collectives"})
    EXPECT_TRUE(has(r.out, s)) << s << "\n" << r.out;
  const auto p = read("p.json");
  EXPECT_EQ(p["prefill"]["chunks"].get<int64_t>(), 4);  // 15,000 tokens in chunks of 4,096
  const double ttft = p["latency"]["ttft_ms"].get<double>(), tpot = p["latency"]["tpot_ms"].get<double>();
  EXPECT_DOUBLE_EQ(ttft, p["prefill"]["time_ms"].get<double>());
  EXPECT_DOUBLE_EQ(tpot, p["step_ms"].get<double>());
  EXPECT_NEAR(p["latency"]["end_to_end_ms"].get<double>(), ttft + p["latency"]["kv_transfer_ms"].get<double>() + 5999 * tpot, 1e-6 * ttft);
  EXPECT_EQ(p["latency"]["input_tokens"].get<int64_t>(), 15000);
  const auto& b = p["breakdown_by_class"];
  EXPECT_EQ(b["prefill"]["layers_ms"].size(), 126u);
  EXPECT_EQ(b["decode"]["layers_ms"].size(), 126u);
  double decode = 0;
  for (const auto& [k, v] : b["decode"]["total_ms"].items()) decode += v.get<double>();
  EXPECT_NEAR(decode, p["step_ms"].get<double>(), 0.005 * p["step_ms"].get<double>());
  EXPECT_GT(b["prefill"]["total_ms"]["projection_gemms"].get<double>(), b["prefill"]["total_ms"]["weight_reads"].get<double>());
  EXPECT_GT(b["decode"]["total_ms"]["weight_reads"].get<double>(), b["decode"]["total_ms"]["projection_gemms"].get<double>());
  // Without --breakdown the JSON has no per-layer tables; a bad chunk is bad input.
  EXPECT_EQ(run("accel run --model llama3.1-405b --system h200x8 --context long --slo 50 --set serving.prefill.chunk=-1").rc, 2);
  // The default engine here (none) adds no host time to the first token.
  EXPECT_EQ(p["latency"]["prefill_engine_ms"].get<double>(), 0.0);
  EXPECT_EQ(p["latency"]["request_engine_ms"].get<double>(), 0.0);
}

// A custom engine's host costs are in the request's first token: each prefill pass's iteration cost and the request's
// own (serving.engine.request), reported apart from the GPU's prefill.
TEST_F(AccelCli, RunPutsACustomEnginesHostCostsInTheFirstToken) {
  const std::string engine = " --set serving.engine.kind=custom --set serving.engine.iteration=1ms --set serving.engine.request=3ms";
  const Result r = run("accel run --model llama2-7b --system h100x1 --context 1000:200 --slo 30 --json " + quote(path("e.json")) + engine);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(has(r.out, "host time before the first token (prefill 1.000, request 3.000)")) << r.out;
  const auto p = read("e.json");
  EXPECT_DOUBLE_EQ(p["latency"]["prefill_engine_ms"].get<double>(), 1.0);  // one pass: its iteration cost
  EXPECT_DOUBLE_EQ(p["latency"]["request_engine_ms"].get<double>(), 3.0);
  EXPECT_NEAR(p["latency"]["ttft_ms"].get<double>(), p["prefill"]["time_ms"].get<double>() + 4.0, 1e-9);
  // Set for a kind with its own costs it is refused, naming the key.
  const Result bad = run("accel run --model llama2-7b --system h100x1 --context 1000:200 --slo 30 --set serving.engine.request=3ms");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_TRUE(has(bad.out, "serving.engine.request = 3000 us")) << bad.out;
}

TEST_F(AccelCli, B200AndAnHbfOnlySystemRun) {
  const Result kinds = run("accel kinds");
  ASSERT_EQ(kinds.rc, 0) << kinds.out;
  for (const char* k : {"a100", "h100", "h200", "h200-sxm", "b200", "csi", "cli", "hbf-only"})
    EXPECT_TRUE(has("\n" + kinds.out, std::string("\n") + k + " ")) << k;

  Result r = run("accel run --model llama3.1-405b --system b200x8 --context long --slo 100 --json " + quote(path("b200.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto b = read("b200.json");
  EXPECT_TRUE(b["feasible"].get<bool>());
  EXPECT_DOUBLE_EQ(b["config"]["gpu"]["bf16_flops"].get<double>(), 2.25e15);
  EXPECT_EQ(b["config"]["hbm"]["stacks"].get<int64_t>(), 8);
  // 405B in BF16 (~101 GB per GPU at TP 8) does not fit an 80 GB H100 but fits a 180 GB B200.
  r = run("accel run --model llama3.1-405b --system h100x8 --context long --slo 100");
  EXPECT_EQ(r.rc, 1) << r.out;  // a result (no feasible batch), not bad input
  EXPECT_TRUE(has(r.out, "the weights do not fit")) << r.out;

  // No HBM at all: the workspace and KV staging live in SRAM, nothing is read from HBM, and a batch fits.
  r = run("accel run --model qwen3-235b --system hbf-onlyx8 --context long --slo 100 --json " + quote(path("hbf.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto h = read("hbf.json");
  EXPECT_TRUE(h["feasible"].get<bool>());
  EXPECT_EQ(h["config"]["hbm"]["stacks"].get<int64_t>(), 0);
  EXPECT_GT(h["config"]["hbf"]["stacks"].get<int64_t>(), 0);
  EXPECT_GT(h["batch"].get<int64_t>(), 0);
  EXPECT_EQ(h["bytes_read_per_gpu"]["hbm"].get<double>(), 0.0);
  EXPECT_GT(h["bytes_read_per_gpu"]["flash"].get<double>(), 0.0);
  // The event-driven step model runs on it too.
  EXPECT_EQ(run("accel run --model qwen3-235b --system hbf-onlyx8 --context long --slo 100 --set serving.step_model=event").rc, 0);
}

TEST_F(AccelCli, EvalBaselineOption) {
  {
    std::ofstream e(dir_ / "small.yaml");
    e << "experiment: small\nmodels: [qwen3-235b]\ncontexts: [{name: mid, input: 4000, output: 1000}]\nslos_ms: [100]\n"
         "systems: [h200x8, csix8, b200x8]\nbaseline: h200x8\n";
  }
  Result r = run("accel eval --quiet --experiment " + quote(path("small.yaml")) + " --baseline b200x8 --json " + quote(path("e.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = read("e.json");
  ASSERT_TRUE(j["summary"].contains("throughput_vs_b200x8")) << j["summary"].dump();
  EXPECT_FALSE(j["summary"].contains("throughput_vs_h200x8"));
  EXPECT_FALSE(j["summary"]["throughput_vs_b200x8"].contains("b200x8@100"));  // the baseline is not compared with itself
  const double h200 = j["summary"]["throughput_vs_b200x8"]["h200x8@100"]["mean"].get<double>();
  EXPECT_GT(h200, 0.2);
  EXPECT_LT(h200, 1.0);  // per GPU, an H200 decodes slower than a B200 (4.8 vs 7.7 TB/s)
  EXPECT_TRUE(j["config"].contains("b200"));
  EXPECT_FALSE(j["config"].contains("cli"));  // only the kinds the experiment runs
  r = run("accel eval --quiet --experiment " + quote(path("small.yaml")) + " --baseline clix8 --json " + quote(path("e2.json")));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(has(r.out, "--baseline clix8: not one of the experiment's systems")) << r.out;
}

TEST_F(AccelCli, StaticBatchWritesThroughputAndTimeToFirstToken) {
  // TensorRT-LLM's gptSessionBenchmark way: 56 prompts of 128 tokens, 64 output tokens, FP8, one H100.
  Result r =
      run("accel run --model llama2-7b --system h100x1 --context 128:64 --batch 56 --static-batch --precision fp8 --breakdown --json " +
          quote(path("sb.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = read("sb.json");
  const auto& sb = j["static_batch"];
  EXPECT_EQ(sb["batch"], 56);
  EXPECT_EQ(sb["decode_steps"], 63);
  const double total_s = sb["total_ms"].get<double>() * 1e-3;
  EXPECT_NEAR(sb["output_tokens_per_s_per_gpu"].get<double>(), 56.0 * 64 / total_s, 1e-6 * 56 * 64 / total_s);
  EXPECT_DOUBLE_EQ(j["latency"]["ttft_ms"].get<double>(), sb["ttft_ms"].get<double>());
  EXPECT_NEAR(sb["total_ms"].get<double>(), sb["ttft_ms"].get<double>() + sb["decode_ms"].get<double>(), 1e-6);
  EXPECT_EQ(j["config"]["llm"]["precision"], "fp8");
  // --breakdown: every kernel class with its achieved rates and its bound.
  const auto& k = j["breakdown_by_class"]["decode"]["kernels"]["projection_gemms"];
  for (const char* key : {"time_ms", "flops", "bytes", "tflop_per_s", "gb_per_s", "bound"}) EXPECT_TRUE(k.contains(key)) << key;
  EXPECT_TRUE(has(r.out, "TFLOP/s"));
  // Without --static-batch an SLO is needed.
  r = run("accel run --model llama2-7b --system h100x1 --context 128:64");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "--slo")) << r.out;
}

TEST_F(AccelCli, StaticBatchBadInputIsRefusedWithTheNumbers) {
  // An unknown precision names the key and the choices.
  Result r = run("accel run --model llama2-7b --system h100x1 --context 128:8 --batch 8 --static-batch --precision fp9");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "llm.precision")) << r.out;
  EXPECT_TRUE(has(r.out, "fp8")) << r.out;
  // FP4 on a GPU without FP4 tensor cores.
  r = run("accel run --model llama2-7b --system h100x1 --context 128:8 --batch 8 --static-batch --precision fp4");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "no FP4 tensor cores")) << r.out;
  EXPECT_TRUE(has(r.out, "h100")) << r.out;
  // A batch that does not fit: the parts and the capacity, in GB.
  r = run("accel run --model llama2-70b --system h100x1 --context 2048:2048 --batch 64 --static-batch --precision fp8");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "does not fit")) << r.out;
  EXPECT_TRUE(has(r.out, "85.9 GB")) << r.out;  // 80 GiB
  EXPECT_TRUE(has(r.out, "weights")) << r.out;
  // No batch given.
  r = run("accel run --model llama2-7b --system h100x1 --context 128:8 --static-batch");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "--batch")) << r.out;
  // NVLink SHARP on a node without it: refused once, naming the kind and the key.
  r = run("accel run --model llama2-70b --system a100x4 --context 128:8 --batch 8 --static-batch --set llm.network.node_all_reduce=nvls");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "GPU kind 'a100'")) << r.out;
  EXPECT_TRUE(has(r.out, "llm.network.nvlink_sharp = false")) << r.out;
  // A host cost for an engine that has its own (the session runtime, chosen by auto here) is refused, not ignored.
  r = run("accel run --model llama2-7b --system h100x1 --context 128:8 --batch 8 --static-batch --set serving.engine.launch=20us");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "serving.engine.launch = 20 us")) << r.out;
  EXPECT_TRUE(has(r.out, "serving.engine.kind = custom")) << r.out;
}

TEST_F(AccelCli, AttentionTimesPrefillKernelsAloneAndRefusesBadShapes) {
  Result r =
      run("accel attention --system h100 --mask none --prefill 1x16x16384x128 --prefill 1x32x16384x64 --json " + quote(path("a.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = read("a.json");
  ASSERT_EQ(j["prefill"].size(), 2u);
  EXPECT_EQ(j["kind"], "h100");
  EXPECT_EQ(j["mask"], "none");
  EXPECT_TRUE(j.contains("config"));
  // FlashAttention-3's 648 TFLOP/s at head dim 128 (a point that sets a parameter); head dim 64 well below it.
  EXPECT_NEAR(j["prefill"][0]["tflops"].get<double>(), 648, 2);
  EXPECT_LT(j["prefill"][1]["tflops"].get<double>(), 0.8 * j["prefill"][0]["tflops"].get<double>());
  EXPECT_EQ(j["prefill"][0]["ctas"], 16 * 128);
  // The causal mask halves the FLOPs counted and takes less time, at a lower rate.
  r = run("accel attention --system h100 --prefill 1x16x16384x128 --json " + quote(path("c.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto c = read("c.json");
  EXPECT_EQ(c["mask"], "causal");
  EXPECT_LT(c["prefill"][0]["time_us"].get<double>(), j["prefill"][0]["time_us"].get<double>());
  EXPECT_LT(c["prefill"][0]["tflops"].get<double>(), j["prefill"][0]["tflops"].get<double>());
  // The whole call on a kind with the input pass (mechanism 8): 16,384 tokens x 16 heads of 128, Q, K, V read and Q, K
  // written in 16-bit (671 MB at 0.84 x 3.35 TB/s), plus three launch gaps; the paper's h200 has no pass (two gaps).
  EXPECT_TRUE(has(r.out, "call us")) << r.out;
  const auto& p = c["prefill"][0];
  EXPECT_NEAR(p["input_pass_us"].get<double>(), 16384.0 * 128 * 16 * 10 / (0.84 * 3.35e12) * 1e6, 0.01);
  EXPECT_NEAR(p["call_us"].get<double>(), p["time_us"].get<double>() + p["input_pass_us"].get<double>() + 3 * 1.3, 1e-6);
  r = run("accel attention --system h200 --prefill 1x16x16384x128 --json " + quote(path("p.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_FALSE(has(r.out, "call us")) << r.out;
  const auto pj = read("p.json");
  const auto& q = pj["prefill"][0];
  EXPECT_EQ(q["input_pass_us"].get<double>(), 0);
  EXPECT_NEAR(q["call_us"].get<double>(), q["time_us"].get<double>() + 2 * 2.0, 1e-6);
  for (const char* bad : {"--prefill 1x16x2048", "--prefill 0x16x2048x128", "--prefill 1x16x99999999x128", "--prefill 1x16x2048x8192",
                          "--prefill 1ax16x2048x128", "--prefill x16x2048x128"}) {
    r = run(std::string("accel attention --system h100 ") + bad);
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_TRUE(has(r.out, "BxHxSxD") || has(r.out, "outside [1,")) << bad << ": " << r.out;
  }
  const std::pair<const char*, const char*> refused[] = {{"--system h100x8 --prefill 1x8x128x128", "give the kind alone (--system h100)"},
                                                         {"--system nosuch --prefill 1x8x128x128", "unknown GPU kind 'nosuch'"},
                                                         {"--system h100 --prefill 1x8x128x128 --mask sliding", "--mask"}};
  for (const auto& [args, why] : refused) {
    r = run(std::string("accel attention ") + args);
    EXPECT_EQ(r.rc, 2) << args;
    EXPECT_TRUE(has(r.out, why)) << args << ": " << r.out;
  }
  // A kernel that would take 10^6 s or more is refused before anything is printed or written.
  r = run("accel attention --system h100 --prefill 1x8x128x128 --prefill 1048576x4096x1048576x4096 --json " + quote(path("none.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "more than 1e6 s (the limit)")) << r.out;
  EXPECT_FALSE(has(r.out, "Prefill attention alone")) << r.out;
  EXPECT_FALSE(fs::exists(path("none.json")));
}

TEST_F(AccelCli, AttentionTimesDecodeKernelsAloneAndRefusesBadShapes) {
  Result r = run("accel attention --system h100 --precision fp16 --decode 64x64x8x32x128 --decode 64x64x8x16384x128 --json " +
                 quote(path("d.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = read("d.json");
  ASSERT_EQ(j["decode"].size(), 2u);
  EXPECT_EQ(j["prefill"].size(), 0u);
  EXPECT_EQ(j["precision"], "fp16");
  const auto &shortkv = j["decode"][0], &longkv = j["decode"][1];
  for (const char* key : {"ctas", "bytes", "math_us", "transfer_us", "time_us", "launch_gaps_us", "gb_per_s", "bound"})
    ASSERT_TRUE(longkv.contains(key)) << key;
  // KV of 64 requests x 16,384 tokens x 8 KV heads x 128 x K and V x 2 B, plus the 16-bit query and output.
  EXPECT_DOUBLE_EQ(longkv["bytes"].get<double>(), 64.0 * 16384 * 8 * 128 * 2 * 2 + 64.0 * 64 * 128 * 4);
  // A long KV streams at the H100's achievable HBM bandwidth (3.35 TB/s x hbm_efficiency 0.84); 32 tokens are math-bound.
  EXPECT_EQ(longkv["bound"], "memory");
  EXPECT_NEAR(longkv["gb_per_s"].get<double>(), 3350 * 0.84, 3);
  EXPECT_EQ(shortkv["bound"], "compute");
  EXPECT_LT(shortkv["gb_per_s"].get<double>(), 0.9 * longkv["gb_per_s"].get<double>());
  EXPECT_EQ(shortkv["ctas"], 64 * 8);
  EXPECT_DOUBLE_EQ(longkv["launch_gaps_us"].get<double>(), 2.6);
  // An FP8 cache moves half the KV bytes.
  r = run("accel attention --system h100 --precision fp8 --decode 64x64x8x16384x128 --json " + quote(path("f.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NEAR(read("f.json")["decode"][0]["bytes"].get<double>(), 64.0 * 16384 * 8 * 128 * 2 + 64.0 * 64 * 128 * 4, 1);
  const std::pair<const char*, const char*> refused[] = {
      {"--decode 64x64x8x128", "BxHxKxSxD"},
      {"--decode 64x64x0x128x128", "KV heads = 0 is outside [1, 4096]"},
      {"--decode 64x64x12x128x128", "64 query heads are not a whole number of groups of the 12 KV heads"},
      {"--decode 64x64x8x99999999x128", "KV tokens = 99999999 is outside"},
      {"--decode 64x64x8x128x128 --precision model", "--precision model"},
      {"--decode 64x64x8x128x128 --precision fp6", "--precision"},
      {"--mask none", "give at least one --prefill or --decode"}};
  for (const auto& [args, why] : refused) {
    r = run(std::string("accel attention --system h100 ") + args + " --json " + quote(path("none.json")));
    EXPECT_EQ(r.rc, 2) << args;
    EXPECT_TRUE(has(r.out, why)) << args << ": " << r.out;
    EXPECT_FALSE(fs::exists(path("none.json"))) << args;
  }
}

TEST_F(AccelCli, CollectiveTimesOneCollectiveAloneAndRefusesBadArguments) {
  Result r = run("accel collective --system h100 --gpus 8 --bytes 1MiB --bytes 64MiB --json " + quote(path("c.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = read("c.json");
  EXPECT_EQ(j["kind"], "h100");
  EXPECT_EQ(j["collective"], "all_reduce");
  EXPECT_EQ(j["nodes"], 1);
  ASSERT_EQ(j["collectives"].size(), 2u);
  // nccl-tests' bus bandwidth: 2 (n-1)/n x S / t for an all-reduce; a larger message reaches more of it.
  for (const auto& c : j["collectives"])
    EXPECT_NEAR(double(c["busbw_gb_per_s"]), 1.75 * double(c["bytes"]) / (double(c["time_us"]) * 1e-6) / 1e9,
                1e-6 * double(c["busbw_gb_per_s"]));
  EXPECT_GT(double(j["collectives"][1]["busbw_gb_per_s"]), 3 * double(j["collectives"][0]["busbw_gb_per_s"]));
  EXPECT_TRUE(j.contains("config"));
  // An all-gather moves half an all-reduce's bytes; across two nodes the link model takes over and RDMA carries some.
  r = run("accel collective --system h100 --gpus 16 --collective all_gather --bytes 64MiB --json " + quote(path("g.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(read("g.json")["nodes"], 2);
  EXPECT_GT(double(read("g.json")["collectives"][0]["rdma_bytes"]), 0.0);
  const std::pair<const char*, const char*> refused[] = {{"--system h100x8 --bytes 1MiB", "give the kind alone (--system h100)"},
                                                         {"--system nosuch --bytes 1MiB", "unknown GPU kind 'nosuch'"},
                                                         {"--gpus 1 --bytes 1MiB", "a group of 2 to 65536 GPUs"},
                                                         {"--gpus 70000 --bytes 1MiB", "a group of 2 to 65536 GPUs"},
                                                         {"--bytes 0", "outside [1, 1099511627776]"},
                                                         {"--bytes 2TiB", "outside [1, 1099511627776]"},
                                                         {"--bytes 12B --bytes lots", "--bytes 'lots'"},
                                                         {"--bytes 12", "has no unit"},
                                                         {"--collective all_to_all --bytes 1MiB", "--collective"},
                                                         {"--bytes 1TiB --set llm.network.busbw=[[32768,1],[65536,1]]", "time overflow"}};
  for (const auto& [args, why] : refused) {
    r = run(std::string("accel collective ") + args + " --json " + quote(path("none.json")));
    EXPECT_EQ(r.rc, 2) << args;
    EXPECT_TRUE(has(r.out, why)) << args << ": " << r.out;
    EXPECT_FALSE(has(r.out, "alone on")) << args << ": " << r.out;  // refused before anything is printed
    EXPECT_FALSE(fs::exists(path("none.json"))) << args;
  }
}

TEST_F(AccelCli, GemmTimesKernelsAloneAndRefusesBadShapes) {
  Result r = run("accel gemm --system h100 --gemm 1x4096x12288 --gemm 4096x4096x22016 --json " + quote(path("g.json")));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = read("g.json");
  ASSERT_EQ(j["gemms"].size(), 2u);
  EXPECT_EQ(j["kind"], "h100");
  EXPECT_EQ(j["gemms"][0]["bound"], "weight_stream");  // one row streams its weights
  EXPECT_EQ(j["gemms"][1]["bound"], "compute");        // 4,096 rows are compute-bound
  for (const auto& g : j["gemms"])
    for (const char* k : {"tile_m", "tile_n", "split_k", "waves", "math_us", "transfer_us", "time_us", "tflops", "gb_per_s"})
      ASSERT_TRUE(g.contains(k)) << k;
  EXPECT_TRUE(j.contains("config"));
  // Bad shapes, a system instead of a kind, an unknown or model precision, FP4 without FP4 tensor cores, no HBM.
  for (const char* bad : {"--gemm 128x4096", "--gemm 0x4096x4096", "--gemm 128x4096x99999999", "--gemm 12ax4x4", "--gemm x4x4"}) {
    r = run(std::string("accel gemm --system h100 ") + bad);
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_TRUE(has(r.out, "MxKxN") || has(r.out, "[1, 1048576]")) << bad << ": " << r.out;
  }
  const std::pair<const char*, const char*> refused[] = {{"--system h100x8 --gemm 1x8x8", "give the kind alone (--system h100)"},
                                                         {"--system nosuch --gemm 1x8x8", "unknown GPU kind 'nosuch'"},
                                                         {"--system h100 --gemm 1x8x8 --precision fp9", "--precision"},
                                                         {"--system h100 --gemm 1x8x8 --precision model", "has no model"},
                                                         {"--system h100 --gemm 1x8x8 --precision fp4", "no FP4 tensor cores"},
                                                         {"--system hbf-only --gemm 1x8x8", "has no HBM"}};
  for (const auto& [args, why] : refused) {
    r = run(std::string("accel gemm ") + args);
    EXPECT_EQ(r.rc, 2) << args;
    EXPECT_TRUE(has(r.out, why)) << args << ": " << r.out;
  }
  // A GEMM that could take more than 10^6 s is refused before anything is printed or written.
  r = run("accel gemm --system h100 --gemm 1x8x8 --gemm 65536x65536x65536 --set gpu.bf16_flops=1e9 --json " + quote(path("none.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(has(r.out, "the limit is 1e6 s")) << r.out;
  EXPECT_FALSE(has(r.out, "GEMMs alone")) << r.out;
  EXPECT_FALSE(fs::exists(path("none.json")));
}
