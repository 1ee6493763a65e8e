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

/// --concurrency C1,C2,...: users of a closed loop, whole numbers in decimal, increasing, at most --requests each.
std::vector<int64_t> sweep_concurrencies(const std::string& text, int64_t requests) {
  std::vector<int64_t> users;
  for (const std::string& item : split_list(text, ',', "--concurrency")) {
    int64_t c = 0;
    if (!parse_decimal_integer(item, c) || c < 1 || c > requests)
      throw ConfigError(fmt::format("--concurrency: '{}' (level {}): need a whole number of users from 1 to --requests {}, in decimal",
                                    text_brief(item), users.size() + 1, requests));
    if (!users.empty() && c <= users.back())
      throw ConfigError(fmt::format("--concurrency: {} after {}: give the levels in increasing order", item, users.back()));
    users.push_back(c);
    if (users.size() > kMaxSweepPoints) throw ConfigError(fmt::format("--concurrency: more than {} levels in one sweep", kMaxSweepPoints));
  }
  return users;
}

/// One point of a sweep: an open loop at a rate, or a closed loop of so many users.
struct SweepPoint {
  double rate = 0;
  int64_t users = 0;  // > 0: a closed loop
  std::string label() const { return users > 0 ? fmt::format("{} users", users) : fmt::format("rate {:g}/s", rate); }
};

void sweep_serve(const accel::KindOptions& k, const ServeOpts& o, const RunContext& ctx) {
  if (o.rates.empty() == o.concurrencies.empty())
    throw ConfigError("serve sweep: give one of --rates R1,R2,... (open loops) and --concurrency C1,C2,... (closed loops)");
  if (o.max_concurrency > 0 && !o.concurrencies.empty())
    throw ConfigError("--max-concurrency: caps the open loops of --rates; a closed loop's --concurrency is its own cap");
  std::vector<SweepPoint> loads;  // one run each
  if (!o.rates.empty())
    for (double r : sweep_rates(o.rates)) loads.push_back({r, 0});
  else
    for (int64_t c : sweep_concurrencies(o.concurrencies, o.requests)) loads.push_back({0, c});
  // The simulations run at once (one per thread) hold their requests together: their memory is bounded as one's.
  const int64_t at_once = std::min<int64_t>(int64_t(loads.size()), o.threads);
  if (o.requests > 0 && at_once * o.requests > kMaxRequests)
    throw ConfigError(
        fmt::format("serve sweep: {} simulations at once (min of --threads {} and {} rates) x --requests {} = {} requests in memory, "
                    "more than the {} one process may hold (~330 B each); use fewer --threads or --requests",
                    at_once, o.threads, loads.size(), o.requests, at_once * o.requests, kMaxRequests));
  const Distributed& world = Distributed::world();  // under mpirun only rank 0 prints and writes
  // The setup, agreed by every MPI rank: one rank's error (an output only it cannot write) ends them all.
  world.agreed([&] {
    if (!o.json.empty()) check_json_output(o.json);
    if (!o.csv.empty()) check_json_output(o.csv, "--csv");
    check_distinct_files({{"--json", o.json}, {"--csv", o.csv}}, {{"--lengths", o.lengths}});
  });
  const std::vector<Request> lengths = world.agreed([&] {
    std::vector<Request> l = request_lengths(o);
    check_decode_work(l, loads.size(), "serve sweep");
    return l;
  });
  const auto s = world.agreed([&] {
    auto setup = make_setup(k, o, Workload{lengths});
    check_distinct_files({{"--json", o.json}, {"--csv", o.csv}}, input_files(o, *setup));
    return setup;
  });
  const Slo slo{o.slo_ttft_ms, o.slo_tpot_ms};
  const std::vector<double> pcts = percentile_list(o);
  fmt::print("{} on {} ({}), scheduler {}: {} {}, {} requests each\n", s->model.name, s->sn.label, s->server->deployment().describe(),
             s->sp.scheduler.name(), loads.size(), o.rates.empty() ? "concurrency levels" : "rates", o.requests);
  std::fflush(stdout);
  // The rates over the MPI ranks (one process without mpirun), each rank on its worker pool; each job has its own
  // servers (no state shared between threads).
  const auto texts = world.map(
      loads.size(),
      [&](size_t i) {
        const auto si = make_setup(k, o, Workload{lengths}, true);
        Workload w;
        if (loads[i].users > 0) {
          w.requests = lengths;
          w.concurrency = loads[i].users;
        } else {
          w = at_rate(o, lengths, loads[i].rate);
          w.max_concurrency = o.max_concurrency;
        }
        const SimResult r = simulate(cluster(*si), si->sp, std::move(w));
        Json point = loads[i].users > 0 ? Json{{"concurrency", loads[i].users}} : Json{{"rate_per_s", loads[i].rate}};
        point["summary"] = summary(r, slo, pcts);
        point["cdf"] = cdf(r);
        return point.dump();
      },
      o.threads, [&](size_t done, size_t n, size_t i) { ctx.report(o.quiet, done, n, loads[i].label()); });
  if (!world.root()) return;
  Json points = Json::array();
  Json rows = Json::array();  // the CSV: one row per rate
  for (size_t i = 0; i < texts.size(); ++i) {
    const Json p = Json::parse(texts[i]);
    const Json& sum = p["summary"];
    const auto at = [&](const char* m, const char* q) { return sum[m][q].get<double>(); };
    const std::string load =
        loads[i].users > 0 ? fmt::format("{:>5} users", loads[i].users) : fmt::format("rate {:>9.4f}/s", loads[i].rate);
    fmt::print(
        "  [{}/{}] {}: {:>9.1f} output tokens/s, TTFT p50 {:>9.2f} p99 {:>10.2f} ms, TPOT p50 {:>7.2f} p99 {:>8.2f} ms, "
        "goodput {:.3f}/s\n",
        i + 1, texts.size(), load, sum["output_tokens_per_s"].get<double>(), at("ttft_ms", "p50"), at("ttft_ms", "p99"),
        at("tpot_ms", "p50"), at("tpot_ms", "p99"), sum["goodput_requests_per_s"].get<double>());
    rows.push_back({{loads[i].users > 0 ? "concurrency" : "rate_per_s", loads[i].users > 0 ? Json(loads[i].users) : Json(loads[i].rate)},
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
    if (!o.concurrencies.empty()) {  // closed loops, one per level
      j["workload"]["kind"] = "closed_loop";
      j["workload"].erase("arrival");
      j["workload"].erase("cv");
    }
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
                   {"rate_per_s", "concurrency", "requests_per_s", "output_tokens_per_s", "total_tokens_per_s", "goodput_requests_per_s",
                    "slo_attainment", "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"});
    fmt::print("wrote {}\n", o.csv);
  }
}

}  // namespace

void add_sweep(CLI::App& serve, const RunContext& ctx) {
  auto* cmd =
      serve.add_subcommand("sweep", "one run per arrival rate (or per concurrency level): throughput-latency curve, latency CDFs, goodput");
  auto k = std::make_shared<accel::KindOptions>();
  auto o = std::make_shared<ServeOpts>();
  k->add_to(*cmd);
  add_common(*cmd, *o);
  cmd->add_option("--rates", o->rates, "open loops at these arrival rates, requests/s, increasing: R1,R2,...");
  cmd->add_option("--concurrency", o->concurrencies,
                  "closed loops of this many users instead, increasing: C1,C2,... (each user sends its next request when the last "
                  "one finishes)");
  cmd->add_option("--slo-ttft-ms", o->slo_ttft_ms, "goodput: time-to-first-token SLO, ms")->check(finite_range(1e-6, 3.6e6, "ms"));
  cmd->add_option("--slo-tpot-ms", o->slo_tpot_ms, "goodput: time-per-output-token SLO, ms")->check(finite_range(1e-6, 3.6e6, "ms"));
  cmd->add_option("--csv", o->csv, "write one row per rate (throughput, goodput, latency percentiles) to this CSV file");
  cmd->add_option("--threads", o->threads, "worker threads (rates run in parallel; same bytes whatever the count)")
      ->check(whole_range(1, 256, "threads"))
      ->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  cmd->callback([k, o, ctx] { sweep_serve(*k, *o, ctx); });
}

}  // namespace bitline::cli::serve_cli
