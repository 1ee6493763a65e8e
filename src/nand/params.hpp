// Parameters of a NAND flash die: geometry, timing, energy, reliability, ECC.
// Each default says where it comes from; see docs/model.md for the equations.
#pragma once

#include <memory>
#include <string>

#include "core/params.hpp"
#include "core/units.hpp"

namespace bitline::nand {

class ErrorModel;
struct ReliabilityParams;
using ErrorModelFactory = std::unique_ptr<ErrorModel> (*)(const ReliabilityParams&);
/// nand.reliability.model: the ErrorModel implementations (table in nand/error_model.cpp).
const Registry<ErrorModelFactory>& error_models();
using ErrorModelChoice = Choice<ErrorModelFactory, error_models>;

struct Geometry {
  int64_t planes_per_die = 0;
  int64_t blocks_per_plane = 0;
  int64_t subblocks_per_block = 0;
  int64_t wordlines_per_string = 0;
  Bytes page_size{};

  template <class V>
  void visit(V& v) {
    v(planes_per_die, {.name = "planes_per_die",
                       .def = "2",
                       .desc = "planes per die, each with its own bitlines and latches",
                       .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (SSD configuration): 8 ch x 8 dies x 2 planes",
                       .min = 1,
                       .max = 255});
    v(blocks_per_plane, {.name = "blocks_per_plane",
                         .def = "1656",
                         .desc = "blocks per plane (sharing the plane's bitlines)",
                         .source = "derived: 2 TB of TLC over 128 planes, 4 sub-blocks x 48 WLs x 3 bits x 16 KiB per block",
                         .min = 1,
                         .max = 16777215});
    v(subblocks_per_block, {.name = "subblocks_per_block",
                            .def = "4",
                            .desc = "sub-blocks (strings per bitline) per block",
                            .source = "assumption: spec says 4 or 8",
                            .min = 1,
                            .max = 255});
    v(wordlines_per_string, {.name = "wordlines_per_string",
                             .def = "48",
                             .desc = "wordlines (cells in series) per NAND string",
                             .source = "Flash-Cosmos (MICRO 2022), real-device characterisation: 48-layer 3D TLC chips (48 WLs per string)",
                             .min = 1,
                             .max = 256});
    v(page_size, {.name = "page_size",
                  .def = "16KiB",
                  .desc = "bytes per page (one wordline of one sub-block, per bit of the cell)",
                  .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (SSD configuration): 16 KiB page",
                  .min = 1,
                  .max = 1 << 24});
  }
  int64_t page_bits() const { return page_size.raw() * 8; }
  int64_t wordlines_per_block() const { return subblocks_per_block * wordlines_per_string; }
};

/// nand.timing.multi_bit_program: how an MLC/TLC wordline is programmed (table in nand/cost_model.cpp).
enum class MultiBitProgram { OneShot, PageByPage };
const Registry<MultiBitProgram>& multi_bit_programs();

struct Timing {
  Time t_read_slc{}, t_read_mlc{}, t_read_tlc{};
  Time t_prog_slc{}, t_prog_mlc{}, t_prog_tlc{};
  double esp_prog_ratio = 0;
  Choice<MultiBitProgram, multi_bit_programs> multi_bit_program;
  Time t_erase{};
  Time t_latch_op{};
  Bandwidth channel_rate{};
  Table mws_wordlines, mws_blocks;

  template <class V>
  void visit(V& v) {
    v(t_read_slc, {.name = "t_read_slc",
                   .def = "22.5us",
                   .desc = "tR: sensing one SLC wordline (also ESP data)",
                   .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (SSD configuration): SLC tR = 22.5 us",
                   .min = 0,
                   .max = 1.0});
    v(t_read_mlc, {.name = "t_read_mlc",
                   .def = "50us",
                   .desc = "tR of an MLC page",
                   .source = "assumption: typical 3D MLC datasheet range",
                   .min = 0,
                   .max = 1.0});
    v(t_read_tlc, {.name = "t_read_tlc",
                   .def = "70us",
                   .desc = "tR of a TLC page",
                   .source = "assumption: typical 48-layer 3D TLC datasheet range",
                   .min = 0,
                   .max = 1.0});
    v(t_prog_slc, {.name = "t_prog_slc",
                   .def = "200us",
                   .desc = "tPROG in SLC mode",
                   .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology: SLC tPROG = 200 us",
                   .min = 0,
                   .max = 1.0});
    v(t_prog_mlc, {.name = "t_prog_mlc",
                   .def = "500us",
                   .desc = "tPROG in MLC mode",
                   .source = "Flash-Cosmos (MICRO 2022), ESP section: MLC tPROG = 500 us",
                   .min = 0,
                   .max = 1.0});
    v(t_prog_tlc, {.name = "t_prog_tlc",
                   .def = "700us",
                   .desc = "tPROG in TLC mode",
                   .source = "Flash-Cosmos (MICRO 2022), ESP section: TLC tPROG = 700 us",
                   .min = 0,
                   .max = 1.0});
    v(esp_prog_ratio, {.name = "esp_prog_ratio",
                       .def = "2.0",
                       .desc = "tESP / tPROG(SLC): extra ISPP steps of enhanced SLC programming",
                       .source = "Flash-Cosmos (MICRO 2022), ESP section: the design uses tESP = 2 x tPROG = 400 us",
                       .min = 1.0,
                       .max = 10.0});
    v(multi_bit_program,
      {.name = "multi_bit_program",
       .def = "page_by_page",
       .desc = "MLC/TLC programming: page_by_page programs each page of a wordline in its own tPROG(mode); "
               "one_shot programs all pages of a wordline in one tPROG(mode)",
       .source = "Flash-Cosmos (MICRO 2022, arXiv 2209.05566), Evaluation Methodology: its MQSim-based simulator charges each page its own "
                 "tPROG (MQSim's convention; the paper's ESP write bandwidth above MLC's and TLC's holds only "
                 "so); one_shot: how 3D charge-trap TLC parts can program a wordline"});
    v(t_erase, {.name = "t_erase",
                .def = "3.5ms",
                .desc = "tBERS: block erase latency",
                .source = "assumption: spec says 3-5 ms, uses 3.5 ms",
                .min = 0,
                .max = 1.0});
    v(t_latch_op, {.name = "t_latch_op",
                   .def = "1us",
                   .desc = "latch-to-latch operation (XOR, copy between data latches)",
                   .source = "assumption: sub-microsecond to ~1 us in NAND datasheets' cache operations",
                   .min = 0,
                   .max = 1.0});
    v(channel_rate, {.name = "channel_rate",
                     .def = "1.2GB/s",
                     .desc = "data-out rate of the die's channel interface",
                     .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (SSD configuration): 1.2 GB/s per channel",
                     .min = 1e6,
                     .max = 1e15});
    v(mws_wordlines, {.name = "mws_wordlines",
                      .def = "[[1, 1.0], [8, 1.01], [48, 1.033]]",
                      .desc = "tMWS/tR against wordlines sensed in one block (linear between points)",
                      .source = "Flash-Cosmos (MICRO 2022), MWS characterisation (measured): <1.01 tR up to 8 WLs, 1.033 tR at 48 WLs"});
    v(mws_blocks,
      {.name = "mws_blocks",
       .def = "[[1, 1.0], [2, 1.033], [8, 1.033], [32, 1.363]]",
       .desc = "tMWS/tR against blocks sensed together (linear between points)",
       .source = "Flash-Cosmos (MICRO 2022), MWS characterisation (measured): ~1.033 tR up to 4 blocks, grows beyond ~8, 1.363 tR at 32"});
  }
  Time t_esp() const { return t_prog_slc * esp_prog_ratio; }
};

struct EnergyParams {
  Power read_power{};
  Power program_power{};
  Power erase_power{};
  Power latch_power{};
  EnergyPerBit io_energy{};
  EnergyPerBit read_energy{}, program_energy{};
  Table mws_wordline_power, mws_block_power;

  template <class V>
  void visit(V& v) {
    v(read_power, {.name = "read_power",
                   .def = "82.5mW",
                   .desc = "average die power while sensing (normal read)",
                   .source = "assumption: ICC1 = 25 mA typical at VCC = 3.3 V, common in NAND datasheets",
                   .min = 0,
                   .max = 1e4});
    v(program_power, {.name = "program_power",
                      .def = "82.5mW",
                      .desc = "average die power while programming (any mode)",
                      .source = "assumption: ICC2 = 25 mA typical at 3.3 V",
                      .min = 0,
                      .max = 1e4});
    v(erase_power,
      {.name = "erase_power",
       .def = "165mW",
       .desc = "average die power while erasing a block",
       .source = "assumption: between the 4- and 8-block MWS power (Flash-Cosmos, MWS characterisation: MWS over >4 blocks exceeds erase)",
       .min = 0,
       .max = 1e4});
    v(latch_power, {.name = "latch_power",
                    .def = "20mW",
                    .desc = "die power during a latch-to-latch operation",
                    .source = "assumption",
                    .min = 0,
                    .max = 1e4});
    v(io_energy, {.name = "io_energy",
                  .def = "5pJ/bit",
                  .desc = "energy to move one bit over the die's channel interface",
                  .source = "assumption: NV-DDR3-class I/O",
                  .min = 0,
                  .max = 1e-6});
    v(read_energy, {.name = "read_energy",
                    .def = "0pJ/bit",
                    .desc = "energy per bit of each page sensed, on top of read_power x the sensing time (for cells "
                            "characterised per bit rather than by current)",
                    .source = "bitline: 0 for the evaluated SSD (read_power covers it); the HBF cell preset nand/xl-flash "
                              "sets it",
                    .min = 0,
                    .max = 1e-6});
    v(program_energy, {.name = "program_energy",
                       .def = "0pJ/bit",
                       .desc = "energy per bit of each page programmed, on top of program_power x tPROG",
                       .source = "bitline: 0 for the evaluated SSD (program_power covers it); the HBF cell preset "
                                 "nand/xl-flash sets it",
                       .min = 0,
                       .max = 1e-6});
    v(mws_wordline_power, {.name = "mws_wordline_power",
                           .def = "[[1, 1.0], [48, 0.9]]",
                           .desc = "intra-block MWS power / read power against wordlines sensed",
                           .source = "assumption: spec says lower than a read (VREF < VPASS on the extra WLs)"});
    v(mws_block_power, {.name = "mws_block_power",
                        .def = "[[1, 1.0], [2, 1.34], [4, 1.80], [8, 2.72], [32, 8.24]]",
                        .desc = "inter-block MWS power / read power against blocks sensed",
                        .source = "Flash-Cosmos (MICRO 2022), MWS power characterisation: +34% at 2 blocks, ~+80% at 4; assumption: beyond "
                                  "4, linear extrapolation"});
  }
};

struct ReliabilityParams {
  ErrorModelChoice model;
  double rber_slc = 0;
  double mlc_factor = 0, tlc_factor = 0;
  double no_randomization_slc = 0, no_randomization_mlc = 0, no_randomization_tlc = 0;
  Table pe_factor, retention_factor, esp_factor;
  int64_t initial_pe_cycles = 0;
  double retention_days = 0;

  template <class V>
  void visit(V& v) {
    v(model, {.name = "model", .def = "rber_table", .desc = "error model of sensed cells", .source = "bitline"});
    v(rber_slc,
      {.name = "rber_slc",
       .def = "1e-5",
       .desc = "RBER of SLC data with randomisation, fresh block (0 P/E), no retention",
       .source = "assumption: with the P/E and retention tables gives 1e-3 at 10K P/E + 1 year, 12 orders above UBER 1e-15 (spec)",
       .min = 0,
       .max = 0.5});
    v(mlc_factor, {.name = "mlc_factor",
                   .def = "4.0",
                   .desc = "RBER(MLC) / RBER(SLC)",
                   .source = "Flash-Cosmos (MICRO 2022), Motivation (reliability): MLC RBER about 4x SLC",
                   .min = 0});
    v(tlc_factor, {.name = "tlc_factor",
                   .def = "16.0",
                   .desc = "RBER(TLC) / RBER(SLC)",
                   .source = "assumption: another 4x per extra bit per cell",
                   .min = 0});
    v(no_randomization_slc, {.name = "no_randomization_slc",
                             .def = "1.91",
                             .desc = "RBER increase without data randomisation (SLC, ESP)",
                             .source = "Flash-Cosmos (MICRO 2022), Motivation (reliability): randomisation off raises RBER 1.91x (SLC)",
                             .min = 1});
    v(no_randomization_mlc, {.name = "no_randomization_mlc",
                             .def = "4.92",
                             .desc = "RBER increase without data randomisation (MLC)",
                             .source = "Flash-Cosmos (MICRO 2022), Motivation (reliability): randomisation off raises RBER 4.92x (MLC)",
                             .min = 1});
    v(no_randomization_tlc, {.name = "no_randomization_tlc",
                             .def = "4.92",
                             .desc = "RBER increase without data randomisation (TLC)",
                             .source = "assumption: same as MLC",
                             .min = 1});
    v(pe_factor, {.name = "pe_factor",
                  .def = "[[0, 1.0], [3000, 3.0], [10000, 10.0]]",
                  .desc = "RBER multiplier against P/E cycles (log-linear between points)",
                  .source = "assumption"});
    v(retention_factor, {.name = "retention_factor",
                         .def = "[[0, 1.0], [30, 3.0], [365, 10.0]]",
                         .desc = "RBER multiplier against retention age in days (log-linear between points)",
                         .source = "assumption"});
    v(esp_factor, {.name = "esp_factor",
                   .def = "[[1.0, 1.0], [1.6, 0.1], [1.9, 5.2e-10]]",
                   .desc = "RBER multiplier of ESP data (median block) against tESP/tPROG (log-linear between points, flat beyond)",
                   .source = "Flash-Cosmos (MICRO 2022), ESP characterisation: +60% tESP gives one order of magnitude lower RBER in the "
                             "median block (1.6 -> 0.1); zero errors "
                             "in 4.83e11 bits at >= 1.9x at the worst condition, RBER < 2.07e-12; assumption: 1.9x gives 1e-12 "
                             "at the worst condition (under the bound), no further gain claimed beyond 1.9x"});
    v(initial_pe_cycles, {.name = "initial_pe_cycles",
                          .def = "0",
                          .desc = "P/E cycles every block has seen before the run",
                          .source = "experiment condition",
                          .min = 0,
                          .max = 1e7});
    v(retention_days, {.name = "retention_days",
                       .def = "0",
                       .desc = "retention age of the stored data when it is sensed",
                       .source = "experiment condition",
                       .min = 0,
                       .max = 36500});
  }
};

struct EccParams {
  Bytes codeword{};
  int64_t correctable_bits = 0;
  template <class V>
  void visit(V& v) {
    v(codeword, {.name = "codeword",
                 .def = "2KiB",
                 .desc = "ECC codeword (data part)",
                 .source = "assumption: LDPC codeword of 2 KiB data",
                 .min = 1});
    v(correctable_bits, {.name = "correctable_bits",
                         .def = "72",
                         .desc = "bit errors per codeword that normal reads correct",
                         .source = "assumption: LDPC-class capability (~4e-3 RBER)",
                         .min = 0});
  }
};

struct CommandParams {
  int64_t max_mws_slots = 0;
  int64_t max_inter_block = 0;
  int64_t data_latches = 0;
  template <class V>
  void visit(V& v) {
    v(max_mws_slots, {.name = "max_mws_slots",
                      .def = "4",
                      .desc = "(block, page bitmap) slots one MWS command may chain with CONT",
                      .source = "Flash-Cosmos (MICRO 2022), command interface: up to four (block, PBM) slots",
                      .min = 1,
                      .max = 255});
    v(max_inter_block, {.name = "max_inter_block",
                        .def = "4",
                        .desc = "power limit: blocks one inter-block MWS may sense together",
                        .source = "Flash-Cosmos (MICRO 2022), MWS section: the design limits inter-block MWS to 4 blocks",
                        .min = 1,
                        .max = 255});
    v(data_latches, {.name = "data_latches",
                     .def = "3",
                     .desc = "extra data latches per bitline besides the S- and C-latch",
                     .source = "assumption: TLC chips keep 3 data latches for the 3 pages of a wordline",
                     .min = 0,
                     .max = 8});
  }
};

/// Everything a die needs; the config section `nand`.
struct NandParams {
  Geometry geometry;
  Timing timing;
  EnergyParams energy;
  ReliabilityParams reliability;
  EccParams ecc;
  CommandParams command;

  template <class V>
  void visit(V& v) {
    v.section("geometry", geometry);
    v.section("timing", timing);
    v.section("energy", energy);
    v.section("reliability", reliability);
    v.section("ecc", ecc);
    v.section("command", command);
  }
};

/// Loads and cross-checks the `nand` section (impossible geometry, inconsistent limits).
NandParams load_nand_params(const ConfigTree& tree, const std::string& path = "nand");
/// Cross-field checks; throws ConfigError naming the keys.
void validate(const NandParams& p, const std::string& path = "nand", const ConfigTree* tree = nullptr);

}  // namespace bitline::nand
