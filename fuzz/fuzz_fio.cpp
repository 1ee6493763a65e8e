// libFuzzer harness: fio's job files (bitline ssd fio, src/ssd/fio.*).
//
// Input: the text of a job file. It goes through parse_job_file, resolve_jobs and plan_jobs on MQSim's default
// device (its declared defaults), the CLI's path up to the simulation; the estimate of each group's work is taken too
// (estimate_scenario: the engine's construction and the budget check). The simulation itself is not run: its length is
// the job's I/O, which the budget bounds and tests/ssd/test_fio.cpp covers. Properties of a plan that reads: every flow
// has a block size of whole sectors, a range within its share of the device and an end (a request count or a stop
// time), and no run has more than kMaxFlowsPerGroup flows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "harness.hpp"
#include "ssd/device.hpp"
#include "ssd/fio.hpp"

using namespace bitline;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ssd::DeviceXml device;  // MQSim's defaults
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_documented_errors([&] {
    const ssd::fio::JobFile f = ssd::fio::parse_job_file(text, "job.fio");
    const std::vector<ssd::fio::Job> jobs = ssd::fio::resolve_jobs(f);
    const ssd::fio::Plan plan = ssd::fio::plan_jobs(f, jobs, device, 0.0);
    for (const auto& run : plan.runs) {
      const int64_t n = int64_t(run.scenario.flows.size());
      if (n < 1 || n > ssd::fio::kMaxFlowsPerGroup) fuzz::property_failed("a run with no flow or more than kMaxFlowsPerGroup");
      const int64_t share = device.logical_pages() * device.sectors_per_page() / n;
      for (const auto& x : run.scenario.flows) {
        if (x.avg_size < 1 || x.alignment_unit != x.avg_size) fuzz::property_failed("a flow's request size is not whole sectors");
        if (x.range_offset < 0 || x.range_sectors < x.avg_size || x.range_offset + x.range_sectors > share)
          fuzz::property_failed("a flow's range is outside its share of the device");
        if (x.total_requests <= 0 && x.stop_time.raw() <= 0) fuzz::property_failed("a flow without an end");
      }
      ssd::RunOptions opt;
      opt.io_stats = true;
      (void)ssd::estimate_scenario(device, run.scenario, opt, "group");
    }
  });
  return 0;
}
