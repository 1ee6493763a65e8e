// One GEMM kernel alone, as a decode step times it (`bitline accel gemm`; llm/gemm.cpp).
#pragma once

#include "core/units.hpp"
#include "llm/gpu.hpp"
#include "llm/model.hpp"
#include "llm/names.hpp"

namespace bitline::llm {

/// One GEMM kernel alone, timed as a step times it (`bitline accel gemm`): M x K activations (16-bit) times a K x N
/// weight matrix held in the GPU's HBM in the number format `p`, M x N outputs (16-bit). time = max(math, transfers):
/// the library kernel's math (tile, split-K, waves; the weight-streaming floor included) against the weights and
/// activations at the achievable HBM bandwidth (hbm_efficiency). It is a kernel's duration as a profiler reports it:
/// the launch gap (llm.compute.kernel_overhead) is not in it.
struct GemmTiming {
  /// What set the time: the tiles' math, the weight-streaming kernel's rate (weight_efficiency of the peak HBM
  /// bandwidth), the bytes at the achievable HBM bandwidth (hbm_efficiency), or the tiles' operand loads from L2
  /// (l2_bandwidth).
  enum class Bound { Compute, WeightStream, Memory, L2 };
  GemmKernel kernel;     // the kernel chosen and its math time (the weight-streaming floor included)
  Time weight_stream{};  // GpuCompute::weight_stream: the pipeline fill, then the weights at the weight-streaming rate
  Time transfer{};       // weights and activations at the achievable HBM bandwidth
  Time time{};           // max(kernel.math, transfer)
  double flops = 0, weight_bytes = 0, act_bytes = 0;
  Bound bound() const;
  static const char* name(Bound b);
};
/// Dimensions above this are refused (ConfigError): a GEMM alone is a kernel, not a model.
inline constexpr double kMaxGemmDim = 1 << 20;
/// ConfigError for precision `model` (a GEMM alone has no model), for FP4 on a kind without FP4 tensor cores, for a
/// dimension outside [1, kMaxGemmDim] and for a GEMM that would take more than 10^6 s.
GemmTiming time_gemm(const KindParams& k, const GemmShape& s, Precision p);

}  // namespace bitline::llm
