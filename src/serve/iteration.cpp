#include "serve/iteration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace bitline::serve {

IterationModel::IterationModel(const llm::Server& s, const ServeParams& p, int64_t mean_output)
    : s_(s),
      p_(p),
      mean_output_(std::max<int64_t>(mean_output, 1)),
      ranks_(std::max<int64_t>(s.deployment().ranks, 1)),
      engine_(llm::engine_overheads(s.params().serving.engine, false, llm::engine_workers(s.deployment()))),
      pm_(llm::prefill_memory(s.system())) {
  const llm::ModelConfig& m = s.model();
  const llm::Deployment& d = s.deployment();
  const llm::StepGraph g =
      llm::build_step(m, d, s.weights(), s.gpu(), s.network(), std::vector<int64_t>(1, 1), s.params().serving.routing_skew);
  kv_token_layer_bytes_ = double(g.kv_token_layer_bytes);
  for (const llm::Op& op : g.ops) pass_kernels_ += op.launches();
  for (const llm::Op& op : g.ops) {
    if (!op.kv) continue;
    AttnOp a;
    // As time_prefill: FLOPs per (query, key) pair, the query rows sharing a KV head per token row, the activations
    // per token row.
    a.per_pair = llm::prefill_pair_flops(m, d, op.flops);
    a.rows = op.rows;
    a.act_bytes_per_row = double(op.act_bytes.raw());
    a.kernels = op.kernels;
    attn_ops_.push_back(a);
  }
}

IterationModel::Span IterationModel::span(double x, Cell& cell) const {
  Span sp;
  const double e = double(p_.exact_below);
  if (p_.buckets_per_octave <= 0 || x <= e) {
    sp.lo = int64_t(std::floor(x));
    sp.hi = int64_t(std::ceil(x));
  } else if (x >= double(cell.lo + 1) && x <= double(cell.hi - 1)) {
    sp.lo = cell.lo;  // (the rounding below cannot move them: x is a token inside both)
    sp.hi = cell.hi;
  } else {
    const double b = double(p_.buckets_per_octave);
    const double k = std::floor(b * std::log2(x / e));
    sp.lo = int64_t(std::llround(e * std::exp2(k / b)));
    sp.hi = int64_t(std::llround(e * std::exp2((k + 1) / b)));
    cell = {sp.lo, sp.hi};
    sp.lo = std::min<int64_t>(sp.lo, int64_t(std::floor(x)));  // (rounding)
    sp.hi = std::max<int64_t>(sp.hi, int64_t(std::ceil(x)));
  }
  sp.w = sp.hi > sp.lo ? (x - double(sp.lo)) / double(sp.hi - sp.lo) : 0.0;
  return sp;
}

IterationModel::Decode IterationModel::decode_exact(int64_t per_rank, int64_t context) {
  const uint64_t key = (uint64_t(per_rank) << 40) | uint64_t(context);
  auto it = dec_.find(key);
  if (it != dec_.end()) return it->second;
  const llm::ContextSpec c{"", context, mean_output_};
  const llm::StepReport r = s_.step_at(std::vector<int64_t>(size_t(per_rank), context), c, false, engine_);
  const llm::Breakdown& b = r.breakdown;
  Decode d;
  d.step_ps = double(r.step.raw());
  d.shared_ps = double((b.weights + b.overhead + b.comm).raw());
  dec_.emplace(key, d);
  return d;
}

IterationModel::Decode IterationModel::decode(int64_t requests, double context) {
  if (requests <= 0) return {};
  const int64_t per_rank = (requests + ranks_ - 1) / ranks_;
  if (per_rank >= (int64_t(1) << 23) || context >= double(int64_t(1) << 40))
    throw ConfigError(fmt::format("serve: a decode of {} requests at {:.0f} tokens is too large to time", requests, context));
  const Span sr = span(double(per_rank), requests_cell_), sc = span(std::max(context, 1.0), context_cell_);
  Corners& c = corners_;
  if (c.r_lo != sr.lo || c.r_hi != sr.hi || c.c_lo != sc.lo || c.c_hi != sc.hi) {
    c = Corners{};
    c.r_lo = sr.lo, c.r_hi = sr.hi, c.c_lo = sc.lo, c.c_hi = sc.hi;
  }
  Decode out;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const double w = (i ? sr.w : 1 - sr.w) * (j ? sc.w : 1 - sc.w);
      if (w == 0) continue;  // (a corner of no weight is not timed)
      if (!c.known[i][j]) {
        c.d[i][j] = decode_exact(std::max<int64_t>(i ? sr.hi : sr.lo, 1), std::max<int64_t>(j ? sc.hi : sc.lo, 1));
        c.known[i][j] = true;
      }
      const Decode& d = c.d[i][j];
      out.step_ps += w * d.step_ps;
      out.shared_ps += w * d.shared_ps;
    }
  return out;
}

IterationModel::Prefill IterationModel::prefill_exact(int64_t tokens) {
  auto it = pre_.find(tokens);
  if (it != pre_.end()) return it->second;
  Prefill p;
  if (tokens > 0) {
    llm::PrefillParams pp;
    pp.chunk = 0;
    pp.requests = 1;
    const llm::PrefillReport r = llm::time_prefill(s_.model(), s_.deployment(), s_.weights(), s_.gpu(), s_.network(),
                                                   llm::prefill_memory(s_.system()), tokens, pp, s_.params().serving.routing_skew);
    const llm::ClassTimes& t = r.breakdown.total;
    // The attention kernels' time: their math or transfers, and their launch overheads (the overhead class also
    // holds every other kernel's: the attention kernels' share is taken out of it).
    const Time attn = t[llm::OpClass::Attention] + t[llm::OpClass::KvRead] + t[llm::OpClass::KvWrite];
    int64_t kernels = 0;
    for (const AttnOp& a : attn_ops_) kernels += a.kernels;
    const double overhead = double(s_.gpu().kernel_overhead().raw()) * double(kernels);
    p.attention_ps = double(attn.raw()) + overhead;
    p.linear_ps = double((r.time - attn).raw()) - overhead;
  }
  pre_.emplace(tokens, p);
  return p;
}

IterationModel::Prefill IterationModel::prefill(int64_t tokens) {
  if (tokens <= 0) return {};
  Cell cell;  // (prompt sizes vary pass by pass: no cell kept)
  const Span sp = span(double(tokens), cell);
  const Prefill lo = prefill_exact(std::max<int64_t>(sp.lo, 1));
  if (sp.w == 0) return lo;
  const Prefill hi = prefill_exact(sp.hi);
  return {lo.linear_ps + sp.w * (hi.linear_ps - lo.linear_ps), lo.attention_ps + sp.w * (hi.attention_ps - lo.attention_ps)};
}

double IterationModel::linear_ps(int64_t tokens) { return prefill(tokens).linear_ps; }
double IterationModel::prefill_attention_ps(int64_t tokens) { return prefill_exact(tokens).attention_ps; }

double IterationModel::attention_ps(int64_t offset, int64_t tokens) {
  if (tokens <= 0) return 0;
  const uint64_t key = (uint64_t(offset) << 32) | uint64_t(tokens);
  auto it = attn_.find(key);
  if (it != attn_.end()) return it->second;
  // time_prefill's attention of one chunk (one prompt): each layer's kernel (llm::chunk_attention) plus its launch
  // overheads.
  const double c = double(tokens);
  const double overhead = double(s_.gpu().kernel_overhead().raw());
  double ps = 0;
  for (const AttnOp& a : attn_ops_)
    ps += llm::chunk_attention(s_.gpu(), s_.deployment().q_heads, pm_, 1, offset, tokens, a.per_pair, a.rows * c, kv_token_layer_bytes_,
                               c * a.act_bytes_per_row)
              .time_ps() +
          overhead * double(a.kernels);
  attn_.emplace(key, ps);
  return ps;
}

Time IterationModel::pass(const std::vector<Chunk>& chunks, int64_t decodes, double decode_context) {
  int64_t prompt = 0;
  double attn = 0;
  for (const Chunk& c : chunks) {
    prompt += c.tokens;
    // Attention is per prompt: on the rank that holds it (data-parallel ranks share the chunks, tensor parallel
    // splits every one: either way a rank's share is 1 / ranks of the pass's).
    attn += attention_ps(c.offset, c.tokens) / double(ranks_);
  }
  double t = 0;
  if (prompt > 0) {
    t += linear_ps((prompt + ranks_ - 1) / ranks_) + attn;
    // A prefill-only pass: the engine's host side as a decode step's (llm::EngineOverheads::added); a mixed pass has
    // it in its decode step.
    // Its sequences are the prompts' chunks, those of one engine instance when every rank is a replica of its own.
    const int64_t n = int64_t(chunks.size());
    const int64_t sequences = llm::engine_sequences(s_.deployment(), (n + ranks_ - 1) / ranks_, n);
    if (decodes <= 0)
      t += double(engine_.added(Time(int64_t(std::llround(std::min(t, 4e18)))), pass_kernels_, sequences).raw());
    else
      t += double((engine_.per_sequence * double(sequences)).raw());  // the decode step has the rest
  }
  if (decodes > 0) {
    const Decode d = decode(decodes, decode_context);
    t += d.step_ps - (prompt > 0 ? d.shared_ps : 0.0);
  }
  if (!(t < 4e18))
    throw OverflowError("serve: an iteration longer than 46 days (requests this long, or a parameter that makes the GPU this slow)");
  return Time(int64_t(std::llround(std::max(t, 1.0))));
}

}  // namespace bitline::serve
