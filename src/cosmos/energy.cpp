#include "cosmos/energy.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace bitline::cosmos {

const Registry<EnergyAccounting>& energy_accountings() {
  static const Registry<EnergyAccounting> r(
      "energy accounting",
      {{"paper",
        "the paper's methodology: the host package (RAPL's package domain, idle floor included) and DRAM background only while "
        "the host computes; SSD active power while busy, idle power after; NAND per operation; PCIe per bit",
        EnergyAccounting::Paper},
       {"whole_system",
        "every floor over the whole run: the host package's idle floor and the DRAM background for as long as the run lasts "
        "(a dedicated host seen at the wall), plus the paper's terms",
        EnergyAccounting::WholeSystem}});
  return r;
}

EnergyBreakdown account(const ssd::ComputeResult& run, const ssd::SsdParams& ssd, const ssd::HostParams& host,
                        EnergyAccounting accounting) {
  if (host.cpu_power < host.idle_power) throw ModelError("host.cpu_power is below host.idle_power (the package's idle floor)");
  EnergyBreakdown e;
  e.accounting = accounting;
  e.nand_sense = run.nand_sense;
  e.nand_io = run.nand_io;
  e.pcie = run.pcie;
  e.isp = run.isp;
  e.host_dram_access = run.dram_access;
  // The SSD: active until its last transfer to the host, idle after (while the host still computes).
  e.ssd_controller = ssd.controller_power * run.ssd_active;
  e.ssd_idle = ssd.idle_power * (run.total - run.ssd_active);
  // The host: the package at its computing power while it computes (RAPL's package counter around the
  // computation includes the floor); DRAM background while it computes.
  const Time computing = std::min(run.host_busy, run.total);
  e.host_package_compute = host.cpu_power * computing;
  e.host_dram_background = host.dram_background_power * computing;
  switch (accounting) {
    case EnergyAccounting::Paper:
      break;
    case EnergyAccounting::WholeSystem:
      // The floors also while the host waits for the SSD.
      e.host_package_idle = host.idle_power * (run.total - computing);
      e.host_dram_background = host.dram_background_power * run.total;
      break;
  }
  return e;
}

void EnergyBreakdown::register_stats(StatGroup& g) const {
  const bool whole = *accounting == EnergyAccounting::WholeSystem;
  g.group("energy_j")
      .add("nand_sense", nand_sense, "NAND array: die power x step time, per die operation (sensings, latch ops)")
      .add("nand_io", nand_io, "NAND data-out over the channels: energy per bit")
      .add("pcie", pcie, "PCIe link: energy per payload bit")
      .add("isp", isp, "in-storage accelerator logic + SRAM: energy per operand bit")
      .add("ssd_controller", ssd_controller, "SSD controller + DRAM: active power x time until its last transfer to the host")
      .add("ssd_idle", ssd_idle, "SSD idle power x time after its last transfer")
      .add("host_package_compute", host_package_compute,
           "host CPU package power while computing (idle floor included, RAPL) x compute time")
      .add(
          "host_package_idle", host_package_idle,
          whole ? "host CPU package idle floor x time the host does not compute" : "0 under the paper's accounting (host idle not charged)")
      .add("host_dram_background", host_dram_background,
           whole ? "host DRAM background power x whole run" : "host DRAM background power x host compute time")
      .add("host_dram_access", host_dram_access, "host DRAM energy per bit written (DMA) or read (CPU)")
      .derived(
          "total", [this] { return total().raw(); }, "sum of the above");
}

}  // namespace bitline::cosmos
