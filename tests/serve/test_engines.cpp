// Serving engines (serve/engine_profile.hpp, configs/engines/): each profile's scheduler, KV pool, CUDA graphs,
// multi-step scheduling and host time checked by hand against the iteration model; the laws (Little's, every token
// accounted for) under every engine; the shipped profiles against the engines' documented defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../llm/llm_test_util.hpp"
#include "core/error.hpp"
#include "serve/engine_profile.hpp"
#include "serve/iteration.hpp"
#include "serve/report.hpp"
#include "serve/simulator.hpp"

using namespace bitline;
using namespace bitline::serve;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {

const std::vector<std::string> kEngines = {"vllm", "vllm-v0", "sglang", "tensorrt-llm"};

struct Fixture {
  llm::ModelConfig m = shipped("llama2-7b");
  llm::KindParams k = preset_kind("h100");
  llm::Server s{m, k, 1};
};

/// The engine `name` with `sets` applied, and the serve parameters it sets, for an H100.
struct Loaded {
  EngineSetup e;
  ServeParams p;
};
Loaded load(const std::string& name, const std::vector<std::string>& sets = {}) {
  ConfigTree t;
  load_engine_profile(t, name);
  for (const auto& s : sets) t.apply_set(s);
  Loaded l{{}, default_params<ServeParams>()};
  l.e = load_engine(t, l.p, {80.0 * 1024 * 1024 * 1024, "h100"});
  return l;
}

Workload lone_requests(int64_t n, int64_t in, int64_t out) {
  Workload w;
  w.requests = make_requests(n, LengthSpec::parse(std::to_string(in), "--input"), LengthSpec::parse(std::to_string(out), "--output"), 1);
  set_open_loop_arrivals(w.requests, 0.01, ArrivalKind::Constant, 1.0, 1);  // one every 100 s: each alone
  return w;
}

SimResult run(const Fixture& f, const Loaded& l, Workload w) {
  Cluster c;
  c.colocated = &f.s;
  c.engine = l.e;
  return simulate(c, l.p, std::move(w));
}

/// A pass of `gpu` GPU time over `seqs` sequences under `e`: the serial host parts added, the overlapped ones beside
/// the GPU; and how long after it its tokens reach the client.
struct Expected {
  double pass_s = 0, deliver_s = 0;
};
Expected by_hand(const EngineSetup& e, double gpu_s, double seqs) {
  const HostCosts& h = e.host;
  const double sched = to_s(h.schedule) + to_s(h.schedule_per_sequence) * seqs;
  const double out = to_s(h.output) + to_s(h.output_per_sequence) * seqs;
  const double serial = (h.overlap_schedule ? 0 : sched) + (h.overlap_output ? 0 : out);
  const double beside = (h.overlap_schedule ? sched : 0) + (h.overlap_output ? out : 0);
  return {serial + std::max(gpu_s, beside), h.overlap_output ? out : 0.0};
}

}  // namespace

TEST(ServeEngines, ALoneRequestIsItsPrefillAndDecodesPlusTheEnginesStatedHostCosts) {
  Fixture f;
  const int64_t in = 512, out = 64;
  for (const auto& name : kEngines) {
    const Loaded l = load(name);
    const SimResult r = run(f, l, lone_requests(3, in, out));
    IterationModel im(f.s, l.p, out);
    // The prompt's pass: a CUDA graph when the engine replays prompt passes of this size (vLLM V1 up to 512 tokens),
    // else eager: no shorter than its launches.
    double prefill = to_s(im.pass({{0, in}}, 0, 0));
    if (l.e.graph_batch(in, true) == 0) prefill = std::max(prefill, to_s(l.e.host.launch) * double(im.pass_kernels()));
    // A decode step of one request (a graph at batch 1), at the request's mean context.
    const double decode = to_s(im.pass({}, 1, double(in) + double(out) / 2));
    const Expected p = by_hand(l.e, prefill, 1), d = by_hand(l.e, decode, 1);
    const double request = to_s(l.e.host.request) + to_s(l.e.host.request_per_input_token) * double(in);
    for (const auto& q : r.requests) {
      EXPECT_NEAR(q.ttft_s() / (request + p.pass_s + p.deliver_s), 1.0, 1e-6) << name;
      EXPECT_NEAR(q.tpot_s() / d.pass_s, 1.0, 0.01) << name;
      EXPECT_GT(to_s(l.e.host.schedule) + to_s(l.e.host.request), 0.0) << name << ": a real engine's host costs something";
    }
  }
}

TEST(ServeEngines, OverlapHidesHostTimeExactlyWhenTheGpuTakesLonger) {
  Fixture f;
  const int64_t in = 256, out = 40;
  // SGLang's host time per scheduling: a small one (0.1 ms, under the ~6 ms decode step) and a large one (20 ms, over
  // it); with the overlap scheduler and without.
  for (const char* schedule : {"100us", "20ms"}) {
    for (const bool overlap : {true, false}) {
      const Loaded l = load("sglang", {std::string("engine.host.schedule=") + schedule, "engine.host.schedule_per_sequence=0us",
                                       "engine.host.output=0us", "engine.host.output_per_sequence=0us",
                                       std::string("engine.disable_overlap_schedule=") + (overlap ? "false" : "true")});
      const SimResult r = run(f, l, lone_requests(2, in, out));
      IterationModel im(f.s, l.p, out);
      const double gpu = to_s(im.pass({}, 1, double(in) + double(out) / 2)), host = to_s(l.e.host.schedule);
      const double expected = overlap ? std::max(gpu, host) : gpu + host;
      for (const auto& q : r.requests) EXPECT_NEAR(q.tpot_s() / expected, 1.0, 0.01) << schedule << " overlap " << overlap;
      if (overlap && host < gpu) {
        for (const auto& q : r.requests) {
          EXPECT_NEAR(q.tpot_s() / gpu, 1.0, 0.01) << "hidden";  // the host costs nothing
        }
      }
    }
  }
}

TEST(ServeEngines, MultiStepAdmitsOnlyAtGroupBoundariesAndStreamsChunksOfNTokens) {
  Fixture f;
  const int64_t steps = 8, out = 81;  // 80 decodes after the first token: 10 groups of 8
  const Loaded l = load("vllm-v0", {"engine.num_scheduler_steps=8"});
  ASSERT_EQ(l.p.scheduler_steps, steps);
  // A lone request: its 80 later tokens arrive in 10 chunks, 10 gaps of 8 steps each.
  SimResult lone = run(f, l, lone_requests(1, 300, out));
  int64_t gaps = 0;
  for (const auto& [gap, n] : lone.itl) gaps += n;
  EXPECT_EQ(gaps, (out - 1) / steps);
  const double step = to_s(lone.requests[0].finish - lone.requests[0].first_token) / double(out - 1);
  for (const auto& [gap, n] : lone.itl) EXPECT_NEAR(double(gap) * 1e-12 / (double(steps) * step), 1.0, 0.02);
  EXPECT_EQ(lone.decode_tokens, out - 1);
  // A second request arriving inside the first one's group waits for the group's end: its prefill starts when a pass
  // ends, never at its arrival.
  Workload w = lone_requests(2, 300, out);
  w.requests[1].arrival = lone.requests[0].first_token + Time(int64_t(3.5 * step * 1e12));  // mid-way through the first group
  w.record_passes = true;
  const SimResult two = run(f, l, w);
  const RequestRecord& second = two.requests[1];
  EXPECT_GT(second.scheduled, second.arrival);
  bool at_boundary = false;
  for (const auto& ps : two.passes) at_boundary |= ps.start + ps.duration == second.scheduled;
  EXPECT_TRUE(at_boundary);
  EXPECT_NEAR(to_s(second.scheduled - second.arrival) / (4.5 * step), 1.0, 0.05);  // the rest of the group: 8 - 3.5 steps
  // A request that ends inside a group rides along to its end: the group's slots it does not use are padding.
  const SimResult odd = run(f, l, lone_requests(1, 300, 20));  // 19 decodes: 2 groups of 8 and one of 3 used
  EXPECT_EQ(odd.decode_tokens, 19);
  EXPECT_EQ(odd.padded_decode_tokens, 3 * steps - 19);
}

TEST(ServeEngines, TheKvPoolFollowsEachEnginesMemoryRule) {
  Fixture f;
  const llm::ContextSpec one{"", 1, 0};
  for (const auto& name : kEngines) {
    const Loaded l = load(name);
    const KvMemory km = kv_memory(f.s, l.p, l.e);
    const llm::Capacity c = f.s.capacity(std::max<int64_t>(l.p.max_num_seqs, 1), one);
    const double hbm = double(c.hbm_capacity.raw()), w = double(c.weights.raw()),
                 others = double(c.reserve.raw()) + double(c.workspace.raw());
    double pool = 0;
    if (name == "vllm" || name == "vllm-v0") pool = 0.9 * hbm - w - others;  // gpu_memory_utilization
    if (name == "sglang") pool = 0.88 * hbm - w;                             // mem_fraction_static at TP 1
    if (name == "tensorrt-llm") pool = 0.9 * (hbm - w - others);             // free_gpu_memory_fraction
    EXPECT_NEAR(double(km.tokens_per_rank), pool / double(km.kv_bytes_per_token), 1.0) << name;
    EXPECT_EQ(km.blocks, km.tokens_per_rank / l.p.block_tokens) << name;
  }
  // The ideal engine keeps every byte the others leave: more than any rule's share.
  const Loaded ideal = load("ideal");
  EXPECT_GT(kv_memory(f.s, ideal.p, ideal.e).tokens_per_rank, kv_memory(f.s, load("vllm").p, load("vllm").e).tokens_per_rank);
  // SGLang's limit on running requests, left to the engine: half the pool's tokens, at most 4096.
  const Loaded sg = load("sglang");
  const KvMemory skm = kv_memory(f.s, sg.p, sg.e);
  EXPECT_EQ(skm.max_seqs, std::min<int64_t>(skm.tokens_per_rank / 2, 4096));
  // A share too small for the weights is refused, naming the option.
  const Loaded tiny = load("vllm", {"engine.gpu_memory_utilization=0.1"});
  try {
    (void)kv_memory(f.s, tiny.p, tiny.e);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_memory_utilization = 0.1"), std::string::npos) << e.what();
  }
}

TEST(ServeEngines, LittlesLawAndEveryTokenHoldUnderEveryEngine) {
  Fixture f;
  for (const auto& name : std::vector<std::string>{"vllm", "vllm-v0", "sglang", "tensorrt-llm", "ideal"}) {
    for (const int64_t steps : {1, 6}) {
      if (steps > 1 && name != "vllm-v0") continue;
      const Loaded l = load(name, steps > 1 ? std::vector<std::string>{"engine.num_scheduler_steps=6"} : std::vector<std::string>{});
      Workload w;
      w.requests =
          make_requests(600, LengthSpec::parse("lognormal:300:0.5", "--input"), LengthSpec::parse("uniform:10:120", "--output"), 3);
      set_open_loop_arrivals(w.requests, 12.0, ArrivalKind::Poisson, 1.0, 3);
      int64_t out = 0, in = 0;
      for (const auto& q : w.requests) out += q.output, in += q.input;
      const SimResult r = run(f, l, w);
      const Json s = summary(r, Slo{});
      const double L = s["mean_requests_in_system"].get<double>(), lambda = s["requests_per_s"].get<double>(),
                   W = s["e2e_ms"]["mean"].get<double>() * 1e-3;
      EXPECT_GT(L, 2.0) << name;
      EXPECT_NEAR(L / (lambda * W), 1.0, 0.02) << name << " steps " << steps;
      EXPECT_EQ(r.emitted_tokens, out) << name;
      // Every output token but a request's first is decoded once (recomputed ones again); prompts prefilled once
      // unless preempted.
      EXPECT_EQ(r.decode_tokens - r.recomputed_tokens + int64_t(r.requests.size()), out + (r.prefill_tokens - in)) << name;
      EXPECT_GE(r.prefill_tokens, in) << name;
    }
  }
}

TEST(ServeEngines, ShippedProfilesGiveTheEnginesDocumentedDefaults) {
  // Each shipped profile of a family writes every option as the family's declaration documents its default (the
  // sources bitline describe engine shows): a profile that drifts from its cited default is caught here.
  const std::vector<ParamRow> rows = describe_engine_section("engine");
  for (const EngineListing& l : list_engines()) {
    if (l.family == "ideal") continue;
    int64_t checked = 0;
    for (const auto& [key, value] : l.options) {
      if (key.rfind("host.", 0) == 0) continue;  // host costs: measurements the file cites, no engine default
      for (const ParamRow& r : rows)
        if (r.path == "engine." + key && r.desc.rfind("[" + l.family + "]", 0) == 0) {
          EXPECT_EQ(value, r.def) << l.name << ": engine." << key;
          ++checked;
        }
    }
    EXPECT_GE(checked, 7) << l.name;
  }
}

TEST(ServeEngines, MultiStepRunsWithTheVllmSchedulerOnly) {
  Fixture f;
  ServeParams p = default_params<ServeParams>();
  p.scheduler = decltype(p.scheduler)::named("chunked");
  p.scheduler_steps = 4;
  EXPECT_THROW(simulate(f.s, p, lone_requests(1, 100, 10)), ConfigError);
}

namespace {

/// A folded run is the pass-by-pass run, bit for bit: every request's times, gaps, energy and cached tokens, and the
/// run's sums (serve/simulator.cpp, Engine::fold).
void expect_same_run(const SimResult& folded, const SimResult& each, const std::string& label) {
  ASSERT_EQ(folded.requests.size(), each.requests.size()) << label;
  for (size_t i = 0; i < each.requests.size(); ++i) {
    const RequestRecord &a = folded.requests[i], &b = each.requests[i];
    EXPECT_EQ(a.first_token, b.first_token) << label << " " << i;
    EXPECT_EQ(a.finish, b.finish) << label << " " << i;
    EXPECT_EQ(a.itl_max, b.itl_max) << label << " " << i;
    EXPECT_EQ(a.energy_j, b.energy_j) << label << " " << i;
    EXPECT_EQ(a.cached_tokens, b.cached_tokens) << label << " " << i;
  }
  EXPECT_EQ(folded.itl, each.itl) << label;
  EXPECT_EQ(folded.iterations, each.iterations) << label;
  EXPECT_EQ(folded.requests_time_integral_s, each.requests_time_integral_s) << label;
  EXPECT_EQ(folded.energy_j, each.energy_j) << label;
  EXPECT_EQ(folded.busy, each.busy) << label;
  EXPECT_EQ(folded.decode_tokens, each.decode_tokens) << label;
  EXPECT_EQ(folded.preemptions, each.preemptions) << label;
  EXPECT_EQ(folded.prefix_evictions, each.prefix_evictions) << label;
  EXPECT_EQ(folded.cached_tokens, each.cached_tokens) << label;
}

}  // namespace

TEST(ServeEngines, FoldedPassesGiveExactlyThePassByPassResults) {
  // A run with a Chrome trace times every pass on its own (no folding); without, repeated decode passes are folded
  // (serve/simulator.cpp, Engine::fold). Every record, sum and gap must be the same bits, under the ideal engine and a
  // profile, with requests waiting behind max_num_seqs.
  Fixture f;
  for (const auto& name : std::vector<std::string>{"ideal", "vllm-v0", "sglang", "vllm"}) {
    Loaded l = load(name);
    l.p.max_num_seqs = 24;
    Workload w;
    w.requests = make_requests(300, LengthSpec::parse("lognormal:400:0.5", "--input"), LengthSpec::parse("uniform:20:400", "--output"), 5);
    set_open_loop_arrivals(w.requests, 3.0, ArrivalKind::Poisson, 1.0, 5);
    const SimResult folded = run(f, l, w);
    w.record_passes = true;
    const SimResult each = run(f, l, w);
    expect_same_run(folded, each, name);
    EXPECT_GT(each.iterations, 3000) << name;  // long decode runs: what folding is for
    EXPECT_GT(folded.folded_passes, each.iterations / 2) << name;
    EXPECT_EQ(each.folded_passes, 0) << name;
  }
}

TEST(ServeEngines, FoldedPassesWhileRequestsWaitForAFullPrefixCacheAreExact) {
  // Multi-turn requests with prefix caching on a KV pool of a few requests: requests wait, and each pass looks the
  // first of them up in the prefix cache (touching its order) while decodes take blocks and evict cached units. Passes
  // are folded then (steps.hpp, repeats_while_none_joins; with a host tier only while they take blocks no cached unit
  // holds), and every record comes out as pass by pass, evictions and cached tokens included.
  Fixture f;
  for (const auto& name : std::vector<std::string>{"vllm-v0", "vllm"})
    for (const int64_t host_units : {0, 16}) {
      Loaded l = load(name, {"engine.gpu_memory_utilization=0.2"});
      l.p.prefix_caching = true;
      l.p.prefix_host_cache = Bytes(int64_t(64) * 512 * 1024 * host_units);  // units of 64 tokens of 512 KiB
      Workload w;
      w.requests = make_requests(240, LengthSpec::parse("10", "--input"), LengthSpec::parse("uniform:20:200", "--output"), 7);
      for (Request& r : w.requests) {  // session id % 12, turn id / 12 (units cycling 2..9): a turn's prompt starts with the earlier turns'
        const int64_t session = r.id % 12, units = 2 + r.id / 12 % 8;
        r.prefix_unit = 64;
        r.input = units * 64 + 10;
        for (int64_t u = 0; u < units; ++u) r.prefix.push_back(uint64_t(session * 100 + u));
      }
      set_open_loop_arrivals(w.requests, 5.0, ArrivalKind::Poisson, 1.0, 7);
      const SimResult folded = run(f, l, w);
      w.record_passes = true;
      const SimResult each = run(f, l, w);
      expect_same_run(folded, each, name + " host " + std::to_string(host_units));
      // What the case is for: a full cache that evicts, requests that wait, and passes folded meanwhile.
      EXPECT_GT(folded.prefix_evictions, 50) << name << " host " << host_units;
      EXPECT_GT(folded.cached_tokens, 0) << name << " host " << host_units;
      EXPECT_GT(summary(folded, Slo{})["queueing_ms"]["mean"].get<double>(), 100.0) << name << " host " << host_units;
      EXPECT_GT(folded.folded_passes, folded.iterations / 4) << name << " host " << host_units;
    }
}
