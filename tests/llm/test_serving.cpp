// Serving: the batch search, infeasible points and their reasons, the summary
// ratios, the ablation, writes and energy, and the end-to-end figures of the
// FlashAccel paper (acceptance), read from scripts/paper_figures.json. A
// published figure the model misses is a KNOWN GAP asserted at the model's
// value within a narrow band (never skipped, never tuned away); docs/llm.md
// discusses each.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "../support/paper_figures.hpp"
#include "core/config.hpp"
#include "llm/deployment.hpp"
#include "llm/serving.hpp"
#include "llm_test_util.hpp"

namespace fs = std::filesystem;
using namespace bitline;
using namespace bitline::llm;
using bitline::llm::test::paper_context;
using bitline::llm::test::paper_eval;
using bitline::llm::test::preset_kinds;
using bitline::llm::test::shipped;

namespace {

// One point of the evaluation, its deployment searched as `accel eval` does (llm.deployment_search, default
// preferred_or_fastest), or only the preferred deployment with `fixed`.
PointResult point(const std::string& model, const std::string& system, const std::string& context, double slo_ms,
                  DeploymentPolicy policy = DeploymentPolicy::PreferredOrFastest) {
  static const auto kinds = preset_kinds();
  const ModelConfig m = shipped(model);
  const SystemName sn = parse_system(system);
  KindParams k = kinds.at(sn.kind);
  k.llm.deployment_search = policy;
  DeploymentSearch ds(m, k, sn.gpus);
  PointResult p = ds.search(paper_context(context), ms(slo_ms));
  p.system = system;
  return p;
}

}  // namespace

// Spec: "8 x CSI: 2.49x the per-card throughput of 8 x H200 at the 100 ms SLO" (+-20%), averaged over the
// evaluation's points where both systems are feasible, each with its searched deployment (the spec's table, else
// the fastest deployment that fits: 8 x H200 serves Qwen3-Coder-480B with TP8 attention). The 8-point mean is
// within the tolerance; it is also pinned at the model's value (2.81x, within 2%) so that a change that moves it
// fails until docs/llm.md ("Validation against the paper") says why.
TEST(LlmValidation, CsiX8ThroughputVsH200X8At100ms) {
  std::vector<double> ratios;
  std::string excluded;
  for (const auto& m : paper_eval().models)
    for (const auto& c : paper_eval().contexts) {
      const PointResult h = point(m, "h200x8", c.name, 100), s = point(m, "csix8", c.name, 100);
      if (!h.feasible || !s.feasible) {
        excluded += " " + m + "/" + c.name;
        continue;
      }
      ratios.push_back(s.step.tokens_per_s_per_gpu / h.step.tokens_per_s_per_gpu);
    }
  // Every point has a feasible baseline deployment now (Qwen3-Coder-480B's was missing with DP attention).
  EXPECT_EQ(ratios.size(), paper_eval().models.size() * paper_eval().contexts.size()) << "excluded:" << excluded;
  double mean = 0;
  for (double r : ratios) mean += r / double(ratios.size());
  const double published = bitline::test::paper_figure("flashaccel", "/csix8_vs_h200x8_at_100ms");
  std::cout << "8 x CSI / 8 x H200 at 100 ms: mean " << mean << " over " << ratios.size() << " points (excluded:" << excluded
            << "); published " << published << ", deviation " << (mean / published - 1) * 100 << "%\n";
  EXPECT_LE(std::abs(mean / published - 1), bitline::test::paper_figure("flashaccel", "/csix8_tolerance"));
  // The model's value, pinned (2.81 before issue 28: its per-read overheads and the paged-engine capacity of the
  // 8 x H200 baseline moved it to 2.58, the GEMM tiles' weight-stream fill and L2 operand loads to 2.57;
  // docs/validation-changes.md).
  EXPECT_NEAR(mean, 2.57, 0.02 * 2.57);
}

// Spec: "Llama-3.1-405B at 15K/6K: batch cap 30 on 8 x H200 (memory)".
TEST(LlmValidation, Llama405bAgentBatchOnH200X8) {
  const PointResult p = point("llama3.1-405b", "h200x8", "agent", 50);
  ASSERT_TRUE(p.feasible) << p.reason;
  EXPECT_EQ(p.bound_by, BoundBy::Capacity);
  std::cout << "Llama-3.1-405B 15K/6K on 8 x H200: batch " << p.step.batch << " (paper: 30)\n";
  const double published = bitline::test::paper_figure("flashaccel", "/llama_agent_h200x8_batch");
  EXPECT_NEAR(double(p.step.batch), published, bitline::test::paper_figure("flashaccel", "/llama_tolerance") * published);
}

// Spec: "under the 50 ms SLO 8 x CSI could in theory reach a batch of 110" (+-15%). "In theory" is the bandwidth
// bound: the batch whose bytes, read at the peak bandwidth of the memories holding them, fill the SLO (the paper's
// arithmetic: 50 ms x 4.6 TB/s of HBF less 101.5 GB of weights, over 1.16 GB of KV per request per GPU = 111).
// The model's bound also reads the staged partial KV slices and the replicas from HBM in parallel. The batch the
// full step model allows is lower (collectives and kernel overheads take part of the 50 ms); it is reported, and
// it must lie under the bound.
TEST(LlmValidation, Llama405bAgentBatchOnCsiX8At50ms) {
  const PointResult p = point("llama3.1-405b", "csix8", "agent", 50);
  ASSERT_TRUE(p.feasible) << p.reason;
  const auto& b = p.step.breakdown;
  std::cout << "Llama-3.1-405B 15K/6K on 8 x CSI at 50 ms: bandwidth bound " << p.bandwidth_bound_batch
            << " (paper: ~110 in theory); full step model " << p.step.batch << ": step " << to_s(p.step.step) * 1e3 << " ms = weights "
            << to_s(b.weights) * 1e3 << " + KV " << to_s(b.kv) * 1e3 << " + all-reduce " << to_s(b.comm) * 1e3 << " + kernel overhead "
            << to_s(b.overhead) * 1e3 << " + other " << to_s(b.compute + b.flash_latency + b.kv_write) * 1e3 << "\n";
  const double published = bitline::test::paper_figure("flashaccel", "/llama_agent_csix8_batch_at_50ms");
  EXPECT_NEAR(double(p.bandwidth_bound_batch), published, bitline::test::paper_figure("flashaccel", "/llama_tolerance") * published);
  EXPECT_LE(p.step.batch, p.bandwidth_bound_batch);
  EXPECT_EQ(p.bound_by, BoundBy::Slo);
  // The full model's batch is below the bound by the time the step spends outside memory transfers.
  const double outside_ms = to_s(b.comm + b.overhead + b.kv_write) * 1e3;
  EXPECT_GT(outside_ms, 1.0);
  EXPECT_LT(double(p.step.batch), double(p.bandwidth_bound_batch) * (1.0 - 0.5 * outside_ms / 50.0));
}

// The bandwidth bound is the largest batch whose bytes at peak bandwidth meet the SLO (H200: HBM bytes / 4.8 TB/s).
TEST(LlmServing, BandwidthBoundIsWhereTheBytesAloneFillTheSlo) {
  static const auto kinds = preset_kinds();
  const ModelConfig m = shipped("llama3.1-405b");
  Server s(m, kinds.at("h200"), 8);
  const ContextSpec c = paper_context("agent");
  const PointResult p = s.search(c, ms(50));
  ASSERT_TRUE(p.feasible);
  EXPECT_EQ(p.bound_by, BoundBy::Capacity);  // the bound ignores capacity, the batch does not
  const int64_t rb = p.bandwidth_bound_requests_per_rank;
  EXPECT_GT(rb, p.step.requests_per_rank);
  const StepReport at = s.step(rb, c), above = s.step(rb + 1, c);
  EXPECT_LE(at.memory_time, ms(50));
  EXPECT_GT(above.memory_time, ms(50));
  EXPECT_EQ(at.flash_bytes, 0.0);
  EXPECT_NEAR(to_s(at.memory_time), at.hbm_bytes / 4.8e12, 1e-9);
  EXPECT_LE(at.memory_time, at.step);
}

TEST(LlmServing, SearchFindsTheLargestBatchMeetingTheSlo) {
  static const auto kinds = preset_kinds();
  const ModelConfig m = shipped("qwen3-235b");
  Server s(m, kinds.at("csi"), 8);
  const ContextSpec c = paper_context("long");
  const PointResult p = s.search(c, ms(100));
  ASSERT_TRUE(p.feasible);
  EXPECT_EQ(p.bound_by, BoundBy::Slo);
  EXPECT_LE(p.step.step, ms(100));
  EXPECT_GT(s.step(p.step.requests_per_rank + 1, c).step, ms(100));
  EXPECT_EQ(p.step.batch, p.step.requests_per_rank * 8);
  EXPECT_LT(p.evaluations, 16);  // interpolation search
  // The breakdown covers the step.
  EXPECT_NEAR(to_s(p.step.breakdown.total()), to_s(p.step.step), 1e-6);
}

TEST(LlmServing, InfeasiblePointsSayWhy) {
  // Qwen3-Coder-480B's weights with data-parallel attention leave no room for one request on an H200.
  const PointResult a = point("qwen3-coder-480b", "h200x8", "agent", 100, DeploymentPolicy::Fixed);
  EXPECT_FALSE(a.feasible);
  EXPECT_NE(a.reason.find("cannot fit even at batch 1"), std::string::npos) << a.reason;
  EXPECT_EQ(a.json()["feasible"], false);
  EXPECT_EQ(a.json()["reason"], a.reason);
  // Llama-3.1-405B on 4 x CLI: the weights alone take longer than 50 ms to stream.
  const PointResult b = point("llama3.1-405b", "clix4", "long", 50);
  EXPECT_FALSE(b.feasible);
  EXPECT_NE(b.reason.find("no batch meets the SLO"), std::string::npos) << b.reason;
}

TEST(LlmServing, NamesAndContexts) {
  EXPECT_EQ(parse_system("csix16").gpus, 16);
  EXPECT_EQ(parse_system("h200x8").kind, "h200");
  EXPECT_EQ(parse_system("b200x8").kind, "b200");  // a kind is a file of configs/gpus/
  EXPECT_THROW(parse_system("v100x8"), ConfigError);
  try {
    parse_system("v100x8");
  } catch (const ConfigError& e) {  // the error names the kinds it found: every shipped one (a user's own may be there too)
    for (const char* k : {"a100", "b200", "cli", "csi", "h100", "h200", "h200-sxm", "hbf-only"})
      EXPECT_NE(std::string(e.what()).find(k), std::string::npos) << k << ": " << e.what();
  }
  EXPECT_THROW(parse_system("csi"), ConfigError);
  EXPECT_EQ(paper_context("agent").input, 15000);
  EXPECT_EQ(paper_context("long").output, 2530);
  EXPECT_EQ(parse_context("100:20").input, 100);
  EXPECT_THROW(parse_context("100:0"), ConfigError);
  EXPECT_THROW(parse_context("short"), ConfigError);
}

TEST(LlmServing, SummaryRatiosArePerPointOverFeasiblePairs) {
  auto mk = [](std::string sys, std::string model, double slo, bool ok, double tps, double tpj) {
    PointResult p;
    p.system = sys;
    p.model = model;
    p.context = "long";
    p.slo_ms = slo;
    p.feasible = ok;
    p.step.tokens_per_s_per_gpu = tps;
    p.step.tokens_per_j = tpj;
    return p;
  };
  const std::vector<PointResult> pts = {mk("h200x8", "a", 100, true, 100, 1), mk("csix8", "a", 100, true, 200, 2),
                                        mk("h200x8", "b", 100, true, 100, 1), mk("csix8", "b", 100, true, 800, 1),
                                        mk("h200x8", "c", 100, false, 0, 0),  mk("csix8", "c", 100, true, 500, 5)};
  Json points = Json::array();
  for (const auto& p : pts) points.push_back(p.json());
  EvalExperiment e;
  e.systems = {"h200x8", "csix8"};
  e.slos_ms = {100};
  e.baseline = "h200x8";
  const Json s = eval_summary(points, e);
  const Json& r = s["throughput_vs_h200x8"]["csix8@100"];
  EXPECT_DOUBLE_EQ(r["mean"].get<double>(), 5.0);     // (2 + 8) / 2
  EXPECT_DOUBLE_EQ(r["geomean"].get<double>(), 4.0);  // sqrt(2 x 8)
  EXPECT_EQ(r["points"], 2);
  EXPECT_EQ(r["excluded"].size(), 1u);  // c: h200x8 infeasible, listed
  EXPECT_DOUBLE_EQ(s["tokens_per_j_vs_h200x8"]["csix8@100"]["mean"].get<double>(), 1.5);
}

TEST(LlmServing, AblationOrdersTheTechniques) {
  const AblationExperiment e =
      load_ablation_experiment(fs::path(BITLINE_SOURCE_DIR) / "configs" / "experiments" / "flashaccel-ablation.yaml");
  const auto params = ablation_params(e, [](const std::string& kind) {
    ConfigTree t;
    t.set_preset_dir(fs::path(BITLINE_SOURCE_DIR) / "configs");
    t.load_preset(kind);
    return t;
  });
  const Json a = run_ablation(shipped(e.model), e, params, 2);
  const Json& v = a["variants"];
  for (const char* k : {"full", "no_prefetch", "no_weight_layout", "no_kv_layout", "plain_hbf", "hbm_only"}) {
    ASSERT_TRUE(v.contains(k)) << k;
    EXPECT_GT(v[k]["step_ms"].get<double>(), 0) << k;
    EXPECT_TRUE(v[k].contains("breakdown_ms")) << k;
    EXPECT_TRUE(v[k].contains("tokens_per_s_per_gpu_at_100ms")) << k;
  }
  const double full = v["full"]["step_ms"].get<double>();
  EXPECT_GT(v["no_prefetch"]["step_ms"].get<double>(), full);
  EXPECT_GT(v["no_weight_layout"]["step_ms"].get<double>(), full);
  EXPECT_GT(v["no_kv_layout"]["step_ms"].get<double>(), full);
  // Plain HBF (prefetch kept, no layouts) is slower than either layout alone; since issue 28 (scattered KV drained by
  // per-megaplane queues, block-aligned pools, the read latency of every demand read) prefetch is worth more than
  // both layouts together, so without it the step is the slowest.
  EXPECT_GT(v["plain_hbf"]["step_ms"].get<double>(), v["no_kv_layout"]["step_ms"].get<double>());
  EXPECT_GT(v["plain_hbf"]["step_ms"].get<double>(), v["no_weight_layout"]["step_ms"].get<double>());
  EXPECT_GT(v["no_prefetch"]["step_ms"].get<double>(), v["plain_hbf"]["step_ms"].get<double>());
  // As defined (issue 10): without the KV layout = PagedAttention blocks, prefetch and weight layout kept; plain HBF =
  // none of the three; only the FlashAccel KV layout replicates, so only it is charged GroupArrange's copy.
  for (const auto& var : e.variants) {
    std::string set;
    for (const auto& o : var.set) set += o.assignment + " ";
    if (var.name == "no_kv_layout") {
      EXPECT_EQ(set, "serving.kv_layout=paged ");
    } else if (var.name == "plain_hbf") {
      EXPECT_EQ(set, "hbf.runtime.prefetch=false hbf.runtime.weight_layout=declaration serving.kv_layout=paged ");
    }
  }
  EXPECT_GT(v["full"]["breakdown_ms"]["kv_arrange"].get<double>(), 0.0);
  EXPECT_EQ(v["no_kv_layout"]["breakdown_ms"]["kv_arrange"].get<double>(), 0.0);
  EXPECT_EQ(v["plain_hbf"]["breakdown_ms"]["kv_arrange"].get<double>(), 0.0);
  EXPECT_GT(v["full"]["tokens_per_s_per_gpu_at_100ms"].get<double>(), v["hbm_only"]["tokens_per_s_per_gpu_at_100ms"].get<double>());
}

TEST(LlmServing, WritesAndEnergyFollowTheirDefinitions) {
  static const auto kinds = preset_kinds();
  const ModelConfig m = shipped("qwen3-235b");
  Server s(m, kinds.at("csi"), 8);
  const ContextSpec c = paper_context("agent");
  const StepReport r = s.step(100, c);
  // Decode KV of 100 requests plus prefill KV at the input/output ratio, per step.
  const double per_step = 100.0 * 192512 * (1 + 15000.0 / 6000);
  EXPECT_NEAR(r.kv_write_bytes_per_s, per_step / to_s(r.step), 1e-6 * r.kv_write_bytes_per_s);
  // Programming it at 245.8 GB/s (all planes of 6 stacks, 4 KiB per 75 us).
  EXPECT_NEAR(to_s(r.breakdown.kv_write), per_step / (6.0 * 8 * 96 * 4096 / 75e-6), 1e-9);
  // Read energy at 8 pJ/bit of every megapage sensed; the step's tokens per joule.
  EXPECT_GT(r.e_flash.raw(), 0);
  EXPECT_NEAR(r.tokens_per_j, 100.0 / r.energy().raw(), 1e-9);
  EXPECT_NEAR(r.power.raw(), r.energy().raw() / to_s(r.step), 1e-6);
  // Erasing finished requests: 100 / 6000 of them finish per step; a request of 21,000 tokens has 94 layers x
  // ceil(21000 / 64) = 30,926 slices, dealt over a window of ceil(30926 / 256) = 121 megaplanes (kv_span = fit):
  // one 32-plane megablock on each, erased in tBERS = 3.5 ms, in parallel over the megaplanes, so each of the 144
  // megaplanes spends 121 / 144 of a tBERS per finished request.
  EXPECT_NEAR(to_s(r.breakdown.kv_erase), 100.0 / 6000 * 121 / 144 * 3.5e-3, 1e-12);
  EXPECT_NEAR(r.e_erase.raw(), 100.0 / 6000 * 121 * 32 * 577.5e-6, 1e-9);
  EXPECT_NEAR(r.erase_time_fraction, to_s(r.breakdown.kv_erase) / to_s(r.step), 1e-12);
  EXPECT_NEAR(to_s(r.step), to_s(r.breakdown.total()), 1e-9);
  // An H200 has no flash to wear.
  Server h(m, kinds.at("h200"), 8);
  const StepReport rh = h.step(10, c);
  EXPECT_EQ(rh.lifetime_writes_fraction, 0);
  EXPECT_EQ(rh.e_flash.raw(), 0);
  EXPECT_EQ(rh.breakdown.kv_erase.raw(), 0);
  EXPECT_LT(rh.power.raw(), 700);
}
