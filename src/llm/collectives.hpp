// Collectives between the GPUs of a decode step: how long each takes and the
// bytes it puts on each GPU's NVLink and RDMA links. NVLink bandwidth B_n and
// RDMA bandwidth B_r are per GPU and direction (llm.network: spec, NVLink 900
// GB/s bidirectional and cross-node ~9x less). A group of N GPUs fills nodes of
// g = min(N, gpus_per_node) GPUs on n = ceil(N / g) nodes.
//
// All-reduce of S bytes (llm.network.all_reduce):
//   ring (NCCL's default)  every GPU sends 2 (N-1)/N S; NCCL's rings cross each
//                          node boundary on a different NIC, so a GPU's share
//                          is (g-1)/g of it over NVLink and 1/g over its NIC,
//                          pipelined: max(NVLink part / B_n, RDMA part / B_r)
//   hierarchical           reduce-scatter in the node, all-reduce of S/g
//                          across nodes, all-gather in the node, one after the
//                          other: 2 (g-1)/g S / B_n + 2 (n-1)/n (S/g) / B_r
// All-gather and reduce-scatter: half of that (S = the gathered size).
// Expert-parallel all-to-all (dispatch; combine returns the same bytes), a
// token of s bytes, per GPU (llm.network.all_to_all):
//   nccl (default)  one message per destination GPU: s x (GPUs of its node
//                   holding one of its experts) over NVLink and s x (GPUs of
//                   other nodes holding one) over RDMA
//   dedup           DeepEP-style: one message per destination node over RDMA,
//                   forwarded inside that node over NVLink to the GPUs needing it
// time max(NVLink bytes / B_n, RDMA bytes / B_r). Every collective adds the
// NVLink latency, or the RDMA latency once it spans nodes.
// llm.network.collectives = measured replaces the ring inside a node by a measured nccl-tests curve: a collective of
// S bytes over n GPUs takes bus_factor(n) S / busbw(S) (all-reduce 2 (n-1)/n, all-gather and reduce-scatter (n-1)/n,
// nccl-tests' definition of bus bandwidth), busbw interpolated log-log in S, never less than the smallest measured
// size's time (the small-message latency floor). Collectives spanning nodes and the expert all-to-all keep the links.
// llm.network.node_all_reduce = nvls (NVLink SHARP, NVSwitch 3+): an all-reduce inside a node takes the faster of the
// busbw and nvls_busbw curves at its size (NCCL's tuner picks per size); each GPU then moves S bytes over NVLink.
#pragma once

#include <cstdint>
#include <string>

#include "core/units.hpp"
#include "llm/params.hpp"

namespace bitline::llm {

/// What a collective is, for the per-step report of time by kind.
enum class CollectiveKind : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll };
inline constexpr int kCollectiveKinds = 4;
/// "all_reduce", "all_gather", "reduce_scatter", "all_to_all" (the JSON keys).
std::string to_string(CollectiveKind k);

/// nccl-tests' bus factor of collective `k` over `gpus` GPUs: all-reduce 2 (n-1)/n, all-gather and reduce-scatter
/// (n-1)/n (bus bandwidth = bus factor x S / time); not for the all-to-all.
double bus_factor(CollectiveKind k, int64_t gpus);

/// Bytes a collective puts on each GPU's links (for energy), and its time.
struct Collective {
  Time time{};
  Bytes nvlink{}, rdma{};
  CollectiveKind kind = CollectiveKind::AllReduce;
};

/// Where one token goes in the expert-parallel dispatch, from the timed GPU (expected counts; routing_stats).
struct ExpertFanout {
  double node_gpus = 0;     // other GPUs of its node holding one of its experts
  double remote_gpus = 0;   // GPUs of other nodes holding one
  double remote_nodes = 0;  // other nodes holding one
  double relays = 0;        // per node reached: GPUs of that node other than the receiving one that need it (dedup)
};

class Network {
 public:
  /// ConfigError for a measured curve (llm.network.collectives = measured) that is not one.
  explicit Network(const NetworkParams& p);
  /// A group of `gpus` GPUs (consecutive, filling nodes of gpus_per_node).
  Collective all_reduce(Bytes s, int64_t gpus) const;
  Collective all_gather(Bytes gathered, int64_t gpus) const;
  Collective reduce_scatter(Bytes whole, int64_t gpus) const;
  /// All-to-all: each GPU sends `intra` bytes to GPUs of its node and `inter` bytes to other nodes.
  Collective all_to_all(Bytes intra, Bytes inter, bool spans_nodes) const;
  /// The expert-parallel dispatch (or combine) of `tokens` tokens of `token_bytes` each from one GPU.
  Collective expert_all_to_all(double tokens, double token_bytes, const ExpertFanout& f, bool spans_nodes) const;
  int64_t gpus_per_node() const { return p_.gpus_per_node; }
  const NetworkParams& params() const { return p_; }

 private:
  /// A ring / hierarchical pass moving the collective's bus factor x S (all-gather, reduce-scatter (n-1)/n S,
  /// all-reduce 2 (n-1)/n S).
  Collective reduction(Bytes s, int64_t gpus, CollectiveKind kind) const;
  /// collectives = measured: a collective moving `bus` (its bus factor) x `bytes` per GPU, from a measured busbw curve.
  Time measured_time(const Table& curve, double bus, double bytes) const;
  NetworkParams p_;
};

}  // namespace bitline::llm
