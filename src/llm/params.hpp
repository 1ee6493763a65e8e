// Parameters of LLM serving on (HBF-equipped) GPUs, declared where used:
//   llm       the GPU's compute model, the network, parallelism, memory
//             reserve, energy, the fast step model            (LlmParams)
//   serving   capacity policy, KV layout, routing, search, endurance (ServingParams)
//   sessions  the multi-turn KV-reuse experiment                (SessionParams)
// The GPU's memories (gpu, hbm, hbf) are the HBF issue's sections (hbf/params.hpp).
// Every default names its source; docs/llm.md explains them.
#pragma once

#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "hbf/kv_placement.hpp"
#include "llm/model.hpp"

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
/// llm.network.collectives and llm.network.node_all_reduce (tables in llm/collectives.cpp, Network).
enum class CollectiveModel { Links, Measured };
const Registry<CollectiveModel>& collective_models();
enum class NodeAllReduce { Ring, Nvls };
const Registry<NodeAllReduce>& node_all_reduces();
/// serving.engine (table in llm/serving.cpp, engine_overheads).
enum class EngineKind { Auto, None, TensorRtLlmSession, SarathiServe, Custom };
const Registry<EngineKind>& engine_kinds();
/// llm.deployment_search (table in llm/deployment.cpp, DeploymentSearch).
enum class DeploymentPolicy { PreferredOrFastest, Preferred, Fixed, Best };
const Registry<DeploymentPolicy>& deployment_policies();
/// serving.capacity_context (table in llm/serving.cpp, Server::capacity).
enum class CapacityContext { Paged, Full, Mean };
/// serving.expert_prefetch (table in llm/serving.cpp): what the HBF prefetch queue reads of a MoE layer's experts.
enum class ExpertPrefetch { Static, Router };
const Registry<ExpertPrefetch>& expert_prefetches();
const Registry<CapacityContext>& capacity_contexts();
/// sessions.think_time_distribution (table in llm/sessions.cpp): how the gaps between a turn's end and the next turn are drawn.
enum class ThinkTime { Exponential, Lognormal };
const Registry<ThinkTime>& think_times();
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

/// llm.compute.kernels (table in llm/gpu.cpp, GpuCompute).
enum class KernelModel { Tiles, Curve };
const Registry<KernelModel>& kernel_models();

struct ComputeParams {
  Choice<KernelModel, kernel_models> kernels;
  double fp8_speedup = 2;
  double fp4_speedup = 0;
  double util_max = 0;
  double fp8_util_max = 0;  // 0: util_max
  double fp4_util_max = 0;  // 0: fp8_util_max
  double util_half_rows = 0;
  Time kernel_overhead{};
  double hbm_efficiency = 1, weight_efficiency = 1;
  double fp8_weight_efficiency = 0;  // 0: weight_efficiency
  int64_t sms = 0;
  std::vector<int64_t> gemm_tile_rows, gemm_tile_cols;
  int64_t gemm_tile_max = 0, gemm_max_split = 0;
  int64_t gemm_cta_group = 1;  // SMs that compute one MMA tile together, sharing its B operand (Blackwell: 2)
  Time gemm_tile_latency{};
  Bandwidth l2_bandwidth{};  // 0: operand loads from L2 not timed
  double attention_efficiency = 0, attention_fixed_blocks = 0;
  double softmax_rate = 0;  // exponentials per second (special-function units); 0: folded into attention_efficiency
  double decode_attention_efficiency = 0;
  Bandwidth fp8_kv_attention_rate{};  // 0: no limit of the kernel's own (its KV reads are the memory system's)
  bool qkv_preprocessing = false;     // the attention's input pass (rotary embedding) is a kernel of its own
  int64_t attention_block = 0, decode_mma_rows = 0;

  template <class V>
  void visit(V& v) {
    v(kernels, {.name = "kernels",
                .def = "tiles",
                .desc = "how a kernel's math time is found: from the CTA tiles and waves of the library kernel (GEMMs by "
                        "shape, FlashAttention by sequence, split-KV decode attention), or from the utilisation curve "
                        "u(M) = util_max M / (M + util_half_rows)",
                .source = "LLMCompass (Zhang et al., ISCA 2024): a tile-level GPU model; FlashAttention-2/3 papers; "
                          "docs/llm.md, \"GPU kernels\""});
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
    v(weight_efficiency, {.name = "weight_efficiency",
                          .def = "1",
                          .desc = "GEMMs whose weights are in HBM stream them at no more than this fraction of the peak HBM "
                                  "bandwidth (weight-streaming kernels of decode; a floor under the kernel's math)",
                          .source = "calibration: 1 = the peak (the paper's simulator); measured per kind in configs/gpus/ "
                                    "(H100: MLP weight loads at 2.6 of 3.35 TB/s)",
                          .min = 0.05,
                          .max = 1});
    v(fp8_weight_efficiency, {.name = "fp8_weight_efficiency",
                              .def = "0",
                              .desc = "weight-streaming GEMMs of FP8 (and FP4) math whose weights are in HBM stream them at no "
                                      "more than this fraction of the peak HBM bandwidth; 0: as weight_efficiency (the same "
                                      "fraction as 16-bit weights)",
                              .source = "measured per kind in configs/gpus/ (H100/H200: the FP8 kernels of late 2023, ~2.2 of "
                                        "3.35 TB/s for 16-64 x 14336 x 4096 at CUTLASS's best tile, NVIDIA/cutlass issue 1139)",
                              .min = 0,
                              .max = 1});
    v(fp8_speedup, {.name = "fp8_speedup",
                    .def = "2",
                    .desc = "FP8 tensor-core throughput relative to BF16 (1: no FP8 tensor cores, FP8 weights are "
                            "dequantised to 16 bits and run at the BF16 rate)",
                    .source = "datasheet: H100/H200 FP8 1,979 TFLOP/s dense = 2 x BF16 (per kind in configs/gpus/)",
                    .min = 1,
                    .max = 8});
    v(fp4_speedup, {.name = "fp4_speedup",
                    .def = "0",
                    .desc = "FP4 (NVFP4) tensor-core throughput relative to BF16; 0: the GPU has no FP4 tensor cores "
                            "(llm.precision = fp4 is refused)",
                    .source = "datasheet: Hopper and Ampere have none; B200 FP4 9 PFLOP/s dense = 4 x BF16 (b200.yaml)",
                    .min = 0,
                    .max = 16});
    v(util_max, {.name = "util_max",
                 .def = "0.8",
                 .desc = "fraction of the tensor-core peak a large GEMM reaches (MAMF): the main-loop efficiency of one "
                         "CTA tile under `tiles`; the asymptote of u(M) under `curve`",
                 .source = "measured: a BF16 matmul on an H100 SXM (the H200's GH100 die) reaches 794.5 of 989 TFLOP/s = "
                           "0.803 (MAMF; Bekman, ml-engineering, \"Maximum Achievable Matmul FLOPS comparison table\"), "
                           "rounded to 0.8; per-kind values in configs/gpus/",
                 .min = 0.01,
                 .max = 1});
    v(fp8_util_max, {.name = "fp8_util_max",
                     .def = "0",
                     .desc = "fraction of the FP8 (and FP4) tensor-core peak a large low-precision GEMM reaches: the "
                             "main-loop efficiency of an FP8 tile; 0: as util_max (the same fraction as BF16)",
                     .source = "measured per kind in configs/gpus/ (H100/H200: the FP8 GEMMs of 2023-24, \"over 1.3 "
                               "PF\" = 0.66 of 1,979 TFLOP/s, triton-lang/triton issue 2513; today's DeepGEMM-class "
                               "kernels reach ~0.78, docs/llm.md \"GPU kernels\")",
                     .min = 0,
                     .max = 1});
    v(fp4_util_max, {.name = "fp4_util_max",
                     .def = "0",
                     .desc = "fraction of the FP4 (NVFP4) tensor-core peak a large FP4 GEMM reaches: the main-loop "
                             "efficiency of an FP4 tile; 0: as fp8_util_max",
                     .source = "measured per kind in configs/gpus/ (B200: TensorRT-LLM 1.2's NVFP4 Linear layers at best "
                               "4,470 of 9,000 TFLOP/s, NVIDIA aiconfigurator's database, b200.yaml)",
                     .min = 0,
                     .max = 1});
    v(util_half_rows, {.name = "util_half_rows",
                       .def = "48",
                       .desc = "kernels = curve: rows (tokens, or query heads per KV head for attention) at which a GEMM "
                               "reaches half of util_max",
                       .source = "assumption: Hopper wgmma tiles are 64 rows tall, so decode GEMMs with few tokens waste most "
                                 "of each tile; half of the attainable rate near 48 rows",
                       .min = 0,
                       .max = 1e6});
    v(kernel_overhead, {.name = "kernel_overhead",
                        .def = "2us",
                        .desc = "GPU idle time per kernel of a decode step (launch, ramp-up, tail) under CUDA graphs",
                        .source = "assumption (the paper's kinds): measured 1.3 us with CUDA graphs on an H100 and 2.0 us per "
                                  "back-to-back launch on a B200 (configs/gpus/h100.yaml, b200.yaml; docs/llm.md)",
                        .min = 0,
                        .max = 1.0});
    v(sms, {.name = "sms",
            .def = "132",
            .desc = "streaming multiprocessors: CTAs run in waves of this many (wave quantization)",
            .source = "datasheet: H100 / H200 SXM5 132 SMs (NVIDIA H100 Tensor Core GPU Architecture whitepaper); A100 "
                      "108, B200 148 in their kind files",
            .min = 1,
            .max = 100000});
    v(gemm_tile_rows, {.name = "gemm_tile_rows",
                       .def = "[64, 128, 256]",
                       .desc = "CTA tile heights (token rows) of the GEMM library's kernels",
                       .source = "CUTLASS 3 / cuBLASLt Hopper kernels: wgmma is 64 rows tall, one or two consumer warpgroups "
                                 "(64, 128), 2-CTA clusters (256); TensorRT-LLM's cutlass_heuristic tile list",
                       .min = 8,
                       .max = 1024});
    v(gemm_tile_cols, {.name = "gemm_tile_cols",
                       .def = "[64, 128, 256]",
                       .desc = "CTA tile widths (output columns) of the GEMM library's kernels",
                       .source = "CUTLASS 3 / cuBLASLt Hopper tile shapes (N = 64 ... 256)",
                       .min = 8,
                       .max = 1024});
    v(gemm_tile_max, {.name = "gemm_tile_max",
                      .def = "32768",
                      .desc = "largest CTA tile (rows x columns): its FP32 accumulators must fit the SM's registers",
                      .source = "derived: 128 x 256 FP32 accumulators = 128 KB, half of the 256 KB register file of an SM "
                                "(H100 whitepaper); the largest CUTLASS Hopper tiles are 128x256 and 256x128",
                      .min = 64,
                      .max = 1 << 20});
    v(gemm_cta_group, {.name = "gemm_cta_group",
                       .def = "1",
                       .desc = "SMs that compute one MMA tile together: each holds its own gemm_tile_rows of A and of the "
                               "output, and loads 1/gemm_cta_group of the tile's B columns from L2, which the pair's MMAs "
                               "share (1: a CTA loads its whole B tile)",
                       .source = "Hopper's wgmma is per SM (1); Blackwell's tcgen05.mma.cta_group::2 is one MMA over a CTA "
                                 "pair, each CTA's shared memory holding half of B (PTX ISA, the tcgen05 instructions; "
                                 "CUTLASS's SM100 2SM GEMM kernels, 256-row tiles over two SMs): 2 on b200",
                       .min = 1,
                       .max = 2});
    v(gemm_max_split, {.name = "gemm_max_split",
                       .def = "16",
                       .desc = "most K splits (split-K) a skinny GEMM may use to fill the SMs; partial sums go through an "
                               "FP32 workspace and a reduction",
                       .source = "cuBLASLt / CUTLASS split-K (assumption: up to 16 splits, at least 256 of K per split)",
                       .min = 1,
                       .max = 256});
    v(gemm_tile_latency, {.name = "gemm_tile_latency",
                          .def = "1.2us",
                          .desc = "fixed time of one CTA tile besides its math and its output store: filling the load "
                                  "pipeline (HBM latency) before the first MMA; a weight-streaming GEMM pays it once before "
                                  "its weights stream",
                          .source = "derived from measured FP8 GEMMs with 128x128 tiles on an H800 (DeepGEMM pull request 73: "
                                    "4096x7168x16384 at 1,404 TFLOP/s and 4096x7168x2048 at 1,031 TFLOP/s give 2.5 us per tile "
                                    "beyond the math, of which the 32 KB output tile at the SM's share of HBM is 1.3 us), "
                                    "https://github.com/deepseek-ai/DeepGEMM/pull/73",
                          .min = 0,
                          .max = 1.0});
    v(l2_bandwidth, {.name = "l2_bandwidth",
                     .def = "9.9TB/s",
                     .desc = "L2 read bandwidth of the whole GPU when every SM loads; a GEMM tile's main loop is at least "
                             "its operand tiles at one SM's share of it (small tiles reuse their operands less); 0: not timed",
                     .source = "measured: RRZE-HPC/gpu-benches gpu-l2-cache on an H200 (the H100's GH100 die, 132 SMs, 50 MB L2): "
                               "median 9.9 TB/s over the L2-resident data sets of 4-40 MB (h200.txt, 2024); per kind in "
                               "configs/gpus/",
                     .min = 0,
                     .max = 1e15});
    v(attention_efficiency,
      {.name = "attention_efficiency",
       .def = "0.988",
       .desc = "prefill attention (FlashAttention): fraction of the BF16 peak its MMAs reach in a CTA's "
               "loop over KV blocks; the softmax's exponentials are timed apart at softmax_rate (where "
               "that is 0, they are folded into this fraction)",
       .source = "derived from FlashAttention-3 (Shah et al., arXiv 2407.08608) Fig. 5, H100 SXM5, FP16 "
                 "forward, head dim 128, no mask: 648 TFLOP/s at 16k and 467 at 512 tokens (with "
                 "attention_fixed_blocks and softmax_rate 3.9e12); the other 34 points of Fig. 5 (head "
                 "dims 64 and 256, causal) are the check (docs/llm.md, \"Attention kernels against FlashAttention-3's figures\"); per kind "
                 "in configs/gpus/",
       .min = 0.01,
       .max = 1});
    v(decode_attention_efficiency, {.name = "decode_attention_efficiency",
                                    .def = "0.663",
                                    .desc = "decode attention (split-KV): fraction of the BF16 peak its MMAs reach, the "
                                            "softmax included (the query heads of a KV head fill min(1, g / decode_mma_rows) of "
                                            "each MMA)",
                                    .source = "assumption: FlashAttention-3's loop fraction at head dim 128 with the "
                                              "exponentials folded in (the value attention_efficiency had before softmax_rate: "
                                              "648 of 989 TFLOP/s at 16k tokens, Fig. 5, with the fixed blocks); compute-bound "
                                              "MLA decode reaches up to 660 TFLOP/s on an H800 SXM5, 0.667 (FlashMLA, "
                                              "https://github.com/deepseek-ai/FlashMLA, README)",
                                    .min = 0.01,
                                    .max = 1});
    v(qkv_preprocessing,
      {.name = "qkv_preprocessing",
       .def = "false",
       .desc = "a grouped- or multi-head attention layer runs its input pass as a kernel of its own before the attention "
               "kernel: the rotary embedding reads the Q, K and V projection's output and writes Q and K back (16-bit), "
               "a memory-bound pass of every prefill and decode token (norms_activations); false: not timed (the "
               "paper's simulator, LLMCompass, times the attention kernel alone)",
       .source = "serving engines: TensorRT-LLM's attention runs invokeQKVPreprocessing (rotary embedding and the KV "
                 "cache write) before its FMHA or decode kernel, vLLM its rotary_embedding and reshape_and_cache kernels "
                 "before FlashAttention; measured: TensorRT-LLM 1.2.0rc5's context attention on an H100 SXM takes 325-367 "
                 "us more than FlashAttention's tiles for 16,384 prompt tokens of 32 heads of 128 at 128-2,048 tokens a "
                 "prompt, a pass of ~50 kB a token at the HBM's achievable rate (ai-dynamo/aiconfigurator; docs/llm.md, "
                 "mechanism 8)"});
    v(fp8_kv_attention_rate,
      {.name = "fp8_kv_attention_rate",
       .def = "0",
       .desc = "decode attention of a multi-head model (one query head per KV head) over an FP8 KV cache reads it at no "
               "more than this rate, wherever the KV is: a limit of the kernel's own, which a faster HBM does not raise; "
               "0: no such limit (the KV reads are timed by the memory system alone)",
       .source = "derived: the H100's achievable HBM rate (per kind in configs/gpus/); that the kernel keeps it on an H200 is "
                 "measured: TensorRT-LLM 1.2.0rc5's generation attention, multi-head over an FP8 cache, is 0.87-1.16x as fast "
                 "on an H200 SXM as on an H100 SXM at 128-16k KV tokens, where over a 16-bit cache beyond 2k tokens it is "
                 "1.16-1.42x (HBM-bound) (ai-dynamo/aiconfigurator; docs/llm.md, mechanism 7)",
       .min = 0,
       .max = 1e15});
    v(softmax_rate, {.name = "softmax_rate",
                     .def = "3.9e12",
                     .desc = "exponentials per second of the GPU's special-function units: prefill attention's softmax "
                             "takes one per (query, key) pair and query head, not overlapped with the MMAs; 0: not timed "
                             "apart (folded into attention_efficiency)",
                     .source = "FlashAttention-3 (arXiv 2407.08608) section 3.2: \"the H100 SXM5 GPU has 989 TFLOPS of FP16 "
                               "matmul but only 3.9 TFLOPS of special functions such as exponential\" (16 per SM per clock x "
                               "132 SMs x 1.83 GHz); that the exponentials are not hidden: FA3's Fig. 5 at head dims 64, 128 "
                               "and 256 (16k tokens: 497, 648, 756 TFLOP/s) is a per-pair time linear in the head dim whose "
                               "constant, 0.24 ps, is near one exponential at this rate (0.26 ps)",
                     .min = 0,
                     .max = 1e16});
    v(attention_fixed_blocks, {.name = "attention_fixed_blocks",
                               .def = "1.62",
                               .desc = "prefill attention: a CTA's fixed work (loading Q, softmax epilogue, writing O) in "
                                       "units of one KV block's time",
                               .source = "derived with attention_efficiency from the same two FlashAttention-3 points",
                               .min = 0,
                               .max = 1000});
    v(decode_mma_rows, {.name = "decode_mma_rows",
                        .def = "16",
                        .desc = "decode attention: rows of the tensor-core MMA its kernels issue; the query heads sharing a "
                                "KV head fill min(1, heads / rows) of it (MHA: 1 / rows)",
                        .source = "FlashInfer / FlashDecoding / TensorRT-LLM XQA decode kernels issue mma.sync m16n8k16 (PTX ISA: "
                                  "16-row MMA), the GQA group as its M",
                        .min = 1,
                        .max = 256});
    v(attention_block, {.name = "attention_block",
                        .def = "128",
                        .desc = "prefill attention: query rows and keys per block of a FlashAttention CTA (Br = Bc)",
                        .source = "FlashAttention-2/3 head-dim-128 kernels: 128 x 128 blocks (FA3 uses 128 x 176 / 128 x 128)",
                        .min = 16,
                        .max = 1024});
  }
};

struct NetworkParams {
  int64_t gpus_per_node = 8;
  Bandwidth nvlink{}, rdma{};
  Time nvlink_latency{}, rdma_latency{};
  Choice<AllReduceAlgorithm, all_reduce_algorithms> all_reduce;
  Choice<AllToAllAlgorithm, all_to_all_algorithms> all_to_all;
  Choice<CollectiveModel, collective_models> collectives;
  Table busbw;
  Choice<NodeAllReduce, node_all_reduces> node_all_reduce;
  bool nvlink_sharp = true;
  Table nvls_busbw;

  template <class V>
  void visit(V& v) {
    v(collectives, {.name = "collectives",
                    .def = "links",
                    .desc = "collectives inside a node: from the link bandwidth and a fixed latency (links), or from a "
                            "measured nccl-tests bus-bandwidth curve by message size (measured: busbw)",
                    .source = "links: the ring formula at nvlink per direction (spec); measured: nccl-tests all_reduce_perf "
                              "(per kind in configs/gpus/)"});
    v(busbw, {.name = "busbw",
              .def = "[[32768, 3.07e9], [1048576, 66.11e9], [16777216, 242.0e9], [1073741824, 357.73e9]]",
              .desc = "collectives = measured: nccl-tests bus bandwidth (B/s) by message size (bytes) on one node; a "
                      "collective of S bytes over n GPUs takes factor(n) S / busbw(S) (log-log interpolation; below the "
                      "smallest size, that size's time: the small-message latency floor)",
              .source = "measured: 8 x NVIDIA H20 (NVLink 4, 18 links of 25 GB/s per direction, as H100/H200), nccl-tests "
                        "2.19.7 all_reduce_perf, https://github.com/kvcache-ai/Mooncake/pull/3484 (the full curve in "
                        "configs/gpus/h100.yaml)"});
    v(node_all_reduce, {.name = "node_all_reduce",
                        .def = "ring",
                        .desc = "all-reduce inside a node under collectives = measured: NCCL's ring (the busbw curve), or "
                                "NCCL with NVLink SHARP enabled (nvls: the faster of busbw and nvls_busbw at each message "
                                "size, as NCCL's tuner picks per size); all-gather and reduce-scatter stay on busbw",
                        .source = "NCCL 2.17+ runs all-reduce in the NVSwitch (NVLS) on NVSwitch 3 systems; nccl-tests "
                                  "issue 212 (S. Jeaugey): ring ~370 GB/s effective, NVLS ~480 GB/s busbw on 8 GPUs"});
    v(nvlink_sharp, {.name = "nvlink_sharp",
                     .def = "true",
                     .desc = "the node's NVSwitches reduce in the switch (NVLink SHARP); node_all_reduce = nvls is refused "
                             "without it",
                     .source = "datasheets: NVSwitch 3 (DGX H100/H200) and NVSwitch 4 (DGX B200) have NVLink SHARP, "
                               "NVSwitch 2 (DGX A100) does not (a100.yaml sets false)"});
    v(nvls_busbw, {.name = "nvls_busbw",
                   .def = "[[1048576, 39.9e9], [16777216, 219.9e9], [67108864, 346.5e9], [268435456, 436.2e9], "
                          "[1073741824, 463.6e9]]",
                   .desc = "node_all_reduce = nvls: nccl-tests all-reduce bus bandwidth (B/s) by message size (bytes) "
                           "with NVLink SHARP on one node; read as busbw (bus factor 2 (n-1)/n, log-log, the smallest "
                           "size's time as the floor)",
                   .source = "measured: 8 x H200 (NVLink 4, NVSwitch 3), NCCL 2.27 all_reduce_perf, NVLS on (the curve "
                             "quoted in bitline's issue 23); its peak agrees with 475 GB/s on 8 x H200, NCCL 2.20.3 "
                             "(NVIDIA/nccl-tests issue 272) and ~480 GB/s (nccl-tests issue 212)"});
    v(gpus_per_node, {.name = "gpus_per_node",
                      .def = "8",
                      .desc = "GPUs in one NVLink domain (node)",
                      .source = "FlashAccel, Evaluation setup: DGX-H200, 8 GPUs on NVLink",
                      .min = 1,
                      .max = 1024});
    v(nvlink, {.name = "nvlink",
               .def = "450GB/s",
               .desc = "NVLink bandwidth per GPU, each direction (collectives inside a node)",
               .source = "FlashAccel, Evaluation setup: 900 GB/s bidirectional per GPU",
               .min = 1e6,
               .max = 1e15});
    v(nvlink_latency, {.name = "nvlink_latency",
                       .def = "5us",
                       .desc = "fixed cost of one collective inside a node",
                       .source = "assumption: NCCL small-message all-reduce / all-to-all latency on an NVSwitch node (~5 us)",
                       .min = 0,
                       .max = 1.0});
    v(rdma, {.name = "rdma",
             .def = "50GB/s",
             .desc = "RDMA bandwidth per GPU between nodes, each direction (its NIC; collectives across nodes)",
             .source = "FlashAccel, Evaluation setup: about 9x less than NVLink (one 400 Gb/s NIC per GPU)",
             .min = 1e6,
             .max = 1e15});
    v(rdma_latency, {.name = "rdma_latency",
                     .def = "10us",
                     .desc = "fixed cost of one collective spanning nodes",
                     .source = "assumption: RDMA round trips through the NIC and switch, ~2x the NVLink latency",
                     .min = 0,
                     .max = 1.0});
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
                   .min = 0,
                   .max = 1e4});
    v(gpu_tdp, {.name = "gpu_tdp",
                .def = "700W",
                .desc = "thermal design power of the GPU package without HBF; less its tdp_hbm_stacks HBM stacks at full "
                        "bandwidth it is the GPU die's board power",
                .source = "datasheet: H200 SXM up to 700 W",
                .min = 1,
                .max = 1e4});
    v(tdp_hbm_stacks, {.name = "tdp_hbm_stacks",
                       .def = "6",
                       .desc = "HBM stacks included in gpu_tdp",
                       .source = "FlashAccel, Evaluation setup: H200, 6 HBM3e stacks",
                       .min = 0,
                       .max = 64});
    v(flop, {.name = "flop",
             .def = "0.6pJ",
             .desc = "energy per BF16 FLOP (FP8: half)",
             .source = "assumption: (700 W - static - HBM) / ~750 TFLOP/s sustained",
             .min = 0,
             .max = 1e-3});
    v(hbf_base_die, {.name = "hbf_base_die",
                     .def = "8W",
                     .desc = "board power of one HBF stack's base die (PHY, NAND controller, 8 MB SRAM) at full read rate; "
                             "the board power adds it to the flash dies' (interface bandwidth x read energy per bit)",
                     .source = "assumption: PHY at ~1 pJ/bit x 768 GB/s (6 W, HBM3e-class I/O) + controller and SRAM ~2 W",
                     .min = 0,
                     .max = 1e4});
    v(hbf_stack_static, {.name = "hbf_stack_static",
                         .def = "1W",
                         .desc = "static power of one HBF stack (base die, PHY, idle planes)",
                         .source = "assumption: not in the spec",
                         .min = 0,
                         .max = 1e4});
    v(hbm_stack_static, {.name = "hbm_stack_static",
                         .def = "1W",
                         .desc = "static power (refresh, PHY) of one HBM stack",
                         .source = "assumption: not in the spec",
                         .min = 0,
                         .max = 1e4});
    v(nvlink, {.name = "nvlink",
               .def = "1.3pJ/bit",
               .desc = "energy per bit sent over NVLink",
               .source = "assumption: high-speed SerDes class",
               .min = 0,
               .max = 1e-6});
    v(rdma, {.name = "rdma",
             .def = "10pJ/bit",
             .desc = "energy per bit sent between nodes (NIC, switch, optics)",
             .source = "assumption: not in the spec",
             .min = 0,
             .max = 1e-6});
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
  Choice<Precision, precisions> precision;

  template <class V>
  void visit(V& v) {
    v(precision, {.name = "precision",
                  .def = "model",
                  .desc = "number format of weights, activations and KV cache: the model's own (its torch_dtype and "
                          "quantization_config) or one for all linear layers, their GEMM inputs and the KV cache "
                          "(embedding, norms, router and LM head stay 16-bit)",
                  .source = "TensorRT-LLM / ModelOpt FP8 and NVFP4 checkpoints (per-tensor FP8 scales; NVFP4: an FP8 "
                            "scale per 16 weights, FP8 KV cache)"});
    v.section("compute", compute);
    v.section("network", network);
    v.section("energy", energy);
    v(attention_parallel,
      {.name = "attention_parallel",
       .def = "auto",
       .desc = "attention parallelism (data or tensor parallel)",
       .source = "FlashAccel, Evaluation setup: attention DP + expert parallel for Qwen3/DeepSeek-V3, tensor parallel for Llama-3.1-405B"});
    v(tp_size, {.name = "tp_size",
                .def = "0",
                .desc = "GPUs of a tensor-parallel group when attention is tensor parallel (0: a whole node, capped at "
                        "the GPU count); the groups are data-parallel ranks (e.g. 2 on 8 GPUs: 4 ranks of TP2 attention, "
                        "experts still parallel over all 8)",
                .source = "FlashAccel, Evaluation setup: TP inside a node of 8; smaller groups are a deployment choice (assumption)",
                .min = 0,
                .max = 1024});
    v(deployment_search,
      {.name = "deployment_search",
       .def = "preferred_or_fastest",
       .desc = "how the batch search picks the deployment (attention tensor-parallel degree over the "
               "divisors of gpus_per_node, data-parallel ranks = GPUs / degree, experts over all GPUs): "
               "the preferred one (attention_parallel, tp_size) or, where it has no feasible batch, "
               "the fastest degree that has one (preferred: the nearest that has one)",
       .source = "FlashAccel, Evaluation setup: the parallelism table is the preferred family; an operator (vLLM, SGLang) picks "
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
                         .source = "FlashAccel, Evaluation setup: FP16 everywhere",
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
/// serving.engine_overhead: what the serving engine adds to the GPU's kernels (llm/serving.cpp).
struct EngineParams {
  Choice<EngineKind, engine_kinds> kind;
  Time launch{};        // kind custom: host time per kernel launch
  Time iteration{};     // kind custom: host time per iteration
  Time per_sequence{};  // kind custom: host time per iteration and sequence in it
  Time request{};       // kind custom: host time per request before it is scheduled

  template <class V>
  void visit(V& v) {
    v(kind, {.name = "kind",
             .def = "auto",
             .desc = "the serving engine whose host-side costs are added: per kernel launched without CUDA graphs, per "
                     "iteration (forward pass), per request; auto = the TensorRT-LLM session runtime for accel run "
                     "--static-batch (its gptSessionBenchmark), none elsewhere (the decode evaluation times kernels); "
                     "custom = the costs launch, iteration, per_sequence and request below",
             .source = "engine_kinds() in llm/serving.cpp lists each engine's values with their sources"});
    v(launch, {.name = "launch",
               .def = "0us",
               .desc = "kind custom only: host time per kernel launched (0: CUDA graphs, the GPU never waits on the "
                       "host); a pass of k kernels on t of GPU time takes max(t, k x launch). The other kinds have "
                       "their own values and refuse a non-zero one here",
               .source = "assumption: the user's measurement of their engine (e.g. 4-6 us per eager launch, the "
                         "tensorrt_llm_session kind's source)",
               .min = 0,
               .max = 1e-3});
    v(iteration, {.name = "iteration",
                  .def = "0us",
                  .desc = "kind custom only: host time added to every iteration (forward pass): scheduling, sampling, "
                          "the synchronisation that reads the sampled tokens. The other kinds have their own values and "
                          "refuse a non-zero one here",
                  .source = "assumption: the user's measurement of their engine",
                  .min = 0,
                  .max = 1});
    v(per_sequence, {.name = "per_sequence",
                     .def = "0us",
                     .desc = "kind custom only: host time added to an iteration for each sequence in it (preparing its "
                             "inputs, processing and detokenising its output). The other kinds have their own values "
                             "and refuse a non-zero one here",
                     .source = "assumption: the user's measurement of their engine (e.g. the sarathi_serve kind's 105 "
                               "us, Vidur's profile)",
                     .min = 0,
                     .max = 0.1});
    v(request, {.name = "request",
                .def = "0us",
                .desc = "kind custom only: host time per request before its prompt can be scheduled (tokenisation, the "
                        "runtime's set-up of the request); it delays the request's first token, not the GPU's passes. "
                        "accel run --static-batch: the batch is one call of the runtime, paid once. The other kinds "
                        "have their own values (none per request) and refuse a non-zero one here",
                .source = "assumption: the user's measurement of their engine",
                .min = 0,
                .max = 1});
  }
};

struct ServingParams {
  EngineParams engine;
  Choice<CapacityContext, capacity_contexts> capacity_context;
  double preemption_z = 0;
  Choice<ExpertPrefetch, expert_prefetches> expert_prefetch;
  Choice<KvLayout, kv_layouts> kv_layout;
  double routing_skew = 0;
  int64_t max_requests_per_rank = 0;
  Choice<StepModel, step_models> step_model;
  Bytes hbm_weight_cache{};
  Choice<KvOffload, kv_offloads> kv_offload;
  Bytes kv_block_bytes{};
  Choice<hbf::KvBlockAlign, hbf::kv_block_aligns> kv_block_alignment;
  Choice<KvArrange, kv_arranges> kv_arrange;
  double endurance_years = 5;
  int64_t seed = 1;
  PrefillParams prefill;

  template <class V>
  void visit(V& v) {
    v.section("prefill", prefill);
    v.section("engine", engine);
    v(capacity_context, {.name = "capacity_context",
                         .def = "paged",
                         .desc = "KV held per request in the capacity check: paged = the steady-state occupancy of a paged "
                                 "engine (each request holds what it has written; see preemption_z), full = every "
                                 "request reserves its whole context up front, mean = input + output / 2",
                         .source = "vLLM allocates KV blocks as tokens are written and preempts when they run out (Kwon "
                                   "et al., SOSP 2023, sec. 4.5); full: the paper's 405B example (~10 GB per request at "
                                   "15K/6K, the whole 21K tokens)"});
    v(preemption_z, {.name = "preemption_z",
                     .def = "2.326",
                     .desc = "capacity_context = paged: the batch's KV must fit at its mean plus z standard deviations "
                             "(requests at independent uniform points of their output; the sum is about normal), so "
                             "the engine runs out of blocks, and preempts, in a fraction 1 - Phi(z) of its steps",
                     .source = "assumption: 1% of steps (z = 2.326); vLLM's default preemption (recompute) makes rare "
                               "preemptions cheap",
                     .min = 0,
                     .max = 10});
    v(expert_prefetch, {.name = "expert_prefetch",
                        .def = "static",
                        .desc = "HBF: how a MoE layer's expert weights are prefetched: static = the prefetch queue "
                                "extracted from the static compute graph, which cannot know the routing, prefetches "
                                "every local expert; router = only the experts the router picked are read, their "
                                "prefetch issued once the router has run (its flash latency exposed)",
                        .source = "FlashAccel (arXiv 2607.10186), system software: SramPrefetch calls extracted from the "
                                  "compute graph into a queue in topological order; router is a bitline alternative"});
    v(kv_layout, {.name = "kv_layout",
                  .def = "flashaccel",
                  .desc = "KV placement on HBF",
                  .source = "FlashAccel, Data layout: FlashAccel KV layout vs PagedAttention"});
    v(routing_skew, {.name = "routing_skew",
                     .def = "0",
                     .desc = "MoE routing popularity: 0 = uniform top-k; s > 0 = Zipf(s) over experts (the GPU with the "
                             "hottest experts is timed)",
                     .source = "FlashAccel, Data layout: uniform by default, the routing distribution as a parameter",
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
                                   "intermediate data); FlashAccel, Hardware (integration): CSI's 'bandwidth adds up (4.8 + 4.6 TB/s)'",
                         .min = 0});
    v(kv_offload, {.name = "kv_offload",
                   .def = "mean",
                   .desc = "how far selective offload (GroupArrange) of each layer's KV to HBM goes",
                   .source = "FlashAccel, Data layout: 'until no plane exceeds the average'; fill is a bitline extension"});
    v(kv_block_bytes, {.name = "kv_block_bytes",
                       .def = "256KiB",
                       .desc = "kv_layout = paged: bytes of one PagedAttention KV block (one layer's KV of "
                               "kv_block_bytes / bytes-per-token tokens), placed as kv_block_alignment says",
                       .source = "FlashAccel, Data layout: PagedAttention KV blocks of 256 KB in the paper",
                       .min = 4096,
                       .max = double(int64_t(1) << 30)});
    v(kv_block_alignment, {.name = "kv_block_alignment",
                           .def = "block",
                           .desc = "kv_layout = paged: where a KV block starts in flash: block = a pool of fixed-size "
                                   "blocks cut from megablocks (aligned by construction), page = at any 4 KiB page",
                           .source = "vLLM's block pool: preallocated fixed-size blocks (Kwon et al., 'Efficient Memory "
                                     "Management for Large Language Model Serving with PagedAttention', SOSP 2023, sec. 4); "
                                     "page keeps the earlier unaligned placement"});
    v(kv_arrange,
      {.name = "kv_arrange",
       .def = "new_kv",
       .desc = "what GroupArrange copies to HBM in each step (charged in the step, kv_arrange)",
       .source = "FlashAccel, Data layout: selective offload after the write phase, its cost amortised over the steps that reuse the "
                 "unified KV cache; whole is the bound of a cache rebuilt every step"});
    v(endurance_years, {.name = "endurance_years",
                        .def = "5",
                        .desc = "service life for the write/endurance accounting",
                        .source = "FlashAccel, Endurance discussion: 1M P/E cycles over 5 years",
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
  int64_t decoding = 0;
  Time think_time{};
  Choice<ThinkTime, think_times> think_time_distribution;
  Time think_time_p90{};
  Time think_time_max{};
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
                      .source = "assumption: ~1,200 sessions alive at once, enough to overflow HBM but not HBF (used only "
                                "with sessions.decoding = 0)",
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
                              "(FlashAccel, Evaluation setup: agentic 15K/6K)",
                    .min = 1});
    v(new_input, {.name = "new_input",
                  .def = "1000",
                  .desc = "synthetic trace: mean new tokens a later turn adds to the history (tool results, user message)",
                  .source = "assumption: see first_input",
                  .min = 0});
    v(output, {.name = "output",
               .def = "6000",
               .desc = "synthetic trace: mean output tokens per turn",
               .source = "FlashAccel, Evaluation setup: agentic setting, 6K output tokens",
               .min = 1});
    v(user_tokens_per_s, {.name = "user_tokens_per_s",
                          .def = "10",
                          .desc = "synthetic trace: decode speed seen by a user",
                          .source = "FlashAccel, Evaluation setup: 100 ms decode-step SLO = ~10 tokens/s/user",
                          .min = 1e-3});
    v(decoding, {.name = "decoding",
                 .def = "128",
                 .desc = "synthetic trace: the offered load as requests decoding at once (Little's law: sessions started per "
                         "second = decoding x user_tokens_per_s / (mean turns x mean output)); 0 = sessions.arrival_per_s "
                         "sets the load",
                 .source = "assumption: within every experiment system's decode batch at the 100 ms SLO (accel eval, "
                           "Qwen3-235B agent 15K/6K: 144 on 8 x H200, 416 on 16 x H200, 632 on 8 x CLI, 816 on 8 x CSI)",
                 .min = 0,
                 .max = 1 << 20});
    v(think_time, {.name = "think_time",
                   .def = "1.6s",
                   .desc = "synthetic trace: the gap between a turn's end and the next turn: its median (lognormal) or "
                           "mean (exponential); part of the offered load",
                   .source = "public measurement: 783 k inter-turn gaps of 127 k agentic sessions of a production "
                             "Qwen3-Coder trace, median 1.6 s, p90 44 s, mean 37 s (tool calls plus paused sessions; "
                             "gitea.gahow.org/gahow/agentic-kvc, commit 41232f49, figs/f3a_inter_turn_gap)",
                   .min = 0,
                   .max = 1e6});
    v(think_time_distribution,
      {.name = "think_time_distribution",
       .def = "lognormal",
       .desc = "synthetic trace: lognormal = heavy-tailed, through the median think_time and think_time_p90; "
               "exponential = memoryless with mean think_time",
       .source = "public measurement: the agentic trace's gaps are heavy-tailed (p90 / median = 27, mean 23 x the median; "
                 "see think_time); exponential is bitline's earlier assumption"});
    v(think_time_p90, {.name = "think_time_p90",
                       .def = "44s",
                       .desc = "synthetic trace, lognormal: the 90th percentile of the think time (sigma = ln(p90 / "
                               "median) / 1.2816)",
                       .source = "public measurement: see think_time (p90 44 s)",
                       .min = 0,
                       .max = 1e6});
    v(think_time_max, {.name = "think_time_max",
                       .def = "86400s",
                       .desc = "synthetic trace: the longest think time; a longer draw is cut to it (a session idle for a day "
                               "has long lost its KV at any load; the lognormal's tail would otherwise give gaps of months)",
                       .source = "assumption",
                       .min = 0,
                       .max = 1e7});
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
