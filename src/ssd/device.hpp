// The general SSD (bitline ssd run): host flows (synthetic or trace) over NVMe
// submission queues and a PCIe link, a DRAM write cache, a cached mapping
// table (MQSim's CMT), the page-level FTL (ftl.hpp) with garbage collection,
// and a transaction scheduler per die that batches multi-plane reads and
// programs and shares each channel bus. One EventHeap drives everything; the
// results are MQSim's per-flow metrics as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nand/params.hpp"
#include "ssd/compute_jobs.hpp"
#include "ssd/io_stats.hpp"
#include "ssd/mqsim_xml.hpp"
#include "ssd/params.hpp"
#include "ssd/run_options.hpp"

namespace bitline::ssd {

/// Simulates one scenario of a workload on the device; returns its results (per flow and device-wide).
/// ConfigError, before it runs, when its estimated work is above opt.max_transactions (`label` names it).
nlohmann::json simulate_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt = {},
                                 const std::string& label = "scenario");

/// A scenario's result and, with RunOptions::io_stats, each flow's I/O as fio counts it (ssd/io_stats.hpp).
struct ScenarioRun {
  nlohmann::json result;
  std::vector<FlowIoStats> flows;
};
/// simulate_scenario, returning the flows' FlowIoStats too.
ScenarioRun run_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt = {},
                         const std::string& label = "scenario");
/// The scenario's estimated work (WorkEstimate), without running it; the same ConfigError as simulate_scenario when it
/// is above opt.max_transactions, and on whatever the device and scenario refuse.
WorkEstimate estimate_scenario(const DeviceXml& device, const ScenarioXml& scenario, const RunOptions& opt = {},
                               const std::string& label = "scenario");

/// Simulates every scenario of the workload: {"device": file, "workload": file, "scenarios": [...]}.
nlohmann::json simulate_workload(const DeviceXml& device, const WorkloadXml& workload, const RunOptions& opt = {});

// ---- Flash-Cosmos jobs on the general device --------------------------------------------------------------
// The die jobs of a Flash-Cosmos read or a sequential write (the JobSpec that the Flash-Cosmos firmware makes,
// ssd/compute_jobs.hpp, docs/cosmos.md) run as transactions of this device: a job's steps, cut where a page leaves
// the die, are operations of its die (their die time on the job's active planes at once), queued with the device's
// other transactions and scheduled by the same transaction scheduler; the stage's rules are compute_jobs.hpp's.
// The firmware keeps kComputeAhead segments of a die queued; a die that only reads takes its next segment when it is
// free instead (the same order and times, no queue work: ComputeJobState::DieCursor::pull).

/// Runs the jobs of `spec` on the device. The spec's dies are the device's dies in order (channel-major);
/// ModelError when they differ, a route needs a rate `rates` lacks, or a die never finishes its jobs.
ComputeResult run_compute(const JobSpec& spec, const DeviceXml& device, const SsdModelOptions& model = {}, const ComputeRates& rates = {});

/// The model options of a scheduling choice (MQSim's defaults for the rest).
SsdModelOptions model_options(DeviceScheduling s);

/// The Flash-Cosmos SSD as a general device: its channels, dies (one die per chip), planes, blocks, pages and page
/// size, the channel's rate (1 byte wide at channel_rate) and the PCIe link's effective rate. What a read's
/// timing needs; caching, mapping and GC keep MQSim's defaults (an in-flash read uses none of them).
DeviceXml device_of(const SsdParams& ssd, const nand::NandParams& nand);

}  // namespace bitline::ssd
