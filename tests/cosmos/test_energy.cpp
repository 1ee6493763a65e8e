// The energy accounting of a Flash-Cosmos read (cosmos/energy.hpp), hand-checked on a run's activity:
// the paper's (the host's computation as RAPL measures it, DRAM while the host computes) and the whole
// system's (every floor over the run).
#include "cosmos/energy.hpp"
#include "cosmos_test_util.hpp"

#include <cmath>

namespace bitline::cosmos::test {
namespace {

/// A run of 10 ms: the SSD active for 8 ms, the host computing for 3 ms; per-operation energies given.
ssd::ComputeResult activity() {
  ssd::ComputeResult r;
  r.total = ms(10);
  r.ssd_active = ms(8);
  r.host_busy = ms(3);
  r.nand_sense = Energy(1e-3);
  r.nand_io = Energy(2e-3);
  r.pcie = Energy(3e-3);
  r.isp = Energy(4e-3);
  r.dram_access = Energy(5e-3);
  return r;
}

ssd::SsdParams ssd_power() {
  ssd::SsdParams s = default_params<ssd::SsdParams>();
  s.controller_power = Power(2.0);
  s.idle_power = Power(0.05);
  return s;
}

ssd::HostParams host_power() {
  ssd::HostParams h = default_params<ssd::HostParams>();
  h.cpu_power = Power(60.0);
  h.idle_power = Power(10.0);
  h.dram_background_power = Power(4.0);
  return h;
}

TEST(EnergyAccounting, PaperChargesTheHostOnlyWhileItComputes) {
  const EnergyBreakdown e = account(activity(), ssd_power(), host_power(), EnergyAccounting::Paper);
  EXPECT_DOUBLE_EQ(e.host_package_compute.raw(), 60.0 * 3e-3);  // whole package (floor included) x 3 ms
  EXPECT_EQ(e.host_package_idle.raw(), 0.0);
  EXPECT_DOUBLE_EQ(e.host_dram_background.raw(), 4.0 * 3e-3);
  EXPECT_DOUBLE_EQ(e.ssd_controller.raw(), 2.0 * 8e-3);
  EXPECT_DOUBLE_EQ(e.ssd_idle.raw(), 0.05 * 2e-3);
  // Per-operation terms pass through unchanged.
  EXPECT_EQ(e.nand_sense.raw(), 1e-3);
  EXPECT_EQ(e.nand_io.raw(), 2e-3);
  EXPECT_EQ(e.pcie.raw(), 3e-3);
  EXPECT_EQ(e.isp.raw(), 4e-3);
  EXPECT_EQ(e.host_dram_access.raw(), 5e-3);
  EXPECT_NEAR(e.total().raw(), 0.18 + 0.012 + 0.016 + 0.0001 + 0.015, 1e-15);
}

TEST(EnergyAccounting, WholeSystemAddsTheFloorsWhileTheHostWaits) {
  const EnergyBreakdown p = account(activity(), ssd_power(), host_power(), EnergyAccounting::Paper);
  const EnergyBreakdown w = account(activity(), ssd_power(), host_power(), EnergyAccounting::WholeSystem);
  EXPECT_DOUBLE_EQ(w.host_package_compute.raw(), p.host_package_compute.raw());
  EXPECT_DOUBLE_EQ(w.host_package_idle.raw(), 10.0 * 7e-3);  // the floor for the 7 ms the host waits
  EXPECT_DOUBLE_EQ(w.host_dram_background.raw(), 4.0 * 10e-3);
  // = the floor over the whole run + (compute - idle) power x compute time.
  EXPECT_NEAR((w.host_package_compute + w.host_package_idle).raw(), 10.0 * 10e-3 + 50.0 * 3e-3, 1e-15);
  EXPECT_NEAR(w.total().raw() - p.total().raw(), 10.0 * 7e-3 + 4.0 * 7e-3, 1e-15);
}

TEST(EnergyAccounting, BreakdownJsonSumsToItsTotal) {
  for (auto a : {EnergyAccounting::Paper, EnergyAccounting::WholeSystem}) {
    const EnergyBreakdown e = account(activity(), ssd_power(), host_power(), a);
    StatsTree stats;
    e.register_stats(stats);
    const Json j = stats.dump()["energy_j"];
    EXPECT_EQ(j.size(), 11u);  // ten components and the total
    double sum = 0;
    for (const auto& [k, v] : j.items())
      if (k != "total") sum += v.get<double>();
    EXPECT_NEAR(sum, j["total"].get<double>(), 1e-15);
    EXPECT_NEAR(sum, e.total().raw(), 1e-15);
  }
}

TEST(EnergyAccounting, ComputePowerBelowTheIdleFloorIsRefused) {
  ssd::HostParams h = host_power();
  h.cpu_power = Power(5.0);
  EXPECT_THROW(account(activity(), ssd_power(), h, EnergyAccounting::Paper), ModelError);
}

TEST(EnergyAccounting, ChosenByNameInTheConfig) {
  EXPECT_EQ(*default_params<CosmosParams>().energy_accounting, EnergyAccounting::Paper);
  using Accounting = Choice<EnergyAccounting, energy_accountings>;
  EXPECT_EQ(*Accounting::named("whole_system"), EnergyAccounting::WholeSystem);
  EXPECT_THROW(Accounting::named("wholesystem"), ConfigError);
}

}  // namespace
}  // namespace bitline::cosmos::test
