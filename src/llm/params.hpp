// Parameters of LLM serving on (HBF-equipped) GPUs, declared where used:
//   llm       the GPU's compute model, the network, parallelism, memory
//             reserve, energy, the fast step model            (LlmParams)
//   serving   capacity policy, KV layout, routing, search, endurance (ServingParams)
//   sessions  the multi-turn KV-reuse experiment                (SessionParams)
// The GPU's memories (gpu, hbm, hbf) are the HBF issue's sections (hbf/params.hpp).
// Every default names its source; docs/llm.md explains them. The sections' parts are declared in
// llm/compute_params.hpp, llm/network_params.hpp and llm/serving_params.hpp; the policies' enums in llm/param_kinds.hpp.
#pragma once

#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "llm/compute_params.hpp"
#include "llm/model.hpp"
#include "llm/network_params.hpp"
#include "llm/param_kinds.hpp"
#include "llm/serving_params.hpp"

namespace bitline::llm {

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

}  // namespace bitline::llm
