#include "llm/gpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace bitline::llm {

const Registry<KernelModel>& kernel_models() {
  static const Registry<KernelModel> r(
      "kernel model",
      {{"tiles", "the library kernels' CTA tiles and waves: GEMMs by shape, FlashAttention by sequence, split-KV decode attention",
        KernelModel::Tiles},
       {"curve", "one utilisation curve u(M) = util_max M / (M + util_half_rows) for every kernel", KernelModel::Curve}});
  return r;
}

GpuCompute::GpuCompute(double bf16_flops, const ComputeParams& p, Bandwidth hbm, Bandwidth weights, Bandwidth weight_hbm)
    : peak_(bf16_flops), p_(p), hbm_(hbm), weights_(weights.raw() > 0 ? weights : hbm), weight_hbm_(weight_hbm) {}

double GpuCompute::utilisation(double rows) const {
  rows = std::max(rows, 1.0);
  return p_.util_max * rows / (rows + p_.util_half_rows);
}

double GpuCompute::util_max(MathType t) const {
  if (t == MathType::Fp4 && p_.fp4_util_max > 0) return p_.fp4_util_max;
  return t != MathType::Bf16 && p_.fp8_util_max > 0 ? p_.fp8_util_max : p_.util_max;
}

double GpuCompute::weight_efficiency(MathType t) const {
  return t != MathType::Bf16 && p_.fp8_weight_efficiency > 0 ? p_.fp8_weight_efficiency : p_.weight_efficiency;
}

Time GpuCompute::time(double flops, double rows, bool fp8) const {
  if (flops <= 0) return Time{};
  return ps(flops / (peak(fp8) * utilisation(rows)) * 1e12);
}

double GpuCompute::peak(MathType t) const {
  switch (t) {
    case MathType::Bf16:
      return peak_;
    case MathType::Fp8:
      return peak_ * p_.fp8_speedup;
    case MathType::Fp4:
      return peak_ * p_.fp4_speedup;
  }
  throw std::logic_error("unhandled math type");
}

namespace {
double ceil_div(double a, double b) { return std::ceil(a / b - 1e-9); }
// Seconds to move `bytes` at `bw` (0 when the bandwidth is not modelled).
double seconds(double bytes, Bandwidth bw) { return bw.raw() > 0 ? bytes / bw.raw() : 0.0; }
}  // namespace

double GpuCompute::operand_bytes(MathType t) {
  switch (t) {
    case MathType::Bf16:
      return 2.0;
    case MathType::Fp8:
      return 1.0;
    case MathType::Fp4:
      return 0.5;
  }
  throw std::logic_error("unhandled math type");
}

Time GpuCompute::weight_stream(double weight_bytes, MathType t) const {
  // A kernel fills its load pipeline before its first weights arrive, then streams them; the fill cannot overlap the
  // stream it starts.
  const double stream = seconds(weight_bytes, Bandwidth(weight_hbm_.raw() * weight_efficiency(t)));
  return stream > 0 ? p_.gemm_tile_latency + ps(stream * 1e12) : Time{};
}

GemmKernel GpuCompute::gemm(const GemmShape& s, MathType t, double weight_bytes, double rows) const {
  GemmKernel best;
  const double flops = 2.0 * s.m * s.n * s.k * s.groups;
  if (flops <= 0) return best;
  const double pk = peak(t);
  switch (*p_.kernels) {
    case KernelModel::Curve:
      best.math = ps(flops / (pk * utilisation(rows) * util_max(t) / p_.util_max) * 1e12);
      return best;
    case KernelModel::Tiles:
      break;
  }
  const double sms = double(p_.sms), sm_rate = pk / sms * util_max(t);  // FLOP/s of one SM's main loop
  const Bandwidth sm_bw(hbm_.raw() / sms);                              // an SM's share of HBM
  const Bandwidth sm_l2(p_.l2_bandwidth.raw() / sms);                   // an SM's share of L2 (0: not timed)
  const double elem = operand_bytes(t);                                 // bytes of one operand element
  const double mem = seconds(weight_bytes, weights_);
  double best_cost = 0, best_math = 0;
  bool found = false;
  for (int64_t tm : p_.gemm_tile_rows)
    for (int64_t tn : p_.gemm_tile_cols) {
      if (tm * tn > p_.gemm_tile_max) continue;
      const double tiles = ceil_div(s.m, double(tm)) * ceil_div(s.n, double(tn)) * std::max(1.0, std::ceil(s.groups - 1e-9));
      for (int64_t split = 1; split <= p_.gemm_max_split; split *= 2) {
        if (split > 1 && s.k / double(split) < 256) break;
        const double ctas = tiles * double(split), waves = ceil_div(ctas, sms);
        const double out_bytes = split > 1 ? 4.0 : 2.0;
        // The main loop: its MMAs, or its operand tiles from L2 (the rows and columns that exist), whichever is longer.
        const double k_split = s.k / double(split);
        const double mma = 2.0 * double(tm) * double(tn) * k_split / sm_rate;
        const double operands =
            seconds((std::min(double(tm), s.m) + std::min(double(tn), s.n) / double(p_.gemm_cta_group)) * k_split * elem, sm_l2);
        const double tile = std::max(mma, operands) + seconds(double(tm) * double(tn) * out_bytes, sm_bw) + to_s(p_.gemm_tile_latency);
        double math = waves * tile;
        if (split > 1)  // the reduction reads the FP32 partials and writes the result
          math += seconds(s.m * s.n * s.groups * (4.0 * double(split) + 2.0), hbm_) + to_s(p_.kernel_overhead);
        const double cost = std::max(math, mem);
        if (!found || cost < best_cost - 1e-15 || (cost <= best_cost + 1e-15 && math < best_math)) {
          found = true;
          best_cost = cost;
          best_math = math;
          best.tile_m = tm;
          best.tile_n = tn;
          best.split = split;
          best.ctas = int64_t(ctas);
          best.waves = int64_t(waves);
          best.l2_bound = operands > mma;
        }
      }
    }
  if (!found)
    throw ConfigError(
        fmt::format("llm.compute.gemm_tile_max = {}: no CTA tile of gemm_tile_rows x gemm_tile_cols is that small "
                    "(the smallest is {} x {}); a GEMM has no kernel to run",
                    p_.gemm_tile_max, *std::min_element(p_.gemm_tile_rows.begin(), p_.gemm_tile_rows.end()),
                    *std::min_element(p_.gemm_tile_cols.begin(), p_.gemm_tile_cols.end())));
  const Time floor = weight_stream(weight_bytes, t);
  best.weight_stream = to_s(floor) > best_math;
  best.math = best.weight_stream ? floor : ps(best_math * 1e12);
  return best;
}

Time GpuCompute::prefill_attention(int64_t requests, int64_t heads, int64_t offset, int64_t chunk, double flops_per_pair, double rows,
                                   bool causal) const {
  return ps(prefill_attention_s(requests, heads, offset, chunk, flops_per_pair, rows, causal) * 1e12);
}

double GpuCompute::prefill_attention_s(int64_t requests, int64_t heads, int64_t offset, int64_t chunk, double flops_per_pair, double rows,
                                       bool causal) const {
  if (requests <= 0 || heads <= 0 || chunk <= 0 || flops_per_pair <= 0) return 0.0;
  const double pk = peak(MathType::Bf16);
  switch (*p_.kernels) {
    case KernelModel::Curve: {
      // Causal: query i of the chunk sees offset + i keys; otherwise all offset + chunk.
      const double pairs = double(requests) * (double(chunk) * double(offset) +
                                               (causal ? double(chunk) * double(chunk + 1) / 2 : double(chunk) * double(chunk)));
      return pairs * flops_per_pair * double(heads) / (pk * utilisation(rows));
    }
    case KernelModel::Tiles:
      break;
  }
  const int64_t B = p_.attention_block;
  const double b = double(B), sms = double(p_.sms);
  // One KV block of one CTA: its MMAs, then the softmax's b^2 exponentials on the SM's special-function units.
  const double block = flops_per_pair * b * b / (pk / sms * p_.attention_efficiency) + b * b / exp_rate_per_sm();
  // A CTA of query tile i takes fixed + ceil(keys / b) blocks, where it sees offset + chunk keys (every tile when not
  // causal, the last one when causal) or, causal, offset + (i + 1) b: ceil(offset / b) + i + 1 blocks. The sum over
  // the tiles in closed form (a long prompt has thousands of tiles): the last tile is the longest.
  const int64_t q_tiles = (chunk + B - 1) / B;
  const double fixed = p_.attention_fixed_blocks;
  const double longest = fixed + double((offset + chunk + B - 1) / B);  // blocks of a tile that sees every key
  const double n = double(q_tiles - 1);                                 // causal: the tiles before the last
  const double blocks = causal ? n * (fixed + double((offset + B - 1) / B) + 1) + n * (n - 1) / 2 + longest : double(q_tiles) * longest;
  const double work = blocks * block * double(requests) * double(heads);
  return std::max(work / sms, longest * block);
}

double GpuCompute::exp_rate_per_sm() const {
  return p_.softmax_rate > 0 ? p_.softmax_rate / double(p_.sms) : std::numeric_limits<double>::infinity();
}

Time GpuCompute::decode_attention(const std::vector<int64_t>& contexts, int64_t kv_heads, double group, double flops_per_token,
                                  double total_flops, double rows, double fp8_kv_bytes) const {
  if (contexts.empty() || kv_heads <= 0) return Time{};
  // Multi-head attention (one query head per KV head) over an FP8 KV cache: at no more than the kernel's own rate,
  // where the kind sets one (measured: it times the same on an H100 and an H200; grouped-query kernels show no such
  // FP8-specific limit).
  const double fp8_floor_s =
      group <= 1 && fp8_kv_bytes > 0 && p_.fp8_kv_attention_rate.raw() > 0 ? fp8_kv_bytes / p_.fp8_kv_attention_rate.raw() : 0.0;
  const double pk = peak(MathType::Bf16);
  switch (*p_.kernels) {
    case KernelModel::Curve:
      return ps(std::max(total_flops > 0 ? total_flops / (pk * utilisation(rows)) : 0.0, fp8_floor_s) * 1e12);
    case KernelModel::Tiles:
      break;
  }
  const double sms = double(p_.sms);
  // One SM, its exponentials folded into decode_attention_efficiency.
  const double rate = pk / sms * p_.decode_attention_efficiency * std::min(1.0, group / double(p_.decode_mma_rows));
  const double per_token = group * flops_per_token / rate;
  // Splits of each request's context so that the CTAs fill the SMs (FlashDecoding), at least one KV block each.
  const double base = double(contexts.size()) * double(kv_heads);
  double work = 0, longest = 0;
  for (int64_t ctx : contexts) {
    const double split = decode_split(ctx, base);
    const double cta = to_s(p_.gemm_tile_latency) + double(ctx) / split * per_token;
    work += cta * split * double(kv_heads);
    longest = std::max(longest, cta);
  }
  return ps(std::max({work / sms, longest, fp8_floor_s}) * 1e12);
}

double GpuCompute::decode_split(int64_t ctx, double base) const {
  const double blocks = std::max(1.0, ceil_div(double(ctx), double(p_.attention_block)));
  return std::clamp(ceil_div(double(p_.sms), base), 1.0, blocks);
}

int64_t GpuCompute::decode_attention_ctas(const std::vector<int64_t>& contexts, int64_t kv_heads) const {
  const double base = double(contexts.size()) * double(kv_heads);
  double ctas = 0;
  for (int64_t ctx : contexts) ctas += decode_split(ctx, base) * double(kv_heads);
  return int64_t(ctas);
}

}  // namespace bitline::llm
