// Parameters of the SSD around the NAND dies (config section `ssd`) and of the
// host it is attached to (section `host`). Chip-level parameters live in `nand`.
#pragma once

#include "core/params.hpp"
#include "core/units.hpp"

namespace bitline::ssd {

struct SsdParams {
  int64_t channels = 0;
  int64_t dies_per_channel = 0;
  Bandwidth pcie_bandwidth{};
  Time pcie_latency{};
  Power controller_power{};
  Power idle_power{};
  EnergyPerBit pcie_energy{};
  Bytes isp_sram{};
  Bandwidth isp_throughput{};
  EnergyPerBit isp_energy{};
  bool cache_read = true;

  template <class V>
  void visit(V& v) {
    v(channels, {.name = "channels", .def = "8", .desc = "flash channels", .source = "spec: evaluated SSD, 8 channels", .min = 1, .max = 1024});
    v(dies_per_channel, {.name = "dies_per_channel", .def = "8", .desc = "dies sharing one channel bus",
                         .source = "spec: evaluated SSD, 8 dies per channel", .min = 1, .max = 256});
    v(pcie_bandwidth, {.name = "pcie_bandwidth", .def = "8GB/s", .desc = "host link bandwidth",
                       .source = "spec: PCIe Gen4 x4 at 8 GB/s", .min = 1});
    v(pcie_latency, {.name = "pcie_latency", .def = "1us", .desc = "host link latency added to every transfer",
                     .source = "assumption: ~1 us for a PCIe Gen4 DMA", .min = 0});
    v(controller_power, {.name = "controller_power", .def = "1.5W",
                         .desc = "controller + DRAM + PHY power while the SSD is busy (NAND dies counted separately)",
                         .source = "assumption: Samsung 980 Pro 6.2 W average active power minus ~4.7 W for the NAND array",
                         .min = 0});
    v(idle_power, {.name = "idle_power", .def = "35mW", .desc = "SSD power when idle (counted over the whole run)",
                   .source = "datasheet: Samsung 980 Pro idle 35 mW", .min = 0});
    v(pcie_energy, {.name = "pcie_energy", .def = "5pJ/bit", .desc = "energy per bit moved over the host link (both ends)",
                    .source = "assumption: PCIe Gen4 PHY class", .min = 0});
    v(isp_sram, {.name = "isp_sram", .def = "256KiB", .desc = "SRAM buffer of the in-storage accelerator (holds partial results)",
                 .source = "spec: ISP = simple bit logic + 256 KiB SRAM", .min = 1});
    v(isp_throughput, {.name = "isp_throughput", .def = "32GB/s", .desc = "operand data the ISP bit logic can combine per second",
                       .source = "assumption: wide enough never to bind before the 9.6 GB/s of channels", .min = 1});
    v(isp_energy, {.name = "isp_energy", .def = "1pJ/bit", .desc = "ISP logic + SRAM energy per operand bit combined",
                   .source = "assumption", .min = 0});
    v(cache_read, {.name = "cache_read", .def = "true",
                   .desc = "a die senses the next page while the C-latch still holds the previous one (cache read)",
                   .source = "assumption: standard NAND cache-read operation"});
  }
  int64_t dies() const { return channels * dies_per_channel; }
};

struct HostParams {
  Bandwidth bitwise_throughput{};
  Bandwidth popcount_throughput{};
  Power cpu_power{};
  EnergyPerBit dram_energy{};

  template <class V>
  void visit(V& v) {
    v(bitwise_throughput, {.name = "bitwise_throughput", .def = "25GB/s",
                           .desc = "operand data the host CPU combines per second (AND/OR/XOR, streaming from DRAM)",
                           .source = "assumption: ~45% of DDR4-3600 dual-channel peak (57.6 GB/s), i7-11700K", .min = 1});
    v(popcount_throughput, {.name = "popcount_throughput", .def = "25GB/s", .desc = "bit-count throughput of the host CPU",
                            .source = "assumption: memory-bound like the bitwise ops", .min = 1});
    v(cpu_power, {.name = "cpu_power", .def = "65W", .desc = "CPU package power while computing",
                  .source = "assumption: i7-11700K (125 W TDP) under a memory-bound multi-core kernel", .min = 0});
    v(dram_energy, {.name = "dram_energy", .def = "15pJ/bit", .desc = "host DRAM energy per bit written or read",
                    .source = "assumption: DDR4 power-model class figure (read/write incl. I/O)", .min = 0});
  }
};

}  // namespace bitline::ssd
