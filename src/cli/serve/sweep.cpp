// `bitline serve sweep`: one open-loop run per arrival rate: the throughput-latency curve and latency CDFs -> --json,
// --csv; the rates over the MPI ranks and each rank's threads (same bytes whatever their counts).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "cli/serve/common.hpp"
#include "core/distributed.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "serve/report.hpp"

namespace bitline::cli::serve_cli {
namespace {

/// --rates R1,R2,...: finite rates above 0 requests/s, in increasing order, at most kMaxSweepPoints.
std::vector<double> sweep_rates(const std::string& text) {
  std::vector<double> rates;
  for (const std::string& item : split_list(text, ',', "--rates")) {
    double r = 0;
    if (!parse_decimal_number(item, r) || !(r > 0))
      throw ConfigError(
          fmt::format("--rates: '{}' (rate {}): need a finite rate above 0 requests/s, in decimal", text_brief(item), rates.size() + 1));
    if (!rates.empty() && !(r > rates.back()))
      throw ConfigError(fmt::format("--rates: {} after {}: give the rates in increasing order", item, rates.back()));
    rates.push_back(r);
    if (rates.size() > kMaxSweepPoints) throw ConfigError(fmt::format("--rates: more than {} rates in one sweep", kMaxSweepPoints));
  }
  return rates;
}

void sweep_serve(const accel::KindOptions& k, const ServeOpts& o) {
  const std::vector<double> rates = sweep_rates(o.rates);
  // The simulations run at once (one per thread) hold their requests together: their memory is bounded as one's.
  const int64_t at_once = std::min<int64_t>(int64_t(rates.size()), o.threads);
  if (o.requests > 0 && at_once * o.requests > kMaxRequests)
    throw ConfigError(
        fmt::format("serve sweep: {} simulations at once (min of --threads {} and {} rates) x --requests {} = {} requests in memory, "
                    "more than the {} one process may hold (~330 B each); use fewer --threads or --requests",
                    at_once, o.threads, rates.size(), o.requests, at_once * o.requests, kMaxRequests));
  const Distributed& world = Distributed::world();  // under mpirun only rank 0 prints and writes
  // The setup, agreed by every MPI rank: one rank's error (an output only it cannot write) ends them all.
  world.agreed([&] {
    if (!o.json.empty()) check_json_output(o.json);
    if (!o.csv.empty()) check_json_output(o.csv, "--csv");
    check_distinct_files({{"--json", o.json}, {"--csv", o.csv}}, {{"--lengths", o.lengths}});
  });
  const std::vector<Request> lengths = world.agreed([&] {
    std::vector<Request> l = request_lengths(o);
    check_decode_work(l, rates.size(), "serve sweep");
    return l;
  });
  const auto s = world.agreed([&] {
    auto setup = make_setup(k, o, Workload{lengths});
    check_distinct_files({{"--json", o.json}, {"--csv", o.csv}}, input_files(o, *setup));
    return setup;
  });
  const Slo slo{o.slo_ttft_ms, o.slo_tpot_ms};
  fmt::print("{} on {}x{} ({}), scheduler {}: {} rates, {} requests each\n", s->model.name, s->sn.kind, s->sn.gpus,
             s->server->deployment().describe(), s->sp.scheduler.name(), rates.size(), o.requests);
  std::fflush(stdout);
  // The rates over the MPI ranks (one process without mpirun), each rank on its worker pool; each job has its own
  // servers (no state shared between threads).
  const auto texts = world.map(
      rates.size(),
      [&](size_t i) {
        const auto si = make_setup(k, o, Workload{lengths}, true);
        const SimResult r = simulate(cluster(*si), si->sp, at_rate(o, lengths, rates[i]));
        return Json{{"rate_per_s", rates[i]}, {"summary", summary(r, slo)}, {"cdf", cdf(r)}}.dump();
      },
      o.threads,
      [&](size_t done, size_t n, size_t i) {
        if (!o.quiet) print_progress(done, n, fmt::format("rate {:g}/s", rates[i]));
      });
  if (!world.root()) return;
  Json points = Json::array();
  Json rows = Json::array();  // the CSV: one row per rate
  for (size_t i = 0; i < texts.size(); ++i) {
    const Json p = Json::parse(texts[i]);
    const Json& sum = p["summary"];
    const auto at = [&](const char* m, const char* q) { return sum[m][q].get<double>(); };
    fmt::print(
        "  [{}/{}] rate {:>9.4f}/s: {:>9.1f} output tokens/s, TTFT p50 {:>9.2f} p99 {:>10.2f} ms, TPOT p50 {:>7.2f} p99 {:>8.2f} ms, "
        "goodput {:.3f}/s\n",
        i + 1, texts.size(), rates[i], sum["output_tokens_per_s"].get<double>(), at("ttft_ms", "p50"), at("ttft_ms", "p99"),
        at("tpot_ms", "p50"), at("tpot_ms", "p99"), sum["goodput_requests_per_s"].get<double>());
    rows.push_back({{"rate_per_s", rates[i]},
                    {"requests_per_s", sum["requests_per_s"]},
                    {"output_tokens_per_s", sum["output_tokens_per_s"]},
                    {"total_tokens_per_s", sum["total_tokens_per_s"]},
                    {"goodput_requests_per_s", sum["goodput_requests_per_s"]},
                    {"slo_attainment", sum["slo_attainment"]},
                    {"ttft_ms", sum["ttft_ms"]},
                    {"tpot_ms", sum["tpot_ms"]},
                    {"itl_ms", sum["itl_ms"]},
                    {"e2e_ms", sum["e2e_ms"]},
                    {"preemptions", sum["preemptions"]}});
    points.push_back(p);
  }
  if (!o.json.empty()) {
    Json j = header(*s, o);
    j["workload"].erase("rate_per_s");
    j["slo"] = {{"ttft_ms", o.slo_ttft_ms > 0 ? Json(o.slo_ttft_ms) : Json(nullptr)},
                {"tpot_ms", o.slo_tpot_ms > 0 ? Json(o.slo_tpot_ms) : Json(nullptr)}};
    j["points"] = points;
    j["config"] = s->config;
    write_json_file(o.json, j);
    fmt::print("wrote {} ({} rank(s) x {} thread(s))\n", o.json, world.size(), o.threads);
  }
  if (!o.csv.empty()) {
    // The columns in the order a reader of vLLM's benchmark_serving looks for them: the rate, the throughputs, then the
    // latency distributions.
    write_csv_file(o.csv, rows,
                   {"rate_per_s", "requests_per_s", "output_tokens_per_s", "total_tokens_per_s", "goodput_requests_per_s", "slo_attainment",
                    "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"});
    fmt::print("wrote {}\n", o.csv);
  }
}

}  // namespace

void add_sweep(CLI::App& serve) {
  auto* cmd = serve.add_subcommand("sweep", "one open-loop run per arrival rate: throughput-latency curve, latency CDFs, goodput");
  auto k = std::make_shared<accel::KindOptions>();
  auto o = std::make_shared<ServeOpts>();
  k->add_to(*cmd);
  add_common(*cmd, *o);
  cmd->add_option("--rates", o->rates, "arrival rates, requests/s, increasing: R1,R2,...")->required();
  cmd->add_option("--slo-ttft-ms", o->slo_ttft_ms, "goodput: time-to-first-token SLO, ms")->check(finite_range(1e-6, 3.6e6, "ms"));
  cmd->add_option("--slo-tpot-ms", o->slo_tpot_ms, "goodput: time-per-output-token SLO, ms")->check(finite_range(1e-6, 3.6e6, "ms"));
  cmd->add_option("--csv", o->csv, "write one row per rate (throughput, goodput, latency percentiles) to this CSV file");
  cmd->add_option("--threads", o->threads, "worker threads (rates run in parallel; same bytes whatever the count)")
      ->check(whole_range(1, 256, "threads"))
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  cmd->callback([k, o] { sweep_serve(*k, *o); });
}

}  // namespace bitline::cli::serve_cli
