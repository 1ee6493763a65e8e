// What a fio job file's runs report: fio's JSON, its log files and its human-readable summary (fio's own shapes), from
// the plan (ssd/fio.hpp) and the device's runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ssd/fio.hpp"

namespace bitline::ssd::fio {

/// fio's log files of the plan, in order: per job (clone by clone) PREFIX_bw.N.log, PREFIX_iops.N.log,
/// PREFIX_lat.N.log, PREFIX_clat.N.log, PREFIX_slat.N.log for the logs it asks for, N the clone's number in the file
/// (1-based, every job's clones numbered in file order, as fio's thread numbers). Names as the prefixes give them
/// (the caller places relative ones).
std::vector<std::string> log_names(const Plan& plan);

/// The logs' text (fio's HOWTO, "Log File Formats"), one per log_names entry in its order. Each line is `time (ms),
/// value, data direction (0 read, 1 write), block size (bytes), offset (bytes)`. Without log_avg_msec a line per I/O
/// at its completion: bw in KiB/s (its bytes over its latency), iops 1, lat/clat/slat in ns, its size and offset.
/// With log_avg_msec=N a line per N ms window (time its end) and direction: bw the window's bytes / N ms in KiB/s,
/// iops its I/Os / N ms per second (a line each window for each direction the job does, 0 when idle), lat/clat/slat
/// the mean of the window's I/Os in ns (windows with I/Os), block size and offset 0; a run's last window is divided
/// by the whole N ms too, so sum(bw x N ms) is the bytes. Integer values, rounded down, as fio writes them.
std::vector<std::string> log_texts(const Plan& plan, const std::vector<ScenarioRun>& runs);

/// The runs' results in fio's JSON shape, its keys in fio's order (an ordered_json): {"fio version", "global options", "jobs": [{"jobname",
/// "groupid", "error", "job options", "read", "write", "trim", "job_runtime"}], "bitline": {...}}; with group_reporting, consecutive jobs
/// of a reporting group (and their clones) are one entry, as fio merges them. `runs`: one per Plan::runs.
nlohmann::ordered_json fio_json(const Plan& plan, const std::vector<ScenarioRun>& runs);

/// fio's human-readable summary, shortened: per entry its IOPS, bandwidth, latencies and percentiles.
std::string summary(const nlohmann::ordered_json& fio_result);

}  // namespace bitline::ssd::fio
