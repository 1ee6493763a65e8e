#include "llm/static_batch.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace bitline::llm {

namespace {
double ms(Time t) { return to_s(t) * 1e3; }
double gb(Bytes b) { return double(b.raw()) * 1e-9; }

std::string no_fit(const Server& s, int64_t r, const ContextSpec& c, const Capacity& cap) {
  std::string parts = fmt::format("weights {:.1f} GB + KV {:.1f} GB ({} requests x {} tokens) + workspace {:.2f} GB + reserve {:.1f} GB",
                                  gb(cap.weights), gb(cap.kv), r, c.input + c.output, gb(cap.workspace), gb(cap.reserve));
  if (cap.limit == Exhausted::FlashBlocks)
    return fmt::format("a static batch of {} requests per rank x {} tokens does not fit on {}: {} HBF blocks of {} per megaplane ({})", r,
                       c.input + c.output, s.params().kind, cap.blocks_used, cap.blocks_per_megaplane, parts);
  return fmt::format(
      "a static batch of {} requests per rank x {} tokens does not fit in the HBM of one {} GPU: {}{} = {:.1f} GB > {:.1f} GB", r,
      c.input + c.output, s.params().kind, parts, s.has_hbf() ? " (weights and KV in HBF)" : "", gb(cap.hbm_used), gb(cap.hbm_capacity));
}
}  // namespace

KindParams static_batch_params(KindParams k) {
  if (*k.llm.attention_parallel == AttentionParallel::Auto && *k.serving.engine.kind != EngineKind::None)
    k.llm.attention_parallel = AttentionParallel::Tp;
  return k;
}

StaticBatchReport run_static_batch(const Server& s, int64_t batch, const ContextSpec& c) {
  if (batch < 1) throw ConfigError(fmt::format("static batch: {} requests: need at least one", batch));
  if (c.input < 1 || c.output < 1)
    throw ConfigError(fmt::format("static batch: context {}:{}: input and output need at least one token each", c.input, c.output));
  StaticBatchReport b;
  const KindParams& kp = s.params();
  const Deployment& d = s.deployment();
  const int64_t r = (batch + d.ranks - 1) / d.ranks;
  b.requests_per_rank = r;
  b.batch = batch;
  b.gpus = d.gpus;
  b.input = c.input;
  b.output = c.output;
  // A static batch starts together and ends together: every request reaches input + output tokens, so it reserves its
  // full context whatever serving.capacity_context says (a paged engine's steady state is for continuous batching).
  if (*kp.serving.capacity_context == CapacityContext::Full) {
    b.capacity = s.capacity(r, c);
  } else {
    KindParams full = kp;
    full.serving.capacity_context = CapacityContext::Full;
    b.capacity = Server(s.model(), full, d.gpus).capacity(r, c);
  }
  if (!b.capacity.fits) throw ConfigError(no_fit(s, r, c, b.capacity));
  const EngineOverheads engine = engine_overheads(kp.serving.engine, true, engine_workers(d));

  // Prefill: the batch's prompts together (serving.prefill.chunk tokens per pass), then the engine's host side.
  PrefillParams pp = kp.serving.prefill;
  pp.requests = r;
  // The whole batch reaches the experts (a rank may hold fewer than the timed GPU's ceil(B / ranks), or none).
  b.prefill = time_prefill(s.model(), d, s.weights(), s.gpu(), s.network(), prefill_memory(s.system()), c.input, pp,
                           kp.serving.routing_skew, batch);
  // Each pass (chunk) carries the batch's sequences (their prompts, or their chunks of them): an instance's share.
  b.prefill_engine = engine.added(b.prefill.time, b.prefill.kernels, engine_sequences(d, r, batch), b.prefill.chunks);
  b.request_engine = engine.request;
  b.ttft = b.prefill.time + b.prefill_engine + b.request_engine;

  // Decode: step j = 1 .. OUT - 1 attends over IN + j tokens of each request.
  const int64_t n = c.output - 1;
  b.decode_steps = n;
  if (n > 0) {
    const auto step = [&](int64_t j) { return s.step_at(std::vector<int64_t>(size_t(r), c.input + j), c, false, engine, batch); };
    std::vector<int64_t> js;
    if (n <= kMaxTimedSteps) {
      for (int64_t j = 1; j <= n; ++j) js.push_back(j);
    } else {
      for (int64_t i = 0; i < kMaxTimedSteps; ++i)
        js.push_back(1 + int64_t(std::llround(double(i) * double(n - 1) / double(kMaxTimedSteps - 1))));
      js.erase(std::unique(js.begin(), js.end()), js.end());
    }
    std::vector<StepReport> at;
    at.reserve(js.size());
    for (int64_t j : js) at.push_back(step(j));
    b.steps_timed = int64_t(js.size());
    b.first_step = at.front().step;
    b.last_step = at.back().step;
    // Sum over every step: exact where each is timed; otherwise linear between timed steps (trapezoids over the
    // gaps, each timed step counted once).
    double sum_ps = 0;
    Breakdown bd;
    for (size_t i = 0; i < at.size(); ++i) {
      double w = 1;  // how many steps this one stands for
      if (i + 1 < at.size()) w += double(js[i + 1] - js[i] - 1) / 2;
      if (i > 0) w += double(js[i] - js[i - 1] - 1) / 2;
      sum_ps += double(at[i].step.raw()) * w;
      bd += at[i].breakdown.scaled(w);
    }
    b.decode = Time(int64_t(std::llround(sum_ps)));
    b.decode_breakdown = bd;
    b.decode_engine = bd.engine;
  }
  b.total = b.ttft + b.decode;
  b.output_tokens_per_s_per_gpu = double(b.batch) * double(c.output) / to_s(b.total) / double(b.gpus);
  return b;
}

Json StaticBatchReport::json() const {
  return {{"batch", batch},
          {"requests_per_rank", requests_per_rank},
          {"gpus", gpus},
          {"input_tokens", input},
          {"output_tokens", output},
          {"decode_steps", decode_steps},
          {"steps_timed", steps_timed},
          {"prefill_ms", ms(prefill.time)},
          {"prefill_engine_ms", ms(prefill_engine)},
          {"request_engine_ms", ms(request_engine)},
          {"ttft_ms", ms(ttft)},
          {"decode_ms", ms(decode)},
          {"decode_engine_ms", ms(decode_engine)},
          {"first_step_ms", ms(first_step)},
          {"last_step_ms", ms(last_step)},
          {"total_ms", ms(total)},
          {"output_tokens_per_s_per_gpu", output_tokens_per_s_per_gpu},
          {"decode_breakdown_ms", decode_breakdown.json_ms()}};
}

}  // namespace bitline::llm
