// Silicon area of one HBF stack and of the HBM3e stack FlashAccel compares it with, from the device's
// geometry and published technology figures (config section `hbf.area`; docs/hbf.md, "Area and density").
//
// A flash die is an array die (the 3D NAND cells) hybrid-bonded to a circuit die (each plane's page buffers,
// sense amplifiers, word-line switches and SRAM, the megaplanes' command logic, the die's periphery); TSVs
// run through both. Bonded (FlashAccel's die), the pair's footprint is the larger of the two; with the
// circuits beside the array (a planar layout) it is their sum. The stack's footprint is its largest die (8
// flash dies and one base die stacked), and its density is capacity / footprint. The HBM3e stack goes
// through the same two steps: core dies from a published DRAM die scaled to the HBM3e die, a base die, the
// footprint the larger of them.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/params.hpp"
#include "core/units.hpp"

namespace bitline::hbf {

struct HbfParams;

/// hbf.area.periphery: where a flash die's circuits sit (table in hbf/area.cpp).
enum class Periphery { Bonded, Beside };
const Registry<Periphery>& peripheries();

/// The published 3D NAND die the array's cell density comes from (hbf.area.cell).
struct CellReference {
  Bytes capacity{};
  Area area{};
  int64_t layers = 0;
  int64_t bits_per_cell = 0;

  template <class V>
  void visit(V& v) {
    static constexpr const char* kDie =
        "TechInsights teardown of YMTC X3-9070 (Xtacking 3.0: CMOS wafer hybrid-bonded to the array wafer, as the "
        "HBF die), in eeNews Europe, 'China's YMTC confirms lead in 3D NAND flash memory' "
        "(https://www.eenewseurope.com/en/chinas-ymtc-confirms-lead-in-3d-nand-flash-memory/)";
    v(capacity, {.name = "capacity", .def = "128GiB", .desc = "capacity of the reference die (1 Tb)", .source = kDie, .min = 1});
    v(area, {.name = "area",
             .def = "68.04mm2",
             .desc = "area of the reference die: its array, staircases and pads (its CMOS is bonded under them)",
             .source = "TechInsights: 12.6 mm x 5.4 mm (eeNews Europe, 'China's YMTC confirms lead in 3D NAND flash memory')",
             .min = 1e-12});
    v(layers, {.name = "layers",
               .def = "232",
               .desc = "active word-line layers of the reference die",
               .source = "TechInsights via Tom's Hardware, 'YMTC quietly begins shipping 5th Gen 3D TLC NAND': X3-9070, 232 active "
                         "of 253 layers (https://www.tomshardware.com/pc-components/ssds/"
                         "chinese-chipmaker-ships-record-breaking-chips-ymtc-quietly-begins-shipping-5th-gen-3d-tlc-nand)",
               .min = 1,
               .max = 4096});
    v(bits_per_cell, {.name = "bits_per_cell",
                      .def = "3",
                      .desc = "bits per cell of the reference die (the HBF stores 1: SLC)",
                      .source = kDie,
                      .min = 1,
                      .max = 8});
  }
};

/// One flash die's circuit die (hbf.area.circuit): per bitline, per word-line switch, per SRAM bit, per
/// megaplane, per die.
struct CircuitArea {
  double spare_fraction = 0;
  Area sense_amp{};
  Area latch{};
  int64_t strings_per_block = 0;
  Area wl_switch{};
  Area sram_cell{};
  double sram_efficiency = 0;
  Area megaplane_logic{};
  Area die_periphery{};

  template <class V>
  void visit(V& v) {
    v(spare_fraction, {.name = "spare_fraction",
                       .def = "0.1",
                       .desc = "spare columns (ECC parity, metadata) per page, as a fraction of the page: bitlines per plane "
                               "= page bits x (1 + this)",
                       .source = "assumption: NAND pages carry about a tenth more bytes for ECC; the array density of "
                                 "hbf.area.cell counts user bits, so only the page buffers see the spare",
                       .min = 0,
                       .max = 1});
    v(sense_amp, {.name = "sense_amp",
                  .def = "4um2",
                  .desc = "sense amplifier of one bitline (its high-voltage bitline clamp and the sensing latch)",
                  .source = "assumption: a few high-voltage and logic transistors at the NAND CMOS node; no public layout figure",
                  .min = 0});
    v(latch, {.name = "latch",
              .def = "1.2um2",
              .desc = "one data latch of one bitline; a plane has hbf.timing.page_buffers of them per bitline",
              .source = "assumption: a cross-coupled latch with its transfer gates, about 8 logic transistors",
              .min = 0});
    v(strings_per_block, {.name = "strings_per_block",
                          .def = "4",
                          .desc = "strings (sub-blocks) per block: a plane has pages / strings word-line switches (one per "
                                  "word line of each block), whatever the layer count",
                          .source = "assumption: 4 sub-blocks per block, as bitline's NAND model (nand.geometry.subblocks_per_block)",
                          .min = 1,
                          .max = 1 << 16});
    v(wl_switch, {.name = "wl_switch",
                  .def = "2um2",
                  .desc = "one word-line switch (a high-voltage pass transistor) with its share of the block decoder",
                  .source = "assumption: a program-voltage (~20 V) transistor, several um2 at any node",
                  .min = 0});
    v(sram_cell, {.name = "sram_cell",
                  .def = "0.074um2",
                  .desc = "SRAM bit cell of the circuit die (the plane SRAM, hbf.sram.plane_sram)",
                  .source = "TSMC 16FF+ high-density 6T cell (WikiChip, '16 nm lithography process', "
                            "https://en.wikichip.org/wiki/16_nm_lithography_process); the node is an assumption: a mature FinFET "
                            "node, as NAND CMOS wafers use (Xtacking 3.0 'uses a mature process node for the chip's CMOS underlayer': "
                            "TechPowerUp, 'YMTC Develops 128 and 232-Layer Xtacking 4.0 NAND Memory Chips', 2023)",
                  .min = 1e-18});
    v(sram_efficiency, {.name = "sram_efficiency",
                        .def = "0.70",
                        .desc = "fraction of an SRAM macro that is bit cells (the rest: decoders, sense amplifiers, assists)",
                        .source = "derived: 31.8 Mib/mm2 of macro with a 0.021 um2 cell (TSMC N3E; WikiChip Fuse, 'IEDM 2022: Did "
                                  "We Just Witness The Death Of SRAM?', https://fuse.wikichip.org/news/7343/"
                                  "iedm-2022-did-we-just-witness-the-death-of-sram/) = 0.70",
                        .min = 0.01,
                        .max = 1});
    v(megaplane_logic, {.name = "megaplane_logic",
                        .def = "1mm2",
                        .desc = "command circuit of one megaplane: sequencer, address and command registers, the charge pumps "
                                "and regulators its planes share (hbf.geometry.planes_per_megaplane planes)",
                        .source = "assumption: the control logic and pumps of a conventional NAND die, which serve a few planes",
                        .min = 0});
    v(die_periphery, {.name = "die_periphery",
                      .def = "3mm2",
                      .desc = "per flash die: I/O to the TSV bus, power distribution, fuses, test",
                      .source = "assumption: a few mm2, as the I/O and power of a conventional NAND die",
                      .min = 0});
  }
};

/// The through-silicon vias of every die of a stack (hbf.area.tsv); hybrid-bond pads take no area of their own
/// (they sit in the top metal over the circuits they connect).
struct TsvArea {
  int64_t per_die = 0;
  Area each{};

  template <class V>
  void visit(V& v) {
    v(per_die, {.name = "per_die",
                .def = "5000",
                .desc = "TSVs through each die of the stack (flash dies and base die; the HBM3e base die too)",
                .source = "assumption: as an HBM3 die, about 60,000 TSVs in a 12-high stack (Tom's Hardware, 'SK Hynix Samples "
                          "24GB HBM3 Modules: Up to 819 GB/s', 2023); the HBF stack's 768 GB/s interface is HBM-class",
                .min = 0,
                .max = 10000000});
    v(each, {.name = "each",
             .def = "1600um2",
             .desc = "silicon one TSV takes: the via, its keep-out zone and its landing pad",
             .source = "assumption: a 40 um x 40 um cell",
             .min = 0});
  }
};

/// The base die under the flash dies (hbf.area.base): the stack's SRAM (hbf.sram.base_sram), the interface PHY,
/// the NAND controller, the TSV landing.
struct BaseDieArea {
  Area sram_cell{};
  double sram_efficiency = 0;
  Area phy{};
  Area controller{};

  template <class V>
  void visit(V& v) {
    v(sram_cell, {.name = "sram_cell",
                  .def = "0.074um2",
                  .desc = "SRAM bit cell of the base die",
                  .source = "TSMC 16FF+ high-density cell (WikiChip, '16 nm lithography process'); the node is an assumption "
                            "(the spec does not name one)",
                  .min = 1e-18});
    v(sram_efficiency, {.name = "sram_efficiency",
                        .def = "0.70",
                        .desc = "fraction of an SRAM macro that is bit cells",
                        .source = "derived: WikiChip Fuse, 'IEDM 2022: Did We Just Witness The Death Of SRAM?' (see "
                                  "hbf.area.circuit.sram_efficiency)",
                        .min = 0.01,
                        .max = 1});
    v(phy, {.name = "phy",
            .def = "10mm2",
            .desc = "the stack's interface PHY toward the GPU (1024-bit HBM-class; the HBM3e base die has the same)",
            .source = "assumption: no public die figure of an HBM3-class device PHY was found",
            .min = 0});
    v(controller, {.name = "controller",
                   .def = "5mm2",
                   .desc = "NAND controller: command queues and scheduling of the stack's megaplanes, address decoding",
                   .source = "assumption: a few mm2 of logic (no ECC decoder: the HBF is modelled error-free)",
                   .min = 0});
  }
};

/// The HBM3e stack the HBF stack is compared with (hbf.area.hbm3e): FlashAccel's reference, an 8-high stack of
/// 24 Gb dies (24 GB), not the GPU's own HBM (section hbm, which the CSI preset thins).
struct Hbm3eArea {
  int64_t dies_per_stack = 0;
  Bytes die_capacity{};
  Bytes ref_capacity{};
  Area ref_area{};
  double node_density_gain = 0;
  double hbm_die_ratio = 0;
  Area base_logic{};

  template <class V>
  void visit(V& v) {
    v(dies_per_stack, {.name = "dies_per_stack",
                       .def = "8",
                       .desc = "DRAM core dies per HBM3e stack",
                       .source = "an 8-high 24 GB HBM3E stack (Micron's, as on the H200; Blocks & Files, 'DRAM, that's fast: SK "
                                 "hynix reaches for HBM3E sky', 2023); FlashAccel's 6.50x implies 24 GB per stack",
                       .min = 1,
                       .max = 64});
    v(die_capacity, {.name = "die_capacity",
                     .def = "3GiB",
                     .desc = "capacity of one HBM3e core die (24 Gb)",
                     .source = "eeNews Europe, 'SK Hynix begins volume production of best HBM3E': 24 Gbit dies",
                     .min = 1});
    v(ref_capacity, {.name = "ref_capacity",
                     .def = "2GiB",
                     .desc = "capacity of the published DRAM die the HBM3e die is scaled from (16 Gb DDR5)",
                     .source = "TechInsights, 'Micron DDR5 DIMM technology': Micron 16 Gb D1z DDR5 die "
                               "(https://techinsights.com/blog/memory/micron-ddr5-dimm-technology)",
                     .min = 1});
    v(ref_area, {.name = "ref_area",
                 .def = "66.39mm2",
                 .desc = "area of that DRAM die",
                 .source = "derived: 16 Gb at 0.241 Gb/mm2 (TechInsights, 'Micron DDR5 DIMM technology')",
                 .min = 1e-12});
    v(node_density_gain, {.name = "node_density_gain",
                          .def = "1.89",
                          .desc = "bit density of the HBM3e DRAM node over the reference die's (D1z to 1-beta)",
                          .source = "derived: Micron 1-alpha +40% over 1z (eeNews Europe, 'Micron ships first 1-alpha DRAM memory "
                                    "chips', 2021) x 1-beta +35% over 1-alpha (FierceElectronics, 'Micron plates 1-beta DRAM for "
                                    "smartphone consumption', 2022) = 1.89; Micron builds HBM3E on 1-beta",
                          .min = 0.01,
                          .max = 100});
    v(hbm_die_ratio, {.name = "hbm_die_ratio",
                      .def = "1.40",
                      .desc = "HBM die area over a DDR5 die of the same node and capacity (TSVs, wider I/O, more banks)",
                      .source = "TrendForce (A. Wu, 2024): 'the die size of HBM is generally 35-45% larger than DDR5 of the same "
                                "process and capacity' (http://flytronics-group.com/articledetail/cms-554.html); the middle",
                      .min = 0.1,
                      .max = 10});
    v(base_logic, {.name = "base_logic",
                   .def = "5mm2",
                   .desc = "HBM3e base die besides its PHY (hbf.area.base.phy) and TSVs: command decoding, test, repair",
                   .source = "assumption: a few mm2 of logic",
                   .min = 0});
  }
};

/// The config section `hbf.area`.
struct AreaParams {
  int64_t layers = 0;
  Choice<Periphery, peripheries> periphery;
  Area reticle_limit{};
  CellReference cell;
  CircuitArea circuit;
  TsvArea tsv;
  BaseDieArea base;
  Hbm3eArea hbm3e;

  template <class V>
  void visit(V& v) {
    v(layers, {.name = "layers",
               .def = "96",
               .desc = "word-line layers of the HBF array: the cells of a plane take area / layers",
               .source = "FlashAccel (Wang et al., arXiv 2607.10186) Table 2: 96 wordline layers",
               .min = 1,
               .max = 4096});
    v(periphery, {.name = "periphery",
                  .def = "bonded",
                  .desc = "where a flash die's circuits sit: the footprint is the larger (bonded) or the sum (beside) of the "
                          "array and circuit dies",
                  .source = "FlashAccel (Wang et al., arXiv 2607.10186) Table 2 die: an array die hybrid-bonded to a circuit die"});
    v(reticle_limit, {.name = "reticle_limit",
                      .def = "858mm2",
                      .desc = "largest die a scanner exposes in one field: a die that needs more is refused",
                      .source = "datasheet: the 26 mm x 33 mm full field of ASML's 193i and 0.33-NA EUV scanners",
                      .min = 1e-12});
    v.section("cell", cell);
    v.section("circuit", circuit);
    v.section("tsv", tsv);
    v.section("base", base);
    v.section("hbm3e", hbm3e);
  }
};

/// What sets a stack's footprint.
enum class Footprint { ArrayDie, CircuitDie, FlashDie, BaseDie, CoreDie };
std::string to_string(Footprint f);

/// One flash die, by component. Bonded: footprint = max(array die, circuit die); beside: their sum with the
/// TSVs counted once.
struct FlashDie {
  Area cells{};         // the planes' cells: planes x plane bits / (cell density per layer x layers x bits per cell)
  Area page_buffers{};  // planes x bitlines x (sense amplifier + latches)
  Area wl_switches{};   // planes x pages per plane / strings per block x switch
  Area plane_sram{};    // planes x plane SRAM bits x cell / efficiency
  Area megaplane_logic{};
  Area periphery{};
  Area tsv{};
  Area array_die() const { return cells + tsv; }
  Area circuit_die() const { return page_buffers + wl_switches + plane_sram + megaplane_logic + periphery + tsv; }
};

struct BaseDie {
  Area sram{}, phy{}, controller{}, tsv{};
  Area total() const { return sram + phy + controller + tsv; }
};

/// One HBF stack.
struct HbfStackArea {
  Periphery periphery = Periphery::Bonded;
  int64_t layers = 0, dies = 0;
  double cells_per_m2_per_layer = 0;  // of the array, from hbf.area.cell
  FlashDie flash;
  BaseDie base;
  Area flash_die{};  // footprint of one flash die
  Area footprint{};  // of the stack: its largest die
  Footprint limited_by = Footprint::ArrayDie;
  Bytes capacity{};
  /// Bytes per square metre of footprint.
  double density() const { return double(capacity.raw()) / footprint.raw(); }
};

/// The HBM3e stack of hbf.area.hbm3e.
struct Hbm3eStackArea {
  Area core_die{}, base_die{}, footprint{};
  Footprint limited_by = Footprint::CoreDie;
  Bytes capacity{};
  double density() const { return double(capacity.raw()) / footprint.raw(); }
};

struct AreaReport {
  HbfStackArea hbf;
  Hbm3eStackArea hbm3e;
  double area_ratio() const { return hbf.footprint / hbm3e.footprint; }
  double density_ratio() const { return hbf.density() / hbm3e.density(); }
  /// The breakdown (mm2), the densities and the ratios. (FlashAccel's published figures are compared with in
  /// scripts/plot_area.py, from scripts/paper_figures.json: never in the model's code.)
  nlohmann::json json() const;
};

/// The area of one stack of `hbf` (its geometry, SRAM, page buffers and hbf.area) and of the HBM3e reference.
/// ConfigError, naming the key, when a die needs more than hbf.area.reticle_limit (e.g. SRAM larger than a die can
/// be); every input is in range already (the loader checked hbf.area).
AreaReport stack_area(const HbfParams& hbf);

}  // namespace bitline::hbf
