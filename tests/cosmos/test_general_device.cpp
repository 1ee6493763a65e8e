// Flash-Cosmos reads on the general SSD (ssd/device.hpp, run_compute): the die jobs that the Flash-Cosmos firmware
// makes for a read run as transactions of the MQSim-style device. Hand-timed on an idle device with MQSim's
// scheduler and its options, the paper's SSD under MQSim's scheduler against its own (eager), and bad input. (The
// hand-timed specification of the paper's SSD is tests/ssd/test_compute_jobs.cpp.)
#include "cosmos_test_util.hpp"
#include "ssd/device.hpp"

namespace bitline::cosmos::test {
namespace {

// One channel, one die of 2 planes, 16 KiB pages, a 1.2 GB/s channel, PCIe at 8 GB/s.
ssd::DeviceXml one_die() {
  ssd::DeviceXml d;
  d.channels = 1;
  d.chips_per_channel = 1;
  d.dies_per_chip = 1;
  d.planes_per_die = 2;
  d.blocks_per_plane = 64;
  d.pages_per_block = 64;
  d.page_size = 16384;
  d.channel_width = 1;
  d.channel_transfer_rate = 1200;
  d.pcie_lane_count = 4;
  d.pcie_lane_bandwidth = GBps(2.0);
  d.preconditioning = false;
  return d;
}

ssd::JobSpec jobs(int n, Time die_time, ssd::Route out = ssd::Route::Result) {
  ssd::JobSpec s;
  s.templates = {{ssd::Step{.die_time = die_time, .route = out}}};
  s.die_jobs = {std::vector<ssd::Job>(size_t(n), ssd::Job{2, 0})};
  return s;
}

TEST(GeneralDevice, HandTimedJobsOnAnIdleDie) {
  const ssd::DeviceXml d = one_die();
  const Time t_mws = us(25);
  const Time chan = Bytes(2 * 16384) / bytes_per_s(1.2e9);  // both planes' result pages over the channel
  const Time pcie = Bytes(2 * 16384) / bytes_per_s(8e9);
  // One job: the sensing, the two pages over the channel, then over PCIe.
  ssd::ComputeResult one = ssd::run_compute(jobs(1, t_mws), d);
  EXPECT_EQ(one.total, t_mws + chan + pcie);
  EXPECT_EQ(one.jobs, 1);
  EXPECT_EQ(one.sensings, 2);  // one sensing on each of the two planes
  EXPECT_EQ(one.channel_bytes, 2 * 16384);
  EXPECT_EQ(one.pcie_bytes, 2 * 16384);
  // Three jobs: the die is busy until its pages have left (no cache read, as MQSim), so they follow each other;
  // each one's PCIe transfer overlaps the next sensing.
  ssd::ComputeResult three = ssd::run_compute(jobs(3, t_mws), d);
  EXPECT_EQ(three.total, 3 * (t_mws + chan) + pcie);
  EXPECT_EQ(three.die_busy, 3 * t_mws);
  EXPECT_EQ(three.channel_busy, 3 * chan);
  // Accumulation only (no page out): the die's time alone.
  ssd::ComputeResult quiet = ssd::run_compute(jobs(2, t_mws, ssd::Route::None), d);
  EXPECT_EQ(quiet.total, 2 * t_mws);
  EXPECT_EQ(quiet.channel_bytes, 0);
  // Cache read, chips starting when free: a sensed page moves to the cache latch and the die senses the next one
  // while it leaves; the next page waits for the latch. Sensing (25 us) is shorter than the transfer (27.3 us), so
  // after the first sensing the channel never idles.
  ssd::SsdModelOptions cache;
  cache.cache_read = true;
  cache.issue_on_idle_channel = false;
  ssd::ComputeResult cached = ssd::run_compute(jobs(3, t_mws), d, cache);
  EXPECT_EQ(cached.total, t_mws + 3 * chan + pcie);
  EXPECT_EQ(cached.die_busy, 3 * t_mws);
  // ... and with sensing longer than the transfer, the die never idles.
  ssd::ComputeResult slow = ssd::run_compute(jobs(3, us(40)), d, cache);
  EXPECT_EQ(slow.total, 3 * us(40) + chan + pcie);
}

TEST(GeneralDevice, DiesOfAChannelShareItsBus) {
  ssd::DeviceXml d = one_die();
  d.chips_per_channel = 2;  // two dies on the channel, one job each
  ssd::JobSpec s = jobs(1, us(25));
  s.die_jobs.push_back(s.die_jobs[0]);
  const Time chan = Bytes(2 * 16384) / bytes_per_s(1.2e9);
  const Time pcie = Bytes(2 * 16384) / bytes_per_s(8e9);
  // Both sense at once; the second die's pages wait for the first's on the bus, then cross PCIe.
  ssd::ComputeResult r = ssd::run_compute(s, d);
  EXPECT_EQ(r.total, us(25) + 2 * chan + pcie);
  // With the channel gating of MQSim's scheduler off nothing changes here (both start while the bus is idle).
  ssd::SsdModelOptions m;
  m.issue_on_idle_channel = false;
  EXPECT_EQ(ssd::run_compute(s, d, m).total, r.total);
}

// Five dies on one channel whose sensings are short against their transfers: each waits for the channel to go idle
// (MQSim's rule) and is then started by the channel-idle pass. That pass visits every die of the channel once, the
// turn moving on with each visit (MQSim's TSU_Base::handle_channel_idle_signal). It used to move the turn only past
// a die it started, skipping dies: here die 0's last job was left queued on an idle die for good.
TEST(GeneralDevice, TheChannelIdlePassVisitsEveryDie) {
  ssd::DeviceXml d = one_die();
  d.chips_per_channel = 5;
  ssd::JobSpec s = jobs(2, us(5));
  s.die_jobs.assign(5, s.die_jobs[0]);
  s.die_jobs[0].push_back(s.die_jobs[0][0]);  // die 0 has a third job
  const Time chan = Bytes(2 * 16384) / bytes_per_s(1.2e9);
  const Time pcie = Bytes(2 * 16384) / bytes_per_s(8e9);
  const ssd::ComputeResult r = ssd::run_compute(s, d);  // threw "die 0 never finished its Flash-Cosmos jobs"
  EXPECT_EQ(r.jobs, 11);
  EXPECT_EQ(r.channel_busy, 11 * chan);
  // the channel carries the 11 transfers; the sensings before them (5 us each) overlap it, except at least the first
  EXPECT_GE(r.total, us(5) + 11 * chan + pcie);
  EXPECT_LE(r.total, 3 * us(5) + 11 * chan + pcie);
}

// The same read timed two ways on the paper's SSD, both on the general device with the SSD's cache read: its own
// scheduler (eager: a chip starts when it is free; ReadResult::timing) and MQSim's (a chip starts only while its
// channel is idle; ReadResult::device). Channel-bound reads (Flash-Cosmos, short ParaBit chains) agree; a die-bound
// ParaBit chain (16 sensings per job) is slower under MQSim's rule, asserted where the model puts it today
// (docs/ssd.md, "Flash-Cosmos on the general device").
struct Timed {
  ReadResult r;
  double ratio() const { return to_s(r.device->ssd_active) / to_s(r.timing.ssd_active); }
};
Timed timed(System system, int operands, bool gating) {
  const EvalConfig cfg = paper_config();
  CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, false, 1);
  ssd::SsdModelOptions m;
  m.issue_on_idle_channel = gating;
  ssd.time_on_device(true, m);
  WriteOptions w;
  w.group = "g";
  const int64_t bytes = 64ll << 20;  // 64 MiB operands: 4,096 pages, 32 jobs on each of the 64 dies
  std::string expr = "AND(";
  for (int k = 0; k < operands; ++k) {
    const std::string name(1, char('A' + k));
    ssd.write(name, bytes, w);
    expr += (k ? ", " : "") + name;
  }
  Timed t{ssd.read(expr + ")", system)};
  EXPECT_TRUE(t.r.device.has_value());
  if (!t.r.device) return t;
  EXPECT_EQ(t.r.device->pcie_bytes, bytes);
  EXPECT_EQ(t.r.device->jobs, t.r.timing.jobs);
  EXPECT_EQ(t.r.device->sensings, t.r.timing.sensings);
  return t;
}

TEST(GeneralDevice, MqsimsSchedulerKeepsChannelBoundReads) {
  for (auto [system, operands] : {std::pair{System::Fc, 3}, {System::Fc, 16}, {System::ParaBit, 3}}) {
    SCOPED_TRACE(fmt::format("{} of {}", to_string(system), operands));
    const Timed t = timed(system, operands, true);
    ASSERT_TRUE(t.r.device.has_value());
    EXPECT_NEAR(to_s(t.r.device->total), to_s(t.r.timing.total), 1e-8);  // the same channel-bound schedule
  }
}

TEST(GeneralDevice, DieBoundParaBitShowsMqsimsSchedulingRules) {
  // 16 sensings per job (about 370 us) against 8 dies x 27 us of channel per round: die-bound. With MQSim's rule (a
  // chip starts only while its channel is idle) a die that has just put its page on the channel waits for the
  // channel before its next sensing, so cache read cannot overlap them.
  const Timed gated = timed(System::ParaBit, 16, true);
  const Timed eager = timed(System::ParaBit, 16, false);
  ASSERT_TRUE(gated.r.device && eager.r.device);
  EXPECT_NEAR(eager.ratio(), 1.0, 1e-6) << eager.ratio();
  EXPECT_GT(gated.ratio(), 1.565) << gated.ratio();
  EXPECT_LT(gated.ratio(), 1.578) << gated.ratio();
}

// OSP and ISP routes, hand-timed on one die: two operand pages (both planes each) per job.
TEST(GeneralDevice, HandTimedOperandPagesToTheHostAndToTheIsp) {
  const ssd::DeviceXml d = one_die();
  const Time t_r = us(25);
  const Time chan = Bytes(2 * 16384) / bytes_per_s(1.2e9);
  const Time pcie = Bytes(2 * 16384) / bytes_per_s(8e9);
  ssd::ComputeRates rates;
  rates.isp = bytes_per_s(4e9);
  rates.isp_sram = 2 * 16384;  // one job's partial result
  rates.host_bitwise = bytes_per_s(2e9);
  rates.host_popcount = bytes_per_s(1e9);
  const Time isp = Bytes(2 * 16384) / rates.isp, host = Bytes(2 * 16384) / rates.host_bitwise;
  auto spec = [&](ssd::Route r, int jobs_n) {
    ssd::JobSpec s;
    s.templates = {{ssd::Step{.die_time = t_r, .route = r}, ssd::Step{.die_time = t_r, .route = r}}};
    s.die_jobs = {std::vector<ssd::Job>(size_t(jobs_n), ssd::Job{2, 0})};
    return s;
  };
  // OSP: each page over the channel, then PCIe; the host combines each as it arrives.
  ssd::JobSpec osp = spec(ssd::Route::ToHost, 1);
  osp.host.combine_operands = true;
  ssd::ComputeResult o = ssd::run_compute(osp, d, {}, rates);
  EXPECT_EQ(o.ssd_active, 2 * (t_r + chan) + pcie);
  EXPECT_EQ(o.total, 2 * (t_r + chan) + pcie + host);
  EXPECT_EQ(o.pcie_bytes, 4 * 16384);
  EXPECT_EQ(o.host_busy, 2 * host);
  // ISP: each page into the ISP; after the job's last, the result leaves its SRAM slot over PCIe.
  ssd::ComputeResult i = ssd::run_compute(spec(ssd::Route::ToIsp, 1), d, {}, rates);
  EXPECT_EQ(i.total, 2 * (t_r + chan) + isp + pcie);
  EXPECT_EQ(i.pcie_bytes, 2 * 16384);
  EXPECT_EQ(i.isp_busy, 2 * isp);
  EXPECT_EQ(i.isp_sram_peak, 2 * 16384);
  // Two jobs, one SRAM slot, a slow ISP (65.5 us a page pair): the second job's first page is sensed before the
  // first job's result has left, and waits in the latches (the die busy) until then; then each page waits for the
  // ISP. By hand: the first result leaves at S = tR + chan + 2 isp + pcie; the last at S + chan + 2 isp + pcie.
  rates.isp = bytes_per_s(0.5e9);
  const Time slow = Bytes(2 * 16384) / rates.isp;
  ssd::ComputeResult two = ssd::run_compute(spec(ssd::Route::ToIsp, 2), d, {}, rates);
  EXPECT_EQ(two.total, t_r + 2 * chan + 4 * slow + 2 * pcie);
  EXPECT_EQ(two.isp_sram_peak, 2 * 16384);
}

// The same read timed two ways on the paper's SSD, for the two baselines. OSP is PCIe-bound: the same time.
// ISP streams every operand page over the channels, die by die (a job's SRAM slot is held from its first page to
// its result); with MQSim's channel gating a die starts only on an idle channel, which its own page has just made
// busy, so cache read cannot overlap sensing and transfer: 1.76x the SSD's own (eager) time, asserted at today's
// value.
TEST(GeneralDevice, TheBaselinesOnThePapersSsd) {
  const EvalConfig cfg = paper_config();
  auto run = [&](System sys) {
    CosmosSsd ssd(cfg.nand, cfg.ssd, cfg.host, cfg.cosmos, false, 1);
    ssd.time_on_device(true);
    PreparedPoint pp = prepare(ssd, Point{"bmi", "months", 1}, cfg.workload, sys, 1);
    return ssd.read(pp.queries, sys, pp.popcount);
  };
  const ReadResult osp = run(System::Osp);
  ASSERT_TRUE(osp.device.has_value());
  EXPECT_NEAR(to_s(osp.device->ssd_active), to_s(osp.timing.ssd_active), 1e-8);
  EXPECT_EQ(osp.device->pcie_bytes, osp.timing.pcie_bytes);
  EXPECT_EQ(osp.device->host_busy, osp.timing.host_busy);
  const ReadResult isp = run(System::Isp);
  ASSERT_TRUE(isp.device.has_value());
  EXPECT_EQ(isp.device->channel_bytes, isp.timing.channel_bytes);
  EXPECT_EQ(isp.device->isp_busy, isp.timing.isp_busy);
  const double ratio = to_s(isp.device->ssd_active) / to_s(isp.timing.ssd_active);
  EXPECT_GT(ratio, 1.755) << ratio;
  EXPECT_LT(ratio, 1.770) << ratio;
}

TEST(GeneralDevice, RefusesWhatItCannotTime) {
  const ssd::DeviceXml d = one_die();
  auto refused = [&](const ssd::JobSpec& s, const std::string& what) {
    try {
      ssd::run_compute(s, d);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(jobs(1, us(25), ssd::Route::ToIsp), "no ISP throughput");  // a route without the rates it needs
  ssd::JobSpec osp = jobs(1, us(25), ssd::Route::ToHost);
  osp.host.combine_operands = true;
  refused(osp, "no host throughput");
  ssd::JobSpec count = jobs(1, us(25));
  count.host.popcount_result = true;
  refused(count, "popcount");
  ssd::JobSpec two_dies = jobs(1, us(25));
  two_dies.die_jobs.push_back({});
  refused(two_dies, "jobs are for 2 dies, the device has 1");
  ssd::JobSpec wide = jobs(1, us(25));
  wide.die_jobs[0][0].active = 3;
  refused(wide, "a job on 3 planes");
  ssd::JobSpec bad_tmpl = jobs(1, us(25));
  bad_tmpl.die_jobs[0][0].tmpl = 4;
  refused(bad_tmpl, "step template");
  ssd::JobSpec write;
  write.templates = {{ssd::Step{.die_time = us(200), .sensing = false, .data_in = 1}}};
  write.die_jobs = {{ssd::Job{2, 0}}};
  refused(write, "no write slices");  // a program whose data never comes
  write.write_slices = 2;
  write.slices_per_program = 2;
  refused(write, "slices_per_program");
}

}  // namespace
}  // namespace bitline::cosmos::test
