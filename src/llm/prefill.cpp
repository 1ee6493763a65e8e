#include "llm/prefill.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace bitline::llm {

const char* to_string(OpClass c) {
  switch (c) {
    case OpClass::Gemm:
      return "projection_gemms";
    case OpClass::Attention:
      return "attention";
    case OpClass::NormAct:
      return "norms_activations";
    case OpClass::Comm:
      return "collectives";
    case OpClass::WeightRead:
      return "weight_reads";
    case OpClass::KvRead:
      return "kv_reads";
    case OpClass::KvWrite:
      return "kv_writes";
    case OpClass::Overhead:
      return "kernel_overhead";
    case OpClass::FlashLatency:
      return "exposed_flash_latency";
  }
  return "?";
}

Time ClassTimes::total() const {
  Time s{};
  for (Time x : t) s += x;
  return s;
}

ClassTimes& ClassTimes::operator+=(const ClassTimes& o) {
  for (size_t i = 0; i < kOpClasses; ++i) t[i] += o.t[i];
  return *this;
}

Json ClassTimes::json_ms() const {
  Json j = Json::object();
  for (size_t i = 0; i < kOpClasses; ++i) j[to_string(OpClass(i))] = to_s(t[i]) * 1e3;
  return j;
}

void OpBreakdown::add(int32_t layer, const ClassTimes& c) {
  total += c;
  if (layer >= 0) {
    if (size_t(layer) >= layers.size()) layers.resize(size_t(layer) + 1);
    layers[size_t(layer)] += c;
  }
}

KernelClassStats& KernelClassStats::operator+=(const KernelClassStats& o) {
  time += o.time;
  compute_bound += o.compute_bound;
  memory_bound += o.memory_bound;
  flops += o.flops;
  bytes += o.bytes;
  return *this;
}

Json KernelClassStats::json() const {
  const double s = to_s(time);
  const char* bound = time.raw() <= 0 ? "-" : compute_bound >= memory_bound ? "compute" : "memory";
  return {{"time_ms", s * 1e3},
          {"flops", flops},
          {"bytes", bytes},
          {"tflop_per_s", s > 0 ? flops / s * 1e-12 : 0.0},
          {"gb_per_s", s > 0 ? bytes / s * 1e-9 : 0.0},
          {"bound", bound}};
}

Json OpBreakdown::json() const {
  Json l = Json::array();
  for (const ClassTimes& c : layers) l.push_back(c.json_ms());
  Json k = Json::object();
  for (size_t i = 0; i < kOpClasses; ++i)
    if (kernels[i].time.raw() > 0) k[to_string(OpClass(i))] = kernels[i].json();
  return {
      {"total_ms", total.json_ms()}, {"embedding_ms", embedding.json_ms()}, {"head_ms", head.json_ms()}, {"layers_ms", l}, {"kernels", k}};
}

OpClass math_class(const Op& op, const GpuWeights& w) {
  if (op.is_comm()) return OpClass::Comm;
  if (op.kv) return OpClass::Attention;
  if (op.tensor_count > 0) {
    switch (w.tensors[op.first_tensor].role) {
      case Role::AttnNorm:
      case Role::FfnNorm:
      case Role::FinalNorm:
      case Role::QNorm:
      case Role::QANorm:
      case Role::KVANorm:
        return OpClass::NormAct;
      case Role::Embed:
      case Role::PosEmbed:
        if (op.embed_rows > 0) return OpClass::WeightRead;  // a lookup, no math (a tied LM head is a GEMM)
        return OpClass::Gemm;
      default:
        return OpClass::Gemm;
    }
  }
  return op.flops > 0 ? OpClass::Gemm : OpClass::NormAct;
}

namespace {
// Which part of a step a segment is (step.hpp: 0 embedding, 1 dense layer, 2 MoE layer, 3 head).
ClassTimes* segment_slot(OpBreakdown& b, const Segment& s) {
  if (s.kind == 0) return &b.embedding;
  if (s.kind == 3) return &b.head;
  return nullptr;
}
}  // namespace

OpBreakdown decode_breakdown(const StepGraph& g, const GpuWeights& w, const GpuMemory& mem, const MemoryTiming& mt) {
  OpBreakdown out;
  FastTimer timer(mt);
  TilePlan plan;
  // Op by op through one timer: the same tiles in the same order as time_step_fast with every layer timed.
  for (const Segment& s : g.segments) {
    ClassTimes seg;
    for (uint32_t i = s.first_op; i < s.first_op + s.op_count; ++i) {
      plan.clear();
      mem.append_ops(g, i, 1, plan);
      Breakdown b;
      ReadCounters r;
      timer.run(plan, b, r);
      KernelClassStats k;
      k.time = b.total();
      k.compute_bound = b.compute;
      k.memory_bound = b.weights + b.kv + b.flash_latency + b.comm;
      k.flops = g.ops[i].flops;
      k.bytes = r.flash_bytes + r.hbm_bytes + double(g.ops[i].comm.nvlink.raw() + g.ops[i].comm.rdma.raw());
      out.kernels[size_t(math_class(g.ops[i], w))] += k;
      seg[math_class(g.ops[i], w)] += b.compute;
      seg[OpClass::WeightRead] += b.weights;
      seg[OpClass::KvRead] += b.kv;
      seg[OpClass::Comm] += b.comm;
      seg[OpClass::Overhead] += b.overhead;
      seg[OpClass::FlashLatency] += b.flash_latency;
    }
    if (ClassTimes* slot = segment_slot(out, s)) *slot += seg;
    out.add(s.kind == 1 || s.kind == 2 ? s.layer : -1, seg);
  }
  return out;
}

PrefillMemory prefill_memory(const hbf::System& sys) {
  PrefillMemory pm;
  const Bandwidth hbm = sys.hbm_bandwidth();
  Bandwidth flash{};
  if (sys.stacks() > 0)
    flash = Bandwidth(std::min(sys.hbf().timing.interface_bandwidth, sys.stack_sense_bandwidth()).raw() * double(sys.stacks()));
  pm.weights = sys.stacks() > 0 ? flash : hbm;
  pm.kv_read = hbm.raw() > 0 ? hbm : flash;
  pm.act = hbm;
  pm.kv_write = hbm.raw() > 0 ? hbm : sys.program_bandwidth();
  return pm;
}

namespace {

Time transfer(double bytes, Bandwidth bw) { return bytes > 0 && bw.raw() > 0 ? ps(bytes / bw.raw() * 1e12) : Time{}; }

double weight_bytes_of(const Op& op, const GpuWeights& w, const ModelConfig& m) {
  if (op.embed_rows > 0) return double(op.embed_rows) * double(op.embed_cols * m.weight_bytes);
  double b = 0;
  for (uint32_t t = op.first_tensor; t < op.first_tensor + op.tensor_count; ++t) b += double(w.tensors[t].bytes.raw());
  return b * op.read_fraction;
}

// One kernel that is not attention: max(math, transfers) + overhead, attributed once; its kernel-class figures in `k`.
ClassTimes time_op(const Op& op, const GpuWeights& w, const ModelConfig& m, const PrefillMemory& pm, Time overhead, double& weight_bytes,
                   KernelClassStats& k) {
  ClassTimes c;
  k = KernelClassStats{};
  if (op.is_comm()) {
    c[OpClass::Comm] = op.comm.time;
    k.time = op.comm.time;
    k.bytes = double(op.comm.nvlink.raw() + op.comm.rdma.raw());
    k.memory_bound = op.comm.time;
    return c;
  }
  c[OpClass::Overhead] = overhead * double(op.kernels);
  const double wb = weight_bytes_of(op, w, m);
  weight_bytes += wb;
  const Time tw = transfer(wb, pm.weights), ta = transfer(double(op.act_bytes.raw()), pm.act);
  const OpClass math = math_class(op, w);
  if (op.weight_stream && op.compute >= tw + ta) {  // a weight-streaming kernel: its time is the weights' read
    c[OpClass::WeightRead] += op.compute - ta;
    c[math] += ta;
    k.memory_bound = op.compute;
  } else if (op.compute >= tw + ta && op.compute.raw() > 0) {
    c[math] += op.compute;
    k.compute_bound = op.compute;
  } else {
    c[OpClass::WeightRead] += tw;
    c[math] += ta;  // activations: the op's own traffic
    k.memory_bound = tw + ta;
  }
  k.time = c.total();
  k.flops = op.flops;
  k.bytes = wb + double(op.act_bytes.raw());
  return c;
}

// A sum of picoseconds as a Time; a prefill longer than ~46 days is refused (Time holds ~106 days).
Time checked_ps(double ps, int64_t prompt) {
  // An OverflowError: the CLI names the run's inputs, since a slow parameter (--set) as much as a long prompt can cause it.
  if (!(ps < 4e18))
    throw OverflowError(
        fmt::format("a prefill of {} tokens would take more than 46 days (a prompt this long, or a parameter that "
                    "makes the GPU this slow)",
                    prompt));
  return Time(int64_t(std::llround(ps)));
}

// Chunks of a prefill whose attention is timed one by one (more: evenly spaced ones stand for the rest).
constexpr int64_t kMaxTimedChunks = 1024;

// Sum over k in [k0, k1) of a + b k.
double sum_linear(double a, double b, int64_t k0, int64_t k1) {
  if (k1 <= k0) return 0;
  const double n = double(k1 - k0);
  return a * n + b * (double(k0) + double(k1 - 1)) * n / 2;
}

}  // namespace

double prefill_pair_flops(const ModelConfig& m, const Deployment& d, double graph_pair_flops) {
  return m.attention == AttentionKind::Mla ? 2.0 * double(d.q_heads) * double(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim)
                                           : graph_pair_flops;
}

ChunkAttention chunk_attention(const GpuCompute& gpu, int64_t q_heads, const PrefillMemory& pm, int64_t prompts, int64_t offset,
                               int64_t tokens, double pair_flops, double rows, double kv_token_layer_bytes, double act_bytes) {
  const double per_head = pair_flops / double(std::max<int64_t>(q_heads, 1));
  const double bw_r = pm.kv_read.raw(), bw_w = pm.kv_write.raw(), bw_a = pm.act.raw();
  ChunkAttention a;
  a.math_ps = gpu.prefill_attention_s(prompts, q_heads, offset, tokens, per_head, rows) * 1e12;
  a.read_ps = bw_r > 0 ? double(prompts) * double(offset) * kv_token_layer_bytes / bw_r * 1e12 : 0;   // the earlier KV read
  a.write_ps = bw_w > 0 ? double(prompts) * double(tokens) * kv_token_layer_bytes / bw_w * 1e12 : 0;  // the chunk's KV written
  a.act_ps = bw_a > 0 ? act_bytes / bw_a * 1e12 : 0;                                                  // activations
  return a;
}

PrefillReport time_prefill(const ModelConfig& m, const Deployment& d, const GpuWeights& w, const GpuCompute& gpu, const Network& net,
                           const PrefillMemory& pm, int64_t prompt, const PrefillParams& p, double routing_skew, int64_t prompts_total) {
  if (prompt < 1) throw ConfigError(fmt::format("prefill of {} tokens: a prompt needs at least one token", prompt));
  PrefillReport rep;
  const int64_t R = p.requests;
  const int64_t C = p.chunk > 0 ? std::min(p.chunk, prompt) : prompt;
  constexpr int64_t kMaxPassTokens = int64_t(1) << 22;
  if (R * C > kMaxPassTokens)
    throw ConfigError(
        fmt::format("serving.prefill: {} prompts x {} tokens per pass = {} token rows, more than the {} a prefill pass may "
                    "have; set serving.prefill.chunk (e.g. 8192) or fewer serving.prefill.requests",
                    R, C, R * C, kMaxPassTokens));
  const int64_t N = (prompt + C - 1) / C;  // chunks; the last has `last` tokens
  const int64_t last = prompt - (N - 1) * C;
  rep.prompt_tokens = prompt;
  rep.requests_per_rank = R;
  rep.chunk_tokens = C;
  rep.chunks = N;
  const Time overhead = gpu.kernel_overhead();

  // Times `count` chunks of `c` tokens at offsets k c' for k in [k0, k0 + count) (c' = C): the graph at M = R c rows.
  auto run_chunks = [&](int64_t c, int64_t k0, int64_t count) {
    if (count <= 0) return;
    const StepGraph g = build_step(m, d, w, gpu, net, std::vector<int64_t>(size_t(R * c), 1), routing_skew, prompts_total * c);
    const double kvb = double(g.kv_token_layer_bytes);
    for (const Segment& s : g.segments)
      if (s.kind != 3)
        for (uint32_t i = s.first_op; i < s.first_op + s.op_count; ++i) rep.kernels += g.ops[i].launches() * count;
    for (const Segment& s : g.segments) {
      if (s.kind == 3) continue;  // the head runs once, for the last token (below)
      ClassTimes seg;
      for (uint32_t i = s.first_op; i < s.first_op + s.op_count; ++i) {
        const Op& op = g.ops[i];
        if (!op.kv) {  // the same in every chunk of c tokens
          double wb = 0;
          KernelClassStats k;
          ClassTimes one = time_op(op, w, m, pm, overhead, wb, k);
          for (Time& x : one.t) x = x * double(count);
          seg += one;
          k.time = k.time * double(count), k.compute_bound = k.compute_bound * double(count),
          k.memory_bound = k.memory_bound * double(count);
          k.flops *= double(count), k.bytes *= double(count);
          rep.breakdown.kernels[size_t(math_class(op, w))] += k;
          rep.weight_bytes += wb * double(count);
          rep.flops += op.flops * double(count);
          continue;
        }
        // Causal attention of chunk k (offset o = k C): pairs = R (c o + c (c + 1) / 2), the graph's FLOPs per pair
        // (its contexts are all 1: op.flops is per pair x R c); each chunk a kernel of its own (chunk_attention).
        const double per_pair = prefill_pair_flops(m, d, op.flops / double(R * c));
        const double rows = op.rows * double(c);  // query rows sharing one KV head (the curve's M)
        // Each chunk is timed on its own (max of math and transfers, as a kernel); past kMaxTimedChunks chunks the
        // sum is taken over evenly spaced chunks (each standing for its share of the run).
        const int64_t k1 = k0 + count;
        const int64_t samples = std::min<int64_t>(count, kMaxTimedChunks);
        double attn_ps = 0, read_ps = 0, write_ps = 0, compute_bound = 0, memory_bound = 0, kflops = 0, kbytes = 0;  // summed
        for (int64_t j = 0; j < samples; ++j) {
          const int64_t k = samples == count ? k0 + j : k0 + int64_t(std::llround(double(j) * double(count - 1) / double(samples - 1)));
          const double weight = samples == count ? 1.0 : double(count) / double(samples);
          const double o = double(k) * double(C);
          const ChunkAttention a = chunk_attention(gpu, d.q_heads, pm, R, int64_t(o), c, per_pair, rows, kvb, double(op.act_bytes.raw()));
          if (a.compute_bound()) {
            attn_ps += a.math_ps * weight;
            compute_bound += a.math_ps * weight;
          } else {
            read_ps += a.read_ps * weight;
            write_ps += a.write_ps * weight;
            attn_ps += a.act_ps * weight;
            memory_bound += a.transfers_ps() * weight;
          }
          kflops += per_pair * double(R) * (double(c) * o + double(c) * double(c + 1) / 2) * weight;
          kbytes += (double(R) * (o + double(c)) * kvb + double(op.act_bytes.raw())) * weight;
        }
        seg[OpClass::Attention] += checked_ps(attn_ps, prompt);
        seg[OpClass::KvRead] += checked_ps(read_ps, prompt);
        seg[OpClass::KvWrite] += checked_ps(write_ps, prompt);
        KernelClassStats ks;
        ks.compute_bound = checked_ps(compute_bound, prompt);
        ks.memory_bound = checked_ps(memory_bound, prompt);
        ks.time = checked_ps(compute_bound + memory_bound + double((overhead * double(op.kernels * count)).raw()), prompt);
        ks.flops = kflops;
        ks.bytes = kbytes;
        rep.breakdown.kernels[size_t(OpClass::Attention)] += ks;
        seg[OpClass::Overhead] += overhead * double(op.kernels * count);
        const double f0 = per_pair * double(R) * double(c) * double(c + 1) / 2, f1 = per_pair * double(R) * double(c) * double(C);
        rep.flops += sum_linear(f0, f1, k0, k1);
        rep.kv_read_bytes += sum_linear(0, double(R) * double(C) * kvb, k0, k1);
        rep.kv_write_bytes += double(R) * double(c) * kvb * double(count);
      }
      if (ClassTimes* slot = segment_slot(rep.breakdown, s)) *slot += seg;
      rep.breakdown.add(s.kind == 1 || s.kind == 2 ? s.layer : -1, seg);
    }
  };
  run_chunks(C, 0, last == C ? N : N - 1);
  if (last != C) run_chunks(last, N - 1, 1);

  // The head: final norm and LM head for the last token of each prompt.
  {
    const StepGraph g = build_step(m, d, w, gpu, net, std::vector<int64_t>(size_t(R), 1), routing_skew, prompts_total);
    for (const Segment& s : g.segments) {
      if (s.kind != 3) continue;
      ClassTimes seg;
      for (uint32_t i = s.first_op; i < s.first_op + s.op_count; ++i) {
        KernelClassStats k;
        seg += time_op(g.ops[i], w, m, pm, overhead, rep.weight_bytes, k);
        rep.breakdown.kernels[size_t(math_class(g.ops[i], w))] += k;
        rep.flops += g.ops[i].flops;
        rep.kernels += g.ops[i].launches();
      }
      rep.breakdown.head += seg;
      rep.breakdown.add(-1, seg);
    }
  }
  rep.time = rep.breakdown.total.total();
  return rep;
}

Json PrefillReport::json() const {
  return {{"prompt_tokens", prompt_tokens},
          {"requests_per_rank", requests_per_rank},
          {"chunk_tokens", chunk_tokens},
          {"chunks", chunks},
          {"time_ms", to_s(time) * 1e3},
          {"flops_per_gpu", flops},
          {"bytes_per_gpu", {{"weights", weight_bytes}, {"kv_read", kv_read_bytes}, {"kv_write", kv_write_bytes}}},
          {"by_class_ms", breakdown.total.json_ms()}};
}

RequestLatency request_latency(Time ttft, Time kv_transfer, Time step, int64_t output) {
  RequestLatency r;
  r.ttft = ttft;
  r.kv_transfer = kv_transfer;
  r.tpot = step;
  r.end_to_end = ttft + kv_transfer + step * double(std::max<int64_t>(output - 1, 0));
  return r;
}

Json RequestLatency::json() const {
  auto ms = [](Time t) { return to_s(t) * 1e3; };
  return {{"ttft_ms", ms(ttft)}, {"kv_transfer_ms", ms(kv_transfer)}, {"tpot_ms", ms(tpot)}, {"end_to_end_ms", ms(end_to_end)}};
}

}  // namespace bitline::llm
