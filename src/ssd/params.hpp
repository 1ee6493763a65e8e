// Parameters of the SSD around the NAND dies (config section `ssd`) and of the
// host it is attached to (section `host`). Chip-level parameters live in `nand`.
#pragma once

#include "core/params.hpp"
#include "core/units.hpp"

namespace bitline::ssd {

struct SsdParams {
  int64_t channels = 0;
  int64_t dies_per_channel = 0;
  int64_t pcie_lanes = 0;
  Bandwidth pcie_lane_rate{};
  double pcie_encoding = 0;
  int64_t pcie_skp_interval = 0;
  Bytes pcie_max_payload{}, pcie_tlp_overhead{}, pcie_dllp_size{};
  double pcie_tlps_per_ack = 0, pcie_tlps_per_fc_update = 0;
  Time pcie_latency{};
  Power controller_power{};
  Power idle_power{};
  EnergyPerBit pcie_energy{};
  Bytes isp_sram{};
  Bandwidth isp_throughput{};
  EnergyPerBit isp_energy{};
  bool cache_read = true;
  bool cache_program = true;
  Bytes write_buffer{};

  template <class V>
  void visit(V& v) {
    v(channels, {.name = "channels",
                 .def = "8",
                 .desc = "flash channels",
                 .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (SSD configuration): 8 channels",
                 .min = 1,
                 .max = 1024});
    v(dies_per_channel, {.name = "dies_per_channel",
                         .def = "8",
                         .desc = "dies sharing one channel bus",
                         .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (SSD configuration): 8 dies per channel",
                         .min = 1,
                         .max = 256});
    // The host link: its effective data rate is derived from the lane rate and the protocol overheads
    // (pcie_effective_rate() below, equations in docs/cosmos.md), not the raw 8 GB/s.
    v(pcie_lanes, {.name = "pcie_lanes",
                   .def = "4",
                   .desc = "PCIe lanes of the host link",
                   .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (SSD configuration): PCIe Gen4 x4",
                   .min = 1,
                   .max = 32});
    v(pcie_lane_rate, {.name = "pcie_lane_rate",
                       .def = "2GB/s",
                       .desc = "raw line rate of one lane (16 GT/s = 2 GB/s of symbols)",
                       .source = "PCIe Base Spec 4.0: Gen4 signals at 16 GT/s per lane",
                       .min = 1e6,
                       .max = 1e15});
    v(pcie_encoding, {.name = "pcie_encoding",
                      .def = "0.984615384615",
                      .desc = "payload share of the line code (128b/130b)",
                      .source = "PCIe Base Spec 3.0+ sec. 4.2.2: 128b/130b encoding",
                      .min = 0.1,
                      .max = 1});
    v(pcie_skp_interval, {.name = "pcie_skp_interval",
                          .def = "370",
                          .desc = "128b/130b blocks between two SKP ordered sets (one block each, clock compensation)",
                          .source = "PCIe Base Spec 3.0+ sec. 4.2.7.3: a SKP OS every 370 to 375 blocks",
                          .min = 1});
    v(pcie_max_payload, {.name = "pcie_max_payload",
                         .def = "256B",
                         .desc = "max payload size (MPS) of one memory-write TLP",
                         .source = "assumption: 256 B, the MPS Samsung 980 Pro advertises and Intel client root ports support",
                         .min = 4,
                         .max = 4096});
    v(pcie_tlp_overhead, {.name = "pcie_tlp_overhead",
                          .def = "24B",
                          .desc = "bytes each TLP adds to its payload on the wire",
                          .source = "PCIe Base Spec 3.0+: STP framing token 4 B + 4-DW header 16 B (64-bit address) + LCRC 4 B, no ECRC",
                          .min = 0,
                          .max = 4096});
    v(pcie_dllp_size, {.name = "pcie_dllp_size",
                       .def = "8B",
                       .desc = "bytes of one DLLP on the wire (Ack, UpdateFC)",
                       .source = "PCIe Base Spec 3.0+: 6-byte DLLP + 2-byte SDP framing token",
                       .min = 0,
                       .max = 64});
    v(pcie_tlps_per_ack, {.name = "pcie_tlps_per_ack",
                          .def = "4",
                          .desc = "TLPs acknowledged by one Ack DLLP (Ack coalescing)",
                          .source = "assumption: a few TLPs per Ack within the spec's AckNak latency limit (Xilinx WP350-style estimate)",
                          .min = 1,
                          .max = 4096});
    v(pcie_tlps_per_fc_update, {.name = "pcie_tlps_per_fc_update",
                                .def = "4",
                                .desc = "TLPs per flow-control UpdateFC DLLP",
                                .source = "assumption: credits returned every few TLPs (Xilinx WP350-style estimate)",
                                .min = 1,
                                .max = 4096});
    v(pcie_latency, {.name = "pcie_latency",
                     .def = "1us",
                     .desc = "host link latency added to every transfer",
                     .source = "assumption: ~1 us for a PCIe Gen4 DMA",
                     .min = 0,
                     .max = 1.0});
    v(controller_power, {.name = "controller_power",
                         .def = "1.5W",
                         .desc = "controller + SSD DRAM + PHY power while the SSD is active (from the start of the run until its last "
                                 "transfer to the host; NAND dies counted per operation)",
                         .source = "assumption: Samsung 980 Pro 1 TB average active power 6.2 W (datasheet) minus ~4.7 W for the NAND "
                                   "array; 3.18 W is its lowest active NVMe power state (PS2)",
                         .min = 0,
                         .max = 1e4});
    v(idle_power, {.name = "idle_power",
                   .def = "35mW",
                   .desc = "SSD power while idle (after its last transfer, e.g. while the host still computes)",
                   .source = "datasheet: Samsung 980 Pro idle 35 mW",
                   .min = 0,
                   .max = 1e4});
    v(pcie_energy, {.name = "pcie_energy",
                    .def = "5pJ/bit",
                    .desc = "energy per payload bit moved over the host link (both ends)",
                    .source = "assumption: PCIe Gen4 SerDes class, ~5 pJ/bit",
                    .min = 0,
                    .max = 1e-6});
    v(isp_sram, {.name = "isp_sram",
                 .def = "256KiB",
                 .desc = "SRAM buffer of the in-storage accelerator (holds partial results)",
                 .source = "Flash-Cosmos (MICRO 2022), Evaluation Methodology (baselines): ISP = simple bit logic + 256 KiB SRAM",
                 .min = 1});
    v(isp_throughput, {.name = "isp_throughput",
                       .def = "32GB/s",
                       .desc = "operand data the ISP bit logic can combine per second",
                       .source = "assumption: wide enough never to bind before the 9.6 GB/s of channels",
                       .min = 1e6,
                       .max = 1e15});
    v(isp_energy, {.name = "isp_energy",
                   .def = "1pJ/bit",
                   .desc = "ISP logic + SRAM energy per operand bit combined",
                   .source = "assumption",
                   .min = 0,
                   .max = 1e-6});
    v(cache_read, {.name = "cache_read",
                   .def = "true",
                   .desc = "a die senses the next page while the C-latch still holds the previous one (cache read)",
                   .source = "assumption: standard NAND cache-read operation"});
    v(cache_program, {.name = "cache_program",
                      .def = "true",
                      .desc = "a die loads the next program's data into its free latches while it programs (cache program)",
                      .source = "assumption: standard NAND cache-program operation"});
    v(write_buffer, {.name = "write_buffer",
                     .def = "16MiB",
                     .desc = "controller DRAM buffering host write data before it goes to the dies",
                     .source = "assumption: a small share of the 980 Pro's 1 GB LPDDR4 (the rest holds the FTL map)",
                     .min = 1});
  }
  int64_t dies() const { return channels * dies_per_channel; }
  /// Payload data rate of the host link: lanes x lane rate x 128b/130b x (1 - SKP share) x
  /// MPS / (MPS + TLP overhead + DLLP bytes per TLP). 7.08 GB/s at the defaults (raw 8 GB/s).
  Bandwidth pcie_effective_rate() const {
    const double line =
        double(pcie_lanes) * pcie_lane_rate.raw() * pcie_encoding * double(pcie_skp_interval) / double(pcie_skp_interval + 1);
    const double mps = double(pcie_max_payload.raw());
    const double dllp = double(pcie_dllp_size.raw()) * (1.0 / pcie_tlps_per_ack + 1.0 / pcie_tlps_per_fc_update);
    return Bandwidth(line * mps / (mps + double(pcie_tlp_overhead.raw()) + dllp));
  }
};

struct HostParams {
  Bandwidth bitwise_throughput{};
  Bandwidth popcount_throughput{};
  Power idle_power{};
  Power cpu_power{};
  Power dram_background_power{};
  EnergyPerBit dram_energy{};

  template <class V>
  void visit(V& v) {
    v(bitwise_throughput, {.name = "bitwise_throughput",
                           .def = "25GB/s",
                           .desc = "operand data the host CPU combines per second (AND/OR/XOR, streaming from DRAM)",
                           .source = "assumption: ~45% of DDR4-3600 dual-channel peak (57.6 GB/s), i7-11700K",
                           .min = 1e6,
                           .max = 1e15});
    v(popcount_throughput, {.name = "popcount_throughput",
                            .def = "25GB/s",
                            .desc = "bit-count throughput of the host CPU",
                            .source = "assumption: memory-bound like the bitwise ops",
                            .min = 1e6,
                            .max = 1e15});
    v(idle_power, {.name = "idle_power",
                   .def = "15W",
                   .desc = "CPU package power while no core computes (RAPL package floor, charged over the whole run)",
                   .source = "assumption: i7-11700K package idle with I/O interrupts, review-class RAPL readings 10-20 W",
                   .min = 0,
                   .max = 1e4});
    v(cpu_power, {.name = "cpu_power",
                  .def = "65W",
                  .desc = "CPU package power while computing (idle floor included)",
                  .source = "assumption: i7-11700K (125 W TDP) under a memory-bound multi-core kernel",
                  .min = 0,
                  .max = 1e4});
    v(dram_background_power, {.name = "dram_background_power",
                              .def = "3W",
                              .desc = "host DRAM background power (standby + refresh), charged over the whole run",
                              .source = "assumption (Micron TN-40-07 method): 64 GB DDR4-3600 = 4 dual-rank 16 GB DIMMs = 64 x8 8 Gb "
                                        "chips at ~45 mW each (IDD2N/IDD3N ~30-45 mA at 1.2 V, plus refresh)",
                              .min = 0,
                              .max = 1e4});
    v(dram_energy, {.name = "dram_energy",
                    .def = "15pJ/bit",
                    .desc = "host DRAM energy per bit written or read (above background)",
                    .source = "assumption: DDR4 power-model class figure (read/write incl. I/O)",
                    .min = 0,
                    .max = 1e-6});
  }
};

}  // namespace bitline::ssd
