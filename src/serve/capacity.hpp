// The capacity experiment (`bitline serve capacity`, docs/serving.md "Capacity"): the highest open-loop arrival rate
// whose p90 TTFT and p99 TPOT meet their SLOs, each probe a simulation of the same requests at a rate.
#pragma once

#include <functional>
#include <vector>

#include "serve/simulator.hpp"

namespace bitline::serve {

/// The SLOs and the search's start and precision.
struct CapacityQuery {
  double p90_ttft_ms = 0, p99_tpot_ms = 0;
  double rate_lo = 0.1;     // the first rate probed, requests/s
  double tolerance = 0.02;  // stop when the bracket is this narrow, relative
};

/// One probe: a simulation at `rate` and what it met.
struct CapacityProbe {
  double rate = 0, p90_ttft_ms = 0, p99_tpot_ms = 0, output_tokens_per_s = 0;
  bool meets = false;
};

struct CapacityResult {
  double capacity = 0, first_miss = 0;  // the highest rate that met, and the probe above it that missed
  std::vector<CapacityProbe> probes;    // in the order they ran
};

/// Finds the capacity of `c` for `requests` (their lengths; arrivals come from `at_rate`, the caller's arrival process
/// at a rate). The two ends are simulated first: one request at a time (no rate does better: if it misses, ModelError,
/// no rate meets) and all at once (no rate does worse: if it meets, ConfigError, there is no capacity to find); then
/// from rate_lo the rate is doubled until a probe misses (or halved until one meets) and the bracket narrowed
/// geometrically to the tolerance. `on_probe` sees each probe as it is run.
CapacityResult find_capacity(const Cluster& c, const ServeParams& p, const std::vector<Request>& requests,
                             const std::function<Workload(double)>& at_rate, const CapacityQuery& q,
                             const std::function<void(const CapacityProbe&)>& on_probe = {});

}  // namespace bitline::serve
