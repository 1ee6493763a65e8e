#include "serve/capacity.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/search.hpp"
#include "serve/report.hpp"

namespace bitline::serve {

namespace {

/// p90 TTFT and p99 TPOT of a run, ms.
std::pair<double, double> tail_latencies(const SimResult& r) {
  const Json sum = summary(r, Slo{});
  return {sum["ttft_ms"]["p90"].get<double>(), sum["tpot_ms"]["p99"].get<double>()};
}

/// The two ends: one request at a time (if it misses, no rate meets) and all at once (if it meets, every rate does).
void check_ends(const Cluster& c, const ServeParams& p, const std::vector<Request>& requests, const CapacityQuery& q) {
  Workload alone{requests};
  alone.concurrency = 1;
  const auto [ttft, tpot] = tail_latencies(simulate(c, p, std::move(alone)));
  if (ttft > q.p90_ttft_ms || tpot > q.p99_tpot_ms)
    throw ModelError(
        fmt::format("serve capacity: no arrival rate meets the SLOs: even one request at a time, with no queueing, has p90 TTFT {:.4g} ms "
                    "(--slo-p90-ttft-ms {:g}) and p99 TPOT {:.4g} ms (--slo-p99-tpot-ms {:g}), and a higher rate can only add to them",
                    ttft, q.p90_ttft_ms, tpot, q.p99_tpot_ms));
  const auto [burst_ttft, burst_tpot] = tail_latencies(simulate(c, p, Workload{requests}));  // every arrival at 0
  if (burst_ttft <= q.p90_ttft_ms && burst_tpot <= q.p99_tpot_ms)
    throw ConfigError(
        fmt::format("serve capacity: every rate meets the SLOs: the --requests {} arriving all at once are served with p90 TTFT "
                    "{:.4g} ms and p99 TPOT {:.4g} ms, within {:g} and {:g} ms, so they have no capacity to find; give more "
                    "--requests or tighter SLOs",
                    requests.size(), burst_ttft, burst_tpot, q.p90_ttft_ms, q.p99_tpot_ms));
}

}  // namespace

CapacityResult find_capacity(const Cluster& c, const ServeParams& p, const std::vector<Request>& requests,
                             const std::function<Workload(double)>& at_rate, const CapacityQuery& q,
                             const std::function<void(const CapacityProbe&)>& on_probe) {
  check_ends(c, p, requests, q);
  CapacityResult out;
  const auto probe = [&](double rate) {
    const SimResult r = simulate(c, p, at_rate(rate));
    const Json sum = summary(r, Slo{});
    CapacityProbe pr{rate, sum["ttft_ms"]["p90"].get<double>(), sum["tpot_ms"]["p99"].get<double>(),
                     sum["output_tokens_per_s"].get<double>()};
    pr.meets = pr.p90_ttft_ms <= q.p90_ttft_ms && pr.p99_tpot_ms <= q.p99_tpot_ms;
    if (on_probe) on_probe(pr);
    out.probes.push_back(pr);
    return pr.meets;
  };
  // Bracket: double until a rate misses (at most 40 doublings), or halve until one meets (at most 30 halvings).
  double lo = q.rate_lo, hi = 0;
  if (!probe(lo)) {
    bool found = false;
    for (int i = 0; i < 30 && !found; ++i) {
      hi = lo;
      lo /= 2;
      try {
        found = probe(lo);
      } catch (const ConfigError&) {  // the requests would arrive over more time than a simulation spans
        break;
      }
    }
    if (!found)
      throw ModelError(fmt::format(
          "serve capacity: no rate down to {:.4g}/s meets the SLOs, though one request at a time does: the --requests {} overlap "
          "at every rate a run can spread them over; give fewer --requests or looser SLOs",
          hi, requests.size()));
  }
  if (hi <= lo) {
    hi = lo * 2;
    bool missed = false;
    for (int i = 0; i < 40 && !missed; ++i) {
      if (probe(hi))
        lo = hi, hi *= 2;
      else
        missed = true;
    }
    // Every rate met the SLOs: the last probe that met is not a bound, and the next one was never run.
    if (!missed)
      throw ConfigError(fmt::format(
          "serve capacity: every probe up to {:.4g} requests/s meets the SLOs: the --requests {} arrive as one burst that the system "
          "serves within p90 TTFT {:g} ms and p99 TPOT {:g} ms, so they have no capacity to find; give more --requests or tighter "
          "SLOs",
          lo, requests.size(), q.p90_ttft_ms, q.p99_tpot_ms));
  }
  std::tie(out.capacity, out.first_miss) = geometric_edge(lo, hi, q.tolerance, probe);
  return out;
}

}  // namespace bitline::serve
