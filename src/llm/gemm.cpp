#include "llm/gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace bitline::llm {

GemmTiming time_gemm(const KindParams& k, const GemmShape& s, Precision p) {
  if (p == Precision::Model) throw ConfigError("precision 'model': a GEMM alone has no model; give bf16, fp16, fp8 or fp4");
  check_precision(p, k);
  for (const double d : {s.m, s.k, s.n})
    if (!(d >= 1 && d <= kMaxGemmDim && d == std::floor(d)))
      throw ConfigError(fmt::format("GEMM {}x{}x{}: each of M, K, N must be a whole number in [1, {}]", s.m, s.k, s.n, kMaxGemmDim));
  const ModelConfig fmt_of = with_precision(ModelConfig{}, p);
  const bool quantized = p == Precision::Fp8 || p == Precision::Fp4;
  const MathType mt = p == Precision::Fp4 ? MathType::Fp4 : quantized ? MathType::Fp8 : MathType::Bf16;
  const Bandwidth peak(k.system.hbm.bandwidth_per_stack.raw() * double(k.system.hbm.stacks)),
      hbm(peak.raw() * k.llm.compute.hbm_efficiency);
  if (!(hbm.raw() > 0))
    throw ConfigError(fmt::format("GPU kind '{}' has no HBM (hbm.stacks = {}): a GEMM alone is timed with its weights in HBM", k.kind,
                                  k.system.hbm.stacks));
  const GpuCompute gpu(k.system.gpu.bf16_flops, k.llm.compute, hbm, hbm, peak);
  GemmTiming t;
  t.flops = 2.0 * s.m * s.k * s.n;
  t.weight_bytes = double(fmt_of.bytes_of(quantized, int64_t(s.k), int64_t(s.n)).raw());
  t.act_bytes = s.m * (s.k + s.n) * 2.0;
  // Refused before timing: the slowest a kernel can be is one SM doing all the math (a single tile), plus every byte
  // at the achievable HBM bandwidth and the weights at the weight-streaming rate; Time holds ~106 days.
  const double worst = t.flops / (gpu.peak(mt) * gpu.util_max(mt)) * double(std::max<int64_t>(k.llm.compute.sms, 1)) +
                       (t.weight_bytes + t.act_bytes) / hbm.raw() + t.weight_bytes / (peak.raw() * gpu.weight_efficiency(mt)) +
                       to_s(k.llm.compute.gemm_tile_latency) +
                       (gpu.model() == KernelModel::Curve ? t.flops / (gpu.peak(mt) * gpu.utilisation(s.m)) : 0.0);
  if (!(worst < 1e6))  // an OverflowError: the message lists the run's inputs (a --set may be what made it long)
    throw OverflowError(
        fmt::format("GEMM {}x{}x{} on GPU kind '{}' could take up to {:.3g} s; the limit is 1e6 s", s.m, s.k, s.n, k.kind, worst));
  t.kernel = gpu.gemm(s, mt, t.weight_bytes, s.m);
  t.weight_stream = gpu.weight_stream(t.weight_bytes, mt);
  t.transfer = ps((t.weight_bytes + t.act_bytes) / hbm.raw() * 1e12);
  t.time = std::max(t.kernel.math, t.transfer);
  return t;
}

GemmTiming::Bound GemmTiming::bound() const {
  if (transfer > kernel.math) return Bound::Memory;
  if (kernel.weight_stream) return Bound::WeightStream;
  return kernel.l2_bound ? Bound::L2 : Bound::Compute;
}

const char* GemmTiming::name(Bound b) {
  switch (b) {
    case Bound::Compute:
      return "compute";
    case Bound::WeightStream:
      return "weight_stream";
    case Bound::Memory:
      return "memory";
    case Bound::L2:
      return "l2";
  }
  return "?";
}

}  // namespace bitline::llm
