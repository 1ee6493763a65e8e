// The compute-jobs stage on the general device (ssd/compute_jobs.hpp, run_jobs: the Flash-Cosmos SSD with its
// cache read and eager scheduling), the specification of its rules: hand-checked cases. Every expected
// time below is written out in picoseconds from the default parameters:
//   tR (SLC)                 22.5 us           = 22,500,000 ps
//   16 KiB / 1.2 GB/s        13,653.33.. ns    -> 13,653,334 ps (rounded up)
//   PCIe Gen4 x4 payload rate: 4 x 2 GB/s x 128/130 x 370/371 (SKP) x 256 / (256 + 24 + 8 x (1/4 + 1/4))
//                            = 7.0812 GB/s (ssd.pcie_* defaults)
//   16 KiB over PCIe         2,313.737 ns      ->  2,313,737 ps (rounded up)
//   PCIe latency             1 us              =  1,000,000 ps
//   16 KiB / 25 GB/s (host)  655.36 ns         =    655,360 ps
//   16 KiB / 32 GB/s (ISP)   512 ns            =    512,000 ps
// Project headers before GoogleTest (see tests/nand/nand_test_util.hpp).
#include "core/error.hpp"
#include "core/params.hpp"
#include "nand/params.hpp"
#include "ssd/compute_jobs.hpp"
#include "ssd/params.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace bitline::ssd {
namespace {

constexpr int64_t kTR = 22'500'000;    // tR
constexpr int64_t kChan = 13'653'334;  // one page over a channel
constexpr int64_t kPcie = 2'313'737;   // one page over PCIe
constexpr int64_t kLat = 1'000'000;    // PCIe latency
constexpr int64_t kHost = 655'360;     // one page through the host's bit logic / popcount
constexpr int64_t kIsp = 512'000;      // one page through the ISP logic

struct Rig {
  nand::NandParams nand = default_params<nand::NandParams>();
  SsdParams ssd = default_params<SsdParams>();
  HostParams host = default_params<HostParams>();
  JobSpec spec;

  Rig(int64_t channels, int64_t dies_per_channel) {
    ssd.channels = channels;
    ssd.dies_per_channel = dies_per_channel;
    spec.die_jobs.resize(size_t(channels * dies_per_channel));
  }
  ComputeResult run() const { return run_jobs(spec, ssd, host, nand); }
};

Step read_step(Route r, double energy_j = 1e-6) { return Step{us(22.5), Energy(energy_j), r, true}; }

TEST(ComputeJobs, DefaultsAreThoseTheHandComputationsAssume) {
  Rig r(1, 1);
  EXPECT_EQ(r.nand.timing.t_read_slc.raw(), kTR);
  EXPECT_EQ(r.nand.geometry.page_size.raw(), 16384);
  EXPECT_EQ((r.nand.geometry.page_size / r.nand.timing.channel_rate).raw(), kChan);
  EXPECT_EQ((r.nand.geometry.page_size / r.ssd.pcie_effective_rate()).raw(), kPcie);
  EXPECT_EQ(r.ssd.pcie_latency.raw(), kLat);
  EXPECT_EQ((r.nand.geometry.page_size / r.host.popcount_throughput).raw(), kHost);
  EXPECT_EQ((r.nand.geometry.page_size / r.host.bitwise_throughput).raw(), kHost);
  EXPECT_EQ((r.nand.geometry.page_size / r.ssd.isp_throughput).raw(), kIsp);
}

TEST(ComputeJobs, OneDieOneReadToHost) {
  Rig r(1, 1);
  r.spec.templates = {{read_step(Route::Result)}};
  r.spec.die_jobs[0] = {Job{1, 0}};
  ComputeResult p = r.run();
  EXPECT_EQ(p.total.raw(), kTR + kChan + kPcie + kLat);
  EXPECT_EQ(p.total.raw(), 39'467'071);
  EXPECT_EQ(p.sensings, 1u);
  EXPECT_EQ(p.die_steps, 1u);
  EXPECT_EQ(p.jobs, 1u);
  EXPECT_EQ(p.channel_bytes, 16384);
  EXPECT_EQ(p.pcie_bytes, 16384);
  EXPECT_EQ(p.host_bytes, 0);  // no host work asked for
  EXPECT_EQ(p.die_busy.raw(), kTR);
  EXPECT_EQ(p.channel_busy.raw(), kChan);
  EXPECT_EQ(p.pcie_busy.raw(), kPcie);
  EXPECT_EQ(p.host_busy.raw(), 0);
  EXPECT_EQ(p.bottleneck, Bottleneck::Dies);  // 22.5 of 39.2 us
}

TEST(ComputeJobs, NoJobsTakesNoTime) {
  Rig r(2, 2);
  r.spec.templates = {{read_step(Route::Result)}};
  ComputeResult p = r.run();
  EXPECT_EQ(p.total.raw(), 0);
  EXPECT_EQ(p.sensings, 0u);
  EXPECT_EQ(p.pcie_bytes, 0);
}

TEST(ComputeJobs, TwoDiesOnOneChannelSerialiseTheirTransfers) {
  Rig r(1, 2);
  r.spec.templates = {{read_step(Route::Result)}};
  r.spec.die_jobs[0] = {Job{1, 0}};
  r.spec.die_jobs[1] = {Job{1, 0}};
  ComputeResult p = r.run();
  // Both dies sense in parallel; the second page waits for the channel; the
  // first page's PCIe transfer is over before the second page arrives.
  EXPECT_EQ(p.total.raw(), kTR + 2 * kChan + kPcie + kLat);
  EXPECT_EQ(p.channel_busy.raw(), 2 * kChan);
  EXPECT_EQ(p.die_busy.raw(), 2 * kTR);

  // The same two dies on two channels: the transfers overlap, PCIe serialises.
  Rig r2(2, 1);
  r2.spec = r.spec;
  ComputeResult p2 = r2.run();
  EXPECT_EQ(p2.total.raw(), kTR + kChan + 2 * kPcie + kLat);
  EXPECT_LT(p2.total, p.total);
}

TEST(ComputeJobs, PlanesOfAJobMoveTogether) {
  // A multi-plane job (2 active planes): one sensing time, two pages out.
  Rig r(1, 1);
  r.spec.templates = {{read_step(Route::Result)}};
  r.spec.die_jobs[0] = {Job{2, 0}};
  ComputeResult p = r.run();
  const int64_t chan2 = (Bytes(32768) / r.nand.timing.channel_rate).raw();
  EXPECT_EQ(chan2, 27'306'667);
  const int64_t pcie2 = (Bytes(32768) / r.ssd.pcie_effective_rate()).raw();
  EXPECT_EQ(pcie2, 4'627'473);  // one 32 KiB transfer (2 x kPcie rounds up once more)
  EXPECT_EQ(p.total.raw(), kTR + chan2 + pcie2 + kLat);
  EXPECT_EQ(p.sensings, 2u);  // plane-level sensings
  EXPECT_EQ(p.die_steps, 1u);
  EXPECT_EQ(p.channel_bytes, 32768);
}

TEST(ComputeJobs, CacheReadOverlapsTheNextSensingWithTheTransfer) {
  // OSP-style job: two operand pages, each to the host, which combines them.
  auto make = [](bool cache) {
    Rig r(1, 1);
    r.ssd.cache_read = cache;
    r.spec.host.combine_operands = true;
    r.spec.templates = {{read_step(Route::ToHost), read_step(Route::ToHost)}};
    r.spec.die_jobs[0] = {Job{1, 0}};
    return r.run();
  };
  ComputeResult on = make(true), off = make(false);
  // Cache read: the second sensing starts right after the first (tR > transfer).
  EXPECT_EQ(on.total.raw(), 2 * kTR + kChan + kPcie + kLat + kHost);
  // Without: the second sensing waits until the first page has left the die.
  EXPECT_EQ(off.total.raw(), 2 * kTR + 2 * kChan + kPcie + kLat + kHost);
  EXPECT_EQ(off.total.raw() - on.total.raw(), kChan);
  // Same work either way.
  EXPECT_EQ(on.channel_bytes, off.channel_bytes);
  EXPECT_EQ(on.host_bytes, 2 * 16384);
  EXPECT_EQ(on.host_busy.raw(), 2 * kHost);
  EXPECT_EQ(on.nand_sense.raw(), off.nand_sense.raw());
}

TEST(ComputeJobs, CacheReadStillWaitsForTheCacheLatch) {
  // With a slow channel (transfer > tR) a third sensing cannot place its page
  // until the first has left: the channel sets the pace.
  Rig r(1, 1);
  r.nand.timing.channel_rate = Bandwidth(16384 / 50e-6);  // 50 us per page
  const int64_t chan = (r.nand.geometry.page_size / r.nand.timing.channel_rate).raw();
  r.spec.templates = {{read_step(Route::Result)}};
  r.spec.die_jobs[0] = {Job{1, 0}, Job{1, 0}, Job{1, 0}};
  ComputeResult p = r.run();
  EXPECT_EQ(p.total.raw(), kTR + 3 * chan + kPcie + kLat);
  EXPECT_EQ(p.bottleneck, Bottleneck::Channels);
  // Events: the first sensing's end, then the three transfers' ends; the second and third sensings end while the
  // latch's page is still on the channel, so their pages wait with no event of their own (Sim::execute).
  EXPECT_EQ(p.events, 4u);
}

TEST(ComputeJobs, IspSramOfOnePageSerialisesJobs) {
  auto make = [](Bytes sram) {
    Rig r(1, 2);
    r.ssd.isp_sram = sram;
    r.spec.templates = {{read_step(Route::ToIsp)}};
    r.spec.die_jobs[0] = {Job{1, 0}};
    r.spec.die_jobs[1] = {Job{1, 0}};
    return r.run();
  };
  ComputeResult big = make(KiB(256)), small = make(KiB(16));
  // Large SRAM: both dies sense at once, the channel serialises the pages, the
  // ISP combines each (512 ns) and sends the result.
  EXPECT_EQ(big.total.raw(), kTR + 2 * kChan + kIsp + kPcie + kLat);
  // One page of SRAM: both dies still sense at once (sensing needs no SRAM), but
  // the second page may cross the channel only once the first result has left
  // over PCIe (its slot is released when that transfer ends).
  EXPECT_EQ(small.total.raw(), kTR + 2 * (kChan + kIsp + kPcie) + kLat);
  EXPECT_EQ(small.isp_sram_peak, 16384);
  EXPECT_EQ(big.isp_sram_peak, 2 * 16384);
  EXPECT_GT(small.total, big.total);
  EXPECT_EQ(small.isp_busy.raw(), 2 * kIsp);
  EXPECT_EQ(small.pcie_bytes, 2 * 16384);
  EXPECT_EQ(small.channel_bytes, big.channel_bytes);
}

TEST(ComputeJobs, IspPagesOfAJobHoldingASlotPassPagesWaitingForOne) {
  // Two dies on one channel, two-operand ISP jobs, SRAM for one partial result.
  Rig r(1, 2);
  r.ssd.isp_sram = KiB(16);
  r.spec.templates = {{read_step(Route::ToIsp), read_step(Route::ToIsp)}};
  r.spec.die_jobs[0] = {Job{1, 0}};
  r.spec.die_jobs[1] = {Job{1, 0}};
  ComputeResult p = r.run();
  // Die 0's first page takes the slot at tR; die 1's first page waits. Die 0's second page (sensed at 2 tR
  // with cache read) goes next; the result is combined and leaves over PCIe, which frees the slot; then die 1's
  // two pages (both sensed long before) cross the channel back to back.
  const int64_t die0_done = 2 * kTR + kChan + kIsp + kPcie;
  EXPECT_EQ(p.total.raw(), die0_done + 2 * kChan + kIsp + kPcie + kLat);
  EXPECT_EQ(p.isp_sram_peak, 16384);
  EXPECT_EQ(p.pcie_bytes, 2 * 16384);
  EXPECT_EQ(p.channel_bytes, 4 * 16384);
}

TEST(ComputeJobs, IspSramSmallerThanOneJobIsAnError) {
  Rig r(1, 1);
  r.ssd.isp_sram = KiB(16);
  r.spec.templates = {{read_step(Route::ToIsp)}};
  r.spec.die_jobs[0] = {Job{2, 0}};  // two planes: 32 KiB of partial results
  EXPECT_THROW(r.run(), ModelError);
}

TEST(ComputeJobs, IspCombinesOperandsInsideTheSsd) {
  // A two-operand ISP job: both pages cross the channel, only the result crosses PCIe.
  Rig r(1, 1);
  r.spec.templates = {{read_step(Route::ToIsp), read_step(Route::ToIsp)}};
  r.spec.die_jobs[0] = {Job{1, 0}};
  ComputeResult p = r.run();
  EXPECT_EQ(p.channel_bytes, 2 * 16384);
  EXPECT_EQ(p.pcie_bytes, 16384);
  EXPECT_EQ(p.total.raw(), 2 * kTR + kChan + kIsp + kPcie + kLat);
}

TEST(ComputeJobs, HostPopcountAddsItsTimeAtTheEnd) {
  auto make = [](bool popcount) {
    Rig r(1, 1);
    r.spec.host.popcount_result = popcount;
    r.spec.templates = {{read_step(Route::Result)}};
    r.spec.die_jobs[0] = {Job{1, 0}};
    return r.run();
  };
  ComputeResult with = make(true), without = make(false);
  EXPECT_EQ(without.total.raw(), kTR + kChan + kPcie + kLat);
  EXPECT_EQ(with.total.raw(), kTR + kChan + kPcie + kLat + kHost);
  EXPECT_EQ(with.host_busy.raw(), kHost);
  EXPECT_EQ(with.host_bytes, 16384);
  // DRAM bits: the DMA in, plus the popcount's read (the power x time terms are cosmos::account's, tests/cosmos).
  const HostParams h = default_params<HostParams>();
  EXPECT_NEAR(with.dram_access.raw(), 2 * (h.dram_energy * Bytes(16384)).raw(), 1e-15);
  EXPECT_NEAR(without.dram_access.raw(), (h.dram_energy * Bytes(16384)).raw(), 1e-15);
  // The SSD is active until its last transfer has ended, idle while the host counts.
  EXPECT_EQ(with.ssd_active.raw(), kTR + kChan + kPcie);
  EXPECT_EQ(without.ssd_active.raw(), kTR + kChan + kPcie);
}

TEST(ComputeJobs, BottleneckNamesTheBusiestResource) {
  auto single = [](Rig& r, int jobs_per_die) {
    r.spec.templates = {{read_step(Route::Result)}};
    for (auto& jl : r.spec.die_jobs) jl.assign(size_t(jobs_per_die), Job{1, 0});
  };
  {  // one die, one page: sensing dominates
    Rig r(1, 1);
    single(r, 4);
    EXPECT_EQ(r.run().bottleneck, Bottleneck::Dies);
  }
  {  // eight dies share one channel
    Rig r(1, 8);
    single(r, 4);
    EXPECT_EQ(r.run().bottleneck, Bottleneck::Channels);
  }
  {  // eight channels of one die each into a slow host link
    Rig r(8, 1);
    r.ssd.pcie_lane_rate = GBps(0.125);  // a x4 link of 0.5 GB/s raw
    single(r, 4);
    EXPECT_EQ(r.run().bottleneck, Bottleneck::Pcie);
  }
  {  // a slow bit count on the host
    Rig r(8, 1);
    r.host.popcount_throughput = GBps(0.1);
    r.spec.host.popcount_result = true;
    single(r, 4);
    EXPECT_EQ(r.run().bottleneck, Bottleneck::Host);
  }
  {  // a slow ISP
    Rig r(8, 1);
    r.ssd.isp_throughput = GBps(0.1);
    r.spec.templates = {{read_step(Route::ToIsp)}};
    for (auto& jl : r.spec.die_jobs) jl.assign(4, Job{1, 0});
    EXPECT_EQ(r.run().bottleneck, Bottleneck::Isp);
  }
}

TEST(ComputeJobs, PerOperationEnergyIsCounted) {
  // Two templates with different step energies, jobs on 1 or 2 planes.
  Rig r(2, 2);
  r.spec.host.popcount_result = true;
  const double e1 = 1.0e-6, e2 = 3.0e-6, e3 = 0.25e-6;
  r.spec.templates = {{Step{us(22.5), Energy(e1), Route::None, true}, Step{us(1), Energy(e3), Route::None, false},
                       Step{us(23), Energy(e2), Route::Result, true}},
                      {Step{us(22.5), Energy(e2), Route::Result, true}}};
  r.spec.die_jobs[0] = {Job{2, 0}, Job{1, 1}};
  r.spec.die_jobs[1] = {Job{1, 0}};
  r.spec.die_jobs[2] = {Job{2, 1}, Job{2, 1}, Job{1, 0}};
  r.spec.die_jobs[3] = {};
  ComputeResult p = r.run();
  // NAND energy is charged once per die step, whatever the planes (a die's ICC): each template runs 3 jobs.
  const double sense = 3 * (e1 + e2 + e3) + 3 * e2;
  EXPECT_NEAR(p.nand_sense.raw(), sense, 1e-15);
  EXPECT_EQ(p.sensings, uint64_t(4 * 2 + 5 * 1));  // latch ops are not sensings
  EXPECT_EQ(p.die_steps, uint64_t(3 + 1 + 3 + 1 + 1 + 3));
  EXPECT_EQ(p.jobs, 6u);
  EXPECT_EQ(p.channel_bytes, 9 * 16384);  // one result page per active plane
  EXPECT_EQ(p.pcie_bytes, 9 * 16384);
  EXPECT_EQ(p.host_bytes, 9 * 16384);
  const auto& s = r.ssd;
  const auto& h = r.host;
  EXPECT_NEAR(p.nand_io.raw(), (r.nand.energy.io_energy * Bytes(p.channel_bytes)).raw(), 1e-15);
  EXPECT_NEAR(p.pcie.raw(), (s.pcie_energy * Bytes(p.pcie_bytes)).raw(), 1e-15);
  EXPECT_GT(p.ssd_active, Time(0));
  EXPECT_LT(p.ssd_active, p.total);  // the host's last bit count runs after the SSD's last transfer
  EXPECT_NEAR(p.dram_access.raw(), 2 * (h.dram_energy * Bytes(9 * 16384)).raw(), 1e-15);
  EXPECT_EQ(p.isp.raw(), 0.0);
  StatsTree stats;
  p.register_stats(stats);
  const Json j = stats.dump();
  EXPECT_EQ(j["bottleneck"], to_string(p.bottleneck));
  EXPECT_FALSE(j.contains("energy_j"));  // the run's energy is the accounting's (cosmos/energy.hpp)
}

TEST(ComputeJobs, PcieEffectiveRateFromTheProtocolOverheads) {
  SsdParams s = default_params<SsdParams>();
  // 4 lanes x 2 GB/s x 128/130 = 7.877 GB/s of symbols; SKP every 370 blocks; 256 B payload per 24 B TLP
  // overhead and half an 8 B DLLP.
  const double expect = 4 * 2e9 * (128.0 / 130.0) * (370.0 / 371.0) * 256.0 / (256.0 + 24.0 + 4.0);
  EXPECT_NEAR(s.pcie_effective_rate().raw(), expect, 1e3);
  EXPECT_NEAR(s.pcie_effective_rate().raw() / 8e9, 0.885, 0.001);
  // A larger payload amortises the overhead.
  s.pcie_max_payload = Bytes(512);
  EXPECT_NEAR(s.pcie_effective_rate().raw(), 4 * 2e9 * (128.0 / 130.0) * (370.0 / 371.0) * 512.0 / 540.0, 1e3);
}

TEST(ComputeJobs, LatchStepsKeepTheDieBusyWithoutOutput) {
  // Sensing, latch XOR, result: the die is busy for the sum; one page moves.
  Rig r(1, 1);
  r.spec.templates = {{Step{us(22.5), Energy(0), Route::None, true}, Step{us(22.5), Energy(0), Route::None, true},
                       Step{us(1), Energy(0), Route::Result, false}}};
  r.spec.die_jobs[0] = {Job{1, 0}};
  ComputeResult p = r.run();
  EXPECT_EQ(p.total.raw(), 2 * kTR + 1'000'000 + kChan + kPcie + kLat);
  EXPECT_EQ(p.sensings, 2u);
  EXPECT_EQ(p.channel_bytes, 16384);
}

TEST(ComputeJobs, WrongNumberOfDieListsIsAnError) {
  Rig r(2, 2);
  r.spec.templates = {{read_step(Route::Result)}};
  r.spec.die_jobs.resize(3);
  EXPECT_THROW(r.run(), ModelError);
}

TEST(ComputeJobs, Deterministic) {
  Rig r(4, 4);
  r.spec.host.combine_operands = true;
  r.spec.templates = {{read_step(Route::ToHost), read_step(Route::ToHost), read_step(Route::ToHost)}};
  for (size_t d = 0; d < r.spec.die_jobs.size(); ++d) r.spec.die_jobs[d].assign(3 + d % 3, Job{uint16_t(1 + d % 2), 0});
  ComputeResult a = r.run(), b = r.run();
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.nand_sense.raw(), b.nand_sense.raw());
  EXPECT_EQ(a.dram_access.raw(), b.dram_access.raw());
}

// Reads and writes on the same dies and channel: a die whose job list holds a Flash-Cosmos read and then a program
// operation (one SLC slice, one 16 KiB page on each of its planes, streamed by the host). The slice reaches the
// controller while the die senses and loads over the idle channel; the sensed page then waits for the channel (a
// data-in in flight is not preempted), the program starts once its slice is in the latches, and the page moves out
// while it programs.
TEST(ComputeJobs, ReadsAndWritesShareTheDiesAndTheChannel) {
  Rig r(1, 1);
  const int64_t slice = r.nand.geometry.planes_per_die * r.nand.geometry.page_size.raw();
  Step program;
  program.die_time = us(200);  // tPROG (SLC)
  program.sensing = false;
  program.data_in = 1;
  program.overlap = 1;
  r.spec.templates = {{read_step(Route::Result)}, {program}};
  r.spec.die_jobs[0] = {Job{1, 0}, Job{uint16_t(r.nand.geometry.planes_per_die), 1}};
  r.spec.write_slices = 1;
  r.spec.slices_per_program = 1;
  const ComputeResult p = r.run();
  const int64_t pcie = (Bytes(slice) / r.ssd.pcie_effective_rate()).raw(), chan = (Bytes(slice) / r.nand.timing.channel_rate).raw();
  const int64_t loaded = pcie + kLat + chan;  // the slice is in the die's latches (after the sensing, 22.5 us)
  ASSERT_GT(loaded, kTR);
  EXPECT_EQ(p.total.raw(), loaded + us(200).raw());
  EXPECT_EQ(p.programs, 1u);
  EXPECT_EQ(p.sensings, 1u);
  EXPECT_EQ(p.jobs, 2u);
  EXPECT_EQ(p.die_busy.raw(), kTR + us(200).raw());
  EXPECT_EQ(p.channel_bytes, 16384 + slice);
  EXPECT_EQ(p.pcie_bytes, slice + 16384);
  EXPECT_EQ(p.channel_busy.raw(), kChan + chan);
  // A program step whose slices are never written cannot start: the run reports the deadlock.
  r.spec.write_slices = 0;
  EXPECT_THROW(r.run(), ModelError);
}

}  // namespace
}  // namespace bitline::ssd
