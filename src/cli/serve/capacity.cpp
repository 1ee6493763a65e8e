// `bitline serve capacity`: the highest arrival rate whose p90 TTFT and p99 TPOT meet their SLOs (the search is
// serve::find_capacity, src/serve/capacity.hpp; this file reads the options and prints and writes the result).
#include <fmt/format.h>

#include <cstdio>

#include "cli/serve/common.hpp"
#include "core/error.hpp"
#include "serve/capacity.hpp"

namespace bitline::cli::serve_cli {
namespace {

void capacity_serve(const accel::KindOptions& k, ServeOpts o) {
  check_mode(o, true);
  if (!o.percentiles.empty())
    throw ConfigError("--percentiles: serve capacity reports the rate it finds; the percentiles are serve run's and serve sweep's");
  if (!o.json.empty()) check_json_output(o.json);
  if (!(o.p90_ttft_ms > 0) || !(o.p99_tpot_ms > 0)) throw ConfigError("serve capacity: give --slo-p90-ttft-ms and --slo-p99-tpot-ms");
  const std::vector<Request> lengths = request_lengths(o);
  check_decode_work(lengths, 1, "serve capacity (per probe)");
  const auto s = make_setup(k, o, Workload{lengths});
  check_distinct_files({{"--json", o.json}}, input_files(o, *s));
  fmt::print("{} on {}: the highest rate with p90 TTFT <= {:g} ms and p99 TPOT <= {:g} ms ({} requests per probe)\n", s->model.name,
             s->sn.label, o.p90_ttft_ms, o.p99_tpot_ms, o.requests);
  const CapacityQuery q{o.p90_ttft_ms, o.p99_tpot_ms, o.rate_lo > 0 ? o.rate_lo : 0.1, o.tolerance};
  const CapacityResult r = find_capacity(
      cluster(*s), s->sp, lengths, [&](double rate) { return at_rate(o, lengths, rate); }, q,
      [](const CapacityProbe& p) {
        fmt::print("  rate {:>10.4f}/s: p90 TTFT {:>10.2f} ms, p99 TPOT {:>8.2f} ms, {:>10.1f} output tokens/s -> {}\n", p.rate,
                   p.p90_ttft_ms, p.p99_tpot_ms, p.output_tokens_per_s, p.meets ? "meets" : "misses");
        std::fflush(stdout);
      });
  fmt::print("  capacity {:.4f} requests/s (the next probe, {:.4f}/s, misses)\n", r.capacity, r.first_miss);
  if (o.json.empty()) return;
  Json j = header(*s, o);
  j["workload"].erase("rate_per_s");
  j["slo"] = {{"p90_ttft_ms", o.p90_ttft_ms}, {"p99_tpot_ms", o.p99_tpot_ms}};
  j["capacity_requests_per_s"] = r.capacity;
  j["first_miss_requests_per_s"] = r.first_miss;
  Json ps = Json::array();
  for (const auto& p : r.probes)
    ps.push_back({{"rate_per_s", p.rate},
                  {"p90_ttft_ms", p.p90_ttft_ms},
                  {"p99_tpot_ms", p.p99_tpot_ms},
                  {"output_tokens_per_s", p.output_tokens_per_s},
                  {"meets", p.meets}});
  j["probes"] = ps;
  j["config"] = s->config;
  write_json_file(o.json, j);
  fmt::print("wrote {}\n", o.json);
}

}  // namespace

void add_capacity(CLI::App& serve) {
  auto* cmd = serve.add_subcommand("capacity", "the highest arrival rate whose p90 TTFT and p99 TPOT meet their SLOs");
  auto k = std::make_shared<accel::KindOptions>();
  auto o = std::make_shared<ServeOpts>();
  k->add_to(*cmd);
  add_common(*cmd, *o);
  cmd->add_option("--slo-p90-ttft-ms", o->p90_ttft_ms, "SLO on the 90th percentile of TTFT, ms")
      ->check(finite_range(1e-6, 3.6e6, "ms"))
      ->default_val(2000);
  cmd->add_option("--slo-p99-tpot-ms", o->p99_tpot_ms, "SLO on the 99th percentile of TPOT, ms")
      ->check(finite_range(1e-6, 3.6e6, "ms"))
      ->default_val(100);
  cmd->add_option("--rate-lo", o->rate_lo, "first rate probed, requests/s (default 0.1)")->check(finite_range(1e-6, 1e6, "requests/s"));
  cmd->add_option("--tolerance", o->tolerance, "stop when the bracket is this narrow, relative")->check(finite_range(1e-4, 0.5, ""));
  cmd->callback([k, o] { capacity_serve(*k, *o); });
}

}  // namespace bitline::cli::serve_cli
