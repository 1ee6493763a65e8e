// The GPU's compute: how long the math of a kernel takes (llm.compute.kernels).
//
// tiles (default): the kernels as the libraries run them, CTA tile by CTA tile, in waves over the SMs.
//  - GEMM (M x N x K, `groups` of them): the library kernel is the best of its CTA tiles (tm x tn from
//    gemm_tile_rows x gemm_tile_cols, tm tn <= gemm_tile_max) and K splits s (split-K, at least 256 of K per
//    split): ctas = groups ceil(M/tm) ceil(N/tn) s run in waves = ceil(ctas / sms); a tile takes
//      max(2 tm tn K/s / (peak / sms x util_max),  its main loop at the measured MAMF efficiency, or
//          (min(tm, M) + min(tn, N)/g) K/s b         its operand tiles (b bytes an element) from L2 at the SM's
//            / (l2_bandwidth / sms))                share of the measured L2 bandwidth, whichever is longer
//      + tm tn out_bytes / (HBM / sms)              storing its output tile (FP32 partials under split-K)
//      + gemm_tile_latency                          filling the load pipeline
//    A tile reuses each operand byte 2 tm tn / ((tm + tn) b) times: on an H100 (9.9 TB/s of L2) a 64x64 tile's loop
//    runs at ~40% of its MMA rate, 128x128 at ~80%, 128x256 at its MMA rate, so skinny GEMMs cannot take small
//    tiles for free. g = gemm_cta_group SMs compute one MMA tile together (Blackwell's CTA pair, g = 2): each
//    loads its own tm rows of A and tn/g of the tile's B columns, which the pair's MMAs read from both SMs.
//    plus, under split-K, a reduction pass over the FP32 partials. "Best" minimises max(math, weight bytes /
//    weight bandwidth): a decode GEMM with few rows is bound by streaming its weights, whatever its tile.
//    Tile and wave quantization follow: M = 130 rows pad to 256 with 128-row tiles, 160 tiles on 132 SMs take
//    two waves. A GEMM whose weights are in HBM takes at least gemm_tile_latency + weight bytes / (weight_efficiency x
//    peak HBM): the pipeline fill, then the measured rate of weight-streaming kernels, fp8_weight_efficiency for
//    FP8/FP4 math where set (the memory system then times its bytes at hbm_efficiency); such a kernel is accounted as
//    a weight read (GemmKernel::weight_stream).
//  - prefill attention (FlashAttention-2/3): a CTA per (request, query head, block of `attention_block` query
//    rows) loops over the KV blocks it sees (causal: those up to its last row), each block 4 B^2 d FLOPs at
//    attention_efficiency x (peak / sms) then B^2 exponentials at softmax_rate / sms (the softmax on the special-function
//    units, not hidden behind the MMAs), plus attention_fixed_blocks blocks of fixed work; CTAs of unequal length
//    (causal) are balanced over the SMs: time = max(work / sms, longest CTA).
//  - decode attention (split-KV, FlashDecoding): a CTA per (request, KV head, split of the context), splits chosen
//    so that the CTAs fill the SMs; a CTA takes gemm_tile_latency + its math (the query heads sharing a KV head
//    fill min(1, g / decode_mma_rows) of a 16-row tensor-core MMA at decode_attention_efficiency, exponentials
//    included); the KV bytes stream in the memory model. Multi-head attention over an FP8 KV cache takes at least
//    its KV bytes / fp8_kv_attention_rate (the kernel's own rate, where set).
// curve: F / (peak u(M)), u(M) = util_max M / (M + util_half_rows) (the model before the tile model).
//
// The bytes a kernel reads and writes are timed by the memory system (memory.hpp, timing.hpp), which overlaps
// them with this math (max, not sum). FP8 GEMMs run at fp8_speedup x the BF16 peak, FP4 at fp4_speedup x.
// The collectives between GPUs (Network) are in llm/collectives.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.hpp"
#include "llm/collectives.hpp"
#include "llm/params.hpp"

namespace bitline::llm {

/// The number format a kernel's tensor-core math runs in.
enum class MathType : uint8_t { Bf16, Fp8, Fp4 };

/// A GEMM of `groups` independent M x N x K products (routed experts, MLA's per-head absorbed products).
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double groups = 1;
  bool operator==(const GemmShape&) const = default;
};

/// The library kernel chosen for a GEMM and its math time.
struct GemmKernel {
  Time math{};  // waves x tile time (+ the split-K reduction), or the weight-streaming floor where that is longer
  int64_t tile_m = 0, tile_n = 0, split = 1, ctas = 0, waves = 0;
  bool weight_stream = false;  // the floor set `math`: the kernel streams its weights (a weight read, not math)
  bool l2_bound = false;       // the chosen tile's main loop waits on its operand tiles from L2, not on its MMAs
};

class GpuCompute {
 public:
  /// `hbm`: the achievable HBM bandwidth (output tiles, split-K partials; 0: not timed); `weights`: the bandwidth
  /// the weights stream at (HBM, or HBF's flash), used to choose a GEMM's kernel (0: `hbm`); `weight_hbm`: the peak
  /// HBM bandwidth of weights kept in HBM, of which a weight-streaming GEMM reaches weight_efficiency(t) (0: no floor).
  GpuCompute(double bf16_flops, const ComputeParams& p, Bandwidth hbm = {}, Bandwidth weights = {}, Bandwidth weight_hbm = {});
  /// kernels = curve: u(M), the fraction of peak a kernel with M rows reaches.
  double utilisation(double rows) const;
  /// kernels = curve: time of `flops` at M = `rows` (FP8 at fp8_speedup x peak).
  Time time(double flops, double rows, bool fp8) const;
  Time kernel_overhead() const { return p_.kernel_overhead; }
  double peak(bool fp8) const { return peak_ * (fp8 ? p_.fp8_speedup : 1.0); }
  double peak(MathType t) const;
  /// The main-loop fraction of the peak a large GEMM of math type `t` reaches (fp4_util_max for FP4, fp8_util_max for
  /// FP8 and for FP4 without its own, else util_max).
  double util_max(MathType t) const;
  /// The fraction of the peak HBM bandwidth a weight-streaming GEMM of math type `t` reaches (fp8_weight_efficiency
  /// for FP8/FP4 where set, else weight_efficiency).
  double weight_efficiency(MathType t) const;
  KernelModel model() const { return *p_.kernels; }
  /// Bytes of one GEMM operand element in math type `t` (2, 1, 0.5).
  static double operand_bytes(MathType t);
  const ComputeParams& params() const { return p_; }

  /// The weight-streaming floor of a GEMM whose `weight_bytes` are in HBM: the pipeline fill (gemm_tile_latency), then
  /// the weights at weight_efficiency(t) x the peak HBM bandwidth; 0 when no weights stream from HBM.
  Time weight_stream(double weight_bytes, MathType t) const;
  /// The math of a GEMM (`rows`: M of the utilisation curve under kernels = curve; `weight_bytes`: what it streams).
  GemmKernel gemm(const GemmShape& s, MathType t, double weight_bytes, double rows) const;
  /// Prefill attention of `requests` prompts, `heads` query heads each: a chunk of `chunk` query rows after
  /// `offset` earlier tokens (causal: row i sees offset + i keys; otherwise all offset + chunk); `flops_per_pair`
  /// per (query, key) pair and query head (GQA: 4 head_dim).
  /// `rows`: M of the curve (kernels = curve).
  Time prefill_attention(int64_t requests, int64_t heads, int64_t offset, int64_t chunk, double flops_per_pair, double rows,
                         bool causal = true) const;
  /// The same in seconds (no range limit: a caller checks the sum of many against Time's).
  double prefill_attention_s(int64_t requests, int64_t heads, int64_t offset, int64_t chunk, double flops_per_pair, double rows,
                             bool causal = true) const;
  /// Decode attention over `contexts` (tokens of KV per request) with `kv_heads` KV heads on this GPU, `group`
  /// query heads sharing each, `flops_per_token` per (token, query head). `total_flops`, `rows`: the curve's.
  /// `fp8_kv_bytes`: the FP8 KV cache it reads (0 for a 16-bit cache); multi-head attention (group 1) reads it at no
  /// more than fp8_kv_attention_rate.
  Time decode_attention(const std::vector<int64_t>& contexts, int64_t kv_heads, double group, double flops_per_token, double total_flops,
                        double rows, double fp8_kv_bytes = 0) const;
  /// The CTAs decode_attention runs over `contexts`: each request's KV split so that the CTAs fill the SMs.
  int64_t decode_attention_ctas(const std::vector<int64_t>& contexts, int64_t kv_heads) const;

 private:
  /// How many CTAs one request's KV of `ctx` tokens is split over when `base` (requests x KV heads) CTAs run unsplit.
  double decode_split(int64_t ctx, double base) const;
  /// One SM's exponentials per second (softmax_rate / sms); infinite where softmax_rate is 0 (not timed apart).
  double exp_rate_per_sm() const;

  double peak_;
  ComputeParams p_;
  Bandwidth hbm_{}, weights_{}, weight_hbm_{};
};

}  // namespace bitline::llm
