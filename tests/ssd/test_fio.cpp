// fio's job files on the general SSD (src/ssd/fio.*, bitline ssd fio; docs/ssd.md "fio job files"): the reader by
// hand (sections, comments, suffixes, [global] inheritance, every modelled option, errors with their lines), the
// translation of a job into its flows by hand, fio's JSON (keys, iops x bs = bw_bytes, monotone percentiles,
// group_reporting, ramp_time, determinism), fio's bw/iops/lat logs (names, a line per I/O by hand, windows that sum to
// the JSON's bytes, the bound on unaveraged logs), the histogram against fio's bucketing, the shipped jobs against their XML
// twins, and the refusals end to end (exit 2 naming file, line and option).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../support/run_bitline.hpp"
#include "core/error.hpp"
#include "ssd/device.hpp"
#include "ssd/fio_report.hpp"
#include "ssd/io_stats.hpp"
#include "ssd/mqsim_xml.hpp"

namespace bitline::ssd {
namespace {

namespace fs = std::filesystem;
using fio::Job;
using fio::Pattern;

const std::string kSrc = BITLINE_SOURCE_DIR;

std::vector<Job> jobs_of(const std::string& text, std::vector<std::string>* notes = nullptr) {
  return fio::resolve_jobs(fio::parse_job_file(text, "t.fio"), notes);
}

/// The message of the ConfigError `f` throws (fails the test when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

DeviceXml small_device() { return read_device_xml(kSrc + "/configs/ssd/device.xml"); }

// ---- reading ----------------------------------------------------------------------------------------------------

TEST(SsdFio, ParsesSectionsOptionsCommentsAndLines) {
  const fio::JobFile f = fio::parse_job_file(
      "; a comment\n"
      "# another\n"
      "[global]\n"
      "  bs = 8k   ; trailing comment\n"
      "group_reporting\n"
      "\n"
      "[job one]\r\n"
      "rw=randread # trailing\n",
      "t.fio");
  ASSERT_EQ(f.sections.size(), 2u);
  EXPECT_TRUE(f.sections[0].global());
  EXPECT_EQ(f.sections[0].line, 3);
  ASSERT_EQ(f.sections[0].options.size(), 2u);
  EXPECT_EQ(f.sections[0].options[0].key, "bs");
  EXPECT_EQ(f.sections[0].options[0].value, "8k");
  EXPECT_EQ(f.sections[0].options[0].line, 4);
  EXPECT_FALSE(f.sections[0].options[1].has_value);
  EXPECT_EQ(f.sections[0].options[1].key, "group_reporting");
  EXPECT_EQ(f.sections[1].name, "job one");
  EXPECT_EQ(f.sections[1].line, 7);
  EXPECT_EQ(f.sections[1].options[0].value, "randread");
  EXPECT_EQ(f.sections[1].options[0].line, 8);
}

TEST(SsdFio, SizeSuffixesAsFioReadsThemAtEitherKbBase) {
  auto bs = [](const std::string& v, const std::string& extra = "") { return jobs_of("[j]\n" + extra + "bs=" + v + "\n")[0].bs; };
  auto size = [](const std::string& v, const std::string& extra = "") {
    return jobs_of("[j]\n" + extra + "size=" + v + "\n")[0].size.bytes;
  };
  EXPECT_EQ(bs("4096"), 4096);
  EXPECT_EQ(bs("4k"), 4096);
  EXPECT_EQ(bs("4K"), 4096);
  EXPECT_EQ(bs("4kb"), 4096);
  EXPECT_EQ(bs("4KB"), 4096);
  EXPECT_EQ(bs("0x1000"), 4096);
  EXPECT_EQ(bs("4096b"), 4096);
  EXPECT_EQ(size("1m"), 1048576);
  EXPECT_EQ(size("1M"), 1048576);
  EXPECT_EQ(size("2g"), int64_t(2) << 30);
  EXPECT_EQ(size("1t"), int64_t(1) << 40);
  EXPECT_EQ(size("1p"), int64_t(1) << 50);
  EXPECT_EQ(size("1000ki"), 1000000);  // kb_base=1024: the i-suffixes are the powers of 1000
  EXPECT_EQ(size("1mi"), 1000000);
  EXPECT_EQ(size("1kib"), 1000);
  // kb_base=1000: the other way round, wherever in the section it is given
  EXPECT_EQ(size("1m", "kb_base=1000\n"), 1000000);
  EXPECT_EQ(size("1mi", "kb_base=1000\n"), 1048576);
  EXPECT_EQ(jobs_of("[j]\nsize=1k\nkb_base=1000\n")[0].size.bytes, 1000);
  const Job p = jobs_of("[j]\nsize=20%\noffset=10%\n")[0];
  EXPECT_TRUE(p.size.percent);
  EXPECT_DOUBLE_EQ(p.size.pct, 20);
  EXPECT_DOUBLE_EQ(p.offset.pct, 10);
}

TEST(SsdFio, TimeSuffixes) {
  auto rt = [](const std::string& v) { return jobs_of("[j]\nruntime=" + v + "\n")[0].runtime.raw(); };
  EXPECT_EQ(rt("10"), 10'000'000'000'000);  // seconds without a unit
  EXPECT_EQ(rt("10s"), 10'000'000'000'000);
  EXPECT_EQ(rt("500ms"), 500'000'000'000);
  EXPECT_EQ(rt("500msec"), 500'000'000'000);
  EXPECT_EQ(rt("250us"), 250'000'000);
  EXPECT_EQ(rt("2m"), 120'000'000'000'000);  // m is minutes for a time
  EXPECT_EQ(rt("1h"), 3600'000'000'000'000);
  EXPECT_EQ(rt("1d"), 86400'000'000'000'000);
  EXPECT_EQ(jobs_of("[j]\nramp_time=3\nruntime=1\n")[0].ramp_time.raw(), 3'000'000'000'000);
}

TEST(SsdFio, GlobalSectionsApplyToTheJobsBelowThemAndAJobsOwnOptionsWin) {
  const auto jobs = jobs_of(
      "[global]\nbs=8k\niodepth=2\n"
      "[a]\n"
      "[b]\nbs=16k\n"
      "[global]\niodepth=4\n"
      "[c]\n");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].bs, 8192);
  EXPECT_EQ(jobs[0].iodepth, 2);
  EXPECT_EQ(jobs[1].bs, 16384);
  EXPECT_EQ(jobs[1].iodepth, 2);
  EXPECT_EQ(jobs[2].bs, 8192);
  EXPECT_EQ(jobs[2].iodepth, 4);
  EXPECT_EQ(jobs[0].line_of.at("bs"), 2);  // inherited: [global]'s line
  EXPECT_EQ(jobs[1].line_of.at("bs"), 6);
}

TEST(SsdFio, EveryModelledOption) {
  const auto jobs = jobs_of(
      "[global]\nioengine=io_uring\ndirect=1\nfilename=/dev/nvme0n1\ngroup_reporting\n"
      "[first]\nname=renamed\nrw=randrw\nrwmixread=70\nbs=16k\niodepth=8\nnumjobs=3\nsize=1g\noffset=4m\n"
      "runtime=2s\ntime_based\nramp_time=500ms\nrandrepeat=1\nrandseed=42\nnumber_ios=1000\nio_size=64m\n"
      "percentile_list=99.9:50\nlat_percentiles=1\ndescription=anything\nbwavgtime=250\niopsavgtime=1000\n"
      "disable_bw_measurement=1\n[second]\nreadwrite=readwrite\nrwmixwrite=30\nstonewall\n"
      "[third]\nrw=write\nnew_group\nwait_for_previous=0\n");
  ASSERT_EQ(jobs.size(), 3u);
  const Job& a = jobs[0];
  EXPECT_EQ(a.name, "renamed");
  EXPECT_EQ(a.rw, Pattern::RandRw);
  EXPECT_DOUBLE_EQ(a.read_fraction(), 0.7);
  EXPECT_EQ(a.bs, 16384);
  EXPECT_EQ(a.iodepth, 8);
  EXPECT_EQ(a.numjobs, 3);
  EXPECT_EQ(a.size.bytes, int64_t(1) << 30);
  EXPECT_EQ(a.offset.bytes, int64_t(4) << 20);
  EXPECT_EQ(a.runtime.raw(), 2'000'000'000'000);
  EXPECT_TRUE(a.time_based);
  EXPECT_EQ(a.ramp_time.raw(), 500'000'000'000);
  EXPECT_EQ(a.seed, 42u);
  EXPECT_EQ(a.number_ios, 1000);
  EXPECT_EQ(a.io_size, int64_t(64) << 20);
  EXPECT_EQ(a.percentiles, (std::vector<double>{50, 99.9}));  // sorted, as fio sorts them
  EXPECT_TRUE(a.lat_percentiles);
  EXPECT_TRUE(a.group_reporting);  // from [global]
  EXPECT_EQ(a.bw_avg_msec, 250);
  EXPECT_EQ(a.iops_avg_msec, 1000);
  EXPECT_TRUE(a.disable_bw);
  EXPECT_EQ(jobs[1].bw_avg_msec, 0);  // not given: fio's 500 ms (or the log's window)
  EXPECT_TRUE(a.random());
  const Job& b = jobs[1];
  EXPECT_EQ(b.rw, Pattern::ReadWrite);
  EXPECT_DOUBLE_EQ(b.read_fraction(), 0.7);
  EXPECT_TRUE(b.stonewall);
  EXPECT_FALSE(b.random());
  EXPECT_EQ(b.seed, fio::kDefaultSeed);
  EXPECT_EQ(jobs[2].rw, Pattern::Write);
  EXPECT_TRUE(jobs[2].new_group);
  EXPECT_FALSE(jobs[2].stonewall);
  EXPECT_EQ(jobs_of("[j]\nrw=read\n")[0].read_fraction(), 1.0);
  EXPECT_EQ(jobs_of("[j]\nrw=randwrite\n")[0].read_fraction(), 0.0);
  EXPECT_DOUBLE_EQ(jobs_of("[j]\nrw=randrw\n")[0].read_fraction(), 0.5);  // fio's default mix
  EXPECT_EQ(jobs_of("[j]\n")[0].rw, Pattern::Read);                       // fio's default rw
  std::vector<std::string> notes;
  jobs_of("[j]\ndirect=0\nrandrepeat=0\n", &notes);
  EXPECT_EQ(notes.size(), 2u);
}

TEST(SsdFio, TheOptionsTableHoldsOnlyFioNames) {
  for (auto kind : {fio::OptionKind::Modelled, fio::OptionKind::Ignored})
    for (std::string_view n : fio::options_of(kind)) EXPECT_TRUE(fio::is_fio_option(n)) << n;
  for (const char* o : {"write_bw_log", "bwavgtime", "iopsavgtime", "disable_bw_measurement", "disable_bw"})
    EXPECT_EQ(fio::option_kind(o), fio::OptionKind::Modelled) << o;
  EXPECT_EQ(fio::option_kind("log_avg_msec"), fio::OptionKind::Modelled);
  EXPECT_EQ(fio::option_kind("log_offset"), fio::OptionKind::Modelled);
  EXPECT_EQ(fio::option_kind("rate"), fio::OptionKind::NotModelled);
  EXPECT_EQ(fio::option_kind("thinktime"), fio::OptionKind::NotModelled);
  EXPECT_EQ(fio::option_kind("verify"), fio::OptionKind::NotModelled);
  EXPECT_EQ(fio::option_kind("zonemode"), fio::OptionKind::NotModelled);
  EXPECT_EQ(fio::option_kind("bssplit"), fio::OptionKind::NotModelled);
  EXPECT_EQ(fio::option_kind("ioengine"), fio::OptionKind::Ignored);
  EXPECT_EQ(fio::option_kind("iodepth"), fio::OptionKind::Modelled);
  EXPECT_EQ(fio::option_kind("iodepht"), fio::OptionKind::Unknown);
}

TEST(SsdFio, ErrorsNameTheFileTheLineAndTheOption) {
  struct Case {
    const char* text;
    std::vector<const char*> needles;
  };
  const Case cases[] = {
      {"[j]\nrw=read\nrate=10m\n", {"t.fio:3:", "'rate'", "not modelled"}},
      {"[j]\nthinktime=10\n", {"t.fio:2:", "'thinktime'", "not modelled"}},
      {"[j]\nverify=md5\n", {"t.fio:2:", "'verify'"}},
      {"[j]\nzonemode=zbd\n", {"t.fio:2:", "'zonemode'"}},
      {"[j]\nbssplit=4k/50:8k/50\n", {"t.fio:2:", "'bssplit'"}},
      {"[global]\niodepht=4\n[j]\n", {"t.fio:2:", "unknown option 'iodepht'", "did you mean 'iodepth'"}},
      {"[j]\nfrobnicate=1\n", {"t.fio:2:", "unknown option 'frobnicate'"}},
      {"[global\n", {"t.fio:1:", "section header"}},
      {"bs=4k\n[j]\n", {"t.fio:1:", "outside of a section"}},
      {"[]\n", {"t.fio:1:", "empty section"}},
      {"[j]\nbs=\n", {"t.fio:2:", "no value"}},
      {"[j]\nbs=1000\n", {"t.fio:2:", "bs=1000", "multiple of 512"}},
      {"[j]\nbs=4q\n", {"t.fio:2:", "size suffix"}},
      {"[j]\nbs=4k,8k\n", {"t.fio:2:", "per direction"}},
      {"[j]\nrwmixread=101\n", {"t.fio:2:", "0 to 100"}},
      {"[j]\nrw=randtrim\n", {"t.fio:2:", "trims are not modelled"}},
      {"[j]\nrw=sideways\n", {"t.fio:2:", "not one of"}},
      {"[j]\nrw=randread:8\n", {"t.fio:2:", "offset modifier"}},
      {"[j]\niodepth=0\n", {"t.fio:2:", "iodepth"}},
      {"[j]\nnumjobs=65\n", {"t.fio:2:", "at most 64"}},
      {"[j]\nbwavgtime=0\n", {"t.fio:2:", "bwavgtime"}},
      {"[j]\niopsavgtime=x\n", {"t.fio:2:", "iopsavgtime"}},
      {"[j]\nruntime=5parsecs\n", {"t.fio:2:", "time unit"}},
      {"[j]\ntime_based\n", {"t.fio:2:", "without a runtime"}},
      {"[j]\nsize=${SIZE}\n", {"t.fio:2:", "environment variables"}},
      {"[j]\ninclude other.fio\n", {"t.fio:2:", "include"}},
      {"[j]\ngroup_reporting=2\n", {"t.fio:2:", "1 or 0"}},
      {"[j]\nsize=0\n", {"t.fio:2:", "above 0"}},
      {"[j]\nsize=150%\n", {"t.fio:2:", "percentage"}},
      {"[j]\npercentile_list=50:101\n", {"t.fio:2:", "(0, 100]"}},
      {"[j]\nsize=99999999999999999999\n", {"t.fio:2:", "too large"}},
      {"[global]\nbs=4k\n", {"no job section"}},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of([&] { jobs_of(c.text); });
    for (const char* n : c.needles) EXPECT_TRUE(has(msg, n)) << c.text << "\nexpected: " << n << "\ngot: " << msg;
  }
}

// ---- translation ------------------------------------------------------------------------------------------------

TEST(SsdFio, OneJobBecomesItsFlowByHand) {
  const DeviceXml d = small_device();
  const fio::JobFile f = fio::parse_job_file("[j]\nrw=randrw\nrwmixread=25\nbs=16k\niodepth=7\nsize=64m\noffset=1m\nrandseed=9\n", "t.fio");
  const fio::Plan p = fio::plan_jobs(f, fio::resolve_jobs(f), d, 0.5);
  ASSERT_EQ(p.runs.size(), 1u);
  ASSERT_EQ(p.runs[0].scenario.flows.size(), 1u);
  const FlowXml& x = p.runs[0].scenario.flows[0];
  EXPECT_EQ(x.kind, FlowKind::Synthetic);
  EXPECT_EQ(x.generator, Generator::QueueDepth);
  EXPECT_EQ(x.queue_depth, 7);
  EXPECT_DOUBLE_EQ(x.read_ratio, 0.25);
  EXPECT_EQ(x.address_distribution, AddressDistribution::RandomUniform);
  EXPECT_EQ(x.avg_size, 32);  // 16 KiB in sectors
  EXPECT_EQ(x.alignment_unit, 32);
  EXPECT_TRUE(x.aligned);
  EXPECT_EQ(x.size_distribution, SizeDistribution::Fixed);
  EXPECT_EQ(x.range_offset, 2048);     // 1 MiB in sectors
  EXPECT_EQ(x.range_sectors, 131072);  // 64 MiB
  EXPECT_EQ(x.total_requests, 4096);   // size / bs: fio's end of a job that is not time_based
  EXPECT_EQ(x.stop_time, Time{});
  EXPECT_EQ(x.seed, 9);
  EXPECT_DOUBLE_EQ(x.initial_occupancy, 0.5);
  EXPECT_TRUE(has(x.origin_requests, "t.fio:6 size=64m"));
}

TEST(SsdFio, TimeBasedRampNumberIosIoSizeAndDefaultsByHand) {
  const DeviceXml d = small_device();
  const int64_t logical_sectors = d.logical_pages() * d.sectors_per_page();
  auto flow = [&](const std::string& text) {
    const fio::JobFile f = fio::parse_job_file(text, "t.fio");
    return fio::plan_jobs(f, fio::resolve_jobs(f), d).runs[0].scenario.flows[0];
  };
  FlowXml x = flow("[j]\nrw=write\nbs=128k\nruntime=2\nramp_time=500ms\ntime_based\n");
  EXPECT_EQ(x.address_distribution, AddressDistribution::Streaming);
  EXPECT_EQ(x.read_ratio, 0.0);
  EXPECT_EQ(x.stop_time.raw(), 2'500'000'000'000);  // ramp_time + runtime
  EXPECT_EQ(x.stats_from.raw(), 500'000'000'000);
  EXPECT_EQ(x.total_requests, 0);  // time_based: only the time ends it
  EXPECT_EQ(x.range_offset, 0);
  EXPECT_EQ(x.range_sectors, logical_sectors - logical_sectors % 256);  // the whole device, whole blocks
  x = flow("[j]\nruntime=1\nnumber_ios=300\n");                         // runtime caps, number_ios ends sooner
  EXPECT_EQ(x.total_requests, 300);
  EXPECT_EQ(x.stop_time.raw(), 1'000'000'000'000);
  EXPECT_TRUE(has(x.origin_requests, "number_ios=300"));
  x = flow("[j]\nsize=1m\nio_size=8m\n");  // io_size: more I/O than the range, within it
  EXPECT_EQ(x.total_requests, 2048);
  EXPECT_EQ(x.range_sectors, 2048);
  x = flow("[j]\nsize=50%\noffset=25%\nbs=4k\n");
  EXPECT_EQ(x.range_sectors, (logical_sectors * 512 / 2 - logical_sectors * 512 / 2 % 4096) / 512);
  EXPECT_EQ(x.range_offset % 8, 0);  // a percentage offset is aligned to bs
}

TEST(SsdFio, NumjobsClonesStonewallRunsAndReportingGroups) {
  const DeviceXml d = small_device();
  const fio::JobFile f = fio::parse_job_file("[a]\nnumjobs=3\n[b]\nnew_group\n[c]\nstonewall\nnumjobs=2\n", "t.fio");
  const fio::Plan p = fio::plan_jobs(f, fio::resolve_jobs(f), d);
  ASSERT_EQ(p.runs.size(), 2u);
  EXPECT_EQ(p.runs[0].scenario.flows.size(), 4u);  // a's 3 clones and b run at once
  EXPECT_EQ(p.runs[1].scenario.flows.size(), 2u);
  EXPECT_EQ(p.groupid, (std::vector<int64_t>{0, 1, 2}));
  // four flows at once: each has a quarter of the logical space, so the default size is a quarter
  const int64_t quarter = d.logical_pages() * d.sectors_per_page() / 4;
  EXPECT_EQ(p.runs[0].scenario.flows[0].range_sectors, quarter - quarter % 8);
  // a range that passes the device is refused with its line
  const fio::JobFile big = fio::parse_job_file("[a]\nsize=1p\n", "big.fio");
  std::string msg = error_of([&] { fio::plan_jobs(big, fio::resolve_jobs(big), d); });
  EXPECT_TRUE(has(msg, "big.fio:2:")) << msg;
  EXPECT_TRUE(has(msg, "logical space")) << msg;
  const fio::JobFile two = fio::parse_job_file("[a]\nnumjobs=2\nsize=60%\n", "two.fio");  // 60% of each clone's half
  EXPECT_NO_THROW(fio::plan_jobs(two, fio::resolve_jobs(two), d));
  const fio::JobFile many = fio::parse_job_file("[a]\nnumjobs=40\n[b]\nnumjobs=40\n", "many.fio");
  msg = error_of([&] { fio::plan_jobs(many, fio::resolve_jobs(many), d); });
  EXPECT_TRUE(has(msg, "many.fio:1:")) << msg;
  EXPECT_TRUE(has(msg, "at most 64 flows")) << msg;
}

// ---- the histogram ------------------------------------------------------------------------------------------------

TEST(SsdFio, HistogramBucketsAsFioAndPercentilesWithinHalfABucket) {
  EXPECT_EQ(IoHist::index(0), 0u);
  EXPECT_EQ(IoHist::index(127), 127u);
  EXPECT_EQ(IoHist::index(128), 128u);  // 2^7: group 2, bucket 0
  EXPECT_EQ(IoHist::value(128), 129u);  // its midpoint: 128 + 0.5 x 2
  EXPECT_EQ(IoHist::index(255), 191u);
  EXPECT_EQ(IoHist::index(256), 192u);
  EXPECT_EQ(IoHist::value(192), 258u);  // 256 + 0.5 x 4
  for (uint64_t v : {1000ull, 75'000ull, 1'234'567ull, 98'765'432'100ull}) {
    const double got = double(IoHist::value(IoHist::index(v)));
    EXPECT_LE(std::abs(got - double(v)) / double(v), 1.0 / 128) << v;
  }
  IoHist h;
  for (uint64_t v = 1; v <= 100; ++v) h.add(v * 1000);
  const auto p = h.percentiles({1, 50, 99, 100}, 100);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_NEAR(double(p[0]), 1000, 8);
  EXPECT_NEAR(double(p[1]), 50000, 50000.0 / 128);
  EXPECT_NEAR(double(p[2]), 99000, 99000.0 / 128);
  EXPECT_NEAR(double(p[3]), 100000, 100000.0 / 128);
  IoMoments m;
  for (uint64_t v : {2u, 4u, 4u, 4u, 5u, 5u, 7u, 9u}) m.add(v);
  EXPECT_DOUBLE_EQ(m.mean, 5.0);
  EXPECT_NEAR(m.stddev(), std::sqrt(32.0 / 7.0), 1e-12);  // the sample deviation, as fio's calc_lat
  IoMoments a, b;
  for (uint64_t v : {2u, 4u, 4u}) a.add(v);
  for (uint64_t v : {4u, 5u, 5u, 7u, 9u}) b.add(v);
  a.merge(b);
  EXPECT_NEAR(a.mean, 5.0, 1e-12);
  EXPECT_NEAR(a.stddev(), m.stddev(), 1e-12);
  EXPECT_EQ(a.min, 2u);
  EXPECT_EQ(a.max, 9u);
}

// ---- fio's logs (write_bw_log, write_iops_log, write_lat_log, log_avg_msec) ---------------------------------------

struct LogRun {
  fio::Plan plan;
  std::vector<ScenarioRun> runs;
  nlohmann::ordered_json json;
  std::vector<std::string> names, texts;
};

LogRun run_logs(const std::string& text, const DeviceXml& d) {
  const fio::JobFile f = fio::parse_job_file(text, "t.fio");
  LogRun r{fio::plan_jobs(f, fio::resolve_jobs(f), d), {}, {}, {}, {}};
  RunOptions opt;
  opt.io_stats = true;
  for (const auto& g : r.plan.runs) r.runs.push_back(run_scenario(d, g.scenario, opt));
  r.json = fio::fio_json(r.plan, r.runs);
  r.names = fio::log_names(r.plan);
  r.texts = fio::log_texts(r.plan, r.runs);
  return r;
}

/// A log's lines as fio writes them (iolog.c flush_samples): time, value, direction, block size, then the offset
/// with log_offset (`with_offset`), then the command priority, 0 for every I/O here. Returns the first four fields and
/// the offset (0 without it); fails the test on a line of another shape.
std::vector<std::array<int64_t, 5>> log_lines(const std::string& text, bool with_offset = false) {
  std::vector<std::array<int64_t, 5>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<int64_t> f;
    std::istringstream l(line);
    int64_t x = 0;
    char sep = ',';
    while (sep == ',' && l >> x) f.push_back(x), sep = l.peek() == EOF ? '\0' : char(l.get());
    EXPECT_EQ(f.size(), with_offset ? 6u : 5u) << line;
    if (f.size() != (with_offset ? 6u : 5u)) continue;
    std::string want;
    for (size_t i = 0; i < f.size(); ++i) want += (i ? ", " : "") + std::to_string(f[i]);
    EXPECT_EQ(line, want);           // ", " between, nothing else
    EXPECT_EQ(f.back(), 0) << line;  // the command priority
    out.push_back({f[0], f[1], f[2], f[3], with_offset ? f[4] : 0});
  }
  return out;
}

TEST(SsdFio, LogNamesFollowFiosThreadNumbers) {
  const DeviceXml d = small_device();
  const fio::JobFile f = fio::parse_job_file(
      "[global]\nbs=4k\nnumber_ios=10\n[a]\nnumjobs=2\nwrite_bw_log=p\n[b]\nwrite_lat_log\nwrite_iops_log=q\n[c]\n", "t.fio");
  const fio::Plan p = fio::plan_jobs(f, fio::resolve_jobs(f), d);
  EXPECT_EQ(fio::log_names(p),
            (std::vector<std::string>{"p_bw.1.log", "p_bw.2.log", "q_iops.3.log", "b_lat.3.log", "b_clat.3.log", "b_slat.3.log"}));
  EXPECT_TRUE(p.runs[0].scenario.flows[0].io_log);
  EXPECT_FALSE(p.runs[0].scenario.flows[3].io_log);  // [c] logs nothing
}

// with log_avg_msec, a line per window and direction: the bw log's sum of bw x window is the bytes fio's JSON reports
TEST(SsdFio, AveragedLogsSumToTheJsonsBytesAndIos) {
  const DeviceXml d = small_device();
  const LogRun r = run_logs(
      "[m]\nrw=randrw\nrwmixread=50\nbs=4k\niodepth=4\nnumber_ios=3000\nrandseed=5\nwrite_bw_log=x\nwrite_iops_log=x\n"
      "write_lat_log=x\nlog_avg_msec=2\n",
      d);
  ASSERT_EQ(r.names, (std::vector<std::string>{"x_bw.1.log", "x_iops.1.log", "x_lat.1.log", "x_clat.1.log", "x_slat.1.log"}));
  const auto& job = r.json["jobs"][0];
  const auto bw = log_lines(r.texts[0]), iops = log_lines(r.texts[1]), lat = log_lines(r.texts[2]);
  ASSERT_GT(bw.size(), 4u);  // several windows
  ASSERT_EQ(bw.size(), iops.size());
  for (int dir = 0; dir < 2; ++dir) {
    const auto& js = job[dir == 0 ? "read" : "write"];
    double bytes = 0, ios = 0;
    int64_t lines = 0;
    for (size_t i = 0; i < bw.size(); ++i) {
      EXPECT_EQ(bw[i][0] % 2, 0);  // the windows' ends, ms
      EXPECT_EQ(bw[i][3], 0);      // no block size in an averaged line
      if (bw[i][2] != dir) continue;
      ++lines;
      bytes += double(bw[i][1]) * 1024.0 * 0.002;  // KiB/s x 2 ms
      ios += double(iops[i][1]) * 0.002;
    }
    const double want = js["io_bytes"].get<double>();
    EXPECT_GT(want, 0);
    EXPECT_LE(bytes, want);  // rounded down: at most 1 KiB/s (2.048 B) per line below
    EXPECT_GE(bytes, want - 2.048 * double(lines)) << dir;
    EXPECT_LE(ios, js["total_ios"].get<double>());
    EXPECT_GE(ios, js["total_ios"].get<double>() - 0.002 * double(lines));
    for (const auto& l : lat)
      if (l[2] == dir) {
        EXPECT_GE(double(l[1]), std::floor(js["lat_ns"]["min"].get<double>()));
        EXPECT_LE(double(l[1]), js["lat_ns"]["max"].get<double>());
      }
  }
  EXPECT_EQ(r.texts,
            run_logs("[m]\nrw=randrw\nrwmixread=50\nbs=4k\niodepth=4\nnumber_ios=3000\nrandseed=5\nwrite_bw_log=x\nwrite_iops_log=x\n"
                     "write_lat_log=x\nlog_avg_msec=2\n",
                     d)
                .texts);  // deterministic
}

// without log_avg_msec, a line per I/O at its completion: by hand for three sequential writes at iodepth 1
TEST(SsdFio, UnaveragedLogsHaveALinePerIo) {
  const DeviceXml d = small_device();
  const LogRun r =
      run_logs("[w]\nrw=write\nbs=4k\niodepth=1\nnumber_ios=3\nwrite_bw_log\nwrite_iops_log\nwrite_lat_log\nlog_offset=1\n", d);
  ASSERT_EQ(r.names, (std::vector<std::string>{"w_bw.1.log", "w_iops.1.log", "w_lat.1.log", "w_clat.1.log", "w_slat.1.log"}));
  const auto bw = log_lines(r.texts[0], true), iops = log_lines(r.texts[1], true), lat = log_lines(r.texts[2], true),
             clat = log_lines(r.texts[3], true), slat = log_lines(r.texts[4], true);
  ASSERT_EQ(bw.size(), 3u);
  const auto& js = r.json["jobs"][0]["write"];
  double lat_sum = 0;
  for (size_t i = 0; i < 3; ++i) {
    for (const auto* log : {&bw, &iops, &lat, &clat, &slat}) {
      const auto& l = (*log)[i];
      EXPECT_EQ(l[2], 1);                  // a write
      EXPECT_EQ(l[3], 4096);               // its block size
      EXPECT_EQ(l[4], int64_t(i) * 4096);  // its offset: sequential from 0
      EXPECT_EQ(l[0], lat[i][0]);          // the same completion in every log
      if (i > 0) {
        EXPECT_GE(l[0], (*log)[i - 1][0]);
      }
    }
    EXPECT_EQ(iops[i][1], 1);
    EXPECT_GT(lat[i][1], 0);
    EXPECT_NEAR(double(lat[i][1]), double(clat[i][1] + slat[i][1]), 1.0);  // each truncated to ns on its own
    EXPECT_EQ(bw[i][1], int64_t(4096) * 1000000 / clat[i][1]);             // fio's add_bw_sample: bytes x 10^6 / clat ns
    lat_sum += double(lat[i][1]);
  }
  EXPECT_NEAR(lat_sum / 3, js["lat_ns"]["mean"].get<double>(), 1e-6 * lat_sum);
  EXPECT_EQ(std::min({lat[0][1], lat[1][1], lat[2][1]}), js["lat_ns"]["min"].get<int64_t>());
  EXPECT_EQ(std::max({lat[0][1], lat[1][1], lat[2][1]}), js["lat_ns"]["max"].get<int64_t>());
  // the completion time, ms since the run began, within the JSON's runtime
  EXPECT_LE(lat[2][0], js["runtime"].get<int64_t>() + 1);
  // without log_offset (fio's default) the same lines have no offset: time, value, direction, block size, priority
  const LogRun plain = run_logs("[w]\nrw=write\nbs=4k\niodepth=1\nnumber_ios=3\nwrite_lat_log\n", d);
  const auto plain_lat = log_lines(plain.texts[0]);
  ASSERT_EQ(plain_lat.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(plain_lat[i], (std::array<int64_t, 5>{lat[i][0], lat[i][1], lat[i][2], lat[i][3], 0}));
}

TEST(SsdFio, RefusesAnUnaveragedLogTooLongBeforeRunning) {
  const DeviceXml d = small_device();
  const auto plan = [&](const std::string& text) {
    const fio::JobFile f = fio::parse_job_file(text, "t.fio");
    return fio::plan_jobs(f, fio::resolve_jobs(f), d);
  };
  std::string msg = error_of([&] { plan("[j]\nbs=4k\nwrite_iops_log=x\nnumber_ios=5000000\n"); });
  EXPECT_TRUE(has(msg, "t.fio:3:") && has(msg, "write_iops_log") && has(msg, "2^22") && has(msg, "log_avg_msec")) << msg;
  msg = error_of([&] { plan("[j]\nbs=4k\ntime_based\nruntime=1\nwrite_lat_log\n"); });
  EXPECT_TRUE(has(msg, "t.fio:5:") && has(msg, "write_lat_log") && has(msg, "time_based")) << msg;
  // all the file's unaveraged logs together are bounded too
  msg = error_of([&] { plan("[global]\nbs=512\nwrite_bw_log=x\nio_size=2g\nnumber_ios=3000000\n[a]\n[b]\n"); });
  EXPECT_TRUE(has(msg, "t.fio:3:") && has(msg, "job 'b'") && has(msg, "all of them together")) << msg;
  msg = error_of([&] { plan("[j]\nbs=4k\ntime_based\nruntime=1h\nwrite_bw_log\nlog_avg_msec=0\n"); });
  EXPECT_TRUE(has(msg, "write_bw_log")) << msg;
  msg = error_of([&] { plan("[j]\nbs=4k\ntime_based\nruntime=100h\nwrite_bw_log\nlog_avg_msec=1\n"); });
  EXPECT_TRUE(has(msg, "t.fio:6:") && has(msg, "log_avg_msec=1") && has(msg, "windows")) << msg;
  EXPECT_NO_THROW(plan("[j]\nbs=4k\ntime_based\nruntime=1h\nwrite_bw_log\nlog_avg_msec=1000\n"));
  // a bw (iops) log and samples at two windows (fio would average the log over the shorter): refused
  msg = error_of([&] { plan("[j]\nbs=4k\nnumber_ios=10\nwrite_bw_log\nlog_avg_msec=100\nbwavgtime=50\n"); });
  EXPECT_TRUE(has(msg, "t.fio:6:") && has(msg, "bwavgtime=50") && has(msg, "log_avg_msec=100")) << msg;
  EXPECT_NO_THROW(plan("[j]\nbs=4k\nnumber_ios=10\nwrite_bw_log\nlog_avg_msec=100\nbwavgtime=200\n"));
  EXPECT_NO_THROW(plan("[j]\nbs=4k\nnumber_ios=10\nwrite_iops_log\nlog_avg_msec=100\nbwavgtime=50\n"));  // (no bw log)
}

// ---- simulated: fio's JSON ---------------------------------------------------------------------------------------

nlohmann::ordered_json run_fio(const std::string& text, const DeviceXml& d, double occupancy = 0) {
  const fio::JobFile f = fio::parse_job_file(text, "t.fio");
  const fio::Plan p = fio::plan_jobs(f, fio::resolve_jobs(f), d, occupancy);
  RunOptions opt;
  opt.io_stats = true;
  std::vector<ScenarioRun> runs;
  for (const auto& r : p.runs) runs.push_back(run_scenario(d, r.scenario, opt));
  return fio::fio_json(p, runs);
}

void expect_consistent(const nlohmann::ordered_json& dir, int64_t bs) {
  const double iops = dir["iops"].get<double>();
  const int64_t bw_bytes = dir["bw_bytes"].get<int64_t>();
  EXPECT_NEAR(iops * double(bs), double(bw_bytes), 1.0);  // bw_bytes is floor(io_bytes / runtime)
  EXPECT_EQ(dir["bw"].get<int64_t>(), bw_bytes / 1024);
  EXPECT_EQ(dir["io_bytes"].get<int64_t>(), dir["total_ios"].get<int64_t>() * bs);
  EXPECT_EQ(dir["io_kbytes"].get<int64_t>(), dir["io_bytes"].get<int64_t>() >> 10);
  for (const char* lat : {"slat_ns", "clat_ns", "lat_ns"}) {
    const auto& l = dir[lat];
    for (const char* k : {"min", "max", "mean", "stddev", "N"}) EXPECT_TRUE(l.contains(k)) << lat << " " << k;
    EXPECT_EQ(l["N"].get<int64_t>(), dir["total_ios"].get<int64_t>());
    EXPECT_LE(l["min"].get<double>(), l["mean"].get<double>());
    EXPECT_LE(l["mean"].get<double>(), l["max"].get<double>());
  }
  EXPECT_LE(dir["clat_ns"]["mean"].get<double>(), dir["lat_ns"]["mean"].get<double>());
  const auto& pct = dir["clat_ns"]["percentile"];
  ASSERT_EQ(pct.size(), 17u);  // fio's default list
  for (const char* k : {"1.000000", "50.000000", "99.000000", "99.900000", "99.990000"}) EXPECT_TRUE(pct.contains(k)) << k;
  double prev = 0;
  for (const auto& [k, v] : pct.items()) {  // in fio's order: ascending percentiles
    EXPECT_GE(v.get<double>(), prev) << k;
    prev = v.get<double>();
  }
  const double max = dir["clat_ns"]["max"].get<double>(), min = dir["clat_ns"]["min"].get<double>();
  EXPECT_LE(pct["99.990000"].get<double>(), max * (1 + 1.0 / 128));
  EXPECT_GE(pct["1.000000"].get<double>(), min * (1 - 1.0 / 128));
}

TEST(SsdFio, JsonHasFiosKeysAndConsistentFigures) {
  const DeviceXml d = small_device();
  const nlohmann::ordered_json j = run_fio("[global]\nbs=4k\nrandseed=3\n[mix]\nrw=randrw\nrwmixread=60\niodepth=8\nnumber_ios=4000\n", d);
  EXPECT_EQ(j["fio version"], "bitline-fio");
  ASSERT_EQ(j["jobs"].size(), 1u);
  const auto& job = j["jobs"][0];
  EXPECT_EQ(job["jobname"], "mix");
  EXPECT_EQ(job["groupid"], 0);
  EXPECT_EQ(job["error"], 0);
  EXPECT_EQ(job["job options"]["rw"], "randrw");
  EXPECT_EQ(j["global options"]["bs"], "4k");
  const int64_t reads = job["read"]["total_ios"].get<int64_t>(), writes = job["write"]["total_ios"].get<int64_t>();
  EXPECT_EQ(reads + writes, 4000);
  EXPECT_NEAR(double(reads) / 4000, 0.6, 0.03);
  expect_consistent(job["read"], 4096);
  expect_consistent(job["write"], 4096);
  EXPECT_FALSE(job["read"]["lat_ns"].contains("percentile"));  // clat percentiles only, fio's default
  EXPECT_EQ(job["trim"]["total_ios"], 0);
  EXPECT_EQ(job["read"]["runtime"], job["job_runtime"]);
  // the run's figures agree with MQSim's view of the same run
  EXPECT_EQ(j["bitline"]["runs"][0]["requests"], 4000);
}

TEST(SsdFio, GroupReportingMergesClonesAndJobsOfAGroup) {
  const DeviceXml d = small_device();
  const std::string jobs = "[global]\nrw=randread\nbs=4k\nnumber_ios=500\n[a]\nnumjobs=2\n[b]\n";
  const nlohmann::ordered_json apart = run_fio(jobs, d);
  ASSERT_EQ(apart["jobs"].size(), 3u);  // a, a, b: fio writes every clone
  EXPECT_EQ(apart["jobs"][0]["jobname"], "a");
  EXPECT_EQ(apart["jobs"][1]["jobname"], "a");
  const nlohmann::ordered_json merged = run_fio("[global]\ngroup_reporting\n" + jobs.substr(9), d);
  ASSERT_EQ(merged["jobs"].size(), 1u);  // one reporting group: one entry, named after its first job
  EXPECT_EQ(merged["jobs"][0]["jobname"], "a");
  EXPECT_EQ(merged["jobs"][0]["read"]["total_ios"], 1500);
  EXPECT_EQ(merged["jobs"][0]["bitline"]["clones"], 3);
  const nlohmann::ordered_json two = run_fio("[global]\ngroup_reporting\n" + jobs.substr(9) + "new_group\n", d);
  ASSERT_EQ(two["jobs"].size(), 2u);
  EXPECT_EQ(two["jobs"][1]["groupid"], 1);
  EXPECT_EQ(two["jobs"][0]["read"]["total_ios"], 1000);
}

// fio's bw and iops samples (stat.c __add_samples), by hand: windows of 500 ms from the start, a sample per window
// with I/O (a completion on a boundary closes its window), in fio's integer KiB/s and I/Os per second; the open
// window counts when it ends within fio's 1 ms slack of the flow's end; per I/O (a per-unit log) bytes x 10^6 / clat.
TEST(SsdFio, SamplesByHand) {
  IoSampler bw(IoSampler::Kind::Bw), iops(IoSampler::Kind::Iops);
  for (IoSampler* s : {&bw, &iops}) s->window_ps = 500'000'000'000;
  const int64_t ms = 1'000'000'000;
  for (const auto& [t, bytes] : std::vector<std::pair<int64_t, int64_t>>{{100, 4096}, {400, 4096}, {500, 4096}, {700, 8192}, {1600, 4096}})
    for (IoSampler* s : {&bw, &iops}) s->add(t * ms, 1, bytes, 50'000);
  const auto b = bw.at_end(1600 * ms), i = iops.at_end(1600 * ms);
  EXPECT_EQ(b[0].n, 0);      // no reads
  ASSERT_EQ(b[1].n, 2);      // windows (0, 500] and (500, 1000]; (1000, 1500] had none; (1500, 2000] is still open
  EXPECT_EQ(b[1].min, 16u);  // 8,192 B x 1000 / 500 ms / 1024
  EXPECT_EQ(b[1].max, 24u);  // 12,288 B
  EXPECT_DOUBLE_EQ(b[1].mean, 20.0);
  EXPECT_DOUBLE_EQ(b[1].stddev(), std::sqrt(32.0));
  EXPECT_EQ(i[1].n, 2);
  EXPECT_EQ(i[1].max, 6u);  // 3 I/Os x 1000 / 500 ms
  EXPECT_EQ(i[1].min, 2u);
  EXPECT_EQ(bw.at_end(1999 * ms)[1].n, 3);  // the open window ends within 1 ms of the end: sampled (4,096 B: 8 KiB/s)
  EXPECT_EQ(bw.at_end(1999 * ms)[1].min, 8u);
  EXPECT_EQ(bw.at_end(1998 * ms)[1].n, 2);
  IoSampler unit(IoSampler::Kind::Bw);  // window 0: a sample per I/O
  unit.add(7 * ms, 0, 4096, 50'000);
  EXPECT_EQ(unit.at_end(7 * ms)[0].n, 1);
  EXPECT_EQ(unit.at_end(7 * ms)[0].max, 4096u * 1000000 / 50'000);
  IoSampler none(IoSampler::Kind::Bw);  // below 0: none (disable_bw_measurement)
  none.window_ps = -1;
  none.add(7 * ms, 0, 4096, 50'000);
  EXPECT_EQ(none.at_end(7 * ms)[0].n, 0);
}

// The JSON's bw_* and iops_* figures of a simulated run: 2 s of I/O sampled every 500 ms gives each clone 4 samples, a
// reporting group sums its clones' (its mean is then the group's rate, and the share of the group's bandwidth is
// 100%), an entry per clone has half; bwavgtime=250 doubles them; a per-unit bw log samples every I/O.
TEST(SsdFio, BandwidthAndIopsSamples) {
  const DeviceXml d = small_device();
  const std::string job = "[global]\nrw=randread\nbs=4k\niodepth=4\ntime_based\nruntime=2s\nrandseed=9\n[r]\nnumjobs=2\n";
  const nlohmann::ordered_json merged = run_fio("[global]\ngroup_reporting\n" + job.substr(9), d);
  const auto& m = merged["jobs"][0]["read"];
  EXPECT_EQ(m["bw_samples"], 8);
  EXPECT_EQ(m["iops_samples"], 8);
  EXPECT_NEAR(m["bw_mean"].get<double>(), m["bw"].get<double>(), 0.02 * m["bw"].get<double>());
  EXPECT_NEAR(m["iops_mean"].get<double>(), m["iops"].get<double>(), 0.02 * m["iops"].get<double>());
  EXPECT_LE(m["bw_min"].get<double>(), m["bw_mean"].get<double>());
  EXPECT_GE(m["bw_max"].get<double>(), m["bw_mean"].get<double>());
  EXPECT_GT(m["bw_agg"].get<double>(), 98.0);
  EXPECT_LE(m["bw_agg"].get<double>(), 100.0);
  EXPECT_EQ(merged["jobs"][0]["write"]["bw_samples"], 0);  // no writes: no samples, zeros
  EXPECT_EQ(merged["jobs"][0]["write"]["bw_agg"], 0.0);
  const nlohmann::ordered_json apart = run_fio(job, d);
  ASSERT_EQ(apart["jobs"].size(), 2u);
  for (const auto& e : apart["jobs"]) {
    EXPECT_EQ(e["read"]["bw_samples"], 4);
    EXPECT_NEAR(e["read"]["bw_agg"].get<double>(), 50.0, 2.0);  // each clone half of its group's bandwidth
  }
  const nlohmann::ordered_json finer = run_fio("[global]\nbwavgtime=250\n" + job.substr(9), d);
  EXPECT_EQ(finer["jobs"][0]["read"]["bw_samples"], 8);
  EXPECT_EQ(finer["jobs"][0]["read"]["iops_samples"], 4);
  const nlohmann::ordered_json unit = run_fio("[w]\nrw=write\nbs=4k\nnumber_ios=3\nwrite_bw_log\n", d);
  EXPECT_EQ(unit["jobs"][0]["write"]["bw_samples"], 3);    // a sample per I/O
  EXPECT_EQ(unit["jobs"][0]["write"]["iops_samples"], 0);  // 3 I/Os end long before 500 ms: no window sampled
  EXPECT_EQ(run_fio("[w]\nrw=write\nbs=4k\nnumber_ios=3\nwrite_bw_log\ndisable_bw_measurement\n", d)["jobs"][0]["write"]["bw_samples"], 0);
}

TEST(SsdFio, RampTimeIsLeftOutOfTheResults) {
  const DeviceXml d = small_device();
  const std::string base = "[j]\nrw=randread\nbs=4k\niodepth=4\ntime_based\nruntime=20ms\n";
  const nlohmann::ordered_json plain = run_fio(base, d);
  const nlohmann::ordered_json ramped = run_fio(base + "ramp_time=10ms\n", d);
  const auto &p = plain["jobs"][0]["read"], &r = ramped["jobs"][0]["read"];
  // both count 20 ms of I/O (the ramp's 10 ms before it are run, not counted)
  EXPECT_NEAR(p["runtime"].get<double>(), 20, 1);
  EXPECT_NEAR(r["runtime"].get<double>(), 20, 1);
  EXPECT_NEAR(double(r["total_ios"].get<int64_t>()), double(p["total_ios"].get<int64_t>()), 0.1 * double(p["total_ios"].get<int64_t>()));
  EXPECT_GT(ramped["bitline"]["runs"][0]["requests"].get<int64_t>(), r["total_ios"].get<int64_t>() * 13 / 10);
}

TEST(SsdFio, SameInputsGiveTheSameJson) {
  const DeviceXml d = small_device();
  const std::string text = "[j]\nrw=randrw\nbs=8k\niodepth=16\nnumjobs=2\nnumber_ios=3000\n";
  EXPECT_EQ(run_fio(text, d).dump(), run_fio(text, d).dump());
  EXPECT_NE(run_fio(text, d).dump(), run_fio(text + "randseed=5\n", d).dump());
}

// ---- the shipped jobs and their XML twins -----------------------------------------------------------------------

TEST(SsdFio, ShippedJobsEqualTheirXmlTwins) {
  const std::string dir = kSrc + "/configs/ssd/drives/fio/";
  const DeviceXml d = read_device_xml(kSrc + "/configs/ssd/drives/samsung-970evoplus-1tb.xml");
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".fio") continue;
    ++n;
    const std::string name = e.path().stem().string();
    const WorkloadXml w = read_workload_xml(dir + name + ".xml");
    const FlowXml& t = w.scenarios.at(0).flows.at(0);
    const fio::JobFile f = fio::read_job_file(e.path().string());
    const fio::Plan p = fio::plan_jobs(f, fio::resolve_jobs(f), d, t.initial_occupancy);
    ASSERT_EQ(p.runs.size(), 1u) << name;
    const FlowXml& x = p.runs[0].scenario.flows.at(0);
    // as many flows (numjobs clones), each the same flow, field by field
    const int64_t flows = int64_t(w.scenarios.at(0).flows.size());
    EXPECT_EQ(int64_t(p.runs[0].scenario.flows.size()), flows) << name;
    EXPECT_EQ(x.read_ratio, t.read_ratio) << name;
    EXPECT_EQ(x.address_distribution, t.address_distribution) << name;
    EXPECT_EQ(x.avg_size, t.avg_size) << name;
    EXPECT_EQ(x.alignment_unit, t.alignment_unit) << name;
    EXPECT_EQ(x.queue_depth, t.queue_depth) << name;
    EXPECT_EQ(x.total_requests, t.total_requests) << name;
    EXPECT_EQ(x.seed, t.seed) << name;
    EXPECT_EQ(x.caching_mode, t.caching_mode) << name;
    EXPECT_EQ(x.stop_time, t.stop_time) << name;
    EXPECT_EQ(x.range_offset, 0) << name;
    // the working set, 100%: the flow's share of the device (all of it for one flow) in whole blocks (the twin's last 128
    // sectors, not a whole 128 KiB block, are never reached by 40,000 sequential requests of 128 KiB)
    const int64_t all = d.logical_pages() * d.sectors_per_page() / flows;
    EXPECT_EQ(x.range_sectors, all - all % t.avg_size) << name;
    // and, for the two shortest, the same run: the same IOPS
    if (name == "randread-4k-qd1" || name == "seqwrite-128k-qd32") {
      RunOptions opt;
      opt.io_stats = true;
      const ScenarioRun r = run_scenario(d, p.runs[0].scenario, opt);
      const nlohmann::ordered_json j = fio::fio_json(p, {r});
      const nlohmann::json twin = simulate_workload(d, w)["scenarios"][0];
      const auto& dir_json = j["jobs"][0][t.read_ratio > 0 ? "read" : "write"];
      EXPECT_NEAR(dir_json["iops"].get<double>(), twin["iops"].get<double>(), 1e-6 * twin["iops"].get<double>()) << name;
      EXPECT_EQ(dir_json["total_ios"].get<int64_t>(), twin["requests"].get<int64_t>()) << name;
      EXPECT_NEAR(dir_json["clat_ns"]["mean"].get<double>() / 1e3, twin["flows"][0]["device_response_time"]["mean_us"].get<double>(),
                  1e-6 * dir_json["clat_ns"]["mean"].get<double>())
          << name;
    }
  }
  EXPECT_EQ(n, 10);
}

// ---- the command ------------------------------------------------------------------------------------------------

class SsdFioCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bitline-fio-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  test::CliRun fio(const std::string& job, const std::string& extra = "") {
    return test::run_bitline("ssd fio " + test::shell_quote(job) + " --device " + test::shell_quote(kSrc + "/configs/ssd/device.xml") +
                             " --quiet " + extra);
  }
  void expect_refused(const std::string& text, std::initializer_list<std::string> needles, const std::string& extra = "") {
    const std::string job = write("job.fio", text);
    const std::string out = (dir_ / "out.json").string();
    const test::CliRun r = fio(job, "--json " + test::shell_quote(out) + " " + extra);
    EXPECT_EQ(r.rc, 2) << text << "\n" << r.out;
    for (const auto& n : needles) EXPECT_TRUE(has(r.out, n)) << text << "\nexpected: " << n << "\ngot: " << r.out;
    EXPECT_FALSE(fs::exists(out)) << "a result was written despite the error";
  }
  fs::path dir_;
};

TEST_F(SsdFioCli, RunsAJobFileAndWritesFiosJson) {
  const std::string job = write("job.fio", "[global]\nbs=4k\n[rr]\nrw=randread\niodepth=4\nnumber_ios=2000\n");
  const std::string out = (dir_ / "out.json").string();
  const test::CliRun r = fio(job, "--json " + test::shell_quote(out));
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream in(out);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["fio version"], "bitline-fio");
  EXPECT_EQ(j["jobs"][0]["read"]["total_ios"], 2000);
  EXPECT_TRUE(j["bitline"]["resolved"].contains("ssd_device"));
  const test::CliRun again = fio(job, "--json " + test::shell_quote(out + "2"));
  std::ifstream a(out), b(out + "2");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), std::string(std::istreambuf_iterator<char>(b), {}));
  const test::CliRun loud =
      test::run_bitline("ssd fio " + test::shell_quote(job) + " --device " + test::shell_quote(kSrc + "/configs/ssd/device.xml"));
  EXPECT_TRUE(has(loud.out, "rr: (groupid=0, jobs=1)")) << loud.out;
  EXPECT_TRUE(has(loud.out, "read: IOPS=")) << loud.out;
  EXPECT_TRUE(has(loud.out, "clat percentiles (usec)")) << loud.out;
}

// --throughput-bin: each group's bandwidth over time and, on a drive with an SLC cache, its counts, in bitline.runs[i]
// as ssd run writes them (make ssd-drives reads the rate after the cache from them)
TEST_F(SsdFioCli, ThroughputBinsAndSlcCountsPerGroup) {
  const std::string job = write("job.fio", "[w]\nrw=write\nbs=128k\niodepth=8\nnumber_ios=400\n");
  const std::string drive = kSrc + "/configs/ssd/drives/samsung-970evoplus-1tb.xml";
  const auto run = [&](const std::string& out, const std::string& extra) {
    return test::run_bitline("ssd fio " + test::shell_quote(job) + " --device " + test::shell_quote(drive) + " --quiet --json " +
                             test::shell_quote(out) + extra);
  };
  const std::string out = (dir_ / "out.json").string(), plain = (dir_ / "plain.json").string();
  ASSERT_EQ(run(out, " --throughput-bin 0.001").rc, 0);
  ASSERT_EQ(run(plain, "").rc, 0);
  std::ifstream in(out), in2(plain);
  const nlohmann::json j = nlohmann::json::parse(in), k = nlohmann::json::parse(in2);
  const nlohmann::json& r = j["bitline"]["runs"][0];
  ASSERT_TRUE(r.contains("throughput"));
  EXPECT_DOUBLE_EQ(r["throughput"]["bin_s"].get<double>(), 0.001);
  double bytes = 0;
  for (const auto& b : r["throughput"]["bytes"]) bytes += b.get<double>();
  EXPECT_DOUBLE_EQ(bytes, 400.0 * 131072);                       // every completed request in one bin
  EXPECT_EQ(r["slc"]["slc_programs"].get<int64_t>(), 400 * 8);   // 128 KiB = 8 pages of 16 KiB, all into the cache
  EXPECT_FALSE(k["bitline"]["runs"][0].contains("throughput"));  // only when asked
  EXPECT_TRUE(k["bitline"]["runs"][0].contains("slc"));
  EXPECT_EQ(j["jobs"], k["jobs"]);  // the bins change nothing else
}

TEST_F(SsdFioCli, WritesLogsBesideTheJson) {
  const std::string job = write("job.fio", "[w]\nrw=write\nbs=4k\nnumber_ios=3\nwrite_bw_log=x\nwrite_lat_log=x\n");
  fs::create_directories(dir_ / "out");
  const std::string out = (dir_ / "out" / "r.json").string();
  ASSERT_EQ(fio(job, "--json " + test::shell_quote(out)).rc, 0);
  for (const char* name : {"x_bw.1.log", "x_lat.1.log", "x_clat.1.log", "x_slat.1.log"}) {
    ASSERT_TRUE(fs::exists(dir_ / "out" / name)) << name;
    std::ifstream in(dir_ / "out" / name);
    EXPECT_EQ(log_lines(std::string(std::istreambuf_iterator<char>(in), {})).size(), 3u) << name;
  }
  EXPECT_FALSE(fs::exists(dir_ / "out" / "x_iops.1.log"));
  // a log that would overwrite an input (here the job file itself) is refused before the run
  const std::string clash = write("x_bw.1.log", "[w]\nrw=write\nbs=4k\nnumber_ios=3\nwrite_bw_log=x\n");
  const test::CliRun r = fio(clash, "--json " + test::shell_quote((dir_ / "r2.json").string()));
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_TRUE(has(r.out, "x_bw.1.log")) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "r2.json"));
}

TEST_F(SsdFioCli, RefusalsExitTwoNamingFileLineAndOption) {
  expect_refused("[j]\nrw=randread\nrate=100m\n", {"job.fio:3:", "'rate'", "not modelled"});
  expect_refused("[j]\niodepht=4\n", {"job.fio:2:", "'iodepht'", "did you mean 'iodepth'"});
  expect_refused("[j]\nbs=4k\nsize=1p\n", {"job.fio:3:", "size=", "logical space"});
  expect_refused("[j]\nbs=3000\n", {"job.fio:2:", "multiple of 512"});
  expect_refused("[j\n", {"job.fio:1:"});
  // more I/O than the work budget: refused before it runs, naming the line that asks it
  expect_refused("[j]\nrw=randread\nbs=4k\nnumber_ios=100000000\n", {"job.fio:4 number_ios=100000000", "budget"});
  expect_refused("[j]\nrw=randread\nbs=4k\niodepth=32\ntime_based\nruntime=1h\n", {"job.fio:6 runtime=1h", "budget"});
  expect_refused("[j]\nnumber_ios=1000\n", {"--max-transactions"}, "--max-transactions 10");
  // a later group over the budget stops the file before the first group runs
  expect_refused("[a]\nnumber_ios=100\n[b]\nstonewall\nnumber_ios=100000000\n", {"group 2", "job.fio:5 number_ios"});
  expect_refused("[j]\nnumber_ios=10\n", {"--occupancy"}, "--occupancy 101");
  // an unaveraged log longer than 2^22 lines, before it runs
  expect_refused("[j]\nrw=randread\nbs=4k\nwrite_bw_log=x\nnumber_ios=5000000\n", {"job.fio:4:", "write_bw_log", "2^22"});
}

}  // namespace
}  // namespace bitline::ssd
