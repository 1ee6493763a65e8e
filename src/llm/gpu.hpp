// The GPU's compute and the network between GPUs, for a decode step.
//
// Compute. A kernel of F FLOPs whose GEMMs have M rows (tokens; for decode
// attention the query heads sharing one KV head) takes F / (peak * u(M)) with
// the utilisation curve u(M) = util_max * M / (M + util_half_rows): decode
// GEMMs with few tokens use a small part of each tensor-core tile. FP8
// weights (DeepSeek-V3) run at fp8_speedup x the BF16 peak.
//
// Collectives over a group of g GPUs per node on n nodes (ring / hierarchical
// algorithms, each GPU sending and receiving at once):
//   all-reduce of S bytes     2 (g-1)/g S / B_nvlink + 2 (n-1)/n (S/g) / B_rdma + latency
//   all-gather, reduce-scatter   half of that (S = the gathered size)
//   all-to-all                max(intra bytes / B_nvlink, inter bytes / B_rdma) + latency
// where latency is the NVLink latency, or the RDMA latency once the group spans nodes.
#pragma once

#include "core/units.hpp"
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

/// Bytes a collective puts on each GPU's links (for energy), and its time.
struct Collective {
  Time time{};
  Bytes nvlink{}, rdma{};
};

class Network {
 public:
  explicit Network(const NetworkParams& p) : p_(p) {}
  /// A group of `gpus` GPUs (consecutive, filling nodes of gpus_per_node).
  Collective all_reduce(Bytes s, int64_t gpus) const;
  Collective all_gather(Bytes gathered, int64_t gpus) const;
  Collective reduce_scatter(Bytes whole, int64_t gpus) const { return all_gather(whole, gpus); }
  /// All-to-all: each GPU sends `intra` bytes to GPUs of its node and `inter` bytes to other nodes.
  Collective all_to_all(Bytes intra, Bytes inter, bool spans_nodes) const;
  int64_t gpus_per_node() const { return p_.gpus_per_node; }
  const NetworkParams& params() const { return p_; }

 private:
  NetworkParams p_;
};

}  // namespace bitline::llm
