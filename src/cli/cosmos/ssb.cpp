// `bitline cosmos ssb`: the Star Schema Benchmark's 13 queries compiled onto Flash-Cosmos operations, on osp, isp,
// parabit and fc (simulated) and CRoaring / the row engine (measured on this machine), every answer checked against
// the row-at-a-time reference (docs/cosmos.md, "Analytical queries").
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <memory>

#include "cli/cosmos/common.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/worker_pool.hpp"
#include "cosmos/ssb/run.hpp"

namespace bitline::cli::cosmos_cli {
namespace {

using namespace bitline::cosmos;

struct SsbOpts {
  std::string json, sf = "1", queries, aggregation = "auto";
  std::vector<std::string> systems, functional_systems{"fc"}, query_files;
  bool explain = false, timing_only = false, reliability = false, quiet = false;
  int64_t equality_max_values = 8, host_repeat = 3;
  int threads = WorkerPool::hardware_threads();
};

double sf_option(const std::string& text) {
  double v = 0;
  if (!parse_decimal_number(text, v))
    throw ConfigError(fmt::format("--sf '{}': expected a number in decimal (the SSB scale factor, e.g. 1 or 0.01)", text_brief(text)));
  ssb::cardinalities(v, "--sf");  // the range check
  return v;
}

void print_table(const Json& j) {
  fmt::print("{:<6} {:>9} {:>7} {:>6}", "query", "rows", "reads", "match");
  std::vector<std::string> names;
  for (const auto& [k, v] : j["queries"][0]["systems"].items()) names.push_back(k);
  for (const auto& n : names) fmt::print(" {:>12}", n + " ms");
  fmt::print("\n");
  for (const auto& q : j["queries"]) {
    const std::string match = q["matches_reference"].is_null() ? "-" : q["matches_reference"].get<bool>() ? "yes" : "NO";
    fmt::print("{:<6} {:>9} {:>7} {:>6}", q["name"].get<std::string>(),
               q.value("rows_selected", Json(nullptr)).is_null() ? std::string("-") : std::to_string(q["rows_selected"].get<int64_t>()),
               q["reads"].get<int64_t>(), match);
    for (const auto& n : names) fmt::print(" {:>12.4g}", q["systems"][n]["time_s"].get<double>() * 1e3);
    fmt::print("\n");
  }
  const Json& s = j["summary"];
  // A null ratio: no query where both systems take time (fc answers each without reading flash).
  const auto ratio = [](const Json& v) { return v.is_null() ? std::string("n/a") : fmt::format("{:.3g}x", v.get<double>()); };
  const auto line = [&](const std::string& pair, const Json& speed, const Json& energy, const char* what) {
    fmt::print("speedup {:<12} {:>9}   energy efficiency {:>9}   ({})\n", pair, ratio(speed), ratio(energy),
               speed.is_null() ? "no query where both take time: fc reads no flash for any" : what);
  };
  if (s.contains("speedup"))
    for (const auto& [pair, v] : s["speedup"].items()) line(pair, v, s["energy_efficiency"][pair], "geometric mean over the queries");
  if (j.contains("measured") && j["measured"].contains("summary"))
    for (const auto& [pair, v] : j["measured"]["summary"]["speedup"].items())
      line(pair, v, j["measured"]["summary"]["energy_efficiency"][pair], "measured host engine");
  if (s.contains("matches_reference"))
    fmt::print("answers equal to the reference engine's: {}\n", s["matches_reference"].get<std::string>());
  if (j.contains("reliability")) {
    const Json& r = j["reliability"];
    for (const char* k : {"slc_no_esp", "esp"})
      fmt::print("reliability at {} P/E, {} days, {}: {}/{} queries exact, RBER sensed {:.3g}, wrong filter rows per query {:.3g}\n",
                 r["pe_cycles"].get<int64_t>(), r["retention_days"].get<double>(), k, r[k]["exact"].get<int64_t>(),
                 r[k]["queries"].get<int64_t>(), r[k]["rber_sensed"].get<double>(), r[k]["wrong_filter_rows_per_query"].get<double>());
  }
}

void run_ssb_cmd(const ConfigOptions& cfg, const SsbOpts& o, const RunContext& ctx) {
  check_json_output(o.json);
  const double sf = sf_option(o.sf);
  ssb::SsbOptions so;
  const ConfigTree tree = cfg.load();
  so.config = load_eval_config(tree);
  so.sf = sf;
  so.explain = o.explain;
  so.reliability = o.reliability;
  so.threads = o.threads;
  so.host_repeat = int(o.host_repeat);
  so.aggregation = ssb::aggregations().at(o.aggregation, "--aggregation");
  so.equality_max_values = int(o.equality_max_values);
  so.functional = !o.timing_only && sf <= ssb::kMaxGeneratedSf;
  if (o.reliability && !so.functional)
    throw ConfigError(
        fmt::format("--reliability: needs a functional run (--sf at most {:g}, without --timing-only)", ssb::kMaxGeneratedSf));
  const std::vector<std::string> names = list_option(o.systems, "--systems");
  if (!names.empty()) {
    so.systems.clear();
    so.engines.clear();
    for (const auto& n : names) {
      if (systems().find(n) >= 0)
        so.systems.push_back(system_from(n));
      else if (ssb::host_engines().find(n) >= 0)
        so.engines.push_back(ssb::host_engines().at(n));
      else
        throw ConfigError(fmt::format("--systems: '{}' is not one of {}|{}", n, systems().joined("|"), ssb::host_engines().joined("|")));
    }
  }
  so.functional_systems.clear();
  for (const auto& n : list_option(o.functional_systems, "--functional-systems")) {
    so.functional_systems.push_back(systems().at(n, "--functional-systems"));
    // the default (fc) follows --systems; a system named here must be run
    const bool given = o.functional_systems != std::vector<std::string>{"fc"};
    if (given && std::find(so.systems.begin(), so.systems.end(), so.functional_systems.back()) == so.systems.end())
      throw ConfigError(fmt::format("--functional-systems {}: not one of the systems run (--systems)", n));
  }
  // What a run would drop without a word is refused.
  if (!so.functional && !so.engines.empty() && !names.empty()) {
    std::vector<std::string> engines;
    for (const auto& n : names)
      if (ssb::host_engines().find(n) >= 0) engines.push_back(n);
    throw ConfigError(fmt::format("--systems: the measured engines ({}) run on the rows, which a {} run has none of; leave them out",
                                  fmt::join(engines, ","), o.timing_only ? "--timing-only" : "--sf above 1"));
  }
  if (!o.query_files.empty() && !o.queries.empty())
    throw ConfigError("--query and --queries: give the queries one way (files, or a folder)");

  std::vector<ssb::QuerySpec> queries;
  if (!o.query_files.empty()) {
    for (const auto& f : o.query_files) queries.push_back(ssb::load_query(f));
  } else {
    queries = ssb::load_query_dir(o.queries.empty() ? ssb::shipped_query_dir() : std::filesystem::path(o.queries));
  }
  std::vector<NamedPath> inputs;
  for (const auto& q : queries) inputs.push_back({o.query_files.empty() ? "--queries" : "--query", q.file});
  check_outputs({{"--json", o.json}}, tree, inputs);
  const auto t0 = std::chrono::steady_clock::now();
  const Json j = ssb::run_ssb(
      queries, so, [&](size_t i, size_t n, const std::string& what) { ctx.report(o.quiet, i, n, what); },
      [](const std::string& line) { fmt::print("{}\n", line); });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.json.empty()) write_json_file(o.json, j);
  print_table(j);
  fmt::print("SF {:g}: {} LINEORDER rows, {} queries in {:.2f} s{}\n", sf, j["tables"]["lineorder"].get<int64_t>(), queries.size(), wall,
             o.json.empty() ? "" : fmt::format("; wrote {}", o.json));
}

}  // namespace

void add_ssb(CLI::App& cosmos, const RunContext& ctx) {
  auto* cmd =
      cosmos.add_subcommand("ssb", "the Star Schema Benchmark's 13 queries in flash (bit-sliced predicates, sums, group-bys) vs CRoaring");
  auto cfg = std::make_shared<ConfigOptions>();
  auto o = std::make_shared<SsbOpts>();
  cfg->add_to(*cmd);
  cmd->add_option("--sf", o->sf, "SSB scale factor (SF 1 = 6 M LINEORDER rows); rows are generated up to SF 1, larger runs are timing-only")
      ->capture_default_str();
  cmd->add_option(
      "--systems", o->systems,
      fmt::format("comma-separated: simulated {} and measured {} (default: all)", systems().joined("|"), ssb::host_engines().joined("|")));
  cmd->add_flag("--explain", o->explain, "print how every query is compiled: predicates, covers, sensings, the Flash-Cosmos plans");
  cmd->add_option("--json", o->json, "write the queries, answers, times and energies and the resolved config to this file");
  cmd->add_option("--queries", o->queries, "folder of query files (default: the shipped configs/ssb)");
  cmd->add_option("--query", o->query_files, "one query file (repeatable; instead of --queries)");
  cmd->add_option("--aggregation", o->aggregation, ssb::aggregations().joined(" | ") + " (docs/cosmos.md)")
      ->check(CLI::IsMember(names_of(ssb::aggregations())))
      ->capture_default_str();
  cmd->add_flag("--timing-only", o->timing_only, "generate no rows: no answers, no checks, no host engines (any SF)");
  cmd->add_option("--functional-systems", o->functional_systems,
                  "systems whose reads run through the dies' bits when rows are generated (default fc; parabit reads raw SLC cells "
                  "and sees their errors)")
      ->capture_default_str();
  cmd->add_option("--equality-max-values", o->equality_max_values,
                  "attributes with at most this many values also get one equality bitmap per value")
      ->capture_default_str()
      ->check(whole_range(0, 48, "values"));
  cmd->add_option("--host-repeat", o->host_repeat, "runs of each host engine per query (the fastest is reported)")
      ->capture_default_str()
      ->check(whole_range(1, 100, "runs"));
  cmd->add_flag("--reliability", o->reliability,
                "also answer every query with and without ESP at the stress condition (workload.reliability_pe_cycles, "
                "workload.reliability_retention_days: 10K P/E, 1 year)");
  cmd->add_option("--threads", o->threads, "worker threads (results do not depend on it)")
      ->capture_default_str()
      ->check(whole_range(1, 256, "threads"));
  cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
  cmd->callback([cfg, o, ctx] { run_ssb_cmd(*cfg, *o, ctx); });
}

}  // namespace bitline::cli::cosmos_cli
