// Parameters of one GPU's memory system with High-Bandwidth Flash (HBF):
// the HBF stacks (config section `hbf`), the HBM stacks (`hbm`) and the GPU
// itself (`gpu`). Every default names its source; see docs/hbf.md.
#pragma once

#include <string>

#include "core/params.hpp"
#include "core/units.hpp"

namespace bitline::hbf {

/// Geometry of one HBF stack (spec: FlashAccel Table 2 die, 8 dies per stack).
struct Geometry {
  int64_t dies_per_stack = 0;
  int64_t planes_per_die = 0;
  int64_t blocks_per_plane = 0;
  int64_t pages_per_block = 0;
  Bytes page_size{};
  int64_t planes_per_megaplane = 0;

  template <class V>
  void visit(V& v) {
    v(dies_per_stack, {.name = "dies_per_stack", .def = "8", .desc = "SLC flash dies per HBF stack (plus one base die)",
                       .source = "spec: 8 SLC flash dies + 1 base die per stack", .min = 1, .max = 64});
    v(planes_per_die, {.name = "planes_per_die", .def = "96", .desc = "planes per flash die",
                       .source = "spec: 96 planes per die (paper Table 2)", .min = 1, .max = 4096});
    v(blocks_per_plane, {.name = "blocks_per_plane", .def = "256", .desc = "blocks per plane",
                         .source = "spec: 256 blocks per plane", .min = 1, .max = (1 << 20) - 1});
    v(pages_per_block, {.name = "pages_per_block", .def = "256", .desc = "pages per block (programmed in order)",
                        .source = "spec: 256 pages per block", .min = 1, .max = (1 << 20) - 1});
    v(page_size, {.name = "page_size", .def = "4KiB", .desc = "bytes per plane page",
                  .source = "spec: 4 KB pages; modelled as 4 KiB (see docs/hbf.md on the 2.4% KB/KiB difference)",
                  .min = 8, .max = 1 << 24});
    v(planes_per_megaplane,
      {.name = "planes_per_megaplane", .def = "32",
       .desc = "M: planes of a die that share one command circuit (a megaplane); 1 = the plane-level design",
       .source = "spec: 32 planes per megaplane, 3 per die; M = 1 is the paper's first, plane-level version", .min = 1,
       .max = 4096});
  }
};

struct Timing {
  Time t_read{}, t_prog{}, t_erase{};
  Bandwidth interface_bandwidth{};
  int64_t page_buffers = 0;

  template <class V>
  void visit(V& v) {
    v(t_read, {.name = "t_read", .def = "4us", .desc = "tR: sensing one page into the plane's page buffer",
               .source = "spec: Kioxia XL-Flash, tR = 4 us", .min = 1e-12});
    v(t_prog, {.name = "t_prog", .def = "75us", .desc = "tPROG: programming one SLC page",
               .source = "spec: Kioxia XL-Flash, tProg = 75 us", .min = 1e-12});
    v(t_erase, {.name = "t_erase", .def = "3.5ms", .desc = "tBERS: erasing one block",
                .source = "assumption: the paper gives none; the NAND die model's tBERS (3-5 ms class)", .min = 0});
    v(interface_bandwidth, {.name = "interface_bandwidth", .def = "768GB/s",
                            .desc = "per-stack interface (base die to GPU), each direction",
                            .source = "spec: nominal 768 GB/s read per stack", .min = 1});
    v(page_buffers, {.name = "page_buffers", .def = "2",
                     .desc = "page buffers (latches) per plane: a direct read holds one until its data crossed the "
                             "interface; a program holds one while programming",
                     .source = "assumption: data + cache latch (cache read / cache program), standard in NAND",
                     .min = 1, .max = 16});
  }
};

struct Sram {
  Bytes plane_sram{}, base_sram{};
  template <class V>
  void visit(V& v) {
    v(plane_sram, {.name = "plane_sram", .def = "32KiB", .desc = "SRAM per plane on the circuit die (prefetch buffer)",
                   .source = "spec: 32 KB per plane (24 MB per stack)", .min = 0});
    v(base_sram, {.name = "base_sram", .def = "8MiB", .desc = "SRAM on the base die, shared by the stack",
                  .source = "spec: 8 MB on the base die (32 MB per stack in all)", .min = 0});
  }
};

struct EnergyParams {
  EnergyPerBit read{}, program{};
  Energy erase_block{};
  template <class V>
  void visit(V& v) {
    v(read, {.name = "read", .def = "8pJ/bit", .desc = "energy per bit read from flash and delivered to the GPU",
             .source = "spec: 8 pJ/bit, measured on a hybrid-bonded prototype", .min = 0});
    v(program, {.name = "program", .def = "80pJ/bit", .desc = "energy per bit programmed",
                .source = "assumption: 10x the read energy (ISPP programming costs about an order of magnitude "
                          "more than sensing); not in the spec",
                .min = 0});
    v(erase_block, {.name = "erase_block", .def = "577.5uJ", .desc = "energy to erase one block of one plane",
                    .source = "assumption: 165 mW x 3.5 ms, the NAND die model's erase power and tBERS", .min = 0});
  }
};

struct Endurance {
  int64_t pe_cycles = 0;
  template <class V>
  void visit(V& v) {
    v(pe_cycles, {.name = "pe_cycles", .def = "1000000",
                  .desc = "P/E cycles after which a block is retired (no longer allocated)",
                  .source = "spec: SLC with 1M P/E cycles over 5 years (retention relaxed to 3 days)", .min = 1});
  }
};

/// Policies of the FTL-less runtime and of the timing model.
struct RuntimeParams {
  std::string weight_layout;
  std::string granularity;
  bool prefetch = true;
  int64_t prefetch_distance = 0;
  int64_t tile_hyperpages = 0;
  std::string kv_span;

  template <class V>
  void visit(V& v) {
    v(weight_layout, {.name = "weight_layout", .def = "execution",
                      .desc = "order in which a weight object's tensors are dealt over the megaplanes",
                      .source = "spec: execution order (FlashAccel) vs the naive declaration order",
                      .choices = "execution|declaration"});
    v(granularity, {.name = "granularity", .def = "megapage",
                    .desc = "timing model: one event per megapage command, or per plane page (validation)",
                    .source = "bitline", .choices = "megapage|plane"});
    v(prefetch, {.name = "prefetch", .def = "true",
                 .desc = "run the prefetch queue (SramPrefetch ahead of compute); false: every read goes to flash on demand",
                 .source = "spec: FlashAccel prefetch runtime"});
    v(prefetch_distance,
      {.name = "prefetch_distance", .def = "4", .desc = "tiles prefetched ahead of the tile being computed",
       .source = "assumption: covers tR (4 us) with about 2 tiles of slack at one hyperpage per tile; "
                 "5 tiles in flight fit the 8 pages of plane SRAM",
       .min = 0, .max = 1 << 20});
    v(tile_hyperpages, {.name = "tile_hyperpages", .def = "1",
                        .desc = "prefetch tile (one SramPrefetch / kernel step) in hyperpages of the execution-order stream",
                        .source = "assumption: the spec moves data and reads it a hyperpage at a time", .min = 1,
                        .max = 1 << 20});
    v(kv_span, {.name = "kv_span", .def = "fit",
                .desc = "megaplanes a request's KV is dealt over (its blocks are its own either way): all (every "
                        "megaplane from its cursor: at least one megablock on each) or fit (a window of consecutive "
                        "megaplanes just wide enough for the request's expected KV in whole megablocks; successive "
                        "requests' windows follow each other round the megaplanes)",
                .source = "spec: isolated block allocation, hyperpage-packed writes (no allocator given); bitline "
                          "default fit: with all, a request holds a megablock on every megaplane and the paper's own "
                          "batch-256 ablation could not fit",
                .choices = "all|fit"});
  }
};

/// The config section `hbf`.
struct HbfParams {
  int64_t stacks = 0;
  Geometry geometry;
  Timing timing;
  Sram sram;
  EnergyParams energy;
  Endurance endurance;
  RuntimeParams runtime;

  template <class V>
  void visit(V& v) {
    v(stacks, {.name = "stacks", .def = "0", .desc = "HBF stacks of the GPU",
               .source = "spec: H200 has none; CSI 6, CLI 5 (presets)", .min = 0, .max = 64});
    v.section("geometry", geometry);
    v.section("timing", timing);
    v.section("sram", sram);
    v.section("energy", energy);
    v.section("endurance", endurance);
    v.section("runtime", runtime);
  }
};

/// The config section `hbm`.
struct HbmParams {
  int64_t stacks = 0;
  Bytes capacity_per_stack{};
  Bandwidth bandwidth_per_stack{};
  Time latency{};
  EnergyPerBit energy{};

  template <class V>
  void visit(V& v) {
    v(stacks, {.name = "stacks", .def = "6", .desc = "HBM stacks of the GPU", .source = "spec: H200, 6 HBM3e stacks",
               .min = 0, .max = 64});
    v(capacity_per_stack, {.name = "capacity_per_stack", .def = "23.5GB", .desc = "capacity of one HBM stack",
                           .source = "spec: H200, 141 GB in 6 stacks", .min = 0});
    v(bandwidth_per_stack, {.name = "bandwidth_per_stack", .def = "800GB/s", .desc = "bandwidth of one HBM stack",
                            .source = "spec: H200, 4.8 TB/s over 6 stacks", .min = 1});
    v(latency, {.name = "latency", .def = "100ns", .desc = "access latency", .source = "spec: ~100 ns (HBM)", .min = 0});
    v(energy, {.name = "energy", .def = "2.99pJ/bit", .desc = "energy per bit read or written",
               .source = "spec: 2.99 pJ/bit for HBM3e", .min = 0});
  }
};

/// The config section `gpu`: the accelerator around the memories.
struct GpuParams {
  double bf16_flops = 0;
  Bytes onchip_sram{};
  template <class V>
  void visit(V& v) {
    v(bf16_flops, {.name = "bf16_flops", .def = "989e12", .desc = "dense BF16 throughput, FLOP/s",
                   .source = "spec: H200 SXM, 989 TFLOP/s BF16 dense", .min = 0});
    v(onchip_sram, {.name = "onchip_sram", .def = "50MB", .desc = "on-chip SRAM (L2) that receives data read from HBF/HBM",
                    .source = "assumption: Hopper L2 size (NVIDIA datasheet), not in the spec", .min = 0});
  }
};

/// Everything one GPU's memory system needs.
struct SystemParams {
  GpuParams gpu;
  HbmParams hbm;
  HbfParams hbf;
};

/// Loads `gpu`, `hbm` and `hbf` and checks them across fields (ConfigError naming the key).
SystemParams load_system_params(const ConfigTree& tree);
/// Most blocks of one GPU's HBF (megaplanes x blocks per plane): the runtime keeps a few words per block,
/// so 2^24 blocks are about 300 MB of tables (the CSI preset has 36,864).
inline constexpr int64_t kMaxHbfBlocks = int64_t(1) << 24;
/// Most flash bytes of one GPU's HBF: 2^60 (1 EiB), so that capacities and lifetime byte counts stay within 64 bits.
inline constexpr int64_t kMaxHbfCapacity = int64_t(1) << 60;

/// Cross-field checks (e.g. M must divide the planes of a die), and the size limits above.
void validate(const SystemParams& p, const ConfigTree* tree = nullptr);

}  // namespace bitline::hbf
