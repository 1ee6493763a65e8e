// The general SSD (bitline ssd run): host flows (synthetic or trace) over NVMe
// submission queues and a PCIe link, a DRAM write cache, a cached mapping
// table (MQSim's CMT), the page-level FTL (ftl.hpp) with garbage collection,
// and a transaction scheduler per die that batches multi-plane reads and
// programs and shares each channel bus. One EventHeap drives everything; the
// results are MQSim's per-flow metrics as JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ssd/mqsim_xml.hpp"

namespace bitline::ssd {

struct RunOptions {
  /// Called now and then with (simulated seconds so far, requests completed); may print progress.
  std::function<void(double, int64_t)> progress;
};

/// Simulates one scenario of a workload on the device; returns its results (per flow and device-wide).
nlohmann::json simulate_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt = {});

/// Simulates every scenario of the workload: {"device": file, "workload": file, "scenarios": [...]}.
nlohmann::json simulate_workload(const DeviceXml& device, const WorkloadXml& workload, const RunOptions& opt = {});

}  // namespace bitline::ssd
