// Parameters of LLM serving on (HBF-equipped) GPUs, declared where used:
//   llm       the GPU's compute model, the network, parallelism, memory
//             reserve, energy, the fast step model            (LlmParams)
//   serving   capacity policy, KV layout, routing, search, endurance (ServingParams)
//   sessions  the multi-turn KV-reuse experiment                (SessionParams)
// The GPU's memories (gpu, hbm, hbf) are the HBF issue's sections (hbf/params.hpp).
// Every default names its source; docs/llm.md explains them.
#pragma once

#include <string>

#include "core/params.hpp"
#include "core/units.hpp"
#include "hbf/kv_placement.hpp"

namespace bitline::llm {

// Policies chosen by name (core/registry.hpp). Each table is defined beside the
// code it selects; `bitline describe` lists the choices under the key.

/// llm.attention_parallel (table in llm/step.cpp, make_deployment).
enum class AttentionParallel { Auto, Dp, Tp };
const Registry<AttentionParallel>& attention_parallels();
/// llm.network.all_reduce and llm.network.all_to_all (tables in llm/collectives.cpp, Network).
enum class AllReduceAlgorithm { Ring, Hierarchical };
const Registry<AllReduceAlgorithm>& all_reduce_algorithms();
enum class AllToAllAlgorithm { Nccl, Dedup };
const Registry<AllToAllAlgorithm>& all_to_all_algorithms();
/// llm.deployment_search (table in llm/deployment.cpp, DeploymentSearch).
enum class DeploymentPolicy { PreferredOrFastest, Preferred, Fixed, Best };
const Registry<DeploymentPolicy>& deployment_policies();
/// serving.capacity_context (table in llm/serving.cpp, Server::capacity).
enum class CapacityContext { Full, Mean };
const Registry<CapacityContext>& capacity_contexts();
/// serving.kv_layout and serving.kv_offload: the KV placement policy that the HBF runtime and the serving model
/// share (tables in hbf/kv_placement.cpp, hbf::KvPlacement).
using hbf::kv_layouts;
using hbf::kv_offloads;
using hbf::KvLayout;
using hbf::KvOffload;
/// serving.kv_arrange (table in llm/serving.cpp, Server::step).
enum class KvArrange { NewKv, Whole };
const Registry<KvArrange>& kv_arranges();
/// serving.step_model (table in llm/serving.cpp, Server::step).
enum class StepModel { Fast, Event };
const Registry<StepModel>& step_models();

struct ComputeParams {
  double fp8_speedup = 2;
  double util_max = 0;
  double util_half_rows = 0;
  Time kernel_overhead{};
  double hbm_efficiency = 1;

  template <class V>
  void visit(V& v) {
    v(hbm_efficiency, {.name = "hbm_efficiency",
                       .def = "1",
                       .desc = "achievable fraction of the peak HBM bandwidth for the timed reads and writes of a step "
                               "(streaming kernels); bandwidth bounds (memory_time_ms) and TDP stay at the peak. HBF's "
                               "achievable bandwidth follows from its own parameters (tR, interfaces, plane collisions)",
                       .source = "calibration: 1 = the peak, as the paper's simulator (the FlashAccel kinds keep it); "
                                 "per-kind values with their microbenchmark sources in configs/gpus/ (docs/llm.md, "
                                 "\"Calibration\")",
                       .min = 0.05,
                       .max = 1});
    v(fp8_speedup, {.name = "fp8_speedup",
                    .def = "2",
                    .desc = "FP8 GEMM throughput relative to BF16 (FP8-weight models)",
                    .source = "spec: H200 FP8 is 2x BF16 dense",
                    .min = 1,
                    .max = 8});
    v(util_max, {.name = "util_max",
                 .def = "0.8",
                 .desc = "fraction of peak FLOP/s a large GEMM reaches (utilisation curve u(M) = util_max * M / (M + util_half_rows))",
                 .source = "measured: a BF16 matmul on an H100 SXM (the H200's GH100 die) reaches 794.5 of 989 TFLOP/s = "
                           "0.803 (MAMF; Bekman, ml-engineering, \"Maximum Achievable Matmul FLOPS comparison table\"), "
                           "rounded to 0.8; per-kind values in configs/gpus/",
                 .min = 0.01,
                 .max = 1});
    v(util_half_rows, {.name = "util_half_rows",
                       .def = "48",
                       .desc = "rows (tokens, or query heads per KV head for attention) at which a GEMM reaches half of util_max",
                       .source = "assumption: Hopper wgmma tiles are 64 rows tall, so decode GEMMs with few tokens waste most "
                                 "of each tile; half of the attainable rate near 48 rows",
                       .min = 0,
                       .max = 1e6});
    v(kernel_overhead, {.name = "kernel_overhead",
                        .def = "2us",
                        .desc = "GPU idle time per kernel of a decode step (launch, ramp-up, tail) under CUDA graphs",
                        .source = "assumption (the paper's kinds): measured 1.3 us with CUDA graphs on an H100 and 2.0 us per "
                                  "back-to-back launch on a B200 (configs/gpus/h100.yaml, b200.yaml; docs/llm.md)",
                        .min = 0});
  }
};

struct NetworkParams {
  int64_t gpus_per_node = 8;
  Bandwidth nvlink{}, rdma{};
  Time nvlink_latency{}, rdma_latency{};
  Choice<AllReduceAlgorithm, all_reduce_algorithms> all_reduce;
  Choice<AllToAllAlgorithm, all_to_all_algorithms> all_to_all;

  template <class V>
  void visit(V& v) {
    v(gpus_per_node, {.name = "gpus_per_node",
                      .def = "8",
                      .desc = "GPUs in one NVLink domain (node)",
                      .source = "spec: DGX-H200, 8 GPUs on NVLink",
                      .min = 1,
                      .max = 1024});
    v(nvlink, {.name = "nvlink",
               .def = "450GB/s",
               .desc = "NVLink bandwidth per GPU, each direction (collectives inside a node)",
               .source = "spec: 900 GB/s bidirectional per GPU",
               .min = 1});
    v(nvlink_latency, {.name = "nvlink_latency",
                       .def = "5us",
                       .desc = "fixed cost of one collective inside a node",
                       .source = "assumption: NCCL small-message all-reduce / all-to-all latency on an NVSwitch node (~5 us)",
                       .min = 0});
    v(rdma, {.name = "rdma",
             .def = "50GB/s",
             .desc = "RDMA bandwidth per GPU between nodes, each direction (its NIC; collectives across nodes)",
             .source = "spec: about 9x less than NVLink (one 400 Gb/s NIC per GPU)",
             .min = 1});
    v(rdma_latency, {.name = "rdma_latency",
                     .def = "10us",
                     .desc = "fixed cost of one collective spanning nodes",
                     .source = "assumption: RDMA round trips through the NIC and switch, ~2x the NVLink latency",
                     .min = 0});
    v(all_reduce, {.name = "all_reduce",
                   .def = "ring",
                   .desc = "all-reduce / all-gather / reduce-scatter algorithm when the group spans nodes",
                   .source = "NCCL: ring by default for bandwidth-bound all-reduce; hierarchical as an option"});
    v(all_to_all, {.name = "all_to_all",
                   .def = "nccl",
                   .desc = "expert-parallel all-to-all across nodes: one message per destination GPU (NCCL) or per "
                           "destination node, forwarded over NVLink (DeepEP)",
                   .source = "NCCL ncclSend/ncclRecv all-to-all by default; DeepEP's internode kernels deduplicate per node"});
  }
};

struct EnergyModelParams {
  Power gpu_static{}, gpu_tdp{}, hbf_stack_static{}, hbm_stack_static{}, hbf_base_die{};
  int64_t tdp_hbm_stacks = 6;
  Energy flop{};
  EnergyPerBit nvlink{}, rdma{};

  template <class V>
  void visit(V& v) {
    v(gpu_static, {.name = "gpu_static",
                   .def = "120W",
                   .desc = "GPU power that does not depend on work (leakage, clocks, uncore)",
                   .source = "assumption: ~1/6 of the H200's 700 W TDP",
                   .min = 0});
    v(gpu_tdp, {.name = "gpu_tdp",
                .def = "700W",
                .desc = "thermal design power of the GPU package without HBF; less its tdp_hbm_stacks HBM stacks at full "
                        "bandwidth it is the GPU die's board power",
                .source = "datasheet: H200 SXM up to 700 W",
                .min = 0});
    v(tdp_hbm_stacks, {.name = "tdp_hbm_stacks",
                       .def = "6",
                       .desc = "HBM stacks included in gpu_tdp",
                       .source = "spec: H200, 6 HBM3e stacks",
                       .min = 0,
                       .max = 64});
    v(flop, {.name = "flop",
             .def = "0.6pJ",
             .desc = "energy per BF16 FLOP (FP8: half)",
             .source = "assumption: (700 W - static - HBM) / ~750 TFLOP/s sustained",
             .min = 0});
    v(hbf_base_die, {.name = "hbf_base_die",
                     .def = "8W",
                     .desc = "board power of one HBF stack's base die (PHY, NAND controller, 8 MB SRAM) at full read rate; "
                             "the board power adds it to the flash dies' (interface bandwidth x read energy per bit)",
                     .source = "assumption: PHY at ~1 pJ/bit x 768 GB/s (6 W, HBM3e-class I/O) + controller and SRAM ~2 W",
                     .min = 0});
    v(hbf_stack_static, {.name = "hbf_stack_static",
                         .def = "1W",
                         .desc = "static power of one HBF stack (base die, PHY, idle planes)",
                         .source = "assumption: not in the spec",
                         .min = 0});
    v(hbm_stack_static, {.name = "hbm_stack_static",
                         .def = "1W",
                         .desc = "static power (refresh, PHY) of one HBM stack",
                         .source = "assumption: not in the spec",
                         .min = 0});
    v(nvlink, {.name = "nvlink",
               .def = "1.3pJ/bit",
               .desc = "energy per bit sent over NVLink",
               .source = "assumption: high-speed SerDes class",
               .min = 0});
    v(rdma, {.name = "rdma",
             .def = "10pJ/bit",
             .desc = "energy per bit sent between nodes (NIC, switch, optics)",
             .source = "assumption: not in the spec",
             .min = 0});
  }
};

/// The config section `llm`.
struct LlmParams {
  ComputeParams compute;
  NetworkParams network;
  EnergyModelParams energy;
  Choice<AttentionParallel, attention_parallels> attention_parallel;
  int64_t tp_size = 0;
  Choice<DeploymentPolicy, deployment_policies> deployment_search;
  Bytes runtime_reserve{};
  double workspace_buffers = 4;
  int64_t activation_bytes = 2, logit_bytes = 4;
  int64_t sample_layers = 3;

  template <class V>
  void visit(V& v) {
    v.section("compute", compute);
    v.section("network", network);
    v.section("energy", energy);
    v(attention_parallel, {.name = "attention_parallel",
                           .def = "auto",
                           .desc = "attention parallelism (data or tensor parallel)",
                           .source = "spec: attention DP + expert parallel for Qwen3/DeepSeek-V3, tensor parallel for Llama-3.1-405B"});
    v(tp_size, {.name = "tp_size",
                .def = "0",
                .desc = "GPUs of a tensor-parallel group when attention is tensor parallel (0: a whole node, capped at "
                        "the GPU count); the groups are data-parallel ranks (e.g. 2 on 8 GPUs: 4 ranks of TP2 attention, "
                        "experts still parallel over all 8)",
                .source = "spec: TP inside a node of 8; smaller groups are a deployment choice (assumption)",
                .min = 0,
                .max = 1024});
    v(deployment_search, {.name = "deployment_search",
                          .def = "preferred_or_fastest",
                          .desc = "how the batch search picks the deployment (attention tensor-parallel degree over the "
                                  "divisors of gpus_per_node, data-parallel ranks = GPUs / degree, experts over all GPUs): "
                                  "the preferred one (attention_parallel, tp_size) or, where it has no feasible batch, "
                                  "the fastest degree that has one (preferred: the nearest that has one)",
                          .source = "spec: the parallelism table is the preferred family; an operator (vLLM, SGLang) picks "
                                    "a deployment that fits, and among those that fit the fastest (assumption)"});
    // Capacity per GPU (Server::capacity): weights and KV follow from the model and the deployment; the
    // activation workspace and the runtime reserve are these.
    v(runtime_reserve, {.name = "runtime_reserve",
                        .def = "2GB",
                        .desc = "memory per GPU kept for the CUDA context and library workspaces (cuBLAS, NCCL buffers), "
                                "charged to HBM; on a GPU without HBM to HBF blocks (its runtime image: context, kernel "
                                "images, library buffers), spread over the megaplanes like the weights",
                        .source = "assumption: CUDA context + cuBLAS/NCCL workspaces ~1-2 GB on Hopper",
                        .min = 0});
    v(workspace_buffers, {.name = "workspace_buffers",
                          .def = "4",
                          .desc = "activation workspace: copies of the widest activation of the step held at once "
                                  "(input, output, two temporaries), plus the logits",
                          .source = "assumption: a kernel's input and output and two temporaries (e.g. gate and up before "
                                    "SiLU) live at once; vLLM sizes its activation peak by a profiling run",
                          .min = 0,
                          .max = 64});
    v(activation_bytes, {.name = "activation_bytes",
                         .def = "2",
                         .desc = "bytes per activation value (workspace)",
                         .source = "spec: FP16 everywhere",
                         .min = 1,
                         .max = 8});
    v(logit_bytes, {.name = "logit_bytes",
                    .def = "4",
                    .desc = "bytes per logit in the workspace (the LM head's output over the local vocabulary)",
                    .source = "assumption: vLLM and SGLang upcast logits to FP32 for sampling",
                    .min = 1,
                    .max = 8});
    v(sample_layers, {.name = "sample_layers",
                      .def = "8",
                      .desc = "fast step model: layers of each kind timed, spread over the model; the others are "
                              "extrapolated from them (0 = time every layer)",
                      .source = "bitline: validated against the event-driven simulation (accel validate)",
                      .min = 0,
                      .max = 1 << 20});
  }
};

/// serving.prefill: the prefill step model (llm/prefill.hpp). Prefill is disaggregated (spec): it runs on a
/// prefill instance of the same GPUs and deployment, and the decode evaluation counts only its KV arriving.
struct PrefillParams {
  int64_t chunk = 0;
  int64_t requests = 1;

  template <class V>
  void visit(V& v) {
    v(chunk, {.name = "chunk",
              .def = "0",
              .desc = "chunked prefill: tokens per forward pass (0 = the whole prompt in one pass); each chunk reads the "
                      "weights and the KV of the chunks before it",
              .source = "bitline: a deployment choice (vLLM / SGLang chunked prefill, typically 512-8192 tokens)",
              .min = 0,
              .max = int64_t(1) << 30});
    v(requests, {.name = "requests",
                 .def = "1",
                 .desc = "prompts prefilled together per attention rank (time to first token of the last of them)",
                 .source = "bitline: one request, the latency of an unloaded prefill instance",
                 .min = 1,
                 .max = 4096});
  }
};

/// The config section `serving`.
struct ServingParams {
  Choice<CapacityContext, capacity_contexts> capacity_context;
  Choice<KvLayout, kv_layouts> kv_layout;
  double routing_skew = 0;
  int64_t max_requests_per_rank = 0;
  Choice<StepModel, step_models> step_model;
  Bytes hbm_weight_cache{};
  Choice<KvOffload, kv_offloads> kv_offload;
  Bytes kv_block_bytes{};
  Choice<KvArrange, kv_arranges> kv_arrange;
  double endurance_years = 5;
  int64_t seed = 1;
  PrefillParams prefill;

  template <class V>
  void visit(V& v) {
    v.section("prefill", prefill);
    v(capacity_context, {.name = "capacity_context",
                         .def = "full",
                         .desc = "KV reserved per request",
                         .source = "spec: the 405B example needs ~10 GB per request at 15K/6K, i.e. the full 21K tokens"});
    v(kv_layout,
      {.name = "kv_layout", .def = "flashaccel", .desc = "KV placement on HBF", .source = "spec: FlashAccel KV layout vs PagedAttention"});
    v(routing_skew, {.name = "routing_skew",
                     .def = "0",
                     .desc = "MoE routing popularity: 0 = uniform top-k; s > 0 = Zipf(s) over experts (the GPU with the "
                             "hottest experts is timed)",
                     .source = "spec: uniform by default, the routing distribution as a parameter",
                     .min = 0,
                     .max = 4});
    v(max_requests_per_rank, {.name = "max_requests_per_rank",
                              .def = "4096",
                              .desc = "upper end of the batch search, requests per attention rank",
                              .source = "bitline",
                              .min = 1,
                              .max = 1 << 20});
    v(step_model, {.name = "step_model",
                   .def = "fast",
                   .desc = "how a step's memory time is computed",
                   .source = "bitline: accel validate compares the two"});
    v(hbm_weight_cache, {.name = "hbm_weight_cache",
                         .def = "0B",
                         .desc = "HBF GPUs: HBM given to a copy of the weights (at most all of them); every weight kernel "
                                 "reads that fraction of its megapages from HBM while the rest streams from flash, so the two "
                                 "bandwidths add up for weights. Counted in HBM capacity; ignored on HBM-only GPUs",
                         .source = "assumption: off by default (spec roles: HBF holds the weights, HBM the small "
                                   "intermediate data); spec: CSI's 'bandwidth adds up (4.8 + 4.6 TB/s)'",
                         .min = 0});
    v(kv_offload, {.name = "kv_offload",
                   .def = "mean",
                   .desc = "how far selective offload (GroupArrange) of each layer's KV to HBM goes",
                   .source = "spec: 'until no plane exceeds the average'; fill is a bitline extension"});
    v(kv_block_bytes, {.name = "kv_block_bytes",
                       .def = "256KiB",
                       .desc = "kv_layout = paged: bytes of one PagedAttention KV block (one layer's KV of "
                               "kv_block_bytes / bytes-per-token tokens), placed without megapage alignment",
                       .source = "spec: PagedAttention KV blocks of 256 KB in the paper",
                       .min = 4096,
                       .max = double(int64_t(1) << 30)});
    v(kv_arrange, {.name = "kv_arrange",
                   .def = "new_kv",
                   .desc = "what GroupArrange copies to HBM in each step (charged in the step, kv_arrange)",
                   .source = "spec: selective offload after the write phase, its cost amortised over the steps that reuse the "
                             "unified KV cache; whole is the bound of a cache rebuilt every step"});
    v(endurance_years, {.name = "endurance_years",
                        .def = "5",
                        .desc = "service life for the write/endurance accounting",
                        .source = "spec: 1M P/E cycles over 5 years",
                        .min = 0.01,
                        .max = 100});
    v(seed,
      {.name = "seed", .def = "1", .desc = "seed of the KV placement (request cursors, scattered blocks)", .source = "bitline", .min = 0});
  }
};

/// The config section `sessions`: multi-turn KV reuse.
struct SessionParams {
  std::string model;
  int64_t sessions = 0;
  double arrival_per_s = 0;
  int64_t turns_min = 0, turns_max = 0;
  int64_t first_input = 0, new_input = 0, output = 0;
  double user_tokens_per_s = 0;
  Time think_time{};
  int64_t working_requests = 0;
  int64_t block_tokens = 0;
  int64_t seed = 1;

  template <class V>
  void visit(V& v) {
    v(model, {.name = "model",
              .def = "\"\"",
              .desc = "model whose KV the sessions keep (empty: the experiment file's model)",
              .source = "bitline"});
    v(sessions,
      {.name = "sessions", .def = "3000", .desc = "synthetic trace: number of sessions", .source = "bitline", .min = 1, .max = 1 << 24});
    v(arrival_per_s, {.name = "arrival_per_s",
                      .def = "0.5",
                      .desc = "synthetic trace: sessions started per second (Poisson); the offered load, with think_time and "
                              "turns_min/turns_max (flashaccel-sessions.yaml sweeps it)",
                      .source = "assumption: ~1,200 sessions alive at once, enough to overflow HBM but not HBF",
                      .min = 1e-6,
                      .max = 1e6});
    v(turns_min, {.name = "turns_min",
                  .def = "2",
                  .desc = "synthetic trace: fewest turns of a session (uniform)",
                  .source = "assumption: agentic sessions of 2-6 turns",
                  .min = 1,
                  .max = 10000});
    v(turns_max, {.name = "turns_max",
                  .def = "6",
                  .desc = "synthetic trace: most turns of a session (uniform)",
                  .source = "assumption: agentic sessions of 2-6 turns",
                  .min = 1,
                  .max = 10000});
    v(first_input, {.name = "first_input",
                    .def = "2750",
                    .desc = "synthetic trace: mean prompt tokens of a session's first turn",
                    .source = "assumption: with 2-6 turns, 1K new input and 6K output per turn the mean prompt is then ~15K "
                              "(spec: agentic 15K/6K)",
                    .min = 1});
    v(new_input, {.name = "new_input",
                  .def = "1000",
                  .desc = "synthetic trace: mean new tokens a later turn adds to the history (tool results, user message)",
                  .source = "assumption: see first_input",
                  .min = 0});
    v(output, {.name = "output",
               .def = "6000",
               .desc = "synthetic trace: mean output tokens per turn",
               .source = "spec: agentic setting, 6K output tokens",
               .min = 1});
    v(user_tokens_per_s, {.name = "user_tokens_per_s",
                          .def = "10",
                          .desc = "synthetic trace: decode speed seen by a user",
                          .source = "spec: 100 ms decode-step SLO = ~10 tokens/s/user",
                          .min = 1e-3});
    v(think_time, {.name = "think_time",
                   .def = "5s",
                   .desc = "synthetic trace: mean gap between a turn's end and the next turn (exponential); part of the "
                           "offered load",
                   .source = "assumption: tool execution / user reaction",
                   .min = 0,
                   .max = 1e6});
    v(working_requests, {.name = "working_requests",
                         .def = "16",
                         .desc = "requests' worth of KV (at the mean prompt) kept free for the prefill in progress",
                         .source = "assumption",
                         .min = 0});
    v(block_tokens, {.name = "block_tokens",
                     .def = "512",
                     .desc = "Mooncake traces: prompt tokens per hash id (the prefix cache's block)",
                     .source = "Mooncake FAST'25 trace release: one hash id per 512-token block",
                     .min = 1,
                     .max = 1 << 20});
    v(seed, {.name = "seed", .def = "1", .desc = "seed of the synthetic trace", .source = "bitline", .min = 0});
  }
};

}  // namespace bitline::llm
