// llm.compute: the GPU's compute model, its kernels and their calibration (llm/gpu.hpp; docs/llm.md, "Kernels").
#pragma once

#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "llm/param_kinds.hpp"

namespace bitline::llm {

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
    v(attention_efficiency, {.name = "attention_efficiency",
                             .def = "0.988",
                             .desc = "prefill attention (FlashAttention): fraction of the BF16 peak its MMAs reach in a CTA's "
                                     "loop over KV blocks; the softmax's exponentials are timed apart at softmax_rate (where "
                                     "that is 0, they are folded into this fraction)",
                             .source = "derived from FlashAttention-3 (Shah et al., arXiv 2407.08608) Fig. 5, H100 SXM5, FP16 "
                                       "forward, head dim 128, no mask: 648 TFLOP/s at 16k and 467 at 512 tokens (with "
                                       "attention_fixed_blocks and softmax_rate 3.9e12); the other 34 points of Fig. 5 (head "
                                       "dims 64 and 256, causal) are the check (docs/calibration.md, \"Attention kernels against "
                                       "FlashAttention-3's figures\"); per kind "
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
                 "1.16-1.42x (HBM-bound) (ai-dynamo/aiconfigurator; docs/calibration.md, mechanism 7)",
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

}  // namespace bitline::llm
