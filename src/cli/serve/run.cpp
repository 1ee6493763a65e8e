// `bitline serve run`: one workload on one system (docs/serving.md): latency percentiles, throughput, goodput ->
// stdout, --json, --requests-out, --chrome-trace.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "cli/serve/common.hpp"
#include "core/error.hpp"
#include "serve/report.hpp"

namespace bitline::cli::serve_cli {
namespace {

void print_summary(const Setup& s, const SimResult& r, const Json& sum) {
  const auto line = [&](const char* name, const char* key) {
    const Json& d = sum[key];
    fmt::print("  {:<10} mean {:>10.2f}  p50 {:>10.2f}  p90 {:>10.2f}  p95 {:>10.2f}  p99 {:>10.2f} ms\n", name, d["mean"].get<double>(),
               d["p50"].get<double>(), d["p90"].get<double>(), d["p95"].get<double>(), d["p99"].get<double>());
  };
  if (s.prefill)
    fmt::print("{}: {} prefill instance(s) of {} ({}, scheduler {}) -> {} decode instance(s) of {} ({}): {} requests in {:.2f} s\n",
               s.model.name, s.prefill_instances, s.prefill->sn.label, s.prefill->server->deployment().describe(), s.sp.scheduler.name(),
               s.decode_instances, s.sn.label, s.server->deployment().describe(), r.requests.size(), r.makespan_s());
  else
    fmt::print("{} on {} ({}), engine {} ({}), scheduler {}: {} requests in {:.2f} s\n", s.model.name, s.sn.label,
               s.server->deployment().describe(), s.engine.profile,
               s.engine.ideal() ? std::string("kernels only") : fmt::format("{} {}", family_name(s.engine.family), s.engine.version),
               s.sp.scheduler.name(), r.requests.size(), r.makespan_s());
  fmt::print("  KV memory: {} blocks of {} tokens ({} tokens per attention rank, {} bytes per token per GPU; pool: {})\n", r.memory.blocks,
             s.sp.block_tokens, r.memory.tokens_per_rank, r.memory.kv_bytes_per_token,
             r.memory.rule == KvPoolRule::AllFree ? std::string("all free memory")
                                                  : fmt::format("{} {:g}", to_string(r.memory.rule), r.memory.fraction));
  line("TTFT", "ttft_ms");
  line("TPOT", "tpot_ms");
  line("ITL", "itl_ms");
  line("E2E", "e2e_ms");
  line("queueing", "queueing_ms");
  fmt::print("  {:.1f} output tokens/s, {:.3f} requests/s, goodput {:.3f} requests/s (SLO attainment {:.1f}%)\n",
             sum["output_tokens_per_s"].get<double>(), sum["requests_per_s"].get<double>(), sum["goodput_requests_per_s"].get<double>(),
             100 * sum["slo_attainment"].get<double>());
  if (const Json& pc = sum["prefix_cache"]; pc["enabled"].get<bool>())
    fmt::print(
        "  prefix cache: {} of {} prompt tokens served from it ({:.1f}%; {:.1f}% of the {} an earlier request computed), {} units "
        "evicted\n",
        pc["cached_tokens"].get<int64_t>(), sum["tokens"]["input"].get<int64_t>(), 100 * pc["hit_rate"].get<double>(),
        100 * pc["reuse_rate"].get<double>(), pc["reusable_tokens"].get<int64_t>(), pc["evicted_units"].get<int64_t>());
  if (sum.contains("kv_transfer"))
    fmt::print("  KV transfers: {}, {:.2f} GB, mean {:.2f} ms each\n", sum["kv_transfer"]["transfers"].get<int64_t>(),
               sum["kv_transfer"]["bytes"].get<double>() * 1e-9, sum["kv_transfer"]["mean_ms"].get<double>());
  const Json& e = sum["energy"];
  // (Disaggregated: each instance at its own GPUs' board power, summary.instances[].energy_j.)
  const std::string power =
      s.prefill
          ? fmt::format("{} GPUs of {} instances, each at its own", e["gpus"].get<int64_t>(), s.prefill_instances + s.decode_instances)
          : fmt::format("{:g} W per GPU x {} GPUs", e["board_power_w_per_gpu"].get<double>(), e["gpus"].get<int64_t>());
  // Board power x busy time: `accel run`'s "tokens/J at board power", not its activity-based power_w / tokens_per_j.
  fmt::print("  energy at board power {:.1f} kJ ({} over the passes): {:.3f} output tokens/J, {:.1f} J per request\n",
             e["energy_j"].get<double>() * 1e-3, power, e["output_tokens_per_j"].get<double>(), e["per_request_j"]["mean"].get<double>());
  fmt::print("  {} iterations, {} preemptions ({} tokens recomputed), mean {:.1f} requests in the system, engine busy {:.1f}%\n",
             r.iterations, r.preemptions, r.recomputed_tokens, sum["mean_requests_in_system"].get<double>(),
             100 * sum["engine_busy_fraction"].get<double>());
}

void run_serve(const accel::KindOptions& k, const ServeOpts& o, const RunContext& ctx) {
  check_mode(o, false);
  if (const auto ext = std::filesystem::path(o.requests_out).extension(); !o.requests_out.empty() && ext != ".jsonl" && ext != ".csv")
    throw ConfigError(fmt::format("--requests-out {}: the extension names the format: F.jsonl (JSON Lines) or F.csv", o.requests_out));
  if (!o.json.empty()) check_json_output(o.json);
  if (!o.requests_out.empty()) check_json_output(o.requests_out, "--requests-out");
  if (!o.chrome_trace.empty()) check_json_output(o.chrome_trace, "--chrome-trace");
  const std::vector<NamedPath> outputs = {{"--json", o.json}, {"--requests-out", o.requests_out}, {"--chrome-trace", o.chrome_trace}};
  check_distinct_files(outputs, {{"--trace", o.trace}, {"--lengths", o.lengths}});
  CsvTraceInfo csv;
  Workload w = make_workload(o, o.rate, &csv);
  check_decode_work(w.requests, 1, "serve run");
  const auto s = make_setup(k, o, w);
  check_distinct_files(outputs, input_files(o, *s));
  w.record_passes = !o.chrome_trace.empty();
  const bool csv_trace = !o.trace.empty() && std::filesystem::path(o.trace).extension() == ".csv";
  if (csv_trace && csv.skipped_failed > 0)
    fmt::print("{}: {} trace, {} rows of failed requests (0 response tokens) skipped\n", o.trace, to_string(csv.format),
               csv.skipped_failed);
  const SimResult r = simulate(cluster(*s), s->sp, std::move(w));
  ctx.report(true, 1, 1, "serve run");  // one simulation: one report as it ends (the program prints none)
  const Json sum = summary(r, Slo{o.slo_ttft_ms, o.slo_tpot_ms}, percentile_list(o));
  print_summary(*s, r, sum);
  if (!o.json.empty()) {
    Json j = header(*s, o);
    if (csv_trace) j["workload"]["format"] = to_string(csv.format), j["workload"]["skipped_failed_rows"] = csv.skipped_failed;
    j["memory"] = r.memory.json();
    j["summary"] = sum;
    j["slo_attainment"] = sum["slo_attainment"];
    j["config"] = s->config;
    write_json_file(o.json, j);
    fmt::print("wrote {}\n", o.json);
  }
  if (!o.requests_out.empty()) {
    write_requests(o.requests_out, r);
    fmt::print("wrote {}\n", o.requests_out);
  }
  if (!o.chrome_trace.empty()) {
    write_chrome_trace(o.chrome_trace, r);
    fmt::print("wrote {}\n", o.chrome_trace);
  }
  std::fflush(stdout);
}

}  // namespace

void add_run(CLI::App& serve, const RunContext& ctx) {
  auto* cmd = serve.add_subcommand("run", "simulate one workload: TTFT/TPOT/ITL/E2E percentiles, throughput, goodput");
  auto k = std::make_shared<accel::KindOptions>();
  auto o = std::make_shared<ServeOpts>();
  k->add_to(*cmd);
  add_common(*cmd, *o);
  cmd->add_option("--rate", o->rate, "open loop: requests per second");
  cmd->add_option("--concurrency", o->concurrency, "closed loop: users, each sending its next request when the last one finishes")
      ->check(whole_range(1, kMaxRequests, "users", kRequestsWhy));
  cmd->add_option("--trace", o->trace,
                  "arrivals and lengths from a trace: a CSV of the Azure LLM trace (TIMESTAMP,ContextTokens,GeneratedTokens) or of "
                  "BurstGPT (Timestamp,Request tokens,Response tokens), or JSON Lines (bitline's sessions or Mooncake's)");
  cmd->add_option("--trace-speed", o->trace_speed,
                  "replay the --trace this many times as fast (2: arrivals at half their trace times; 0.5: at twice)")
      ->check(finite_range(1e-3, 1e3, ""));
  cmd->add_option("--slo-ttft-ms", o->slo_ttft_ms, "goodput: time-to-first-token SLO, ms")->check(finite_range(1e-6, 3.6e6, "ms"));
  cmd->add_option("--slo-tpot-ms", o->slo_tpot_ms, "goodput: time-per-output-token SLO, ms")->check(finite_range(1e-6, 3.6e6, "ms"));
  cmd->add_option("--requests-out", o->requests_out, "write one record per request: F.jsonl (JSON lines) or F.csv");
  cmd->add_option("--chrome-trace", o->chrome_trace, "write the iterations as a Chrome trace (Perfetto, chrome://tracing)");
  cmd->callback([k, o, cmd, ctx] {
    o->rate_given = cmd->count("--rate") > 0;
    run_serve(*k, *o, ctx);
  });
}

}  // namespace bitline::cli::serve_cli
