// The energy of a Flash-Cosmos read: what each component is charged, from the
// activity a timed run reports (busy times, bytes moved, NAND operations).
//
// Contract: account() is a pure function of the run's activity and the SSD's
// and host's power figures; the engine that timed the run counts activity and
// per-operation energy (NAND sensings, channel and PCIe bits, ISP bits, DRAM
// bits), and never a power x time term. Two accountings, chosen by name
// (`cosmos.energy_accounting`, docs/cosmos.md "Energy"):
//   paper         the paper's methodology (Flash-Cosmos, MICRO 2022, its
//                 "Evaluation Methodology" section): the host is charged the energy of
//                 the computation it performs, as RAPL measures it around that
//                 computation (the whole package while it computes), host DRAM
//                 by a DDR4 power model while the host computes, the SSD at its
//                 active power while busy and its idle power when not, NAND per
//                 operation, PCIe per bit;
//   whole_system  every floor over the whole run: the host package's idle floor
//                 and the DRAM's background power for as long as the run lasts,
//                 as a wall-socket view of one dedicated host would see it.
#pragma once

#include "core/params.hpp"
#include "core/registry.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "ssd/compute_jobs.hpp"
#include "ssd/params.hpp"

namespace bitline::cosmos {

enum class EnergyAccounting { Paper, WholeSystem };
/// The accountings by name (table in cosmos/energy.cpp).
const Registry<EnergyAccounting>& energy_accountings();

/// Config section `cosmos`: how the Flash-Cosmos evaluation counts.
struct CosmosParams {
  Choice<EnergyAccounting, energy_accountings> energy_accounting;

  template <class V>
  void visit(V& v) {
    v(energy_accounting,
      {.name = "energy_accounting",
       .def = "paper",
       .desc = "what the host and the SSD are charged: paper (the host's computation as RAPL measures it, DRAM "
               "while the host computes) or whole_system (every floor over the whole run)",
       .source = "Flash-Cosmos (Park et al., MICRO 2022, arXiv 2209.05566), Evaluation Methodology: \"We use Intel RAPL to measure "
                 "the energy of host-side computation\"; DDR4 model power values for DRAM; Samsung 980 Pro power "
                 "values and measured NAND power for the SSD"});
  }
};

/// Energy by component of one run (J). Every term is one of: power x a time the part is charged, or energy per
/// operation / bit counted by the engine.
struct EnergyBreakdown {
  Energy nand_sense{}, nand_io{}, pcie{}, isp{};            // per operation / per bit (the engine's counts)
  Energy ssd_controller{}, ssd_idle{};                      // controller + SSD DRAM: active power while busy, idle power after
  Energy host_package_compute{};                            // the CPU package while the host computes (its idle floor included)
  Energy host_package_idle{};                               // whole_system: the package's idle floor while the host does not compute
  Energy host_dram_background{};                            // DRAM background (standby + refresh) over the time it is charged
  Energy host_dram_access{};                                // per bit DMA-written or CPU-read
  Choice<EnergyAccounting, energy_accountings> accounting;  // how the terms above were charged

  Energy total() const {
    return nand_sense + nand_io + pcie + isp + ssd_controller + ssd_idle + host_package_compute + host_package_idle + host_dram_background +
           host_dram_access;
  }
  /// The breakdown as an `energy_j` group (one value per component, and `total`).
  void register_stats(StatGroup& g) const;
};

/// The energy of a run timed by the SSD model, under `accounting` (equations in docs/cosmos.md, "Energy").
/// ModelError when the host's compute power is below its idle floor.
EnergyBreakdown account(const ssd::ComputeResult& run, const ssd::SsdParams& ssd, const ssd::HostParams& host, EnergyAccounting accounting);

}  // namespace bitline::cosmos
