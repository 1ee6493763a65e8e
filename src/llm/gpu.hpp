// The GPU's compute and the network between GPUs, for a decode step.
//
// Compute. A kernel of F FLOPs whose GEMMs have M rows (tokens; for decode
// attention the query heads sharing one KV head) takes F / (peak * u(M)) with
// the utilisation curve u(M) = util_max * M / (M + util_half_rows): decode
// GEMMs with few tokens use a small part of each tensor-core tile. FP8
// weights (DeepSeek-V3) run at fp8_speedup x the BF16 peak.
//
// The collectives between GPUs (Network) are in llm/collectives.hpp.
#pragma once

#include "core/units.hpp"
#include "llm/collectives.hpp"
#include "llm/params.hpp"

namespace bitline::llm {

class GpuCompute {
 public:
  GpuCompute(double bf16_flops, const ComputeParams& p) : peak_(bf16_flops), p_(p) {}
  /// u(M), the fraction of peak a kernel with M rows reaches.
  double utilisation(double rows) const;
  /// Time of `flops` at M = `rows` (FP8 at fp8_speedup x peak).
  Time time(double flops, double rows, bool fp8) const;
  Time kernel_overhead() const { return p_.kernel_overhead; }
  double peak(bool fp8) const { return peak_ * (fp8 ? p_.fp8_speedup : 1.0); }

 private:
  double peak_;
  ComputeParams p_;
};

}  // namespace bitline::llm
