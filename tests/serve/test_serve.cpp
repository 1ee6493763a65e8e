// The request-level serving simulation (src/serve/): its laws (a lone request is the single-request model, Little's
// law, every token accounted for), the schedulers (static batches, chunked prefill, Orca's selective batching), memory pressure (a closed
// loop beyond the KV memory queues), the bucketed iteration times against exact ones, static batches against the batch search, and the
// workload generators.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <iostream>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "../llm/llm_test_util.hpp"
#include "core/error.hpp"
#include "llm/prefill.hpp"
#include "llm/static_batch.hpp"
#include "serve/iteration.hpp"
#include "serve/report.hpp"
#include "serve/scheduler.hpp"
#include "serve/simulator.hpp"

using namespace bitline;
using namespace bitline::serve;
using bitline::llm::test::preset_kind;
using bitline::llm::test::shipped;

namespace {

ServeParams params(std::string_view scheduler = "vllm") {
  ServeParams p = default_params<ServeParams>();
  p.scheduler = decltype(p.scheduler)::named(scheduler);
  return p;
}

Workload open_loop(int64_t n, int64_t in, int64_t out, double rate, ArrivalKind a = ArrivalKind::Poisson, uint64_t seed = 1) {
  Workload w;
  w.requests = make_requests(n, LengthSpec::parse(std::to_string(in), "--input"), LengthSpec::parse(std::to_string(out), "--output"), seed);
  set_open_loop_arrivals(w.requests, rate, a, 1.0, seed);
  return w;
}

Workload closed_loop(int64_t n, int64_t users, int64_t in, int64_t out) {
  Workload w;
  w.requests = make_requests(n, LengthSpec::parse(std::to_string(in), "--input"), LengthSpec::parse(std::to_string(out), "--output"), 1);
  w.concurrency = users;
  return w;
}

double mean_of(const SimResult& r, double (RequestRecord::*f)() const) {
  double s = 0;
  for (const auto& q : r.requests) s += (q.*f)();
  return s / double(r.requests.size());
}

struct Fixture {
  llm::ModelConfig m = shipped("llama2-7b");
  llm::KindParams k = preset_kind("h100");
  llm::Server s{m, k, 1};
};

}  // namespace

TEST(ServeLaws, AtALowRateEveryRequestIsTheSingleRequestModel) {
  Fixture f;
  const int64_t in = 512, out = 64;
  // One request every 100 s: each finishes (a few seconds) long before the next arrives.
  const SimResult r = simulate(f.s, params(), open_loop(5, in, out, 0.01, ArrivalKind::Constant));
  // The single-request model (accel run's): TTFT = the prefill of the prompt, TPOT = the decode step of one request
  // at its mean context, E2E = TTFT + (OUT - 1) TPOT.
  llm::PrefillParams pp;
  const Time ttft = llm::time_prefill(f.s.model(), f.s.deployment(), f.s.weights(), f.s.gpu(), f.s.network(),
                                      llm::prefill_memory(f.s.system()), in, pp, 0)
                        .time;
  const llm::ContextSpec c{"", in, out};
  const Time tpot = f.s.step_at({in + out / 2}, c, false, llm::engine_overheads(llm::EngineKind::None, false, 1)).step;
  const double e2e = to_s(llm::request_latency(ttft, Time{}, tpot, out).end_to_end);
  for (const auto& q : r.requests) {
    EXPECT_EQ(q.preemptions, 0);
    EXPECT_EQ(q.scheduled, q.arrival);  // an idle engine takes it at once
    EXPECT_NEAR(q.ttft_s() / to_s(ttft), 1.0, 0.001) << q.id;
    EXPECT_NEAR(q.tpot_s() / to_s(tpot), 1.0, 0.01) << q.id;
    EXPECT_NEAR(q.e2e_s() / e2e, 1.0, 0.01) << q.id;
  }
}

TEST(ServeLaws, ACustomEnginesHostCostsAreInEveryPass) {
  // Eager launches at 40 us: Llama-2-7B's ~325 kernels take ~13 ms of host time a pass, more than the GPU needs for a
  // 128-token prefill or a decode step (~5-6 ms), so both passes are the host's launches plus the iteration's cost:
  // the first token takes as long as a decode step.
  Fixture f;
  f.k.serving.engine.kind = llm::EngineKind::Custom;
  f.k.serving.engine.launch = us(40);
  f.k.serving.engine.iteration = us(500);
  const llm::Server s(f.m, f.k, 1);
  const int64_t in = 128, out = 16;
  const SimResult r = simulate(s, params(), open_loop(3, in, out, 0.01, ArrivalKind::Constant));
  const llm::ContextSpec c{"", in, out};
  const llm::StepReport step = s.step_at({in + out / 2}, c, false, llm::engine_overheads(f.k.serving.engine, false, 1));
  EXPECT_GT(to_s(step.breakdown.engine), 0.005);  // host-bound: the GPU waits ms for the launches
  for (const auto& q : r.requests) {
    EXPECT_NEAR(q.tpot_s() / to_s(step.step), 1.0, 0.01) << q.id;
    EXPECT_NEAR(q.ttft_s() / to_s(step.step), 1.0, 0.01) << q.id;
  }
  // The default engine (none) for the same requests: the GPU's time alone.
  const SimResult none = simulate(f.s, params(), open_loop(3, in, out, 0.01, ArrivalKind::Constant));
  EXPECT_LT(none.requests[0].ttft_s(), 0.6 * r.requests[0].ttft_s());
}

TEST(ServeLaws, ACustomEnginesRequestCostDelaysTheFirstTokenNotThePasses) {
  // serving.engine.request (tokenisation, the runtime's set-up): the host prepares each request before it can be
  // scheduled, off the GPU. At a low rate every request's TTFT and E2E grow by exactly that, its TPOT does not, and
  // it is scheduled that much after it arrives.
  Fixture f;
  f.k.serving.engine.kind = llm::EngineKind::Custom;
  const llm::Server base(f.m, f.k, 1);
  f.k.serving.engine.request = ms(2);
  const llm::Server host(f.m, f.k, 1);
  const Workload w = open_loop(4, 256, 16, 0.01, ArrivalKind::Constant);
  const SimResult a = simulate(base, params(), w), b = simulate(host, params(), w);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(b.requests[i].arrival, a.requests[i].arrival);
    EXPECT_EQ(b.requests[i].scheduled, a.requests[i].scheduled + ms(2));
    EXPECT_EQ(b.requests[i].first_token - b.requests[i].arrival, a.requests[i].first_token - a.requests[i].arrival + ms(2));
    EXPECT_EQ(b.requests[i].finish - b.requests[i].first_token, a.requests[i].finish - a.requests[i].first_token);
  }
}

TEST(ServeLaws, LittlesLawHolds) {
  Fixture f;
  // A loaded engine: Poisson arrivals at a rate that keeps several requests in the system.
  const SimResult r = simulate(f.s, params(), open_loop(2000, 256, 128, 8.0));
  const Json s = summary(r, Slo{});
  const double L = s["mean_requests_in_system"].get<double>();
  const double lambda = s["requests_per_s"].get<double>();
  const double W = s["e2e_ms"]["mean"].get<double>() * 1e-3;
  EXPECT_GT(L, 2.0);  // not an idle engine
  EXPECT_NEAR(L / (lambda * W), 1.0, 0.02);
}

TEST(ServeLaws, EnergyIsBoardPowerOverThePassesSharedByTokens) {
  Fixture f;
  const SimResult r = simulate(f.s, params(), open_loop(300, 400, 80, 6.0));
  // Every GPU at its board power while the engine runs passes: the H100 kind's 700 W (its TDP), one GPU.
  EXPECT_DOUBLE_EQ(r.board_power.raw(), f.s.board_power().raw());
  EXPECT_EQ(r.gpus, 1);
  EXPECT_NEAR(r.energy_j / (r.board_power.raw() * to_s(r.busy)), 1.0, 1e-9);
  // The passes' energy is shared out whole: the requests' shares add up to it.
  double sum = 0;
  for (const auto& q : r.requests) {
    EXPECT_GT(q.energy_j, 0.0);
    sum += q.energy_j;
  }
  EXPECT_NEAR(sum / r.energy_j, 1.0, 1e-9);
  const Json s = summary(r, Slo{});
  EXPECT_NEAR(s["energy"]["output_tokens_per_j"].get<double>(), 300.0 * 80 / r.energy_j, 1e-9);
  EXPECT_EQ(s["energy"]["basis"], "board_power");  // accel run's tokens_per_j_board, not its activity-based tokens_per_j
  // Alone, a request's energy is its prefill and its decode steps at board power: E2E x 700 W.
  const SimResult lone = simulate(f.s, params(), open_loop(2, 400, 80, 0.01, ArrivalKind::Constant));
  for (const auto& q : lone.requests) EXPECT_NEAR(q.energy_j / (q.e2e_s() * f.s.board_power().raw()), 1.0, 1e-6);
}

TEST(ServeLaws, KvWritesAreTheTokensComputedAtTheirBytesOnTheirHome) {
  Fixture f;
  const SimResult r = simulate(f.s, params(), open_loop(200, 400, 60, 4.0));
  const KvMemory km = kv_memory(f.s, params());
  // Every prompt token prefilled and every decode writes its KV (all layers) into HBM on an H100.
  EXPECT_DOUBLE_EQ(r.kv_write_bytes_per_gpu, double(r.prefill_tokens + r.decode_tokens) * double(km.kv_bytes_per_token));
  EXPECT_FALSE(r.kv_in_hbf);
  EXPECT_EQ(r.kv_lifetime_writes_fraction, 0.0);
  // On 8 x CSI (data-parallel attention: a token's KV on one GPU of eight) the KV's home is HBF, and its write rate
  // takes the HBF's lifetime share the decode evaluation's endurance formula gives.
  const llm::ModelConfig m = shipped("qwen3-235b");
  const llm::Server csi{m, preset_kind("csi"), 8};
  const SimResult h = simulate(csi, params(), open_loop(100, 2000, 100, 2.0));
  const KvMemory hm = kv_memory(csi, params());
  ASSERT_EQ(hm.ranks, 8);
  const double per_gpu = double(h.prefill_tokens + h.decode_tokens) * double(hm.kv_bytes_per_token) / 8;
  EXPECT_NEAR(h.kv_write_bytes_per_gpu / per_gpu, 1.0, 1e-12);
  EXPECT_TRUE(h.kv_in_hbf);
  EXPECT_NEAR(h.kv_lifetime_writes_fraction / csi.lifetime_writes_fraction(per_gpu / h.makespan_s()), 1.0, 1e-12);
  EXPECT_GT(h.kv_lifetime_writes_fraction, 0.0);
}

TEST(ServeLaws, EveryTokenIsAccountedFor) {
  Fixture f;
  // A closed loop whose KV demand exceeds the memory, so requests are preempted and recomputed.
  for (std::string_view k : {"vllm", "chunked", "orca", "static"}) {
    ServeParams p = params(k);
    const SimResult r = simulate(f.s, p, closed_loop(400, 200, 1500, 1000));
    int64_t in = 0, out = 0;
    for (const auto& q : r.requests) in += q.input, out += q.output;
    EXPECT_EQ(r.emitted_tokens, out);
    // Each request computes the KV of its prompt and of every output token but the last, once, plus what
    // preemption made it recompute.
    EXPECT_EQ(r.prefill_tokens + r.decode_tokens, in + out - int64_t(r.requests.size()) + r.recomputed_tokens);
    if (k == "static" || k == "orca") {
      EXPECT_EQ(r.preemptions, 0);  // static batches and Orca reserve each request's full context
      EXPECT_GT(r.padded_decode_tokens, -1);
    } else {
      EXPECT_GT(r.preemptions, 0) << "the workload must exercise preemption";
      EXPECT_GT(r.recomputed_tokens, 0);
    }
    int64_t pre = 0;
    for (const auto& q : r.requests) pre += q.preemptions;
    EXPECT_EQ(pre, r.preemptions);
  }
}

TEST(ServeMemory, SwapPreemptionKeepsTheKvInHostMemoryInsteadOfRecomputingIt) {
  Fixture f;
  // The closed loop of EveryTokenIsAccountedFor, whose KV demand exceeds the memory.
  const Workload w = closed_loop(400, 200, 1500, 1000);
  ServeParams swap = params();
  swap.preemption = PreemptionMode::Swap;
  swap.swap_space = GiB(64);  // room for every swapped request
  const SimResult s = simulate(f.s, swap, w);
  ASSERT_GT(s.preemptions, 0);
  EXPECT_EQ(s.swaps_out, s.preemptions);  // every preemption a swap
  EXPECT_EQ(s.swaps_in, s.swaps_out);     // and each swapped back
  EXPECT_EQ(s.recomputed_tokens, 0);      // nothing computed twice
  int64_t in = 0, out = 0;
  for (const auto& q : s.requests) in += q.input, out += q.output;
  EXPECT_EQ(s.emitted_tokens, out);
  EXPECT_EQ(s.prefill_tokens + s.decode_tokens, in + out - int64_t(s.requests.size()));
  // Each swap moves the request's blocks out and back: at least one block each way, at most its whole context.
  const KvMemory km = kv_memory(f.s, swap);
  const double block = double(swap.block_tokens) * double(km.kv_bytes_per_token);
  EXPECT_GE(s.swapped_bytes_per_gpu, 2.0 * double(s.swaps_out) * block);
  EXPECT_LE(s.swapped_bytes_per_gpu, 2.0 * double(s.swaps_out) * std::ceil(2500.0 / double(swap.block_tokens)) * block);
  // With no host memory to swap into, every preemption falls back to recompute: the recompute run exactly.
  swap.swap_space = Bytes(0);
  const SimResult none = simulate(f.s, swap, w), rec = simulate(f.s, params(), w);
  EXPECT_EQ(none.swaps_out, 0);
  EXPECT_EQ(none.preemptions, rec.preemptions);
  ASSERT_EQ(none.requests.size(), rec.requests.size());
  for (size_t i = 0; i < rec.requests.size(); ++i) EXPECT_EQ(none.requests[i].finish, rec.requests[i].finish) << i;
}

TEST(ServeMemory, AClosedLoopBeyondTheKvMemoryQueues) {
  Fixture f;
  const KvMemory km = kv_memory(f.s, params());
  const int64_t in = 1100, out = 1100;
  const int64_t fit = km.tokens_per_rank / (in + out);  // requests whose whole context fits at once
  ASSERT_GT(fit, 8);
  ASSERT_LT(fit, 64);
  std::vector<double> ttft, thr;
  for (int64_t users : {int64_t(4), fit / 2, 2 * fit, 4 * fit}) {
    const SimResult r = simulate(f.s, params(), closed_loop(3 * users, users, in, out));
    const Json s = summary(r, Slo{});
    ttft.push_back(s["ttft_ms"]["mean"].get<double>());
    thr.push_back(s["output_tokens_per_s"].get<double>());
  }
  // TTFT grows with the users; throughput grows while the KV fits, then plateaus.
  for (size_t i = 1; i < ttft.size(); ++i) EXPECT_GT(ttft[i], ttft[i - 1]) << i;
  EXPECT_GT(thr[1], 1.5 * thr[0]);
  EXPECT_NEAR(thr[3] / thr[2], 1.0, 0.1);
  EXPECT_GT(ttft[3], 2 * ttft[2]);  // past the plateau, users wait
}

TEST(ServeIteration, BucketedTimesAreTheExactOnesWithinAFewTenthsOfAPercent) {
  Fixture f;
  ServeParams exact = params(), bucketed = params();
  exact.buckets_per_octave = 0;
  IterationModel a(f.s, exact, 128), b(f.s, bucketed, 128);
  double worst = 0;
  for (int64_t n : {1, 7, 64, 65, 100, 333, 1000, 2047, 5000})
    for (int64_t ctx : {100, 999, 3000})
      for (int64_t chunk : {0, 200, 1500}) {
        std::vector<Chunk> ch;
        if (chunk > 0) ch.push_back({ctx, chunk});
        const double ta = double(a.pass(ch, n, double(ctx)).raw()), tb = double(b.pass(ch, n, double(ctx)).raw());
        worst = std::max(worst, std::abs(tb / ta - 1));
      }
  // Measured worst: 0.29% (one decode beside a 1,500-token chunk: the GEMM tiles' steps in M between grid points).
  EXPECT_LT(worst, 0.005);
  // The same workload end to end: the means agree within 0.5% (E2E) and 1% (TTFT, whose queueing part amplifies
  // small differences in the passes).
  const Workload w = open_loop(500, 700, 200, 6.0);
  const SimResult ra = simulate(f.s, exact, w), rb = simulate(f.s, bucketed, w);
  EXPECT_NEAR(mean_of(rb, &RequestRecord::e2e_s) / mean_of(ra, &RequestRecord::e2e_s), 1.0, 0.005);
  EXPECT_NEAR(mean_of(rb, &RequestRecord::ttft_s) / mean_of(ra, &RequestRecord::ttft_s), 1.0, 0.01);
  EXPECT_LT(rb.decode_shapes, ra.decode_shapes);  // what the bucketing buys
}

TEST(ServeIteration, APassIsItsPartsAndAPrefillChunkItsCausalAttention) {
  Fixture f;
  ServeParams p = params();
  p.buckets_per_octave = 0;
  IterationModel m(f.s, p, 100);
  // Prefill alone: the prefill model's time of the prompt.
  llm::PrefillParams pp;
  const Time pf = llm::time_prefill(f.s.model(), f.s.deployment(), f.s.weights(), f.s.gpu(), f.s.network(),
                                    llm::prefill_memory(f.s.system()), 900, pp, 0)
                      .time;
  EXPECT_NEAR(double(m.pass({{0, 900}}, 0, 0).raw()) / double(pf.raw()), 1.0, 1e-6);  // (the model rounds each class to ps)
  // Decode alone: the decode step.
  const auto d = m.decode(10, 2000);
  EXPECT_NEAR(double(m.pass({}, 10, 2000).raw()), d.step_ps, 2.0);
  // Mixed: the sum less the decode's weight reads, overheads and collectives (the pass reads the weights once).
  const double mixed = double(m.pass({{0, 900}}, 10, 2000).raw());
  EXPECT_NEAR(mixed / (double(pf.raw()) + d.step_ps - d.shared_ps), 1.0, 1e-6);
  EXPECT_LT(mixed, double(pf.raw()) + d.step_ps);
  EXPECT_GT(mixed, std::max(double(pf.raw()), d.step_ps));
  // A chunk's attention at offset 0 is the attention part of the prefill model's pass, exactly.
  for (int64_t n : {1, 100, 900, 4096, 20000}) EXPECT_NEAR(m.attention_ps(0, n) / m.prefill_attention_ps(n), 1.0, 1e-6) << n;
  // A chunk later in a prompt costs more attention than the same chunk at its start.
  EXPECT_GT(m.pass({{4000, 512}}, 0, 0), m.pass({{0, 512}}, 0, 0));
}

TEST(ServeIteration, TheEnginesHostCostIsInEveryPassOverItsSequences) {
  // Sarathi-Serve's profiled host costs (1.33 ms + 105 us a sequence, CUDA graphs): every pass pays the iteration
  // once and each sequence in it, a prompt chunk as a decode; the GPU's part is the engine-less model's.
  Fixture f;
  ServeParams p = params();
  p.buckets_per_octave = 0;
  IterationModel plain(f.s, p, 100);
  llm::KindParams k = f.k;
  k.serving.engine.kind = llm::EngineKind::SarathiServe;
  const llm::Server s(f.m, k, 1);
  IterationModel sarathi(s, p, 100);
  const auto extra = [&](const std::vector<Chunk>& ch, int64_t decodes) {
    return to_s(sarathi.pass(ch, decodes, 2000)) - to_s(plain.pass(ch, decodes, 2000));
  };
  const double it = 1.33e-3, seq = 105e-6;
  EXPECT_NEAR(extra({{0, 900}}, 0), it + seq, 1e-9);                // one prompt
  EXPECT_NEAR(extra({{0, 900}, {0, 300}}, 0), it + 2 * seq, 1e-9);  // two prompts' chunks
  EXPECT_NEAR(extra({}, 10), it + 10 * seq, 1e-9);                  // ten decodes
  EXPECT_NEAR(extra({{0, 900}}, 10), it + 11 * seq, 1e-9);          // a mixed pass: once, eleven sequences
}

TEST(ServeIteration, ReplicasPayTheEnginesHostCostForTheirOwnSequences) {
  // 8 GPUs in tensor-parallel groups of 2: four replicas, each with its own host (Sarathi-Serve's 2-GPU line, 3.52 ms
  // + 181 us a sequence). A prefill-only pass of 8 prompts pays for the 2 of a replica, not for all 8.
  Fixture f;
  ServeParams p = params();
  p.buckets_per_octave = 0;
  llm::KindParams k = f.k;
  k.llm.tp_size = 2;
  const llm::Server none(f.m, k, 8);
  k.serving.engine.kind = llm::EngineKind::SarathiServe;
  const llm::Server s(f.m, k, 8);
  IterationModel plain(none, p, 100), sarathi(s, p, 100);
  const std::vector<Chunk> eight(8, Chunk{0, 300});
  EXPECT_NEAR(to_s(sarathi.pass(eight, 0, 2000)) - to_s(plain.pass(eight, 0, 2000)), 3.52e-3 + 2 * 181e-6, 1e-9);
}

TEST(ServeSchedulers, StaticBatchesAtSaturationAgainstTheBatchSearch) {
  Fixture f;
  // A static batch holds every request's whole context to its end, so the search it is compared with reserves the
  // full context too (serving.capacity_context = full; the default, paged, sizes a batch a static one cannot hold).
  llm::KindParams k = f.k;
  k.serving.capacity_context = llm::CapacityContext::Full;
  const llm::Server s{f.m, k, 1};
  // The batch search's throughput at a generous SLO (capacity-bound batch) vs static batches of that size, decode
  // dominated (short prompts), a closed loop that keeps the engine full.
  const llm::ContextSpec c{"", 128, 512};
  const llm::PointResult pr = s.search(c, ms(200));
  ASSERT_TRUE(pr.feasible);
  const double search = pr.step.tokens_per_s_per_gpu * double(s.deployment().gpus);
  ServeParams p = params("static");
  p.max_num_seqs = pr.step.batch;
  const SimResult r = simulate(s, p, closed_loop(3 * pr.step.batch, pr.step.batch, c.input, c.output));
  const double sim = summary(r, Slo{})["output_tokens_per_s"].get<double>();
  // Static batching's own accounting: B x OUT tokens per (the prefill pass of B x IN tokens + the OUT - 1 decode
  // passes at IN + 1 .. IN + OUT - 1 tokens of context).
  IterationModel it(s, p, c.output);
  const int64_t b = pr.step.batch;
  const double prefill = to_s(it.pass(std::vector<Chunk>(size_t(b), Chunk{0, c.input}), 0, 0));
  double decode = 0;
  for (int64_t j = 1; j < c.output; ++j) decode += to_s(it.pass({}, b, double(c.input + j)));
  EXPECT_NEAR(sim / (double(b) * double(c.output) / (prefill + decode)), 1.0, 0.005);
  // Its mean decode step is the search's step (the search's also writes the prompts' KV arriving from prefill GPUs;
  // its contexts are the steady ones, IN + OUT (i + 0.5) / B, the same mean).
  EXPECT_NEAR(decode / double(c.output - 1) / to_s(pr.step.step), 1.0, 0.03);
  // The gap, pinned at the model's value (0.950): the prefill pass of each batch (its B x IN prompt tokens, 4.8% of
  // the batch's time) gives no output, and the decode steps are 0.4% longer than the search's (contexts; the static
  // batch writes only its new tokens' KV), over OUT - 1 steps for OUT tokens.
  const double share = prefill / (prefill + decode), step_ratio = to_s(pr.step.step) / (decode / double(c.output - 1));
  EXPECT_NEAR(sim / search, (1 - share) * step_ratio * double(c.output) / double(c.output - 1), 0.005);
  EXPECT_NEAR(sim / search, 0.950, 0.01) << "prefill share " << prefill / (prefill + decode) << " batch " << b << " decode step "
                                         << decode / double(c.output - 1) << " search step " << to_s(pr.step.step);
}

TEST(ServeSchedulers, ChunkedPrefillBoundsTheStallsThatPrefillFirstCauses) {
  Fixture f;
  // Long prompts among decoding requests: prefill-first passes stall every decode for a whole prompt (vLLM V0), a
  // token budget per pass bounds the stall (Sarathi-Serve's point).
  const Workload w = open_loop(400, 3000, 200, 3.0);
  ServeParams chunked = params("chunked");
  chunked.max_num_batched_tokens = 512;
  const Json v = summary(simulate(f.s, params(), w), Slo{}), c = summary(simulate(f.s, chunked, w), Slo{});
  EXPECT_LT(c["itl_ms"]["p99"].get<double>(), 0.5 * v["itl_ms"]["p99"].get<double>());
  // The mean TPOT is lower (the model's value: -13%): the decodes ride in the chunks' passes, whose GEMMs stream the
  // weights once for the chunk and the decodes together, instead of waiting behind whole prompts.
  const double tpot_ratio = c["tpot_ms"]["mean"].get<double>() / v["tpot_ms"]["mean"].get<double>();
  EXPECT_LT(tpot_ratio, 1.0);
  EXPECT_NEAR(tpot_ratio, 0.874, 0.03);
  // Every chunk pass holds at most the budget: a 3,000-token prompt needs at least 6 passes.
  EXPECT_GT(c["ttft_ms"]["p50"].get<double>(), v["ttft_ms"]["p50"].get<double>());
}

TEST(ServeSchedulers, OrcaPrefillsBesideTheDecodesAndReservesTheFullContext) {
  Fixture f;
  // Under load, Orca's passes mix new prompts with the running decodes (selective batching); vLLM V0's never do.
  Workload w = open_loop(300, 400, 100, 12.0);
  w.record_passes = true;
  const auto mixed = [](const SimResult& r) {
    return std::count_if(r.passes.begin(), r.passes.end(), [](const PassRecord& q) { return q.prefills > 0 && q.decodes > 0; });
  };
  const SimResult orca = simulate(f.s, params("orca"), w), vllm = simulate(f.s, params(), w);
  EXPECT_GT(mixed(orca), 10);
  EXPECT_EQ(mixed(vllm), 0);
  // A pass holds at most max_num_batched_tokens tokens unless it is one prompt alone.
  ServeParams small = params("orca");
  small.max_num_batched_tokens = 600;
  const SimResult r = simulate(f.s, small, w);
  for (const auto& q : r.passes) {
    if (q.prefills > 1 || (q.prefills == 1 && q.decodes > 0)) {
      EXPECT_LE(q.prompt_tokens + q.decodes, 600);
    }
  }
  // A lone request is the single-request model, as under vLLM: the same TTFT and E2E.
  const Workload lone = open_loop(3, 512, 64, 0.01, ArrivalKind::Constant);
  const SimResult a = simulate(f.s, params("orca"), lone), b = simulate(f.s, params(), lone);
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].first_token, b.requests[i].first_token);
    EXPECT_EQ(a.requests[i].finish, b.requests[i].finish);
  }
  // Beyond the KV memory, requests wait for a whole context's blocks instead of being preempted: no preemption,
  // and the running requests never hold more than the memory.
  const KvMemory km = kv_memory(f.s, params());
  const int64_t fit = km.tokens_per_rank / 2000;
  const SimResult full = simulate(f.s, params("orca"), closed_loop(4 * fit, 2 * fit, 1000, 1000));
  EXPECT_EQ(full.preemptions, 0);
  const Json sum = summary(full, Slo{});
  EXPECT_LE(sum["mean_requests_in_system"].get<double>(), 2.0 * double(fit) + 1e-9);
  EXPECT_GT(sum["queueing_ms"]["p90"].get<double>(), 100.0);  // users wait for blocks
}

TEST(ServePrefixCache, UnitsAreSharedHeldWhileUsedAndEvictedLeastRecentlyUsedHeadLast) {
  // 4 blocks of 16 tokens per 64-token unit; 40 blocks in all.
  BlockManager bm(40, 16, 0.0, 64);
  const std::vector<uint64_t> keys{11, 12, 13, 14};
  std::vector<Seq> seqs(3);
  for (Seq& q : seqs) q.input = 250, q.output = 10, q.prefix = &keys, q.prefix_unit = 64;
  // The first request finds nothing, computes its 259 tokens of KV (17 blocks), and leaves its 4 whole units cached.
  Seq& a = seqs[0];
  bm.admit_prefix(a);
  EXPECT_EQ(a.computed, 0);
  ASSERT_TRUE(bm.grow(a, 250 + 10));
  EXPECT_EQ(a.blocks, 17);
  a.computed = 259;
  bm.finish(a);
  EXPECT_EQ(bm.prefix_cache()->held_blocks(), 16);
  EXPECT_EQ(bm.free(), 40);  // cached units no one uses count as free
  // The next one takes the cached head of its prompt, but leaves at least one prompt token to compute: 3 units of
  // its 250-token prompt (the 4th would cover tokens 192-255).
  Seq& b = seqs[1];
  bm.admit_prefix(b);
  EXPECT_EQ(b.hits, 3);
  EXPECT_EQ(b.computed, 192);
  EXPECT_EQ(b.cached_tokens, 192);
  EXPECT_EQ(b.shared, 12);
  EXPECT_EQ(bm.free(), 40 - 12);  // units in use are not free
  ASSERT_TRUE(bm.grow(b, 260));
  EXPECT_EQ(b.blocks, 17 - 12);
  // Memory pressure evicts only the unit no one uses (key 14), and then nothing more.
  Seq big;
  big.input = 400;
  ASSERT_TRUE(bm.grow(big, 16 * (40 - 12 - 5)));
  EXPECT_EQ(bm.prefix_cache()->evictions(), 1);
  EXPECT_FALSE(bm.grow(big, 16 * (40 - 12 - 5) + 1));
  // Released, b's units are evictable again, its head last: an eviction of one unit takes its tail (key 13).
  b.computed = 0;  // preempted: nothing cached from it
  bm.release(b);
  bm.release(big);
  Seq c;
  ASSERT_TRUE(bm.grow(c, 16 * (28 + 4)));  // 28 blocks free beside the 3 cached units: takes one unit more, evicts one
  EXPECT_EQ(bm.prefix_cache()->evictions(), 2);
  EXPECT_TRUE(bm.prefix_cache()->has(11));
  EXPECT_TRUE(bm.prefix_cache()->has(12));
  EXPECT_FALSE(bm.prefix_cache()->has(13));
  // A request whose head is gone finds nothing, even if its later units are cached.
  bm.release(c);
  Seq d = seqs[2];
  const std::vector<uint64_t> other{99, 12};
  d.prefix = &other;
  bm.admit_prefix(d);
  EXPECT_EQ(d.hits, 0);
}

TEST(ServePrefixCache, UnitsEvictedFromTheGpuMoveToTheHostTierAndAreCopiedBack) {
  // 2 blocks per unit; a host tier of 2 units.
  PrefixCache c(2, 2);
  for (uint64_t k : {1, 2, 3}) c.insert(k);
  EXPECT_EQ(c.evict(6), 6);  // all three leave the GPU, oldest first; the host keeps the last two (2, 3)
  EXPECT_FALSE(c.has(1));
  EXPECT_EQ(c.host_units(), 2);
  const std::vector<uint64_t> keys{1, 2, 3};
  EXPECT_EQ(c.host_run(keys, 0, 3), 0);  // unit 1 is gone from both tiers: the run from the head is broken
  EXPECT_EQ(c.host_run(keys, 1, 2), 2);  // after a GPU hit on unit 1 the run continues in the host
  // Through the block manager: a GPU-tier head, then host-tier units copied into the request's own blocks (their
  // copy charged to the pass), then the prompt's rest computed.
  BlockManager bm(40, 16, 0.0, 32, 4);
  const std::vector<uint64_t> prefix{7, 8, 9, 10};
  Seq a;
  a.input = 140, a.output = 1, a.prefix = &prefix, a.prefix_unit = 32;
  ASSERT_TRUE(bm.grow(a, 141));
  a.computed = 140;
  bm.finish(a);  // 4 units cached on the GPU (8 blocks)
  Seq filler;
  ASSERT_TRUE(bm.grow(filler, 16 * (32 + 6)));  // every free block and 3 units, the least recently used (keys 10, 9, 8): to the host
  EXPECT_EQ(bm.prefix_cache()->host_units(), 3);
  bm.release(filler);
  Seq b = a;
  b.computed = 0, b.blocks = 0, b.hits = 0, b.shared = 0, b.cached_tokens = 0;
  bm.admit_prefix(b);
  EXPECT_EQ(b.hits, 1);       // the head (key 7, touched last when a finished) stayed on the GPU
  EXPECT_EQ(b.host_hits, 3);  // the rest continue in the host tier
  EXPECT_EQ(b.computed, 4 * 32);
  EXPECT_EQ(b.host_cached_tokens, 3 * 32);
  EXPECT_EQ(bm.take_host_hits(b), 3 * 2);
}

TEST(ServePrefixCache, LaterTurnsOfASessionReuseTheKvOfTheEarlierOnes) {
  const auto dir = std::filesystem::temp_directory_path() / ("bitline-serve-prefix-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto f = dir / "sessions.jsonl";
  // Two sessions of three turns, each turn after the previous one has finished (tens of seconds apart); turn k + 1's
  // prompt is turn k's prompt and output and 100 new tokens.
  {
    std::ofstream o(f);
    for (int s = 0; s < 2; ++s) {
      int64_t in = 3000 + 500 * s;
      for (int k = 1; k <= 3; ++k) {
        o << "{\"session\": \"s" << s << "\", \"turn\": " << k << ", \"input_tokens\": " << in
          << ", \"output_tokens\": 200, \"timestamp\": " << 100 * k + s << "}\n";
        in += 200 + 100;
      }
    }
  }
  Fixture fx;
  Workload w;
  w.requests = read_trace(f, 0);
  ASSERT_EQ(w.requests.size(), 6u);
  ServeParams p = params();
  p.prefix_caching = true;
  const SimResult on = simulate(fx.s, p, w);
  const SimResult off = simulate(fx.s, params(), w);
  int64_t in = 0, out = 0;
  for (const auto& q : w.requests) in += q.input, out += q.output;
  // Turn k + 1 finds turn k's whole 512-token units of its computed context (prompt + output - 1 tokens).
  for (const auto& q : on.requests) {
    const int64_t turn = q.id / 2;  // requests sorted by time: s0 t1, s1 t1, s0 t2, ...
    const int64_t prev_in = q.input - 300;
    EXPECT_EQ(q.cached_tokens, turn == 0 ? 0 : (prev_in + 200 - 1) / 512 * 512) << q.id;
  }
  EXPECT_EQ(on.prefill_tokens + on.decode_tokens + on.cached_tokens, in + out - int64_t(w.requests.size()) + on.recomputed_tokens);
  EXPECT_EQ(off.cached_tokens, 0);
  // Reused KV is not prefilled again: later turns get their first token sooner.
  for (size_t i = 2; i < 6; ++i) EXPECT_LT(on.requests[i].ttft_s(), 0.5 * off.requests[i].ttft_s()) << i;
  // Prefix caching on a workload with no prefixes is an error, not a silent no-op.
  EXPECT_THROW(simulate(fx.s, p, open_loop(5, 100, 10, 1.0)), ConfigError);
  std::filesystem::remove_all(dir);
}

TEST(ServeSessions, ATurnIsSentNoEarlierThanItsTimeAndNotBeforeThePreviousTurnsAnswer) {
  const auto dir = std::filesystem::temp_directory_path() / ("bitline-serve-turns-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto f = dir / "sessions.jsonl";
  // Session a: three turns 10 ms apart in the trace (each answer of 400 tokens takes seconds); session b: two
  // turns 1,000 s apart (the answer is long out by then). Lines out of turn order, to be linked by turn number.
  {
    std::ofstream o(f);
    o << "{\"session\": \"a\", \"turn\": 2, \"input_tokens\": 3500, \"output_tokens\": 400, \"timestamp\": 0.01}\n"
      << "{\"session\": \"a\", \"turn\": 1, \"input_tokens\": 3000, \"output_tokens\": 400, \"timestamp\": 0}\n"
      << "{\"session\": \"b\", \"turn\": 1, \"input_tokens\": 2000, \"output_tokens\": 400, \"timestamp\": 0.005}\n"
      << "{\"session\": \"a\", \"turn\": 3, \"input_tokens\": 4000, \"output_tokens\": 400, \"timestamp\": 0.02}\n"
      << "{\"session\": \"b\", \"turn\": 2, \"input_tokens\": 2500, \"output_tokens\": 400, \"timestamp\": 1000}\n";
  }
  Fixture fx;
  Workload w;
  w.requests = read_trace(f, 0);
  ASSERT_EQ(w.requests.size(), 5u);  // by time: a1, b1, a2, a3, b2
  EXPECT_EQ(w.requests[0].next_turn, 2);
  EXPECT_EQ(w.requests[2].next_turn, 3);
  EXPECT_EQ(w.requests[1].next_turn, 4);
  EXPECT_FALSE(w.requests[0].follows);
  EXPECT_TRUE(w.requests[3].follows);
  ServeParams p = params();
  p.prefix_caching = true;
  const SimResult r = simulate(fx.s, p, w);
  const auto& q = r.requests;
  // a2 and a3 wait for the previous answer (seconds after their trace times), and then reuse its KV.
  EXPECT_GT(to_s(q[0].finish), 1.0);
  EXPECT_EQ(q[2].arrival, q[0].finish);
  EXPECT_EQ(q[3].arrival, q[2].finish);
  EXPECT_GT(q[2].cached_tokens, 0);
  EXPECT_GT(q[3].cached_tokens, q[2].cached_tokens);
  // b2 is sent at its own time, long after b1's answer.
  EXPECT_LT(q[1].finish, Time(int64_t(1000) * 1000000000000));
  EXPECT_EQ(q[4].arrival, Time(int64_t(1000) * 1000000000000));
  std::filesystem::remove_all(dir);
}

TEST(ServeDisaggregation, ALoneRequestIsItsPrefillItsKvTransferAndItsDecodes) {
  Fixture f;
  Cluster c;
  c.prefill = {&f.s, 1};
  c.decode = {&f.s, 1};
  const int64_t in = 1024, out = 32;
  const Workload w = open_loop(3, in, out, 0.01, ArrivalKind::Constant);
  const SimResult d = simulate(c, params(), w), co = simulate(f.s, params(), w);
  // The KV of the prompt and first token (in + ... : the tokens computed when the first token is out, i.e. the
  // prompt) over RDMA at llm.network.rdma per GPU, after its latency.
  const double bytes = double(kv_memory(f.s, params()).kv_bytes_per_token) * double(in);
  const auto& net = f.s.params().llm.network;
  const double transfer = to_s(net.rdma_latency) + bytes / net.rdma.raw();
  ASSERT_EQ(d.kv_transfers, 3);
  EXPECT_NEAR(to_s(d.kv_transfer_time) / 3, transfer, 1e-9);
  EXPECT_NEAR(d.kv_transfer_bytes, 3 * bytes, 1);
  for (size_t i = 0; i < 3; ++i) {
    const auto& a = d.requests[i];
    const auto& b = co.requests[i];
    EXPECT_EQ(a.first_token, b.first_token);  // the prefill instance's prefill is the colocated engine's
    // Then the transfer, and the decodes (the first of them as a one-token chunk: within 2% of a decode step).
    EXPECT_NEAR((a.e2e_s() - transfer) / b.e2e_s(), 1.0, 0.02) << i;
  }
  // Two instances' GPUs, each instance's passes at its power.
  EXPECT_EQ(d.gpus, 2);
  EXPECT_EQ(d.instances.size(), 2u);
  EXPECT_EQ(d.instances[0].role, InstanceRole::Prefill);
  EXPECT_EQ(d.instances[1].role, InstanceRole::Decode);
  // Over NVLink (serve.kv_transfer = nvlink: both instances in one NVLink domain) the same bytes at llm.network.nvlink.
  ServeParams nv = params();
  nv.kv_transfer = KvTransferLink::Nvlink;
  const SimResult n = simulate(c, nv, w);
  EXPECT_NEAR(to_s(n.kv_transfer_time) / 3, to_s(net.nvlink_latency) + bytes / net.nvlink.raw(), 1e-9);
  EXPECT_LT(n.requests[0].e2e_s(), d.requests[0].e2e_s());
  // Instances that together exceed the NVLink domain (llm.network.gpus_per_node) cannot use it.
  llm::KindParams small = f.k;
  small.llm.network.gpus_per_node = 1;
  const llm::Server one(f.m, small, 1);
  Cluster c1;
  c1.prefill = {&one, 1};
  c1.decode = {&one, 1};
  try {
    simulate(c1, nv, w);
    FAIL() << "not refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("serve.kv_transfer = nvlink"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpus_per_node = 1"), std::string::npos) << e.what();
  }
}

TEST(ServeDisaggregation, DecodesNoLongerWaitBehindPrefillsAndTheLawsHold) {
  Fixture f;
  // Long prompts among decoding requests (ChunkedPrefillBoundsTheStalls' workload): colocated prefill-first passes
  // stall every decode for a whole prompt; on their own instances decodes never wait for one.
  const Workload w = open_loop(400, 3000, 200, 2.0);
  Cluster c;
  c.prefill = {&f.s, 1};
  c.decode = {&f.s, 1};
  const SimResult d = simulate(c, params(), w), co = simulate(f.s, params(), w);
  const Json sd = summary(d, Slo{}), sc = summary(co, Slo{});
  EXPECT_LT(sd["itl_ms"]["p99"].get<double>(), 0.3 * sc["itl_ms"]["p99"].get<double>());
  EXPECT_LT(sd["tpot_ms"]["mean"].get<double>(), sc["tpot_ms"]["mean"].get<double>());
  // Every token accounted for (a decode instance's first pass of a request is a one-token chunk), Little's law.
  int64_t in = 0, out = 0;
  for (const auto& q : d.requests) in += q.input, out += q.output;
  EXPECT_EQ(d.emitted_tokens, out);
  EXPECT_EQ(d.prefill_tokens + d.decode_tokens, in + out - int64_t(d.requests.size()) + d.recomputed_tokens);
  const double L = sd["mean_requests_in_system"].get<double>(), lambda = sd["requests_per_s"].get<double>();
  EXPECT_NEAR(L / (lambda * sd["e2e_ms"]["mean"].get<double>() * 1e-3), 1.0, 0.02);
  // Two decode instances share the decodes: each runs passes, and the requests are spread over both.
  Cluster c2 = c;
  c2.decode.count = 2;
  const SimResult d2 = simulate(c2, params(), w);
  ASSERT_EQ(d2.instances.size(), 3u);
  EXPECT_GT(d2.instances[1].iterations, 100);
  EXPECT_GT(d2.instances[2].iterations, 100);
  EXPECT_LT(summary(d2, Slo{})["tpot_ms"]["mean"].get<double>(), sd["tpot_ms"]["mean"].get<double>() * 1.0001);
}

TEST(ServeWorkload, ArrivalsHaveTheirRateAndVariation) {
  for (ArrivalKind a : {ArrivalKind::Poisson, ArrivalKind::Gamma, ArrivalKind::Constant}) {
    Workload w = open_loop(1, 1, 1, 1);
    w.requests = make_requests(200000, LengthSpec::parse("10", "x"), LengthSpec::parse("10", "x"), 3);
    const double cv_want = a == ArrivalKind::Gamma ? 2.0 : a == ArrivalKind::Poisson ? 1.0 : 0.0;
    set_open_loop_arrivals(w.requests, 5.0, a, a == ArrivalKind::Gamma ? 2.0 : 1.0, 3);
    std::vector<double> gaps;
    double prev = 0;
    for (const auto& q : w.requests) gaps.push_back(to_s(q.arrival) - prev), prev = to_s(q.arrival);
    const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / double(gaps.size());
    double var = 0;
    for (double g : gaps) var += (g - mean) * (g - mean);
    const double cv = std::sqrt(var / double(gaps.size())) / mean;
    EXPECT_NEAR(mean, 0.2, 0.2 * 0.02) << to_string(a);
    EXPECT_NEAR(cv, cv_want, 0.03) << to_string(a);
  }
}

TEST(ServeWorkload, LengthsHaveTheirMeans) {
  Rng rng(7);
  const LengthSpec u = LengthSpec::parse("uniform:100:300", "--input"), l = LengthSpec::parse("lognormal:500:0.8", "--input");
  double su = 0, sl = 0;
  int64_t umin = 1 << 30, umax = 0;
  for (int i = 0; i < 100000; ++i) {
    const int64_t x = u.draw(rng);
    su += double(x);
    umin = std::min(umin, x), umax = std::max(umax, x);
    sl += double(l.draw(rng));
  }
  EXPECT_NEAR(su / 1e5, 200, 1);
  EXPECT_EQ(umin, 100);
  EXPECT_EQ(umax, 300);
  EXPECT_NEAR(sl / 1e5 / 500, 1.0, 0.02);
  for (const char* bad : {"0", "-3", "uniform:0:5", "uniform:9:5", "lognormal:0:1", "lognormal:10:-1", "abc", "1.5", "normal:1:2"})
    EXPECT_THROW(LengthSpec::parse(bad, "--input"), ConfigError) << bad;
}

TEST(ServeWorkload, LengthsSampledFromACsvColumnAreItsValuesAtTheirFrequencies) {
  const auto dir = std::filesystem::temp_directory_path() / ("bitline-serve-lengths-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto f = dir / "trace.csv";
  // A column of 1 x 100 and 3 x 400 tokens (mean 325), beside another column.
  std::ofstream(f) << "TIMESTAMP,ContextTokens,GeneratedTokens\n0,100,7\n1,400,7\n2,400,7\n3,400,7\n";
  const LengthSpec l = LengthSpec::parse("csv:" + f.string() + ":ContextTokens", "--input");
  EXPECT_EQ(l.describe(), "csv:" + f.string() + ":ContextTokens");
  EXPECT_DOUBLE_EQ(l.expected(), 325.0);
  Rng rng(3);
  int64_t hundreds = 0;
  for (int i = 0; i < 40000; ++i) {
    const int64_t x = l.draw(rng);
    ASSERT_TRUE(x == 100 || x == 400) << x;
    hundreds += x == 100;
  }
  EXPECT_NEAR(double(hundreds) / 40000, 0.25, 0.01);
  // Errors name the option, the file, the line and the column.
  struct Case {
    std::string text, says;
  };
  for (const Case& c :
       {Case{"TIMESTAMP,ContextTokens\n0,100\n", "no column 'Prompt'"}, Case{"Prompt\n100\n0\n", ":3: column 1 (Prompt): 0 tokens"},
        Case{"Prompt\n100\nx\n", ":3: column 1 (Prompt): 'x' is not a whole number"}, Case{"Prompt\n", "no rows after the header"}}) {
    std::ofstream(f) << c.text;
    try {
      LengthSpec::parse("csv:" + f.string() + ":Prompt", "--input");
      ADD_FAILURE() << c.text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--input"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(LengthSpec::parse("csv:" + (dir / "missing.csv").string() + ":Prompt", "--input"), ConfigError);
  EXPECT_THROW(LengthSpec::parse("csv::Prompt", "--input"), ConfigError);
  std::filesystem::remove_all(dir);
}

TEST(ServeWorkload, BadRatesAreRefused) {
  Workload w = open_loop(1, 1, 1, 1);
  for (double r : {0.0, -1.0, std::nan(""), double(INFINITY)})
    EXPECT_THROW(set_open_loop_arrivals(w.requests, r, ArrivalKind::Poisson, 1, 1), ConfigError) << r;
}

TEST(ServeWorkload, AConcurrencyCapHoldsRequestsUntilASlotFrees) {
  // benchmark_serving's --max-concurrency: Poisson arrivals, at most C in flight; a request due while all C are sent
  // when one finishes (FIFO), its latencies counted from then.
  Fixture f;
  const Workload open = open_loop(200, 300, 50, 20.0);
  const SimResult free_run = simulate(f.s, params(), open);
  for (int64_t cap : {1, 4}) {
    Workload w = open;
    w.max_concurrency = cap;
    const SimResult r = simulate(f.s, params(), w);
    ASSERT_EQ(r.requests.size(), 200u);
    // At every send, fewer than C others are in flight; no request is sent before it is due.
    std::vector<std::pair<Time, int>> edges;
    for (size_t i = 0; i < r.requests.size(); ++i) {
      EXPECT_GE(r.requests[i].arrival, open.requests[i].arrival) << i;
      edges.push_back({r.requests[i].arrival, +1});
      edges.push_back({r.requests[i].finish, -1});
    }
    std::sort(edges.begin(), edges.end());  // a finish (-1) before a send (+1) at the same time
    int in_flight = 0, most = 0;
    for (const auto& [t, d] : edges) most = std::max(most, in_flight += d);
    EXPECT_EQ(most, cap);
    // One at a time, a request's TTFT is its prefill alone: the capped run's mean is below the free run's queueing.
    if (cap == 1) {
      EXPECT_LT(mean_of(r, &RequestRecord::ttft_s), mean_of(free_run, &RequestRecord::ttft_s));
    }
  }
  // A cap no arrival reaches changes nothing.
  Workload loose = open;
  loose.max_concurrency = 200;
  const SimResult same = simulate(f.s, params(), loose);
  for (size_t i = 0; i < same.requests.size(); ++i) EXPECT_EQ(same.requests[i].finish, free_run.requests[i].finish) << i;
  // A cap on a closed loop is refused (its --concurrency is its own cap).
  Workload closed = closed_loop(10, 2, 300, 50);
  closed.max_concurrency = 1;
  EXPECT_THROW(simulate(f.s, params(), closed), ConfigError);
}

TEST(ServeWorkload, ATraceReplaysFasterOrSlower) {
  Workload w = open_loop(50, 100, 10, 2.0);
  std::vector<Request> fast = w.requests, slow = w.requests;
  scale_trace_speed(fast, 2.0);
  scale_trace_speed(slow, 0.5);
  for (size_t i = 0; i < w.requests.size(); ++i) {
    EXPECT_NEAR(to_s(fast[i].arrival), to_s(w.requests[i].arrival) / 2, 1e-12) << i;
    EXPECT_NEAR(to_s(slow[i].arrival), to_s(w.requests[i].arrival) * 2, 1e-12) << i;
    EXPECT_EQ(fast[i].input, w.requests[i].input);
  }
  for (double bad : {0.0, -1.0, 1e-4, 1e4, std::nan("")}) EXPECT_THROW(scale_trace_speed(fast, bad), ConfigError) << bad;
  std::vector<Request> late(1);
  late[0].arrival = Time(int64_t(8e18));  // ~93 days, x1000 would be past what a run can simulate
  EXPECT_THROW(scale_trace_speed(late, 1e-3), ConfigError);
}

TEST(ServeReport, PercentilesInterpolateLinearly) {
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 0.9), 3.7);
  const Json runs = distribution(std::vector<std::pair<double, int64_t>>{{3, 1}, {1, 1}, {2, 1}, {4, 1}});
  EXPECT_DOUBLE_EQ(runs["p50"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(runs["p90"].get<double>(), 3.7);
  EXPECT_DOUBLE_EQ(runs["mean"].get<double>(), 2.5);
  // What benchmark_serving reports beside them: the (population) standard deviation, the extremes, p99.9; the same
  // from the list and from its counted runs.
  for (const Json& d : {distribution(std::vector<double>{4, 1, 3, 2}), runs}) {
    EXPECT_DOUBLE_EQ(d["std"].get<double>(), std::sqrt(1.25));
    EXPECT_DOUBLE_EQ(d["min"].get<double>(), 1);
    EXPECT_DOUBLE_EQ(d["max"].get<double>(), 4);
    EXPECT_NEAR(d["p99_9"].get<double>(), 3.997, 1e-12);
  }
  const Json twice = distribution(std::vector<std::pair<double, int64_t>>{{1, 2}, {3, 2}});
  EXPECT_DOUBLE_EQ(twice["std"].get<double>(), 1.0);
}

TEST(ServeMemory, AModelThatDoesNotFitAndARequestThatNeverFitsAreRefused) {
  const llm::ModelConfig big = shipped("llama3.1-405b");
  try {
    const llm::Server s(big, preset_kind("h100"), 1);
    kv_memory(s, params());
    FAIL() << "405B on one H100 must not fit";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit"), std::string::npos) << e.what();
  }
  Fixture f;
  EXPECT_THROW(simulate(f.s, params(), open_loop(1, 3000000, 10, 1)), ConfigError);
}

TEST(ServeSchedulers, StaticBatchingsClosedFormIsTheStaticSchedulersRun) {
  // `accel run --static-batch` (llm::run_static_batch) is the static scheduler's closed form: one batch of B requests
  // prefilled together, then OUT - 1 decode steps over the growing context. The scheduler's run of the same batch (a
  // closed loop of B users, max_num_seqs = B) must give the same output throughput. The serving simulation has no
  // engine host time yet, so both run without it (serving.engine none).
  Fixture f;
  llm::KindParams k = f.k;
  k.serving.engine.kind = llm::EngineKind::None;
  const llm::Server s{f.m, k, 1};
  for (int64_t b : {1, 8, 16}) {
    for (auto [in, out] : {std::pair<int64_t, int64_t>{128, 512}, {2048, 128}, {1000, 1000}}) {
      SCOPED_TRACE(fmt::format("batch {} context {}:{}", b, in, out));
      const llm::ContextSpec c{"", in, out};
      const llm::StaticBatchReport closed = llm::run_static_batch(s, b, c);
      ServeParams p = params("static");
      p.max_num_seqs = b;
      const Json sim = summary(simulate(s, p, closed_loop(b, b, in, out)), Slo{});
      // The decode steps are the same steps (the closed form interpolates past kMaxTimedSteps): within 0.1%.
      EXPECT_NEAR(sim["output_tokens_per_s"].get<double>() / (closed.output_tokens_per_s_per_gpu * double(closed.gpus)), 1.0, 1e-3);
      const double ttft = sim["ttft_ms"]["mean"].get<double>() / (to_s(closed.ttft) * 1e3);
      if (b == 1) {
        EXPECT_NEAR(ttft, 1.0, 1e-3);
      } else if (in == 128) {
        // The known gap, pinned at the model's values: the scheduler's pass times each prompt's attention as a kernel of
        // its own (a launch per prompt and layer), the closed form (llm::time_prefill) one kernel over the batch's
        // prompts; at 128-token prompts the launches are ~6% of the prefill (B 8: 1.060, B 16: 1.065).
        EXPECT_NEAR(ttft, b == 8 ? 1.060 : 1.065, 0.01);
      } else {
        EXPECT_NEAR(ttft, 1.0, 0.01);
      }
    }
  }
}
