// The time of one engine iteration (one forward pass) of a mixed batch: prompt chunks being prefilled and requests
// decoding one token each, on a Server (llm/serving.hpp). It reuses the two models of src/llm:
//   decode  Server::step_at: the decode step of b requests (per attention rank: ceil(b / ranks)) at the batch's
//           mean context (each request attends over its KV; the KV reads are linear in the total, so the mean
//           stands for the batch)
//   prefill time_prefill (llm/prefill.hpp) of one pass of n prompt tokens without its causal attention: L(n)
//           (projections, FFN/experts, norms, collectives, kernel overheads, the head); and each chunk's
//           attention A(o, c), c queries after o cached tokens, timed as time_prefill times one chunk's attention
//           kernels (GpuCompute::prefill_attention: FlashAttention tiles and waves; the earlier KV read, the
//           chunk's KV written, at least the larger of math and transfers, plus the launch overheads)
// A pass with prompt chunks (c_i tokens at offset o_i, P = sum c_i) and b decodes takes
//   T = L(P) + sum_i A(o_i, c_i) + D(b, ctx) - S(b, ctx)     (S only when both P > 0 and b > 0)
// D the decode step, S its weight reads, kernel overheads and collectives on the critical path: one pass reads the
// weights once, launches one set of kernels and one set of collectives, which the prefill part already counts
// (an assumption: the decode GEMMs' extra rows hide under the prefill's; docs/serving.md, "Iteration time").
// A(0, n) is exactly the attention part of time_prefill(n) (a test checks it), so a lone prompt's pass is the prefill
// model's time.
//
// Memoised by shape: D at (requests per rank, context), L at n, A at (o, c) (exact: it is a few kernel-model calls). With
// serve.buckets_per_octave = B > 0, a value above serve.exact_below is timed at the two neighbouring points of a geometric grid (B per
// doubling, rounded to integers) and interpolated linearly (bilinearly for D); B = 0 times every shape exactly. Both are memoised, so a run
// of 10^5 requests times a few thousand shapes.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "llm/prefill.hpp"
#include "llm/serving.hpp"
#include "serve/params.hpp"

namespace bitline::serve {

/// One prompt chunk of a pass: `tokens` new tokens after `offset` tokens already in the KV.
struct Chunk {
  int64_t offset = 0, tokens = 0;
};

class IterationModel {
 public:
  /// `mean_output`: the workload's mean output tokens (the decode step's erase accounting on HBF).
  IterationModel(const llm::Server& s, const ServeParams& p, int64_t mean_output);

  /// A pass of `chunks` and `decodes` requests decoding at mean context `decode_context` (tokens attended).
  Time pass(const std::vector<Chunk>& chunks, int64_t decodes, double decode_context);
  /// The parts (exposed for tests): the decode step and its shared part, L(n) and A(n).
  struct Decode {
    double step_ps = 0, shared_ps = 0;
  };
  Decode decode(int64_t requests, double context);
  double linear_ps(int64_t tokens);
  /// A(o, c): the causal attention of `tokens` queries after `offset` cached tokens, every layer, on one GPU.
  double attention_ps(int64_t offset, int64_t tokens);
  /// time_prefill's attention part of one pass of `tokens` (the reference A(0, n) must equal).
  double prefill_attention_ps(int64_t tokens);
  /// Shapes timed so far (distinct evaluations of the two models).
  int64_t decode_evaluations() const { return int64_t(dec_.size()); }
  int64_t prefill_evaluations() const { return int64_t(pre_.size()); }
  /// Kernels (and collectives) one forward pass launches.
  int64_t pass_kernels() const { return pass_kernels_; }

 private:
  struct Prefill {
    double linear_ps = 0, attention_ps = 0;
  };
  Decode decode_exact(int64_t per_rank, int64_t context);
  Prefill prefill_exact(int64_t tokens);
  Prefill prefill(int64_t tokens);
  /// The grid points around x (lo <= x <= hi) and the weight of hi.
  struct Span {
    int64_t lo = 0, hi = 0;
    double w = 0;
  };
  /// The grid cell of the last x above exact_below that span() placed in one (llround of the grid points k and
  /// k + 1). An x at least one token inside it is in it too (a grid point is within half a token of its rounding, and
  /// far more than log2's rounding error from it): span() places it there without log2 and exp2.
  struct Cell {
    int64_t lo = 0, hi = -1;
  };
  Span span(double x, Cell& cell) const;
  Cell requests_cell_, context_cell_;
  // The decode corners last interpolated between (decode()): the cells, and each corner's value once looked up.
  struct Corners {
    int64_t r_lo = -1, r_hi = -1, c_lo = -1, c_hi = -1;
    Decode d[2][2];
    bool known[2][2] = {{false, false}, {false, false}};
  } corners_;

  const llm::Server& s_;
  ServeParams p_;
  int64_t mean_output_;
  int64_t ranks_;
  llm::EngineOverheads engine_;
  std::unordered_map<uint64_t, Decode> dec_;
  std::unordered_map<int64_t, Prefill> pre_;
  std::unordered_map<uint64_t, double> attn_;
  // The attention kernels of one layer at one token row (llm::build_step), as time_prefill reads them.
  struct AttnOp {
    double per_pair = 0, rows = 0, act_bytes_per_row = 0;
    int64_t kernels = 0;
  };
  std::vector<AttnOp> attn_ops_;
  int64_t pass_kernels_ = 0;  // kernels (and collectives) one forward pass launches (as Server::step_at counts them)
  double kv_token_layer_bytes_ = 0;
  llm::PrefillMemory pm_;
};

}  // namespace bitline::serve
