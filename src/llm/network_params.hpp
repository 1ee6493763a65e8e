// llm.network and llm.energy: the GPUs' links and collectives (llm/collectives.hpp) and the activity-based energy
// model (llm/serving.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "llm/param_kinds.hpp"

namespace bitline::llm {

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

}  // namespace bitline::llm
