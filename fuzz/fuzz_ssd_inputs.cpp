// libFuzzer harness: the general SSD's readers of MQSim's inputs (device XML,
// workload XML, ASCII trace).
//
// Input: up to three parts, separated by a line "--workload" and a line
// "--trace":
//
//   <Execution_Parameter_Set> ... </Execution_Parameter_Set>     (device file)
//   --workload
//   <MQSim_IO_Scenarios> ... </MQSim_IO_Scenarios>               (workload file)
//   --trace
//   2259 0 132572352 64 0                                        (trace file)
//
// The device part goes through parse_device_xml, the workload part through
// parse_workload_xml (a trace-based flow's File_Path is resolved against the
// scratch folder; a file that is not there is a documented error), then
// check_workload when both read; the trace part through TraceReader (count(),
// then every record), the CLI's path for Trace_Based flows. Every record that
// reads must have a non-negative arrival, LBA and device and a positive size.
// The simulation itself is not run (its length is the workload's simulated
// time, bounded by the reader's own caps and tested in tests/ssd).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "harness.hpp"
#include "ssd/mqsim_xml.hpp"

namespace {

using namespace bitline;

struct Parts {
  std::string_view device, workload, trace;
  bool has_workload = false, has_trace = false;
};

Parts split(std::string_view in) {
  Parts p;
  constexpr std::string_view kWorkload = "\n--workload\n", kTrace = "\n--trace\n";
  const size_t w = in.find(kWorkload);
  const size_t t = in.find(kTrace);
  p.device = in.substr(0, std::min(w, t));
  if (w != std::string_view::npos && (t == std::string_view::npos || w < t)) {
    p.has_workload = true;
    const size_t begin = w + kWorkload.size();
    p.workload = in.substr(begin, t == std::string_view::npos ? std::string_view::npos : t - begin);
  }
  if (t != std::string_view::npos) {
    p.has_trace = true;
    p.trace = in.substr(t + kTrace.size());
  }
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::ScratchFile scratch(".trace");
  const Parts p = split(std::string_view(reinterpret_cast<const char*>(data), size));
  const auto& trace_path = scratch.write(reinterpret_cast<const uint8_t*>(p.trace.data()), p.trace.size());

  ssd::DeviceXml device;
  bool device_ok = false;
  fuzz::expect_documented_errors([&] {
    device = ssd::parse_device_xml(std::string(p.device), "device.xml");
    device_ok = true;
  });
  if (p.has_workload) {
    fuzz::expect_documented_errors([&] {
      const ssd::WorkloadXml w = ssd::parse_workload_xml(std::string(p.workload), "workload.xml", trace_path.parent_path().string());
      if (device_ok) ssd::check_workload(w, device);
    });
  }
  if (p.has_trace) {
    fuzz::expect_documented_errors([&] {
      ssd::TraceReader reader(trace_path.string());
      const int64_t n = reader.count();
      reader.rewind();
      ssd::TraceRecord r;
      int64_t seen = 0;
      while (reader.next(r)) {
        if (r.arrival_raw < 0 || r.lba < 0 || r.device < 0 || r.sectors <= 0)
          fuzz::property_failed("a trace record read with a negative field or an empty size");
        ++seen;
      }
      if (seen != n) fuzz::property_failed("TraceReader::count() differs from the records read");
    });
  }
  scratch.remove();
  return 0;
}
