// Parameters of one GPU's memory system with High-Bandwidth Flash (HBF):
// the HBF stacks (config section `hbf`), the HBM stacks (`hbm`) and the GPU
// itself (`gpu`). The cell of the HBF planes (tR, tPROG, tBERS, read, program
// and erase energy) is the NAND model's: the config section `nand`, which the
// HBF presets load from configs/nand/xl-flash.yaml (an XL-Flash-class SLC
// cell); use_cell() derives the plane's figures from it. Every default names
// its source; see docs/hbf.md.
#pragma once

#include <memory>
#include <string>

#include "core/params.hpp"
#include "core/units.hpp"
#include "hbf/area.hpp"
#include "nand/params.hpp"

namespace bitline::hbf {

// Policies of the runtime and the timing model, chosen by name (core/registry.hpp);
// each table is defined beside the code it selects.

class WeightLayout;
using WeightLayoutFactory = std::unique_ptr<WeightLayout> (*)();
/// hbf.runtime.weight_layout: the WeightLayout implementations (table in hbf/layout.cpp).
const Registry<WeightLayoutFactory>& weight_layouts();
using WeightLayoutChoice = Choice<WeightLayoutFactory, weight_layouts>;
/// hbf.runtime.granularity (table in hbf/timing.cpp).
enum class Granularity { Megapage, Plane };
const Registry<Granularity>& granularities();
/// hbf.runtime.kv_read_queue (table in hbf/timing.cpp): how a kernel's KV reads that are not hyperpages (the scatter
/// and paged layouts) are issued.
enum class KvReadQueue { Kernel, Tile };
const Registry<KvReadQueue>& kv_read_queues();
/// hbf.runtime.kv_span (table in hbf/system.cpp, System::kv_window).
enum class KvSpan { All, Fit };
const Registry<KvSpan>& kv_spans();

/// Geometry of one HBF stack (FlashAccel, Table 2: FlashAccel Table 2 die, 8 dies per stack).
struct Geometry {
  int64_t dies_per_stack = 0;
  int64_t planes_per_die = 0;
  int64_t blocks_per_plane = 0;
  int64_t pages_per_block = 0;
  Bytes page_size{};
  int64_t planes_per_megaplane = 0;

  template <class V>
  void visit(V& v) {
    v(dies_per_stack, {.name = "dies_per_stack",
                       .def = "8",
                       .desc = "SLC flash dies per HBF stack (plus one base die)",
                       .source = "FlashAccel, Hardware (HBF stack): 8 SLC flash dies + 1 base die per stack",
                       .min = 1,
                       .max = 64});
    v(planes_per_die, {.name = "planes_per_die",
                       .def = "96",
                       .desc = "planes per flash die",
                       .source = "FlashAccel, Table 2: 96 planes per die (paper Table 2)",
                       .min = 1,
                       .max = 4096});
    v(blocks_per_plane, {.name = "blocks_per_plane",
                         .def = "256",
                         .desc = "blocks per plane",
                         .source = "FlashAccel, Table 2: 256 blocks per plane",
                         .min = 1,
                         .max = (1 << 20) - 1});
    v(pages_per_block, {.name = "pages_per_block",
                        .def = "256",
                        .desc = "pages per block (programmed in order)",
                        .source = "FlashAccel, Table 2: 256 pages per block",
                        .min = 1,
                        .max = (1 << 20) - 1});
    v(page_size, {.name = "page_size",
                  .def = "4KiB",
                  .desc = "bytes per plane page",
                  .source = "FlashAccel, Table 2: 4 KB pages; modelled as 4 KiB (see docs/hbf.md on the 2.4% KB/KiB difference)",
                  .min = 8,
                  .max = 1 << 24});
    v(planes_per_megaplane,
      {.name = "planes_per_megaplane",
       .def = "32",
       .desc = "M: planes of a die that share one command circuit (a megaplane); 1 = the plane-level design",
       .source =
           "FlashAccel, Hardware (megaplane design): 32 planes per megaplane, 3 per die; M = 1 is the paper's first, plane-level version",
       .min = 1,
       .max = 4096});
  }
};

struct Timing {
  // The cell's, derived by use_cell() from the `nand` section (not config keys here):
  Time t_read{};   // tR: sensing one page into the plane's page buffer (nand.timing.t_read_slc)
  Time t_prog{};   // tPROG: programming one SLC page (nand.timing.t_prog_slc)
  Time t_erase{};  // tBERS: erasing one block (nand.timing.t_erase)
  Bandwidth interface_bandwidth{};
  int64_t page_buffers = 0;
  // Per-read overheads (issue 28): what a read costs besides tR and the interface.
  Time t_command{};                // command and address cycles of a read, before the array is busy
  Bandwidth die_link_bandwidth{};  // a flash die's link to the base die (TSVs)
  Time t_ecc_decode{};             // ECC decode of a read's data on the base die (pipelined)

  template <class V>
  void visit(V& v) {
    v(interface_bandwidth, {.name = "interface_bandwidth",
                            .def = "768GB/s",
                            .desc = "per-stack interface (base die to GPU), each direction",
                            .source = "FlashAccel, Hardware (HBF stack): nominal 768 GB/s read per stack",
                            .min = 1e6,
                            .max = 1e15});
    v(page_buffers, {.name = "page_buffers",
                     .def = "2",
                     .desc = "page buffers (latches) per plane: a direct read holds one until its data crossed the "
                             "interface; a program holds one while programming",
                     .source = "assumption: data + cache latch (cache read / cache program), standard in NAND",
                     .min = 1,
                     .max = 16});
    v(t_command, {.name = "t_command",
                  .def = "170ns",
                  .desc = "command and address cycles of one megapage read (00h, 5 address cycles, 30h) and the wait "
                          "until the array is busy; the megaplane's command circuit is held for t_command + tR per read",
                  .source = "datasheet: ONFI NV-DDR timing mode 5 as the Linux kernel tabulates it "
                            "(https://github.com/torvalds/linux/blob/master/drivers/mtd/nand/raw/nand_timings.c): 7 "
                            "cycles at tCK_min = 10 ns, then tWB_max = 100 ns",
                  .min = 0});
    v(die_link_bandwidth, {.name = "die_link_bandwidth",
                           .def = "96GB/s",
                           .desc = "a flash die's link (TSVs) to the base die: a sensed megapage reaches the base die "
                                   "megapage / this after its sensing ends (a latency: the stack's dies together move "
                                   "what its interface moves, and the interface is timed as a queue)",
                           .source = "assumption: the stack interface's 768 GB/s shared by its 8 flash dies, each owning "
                                     "its TSV channels as the dies of an HBM stack own theirs (JEDEC HBM3, JESD238: 16 "
                                     "channels per stack)",
                           .min = 1e6,
                           .max = 1e15});
    v(t_ecc_decode, {.name = "t_ecc_decode",
                     .def = "1us",
                     .desc = "ECC decode of a read's data on the base die before it can cross the interface (a "
                             "pipelined decoder: a latency per read, not a rate)",
                     .source = "assumption: one hard-decision LDPC pass over 4 KiB codewords; SLC read at its relaxed "
                               "3-day retention seldom needs a soft retry (no HBF ECC figure is published)",
                     .min = 0});
  }
};

struct Sram {
  Bytes plane_sram{}, base_sram{};
  template <class V>
  void visit(V& v) {
    v(plane_sram, {.name = "plane_sram",
                   .def = "32KiB",
                   .desc = "SRAM per plane on the circuit die (prefetch buffer)",
                   .source = "FlashAccel, Hardware (SRAM): 32 KB per plane (24 MB per stack)",
                   .min = 0});
    v(base_sram, {.name = "base_sram",
                  .def = "8MiB",
                  .desc = "SRAM on the base die, shared by the stack",
                  .source = "FlashAccel, Hardware (SRAM): 8 MB on the base die (32 MB per stack in all)",
                  .min = 0});
  }
};

/// The plane's energies, derived by use_cell() from the `nand` section through the NAND
/// cost model (nand::CostModel) for a page of hbf.geometry.page_size; no config keys.
struct EnergyParams {
  EnergyPerBit read{};     // per bit sensed and delivered: (read_power x tR + read_energy x page bits) / page bits
  EnergyPerBit program{};  // per bit programmed: (program_power x tPROG + program_energy x page bits) / page bits
  Energy erase_block{};    // one block of one plane: erase_power x t_erase
};

struct Endurance {
  int64_t pe_cycles = 0;
  template <class V>
  void visit(V& v) {
    v(pe_cycles, {.name = "pe_cycles",
                  .def = "1000000",
                  .desc = "P/E cycles after which a block is retired (no longer allocated)",
                  .source = "FlashAccel, Endurance discussion: SLC with 1M P/E cycles over 5 years (retention relaxed to 3 days)",
                  .min = 1});
  }
};

/// Policies of the FTL-less runtime and of the timing model.
struct RuntimeParams {
  WeightLayoutChoice weight_layout;
  Choice<Granularity, granularities> granularity;
  bool prefetch = true;
  int64_t prefetch_distance = 0;
  int64_t tile_hyperpages = 0;
  Choice<KvSpan, kv_spans> kv_span;
  Choice<KvReadQueue, kv_read_queues> kv_read_queue;

  template <class V>
  void visit(V& v) {
    v(weight_layout, {.name = "weight_layout",
                      .def = "execution",
                      .desc = "order in which a weight object's tensors are dealt over the megaplanes",
                      .source = "FlashAccel, Data layout: execution order (FlashAccel) vs the naive declaration order"});
    v(granularity, {.name = "granularity", .def = "megapage", .desc = "timing model: what one event stands for", .source = "bitline"});
    v(prefetch, {.name = "prefetch",
                 .def = "true",
                 .desc = "run the prefetch queue (SramPrefetch ahead of compute); false: every read goes to flash on demand",
                 .source = "FlashAccel, System software: FlashAccel prefetch runtime"});
    v(prefetch_distance, {.name = "prefetch_distance",
                          .def = "4",
                          .desc = "tiles prefetched ahead of the tile being computed",
                          .source = "assumption: covers tR (4 us) with about 2 tiles of slack at one hyperpage per tile; "
                                    "5 tiles in flight fit the 8 pages of plane SRAM",
                          .min = 0,
                          .max = 1 << 20});
    v(tile_hyperpages, {.name = "tile_hyperpages",
                        .def = "1",
                        .desc = "prefetch tile (one SramPrefetch / kernel step) in hyperpages of the execution-order stream",
                        .source = "assumption: the spec moves data and reads it a hyperpage at a time",
                        .min = 1,
                        .max = 1 << 20});
    v(kv_span, {.name = "kv_span",
                .def = "fit",
                .desc = "megaplanes a request's KV is dealt over (its blocks are its own either way)",
                .source = "FlashAccel, Data layout: isolated block allocation, hyperpage-packed writes (no allocator given); bitline "
                          "default fit: with all, a request holds a megablock on every megaplane and the paper's own "
                          "batch-256 ablation could not fit"});
    v(kv_read_queue, {.name = "kv_read_queue",
                      .def = "kernel",
                      .desc = "KV reads that are not hyperpages (kv_layout scatter, paged): kernel = the attention "
                              "kernel queues all its page reads per megaplane at once and the megaplanes drain them in "
                              "parallel (bounded by page buffers, SRAM and the prefetch window); tile = in tiles of K "
                              "megapages, each started when the previous one has ended",
                      .source = "assumption: the base die's NAND controller queues a kernel's reads per megaplane "
                                "(FlashAccel, arXiv 2607.10186, gives the controller but not its queues); tile is "
                                "bitline's earlier timing"});
  }
};

/// The config section `hbf` (and, in timing / energy, the figures use_cell() derives from the cell).
struct HbfParams {
  int64_t stacks = 0;
  Geometry geometry;
  Timing timing;
  Sram sram;
  EnergyParams energy;
  Endurance endurance;
  RuntimeParams runtime;
  AreaParams area;

  template <class V>
  void visit(V& v) {
    v(stacks, {.name = "stacks",
               .def = "0",
               .desc = "HBF stacks of the GPU",
               .source = "FlashAccel, Hardware (integration): H200 has none; CSI 6, CLI 5 (presets)",
               .min = 0,
               .max = 64});
    v.section("geometry", geometry);
    v.section("timing", timing);
    v.section("sram", sram);
    v.section("endurance", endurance);
    v.section("runtime", runtime);
    v.section("area", area);
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
    v(stacks, {.name = "stacks",
               .def = "6",
               .desc = "HBM stacks of the GPU",
               .source = "FlashAccel, Evaluation setup: H200, 6 HBM3e stacks",
               .min = 0,
               .max = 64});
    v(capacity_per_stack, {.name = "capacity_per_stack",
                           .def = "23.5GB",
                           .desc = "capacity of one HBM stack",
                           .source = "FlashAccel, Evaluation setup: H200, 141 GB in 6 stacks",
                           .min = 0});
    v(bandwidth_per_stack, {.name = "bandwidth_per_stack",
                            .def = "800GB/s",
                            .desc = "bandwidth of one HBM stack",
                            .source = "FlashAccel, Evaluation setup: H200, 4.8 TB/s over 6 stacks",
                            .min = 1e6,
                            .max = 1e15});
    v(latency, {.name = "latency",
                .def = "100ns",
                .desc = "access latency",
                .source = "FlashAccel, Evaluation setup: ~100 ns (HBM)",
                .min = 0,
                .max = 1.0});
    v(energy, {.name = "energy",
               .def = "2.99pJ/bit",
               .desc = "energy per bit read or written",
               .source = "FlashAccel, Energy/area discussion: 2.99 pJ/bit for HBM3e",
               .min = 0,
               .max = 1e-6});
  }
};

/// The config section `gpu`: the accelerator around the memories.
struct GpuParams {
  double bf16_flops = 0;
  Bytes onchip_sram{};
  template <class V>
  void visit(V& v) {
    v(bf16_flops, {.name = "bf16_flops",
                   .def = "989e12",
                   .desc = "dense BF16 throughput, FLOP/s",
                   .source = "FlashAccel, Evaluation setup: H200 SXM, 989 TFLOP/s BF16 dense",
                   .min = 1e9,
                   .max = 1e18});
    v(onchip_sram, {.name = "onchip_sram",
                    .def = "50MB",
                    .desc = "on-chip SRAM (L2) that receives data read from HBF/HBM",
                    .source = "assumption: Hopper L2 size (NVIDIA datasheet), not in the spec",
                    .min = 0});
  }
};

/// Everything one GPU's memory system needs.
struct SystemParams {
  GpuParams gpu;
  HbmParams hbm;
  HbfParams hbf;
  /// The NAND cell of the HBF planes: the config section `nand` (one source of truth for both systems;
  /// the HBF presets load configs/nand/xl-flash.yaml). Only its parameters are used: no die is built.
  nand::NandParams cell;
};

/// Sets the plane's tR, tPROG, tBERS and read / program / erase energy (hbf.timing, hbf.energy) from the
/// NAND cell's SLC figures, through nand::CostModel for one page of hbf.geometry.page_size.
void use_cell(HbfParams& hbf, const nand::NandParams& cell);

/// Loads `gpu`, `hbm`, `hbf` and the cell (`nand`), and checks them across fields (ConfigError naming the key).
SystemParams load_system_params(const ConfigTree& tree);
/// Most blocks of one GPU's HBF (megaplanes x blocks per plane): the runtime keeps a few words per block,
/// so 2^24 blocks are about 300 MB of tables (the CSI preset has 36,864).
inline constexpr int64_t kMaxHbfBlocks = int64_t(1) << 24;
/// Most flash bytes of one GPU's HBF: 2^60 (1 EiB), so that capacities and lifetime byte counts stay within 64 bits.
inline constexpr int64_t kMaxHbfCapacity = int64_t(1) << 60;

/// Cross-field checks (e.g. M must divide the planes of a die), and the size limits above.
void validate(const SystemParams& p, const ConfigTree* tree = nullptr);

}  // namespace bitline::hbf
