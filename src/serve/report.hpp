// What a serving simulation reports: latency percentiles (TTFT, TPOT, ITL, E2E, queueing), throughput, goodput
// under SLOs, the token accounting, and one record per request (JSON lines or CSV). Percentiles interpolate linearly
// between order statistics (numpy's default, as vLLM's benchmark_serving computes them). See docs/serving.md,
// "Outputs".
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "serve/simulator.hpp"

namespace bitline::serve {

/// The q-quantile (0..1) of `v` (sorted in place), linear between order statistics; 0 for an empty list.
double percentile(std::vector<double>& v, double q);
/// {"mean", "std", "min", "max", "p50", "p90", "p95", "p99", "p99_9", "count"} of `v` (in the unit given), and the
/// percentiles `extra` (0 < p < 100) under keys "p" + p with '_' for the decimal point (99.9: "p99_9", 25: "p25").
Json distribution(std::vector<double> v, const std::vector<double>& extra = {});

/// The same of values given as (value, count) runs.
Json distribution(std::vector<std::pair<double, int64_t>> v, const std::vector<double>& extra = {});

/// The key of percentile `p` (0 < p < 100): "p50", "p99_9".
std::string percentile_key(double p);

/// SLOs of goodput: a request meets them when its TTFT and its TPOT are within them (0: no SLO on that metric).
struct Slo {
  double ttft_ms = 0, tpot_ms = 0;
};

/// The summary: ttft_ms, tpot_ms (requests of more than one output token), itl_ms (every gap between two tokens of a
/// request), e2e_ms, queueing_ms, each {mean, p50, p90, p95, p99}; output_tokens_per_s, requests_per_s,
/// goodput_requests_per_s, slo_attainment, mean_requests_in_system, and the accounting.
/// `percentiles`: more percentiles of each latency (benchmark_serving's --metric-percentiles), as distribution's extra.
Json summary(const SimResult& r, const Slo& slo, const std::vector<double>& percentiles = {});

/// The empirical CDFs of ttft_ms, tpot_ms and e2e_ms: each the 101 quantiles at 0, 1, ..., 100% (same
/// interpolation as the percentiles), for plots of latency CDFs (scripts/plot_serve.py).
Json cdf(const SimResult& r);

/// One line per request: id, arrival_s, queueing_ms, ttft_ms, tpot_ms, itl_mean_ms, itl_max_ms, e2e_ms, input_tokens,
/// output_tokens, preemptions. ".csv" writes CSV with a header, anything else JSON lines. OutputError when the file
/// cannot be written.
void write_requests(const std::filesystem::path& file, const SimResult& r);

/// The iterations (SimResult::passes) as a Chrome trace (Trace Event Format, readable by Perfetto and
/// chrome://tracing): one complete event per pass on the engine's track, named prefill, decode or mixed, with its
/// requests and prompt tokens; and a counter of the requests in each pass. Timestamps in microseconds.
void write_chrome_trace(const std::filesystem::path& file, const SimResult& r);

}  // namespace bitline::serve
