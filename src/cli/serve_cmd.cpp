// `bitline serve ...`: request-level serving simulation (src/serve/, docs/serving.md).
//   run       one workload on one system: latency percentiles, throughput, goodput -> stdout, --json, --requests-out
//   capacity  the highest arrival rate whose p90 TTFT and p99 TPOT meet their SLOs (bisection on the rate)
//   sweep     one open-loop run per arrival rate: the throughput-latency curve and latency CDFs -> --json, --csv
// The GPU kind's parameters load as in `accel` (--preset, --config, --set over configs/gpus/KIND.yaml); the `serve`
// section (scheduler, limits, block manager) comes with them.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>

#include "cli/accel/common.hpp"
#include "cli/common.hpp"
#include "core/distributed.hpp"
#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/text.hpp"
#include "core/worker_pool.hpp"
#include "llm/deployment.hpp"
#include "serve/report.hpp"
#include "serve/simulator.hpp"

namespace bitline::cli {
namespace {

using namespace bitline::serve;

struct ServeOpts {
  std::string model, system, prefill_system, disaggregate, precision, scheduler, lengths, arrival = "poisson", input, output, json,
                                                                                          requests_out, trace, chrome_trace;
  int64_t tp = 0, concurrency = 0, requests = 0;
  uint64_t seed = 1;
  bool seed_given = false;
  double rate = std::numeric_limits<double>::quiet_NaN(), cv = 1;
  bool rate_given = false, prefix_caching = false;
  double slo_ttft_ms = 0, slo_tpot_ms = 0;
  // capacity
  double p90_ttft_ms = 0, p99_tpot_ms = 0, rate_lo = 0, tolerance = 0.02;
  // sweep
  std::string rates;  // R1,R2,... (requests/s)
  std::string csv;
  int threads = WorkerPool::hardware_threads();
  bool quiet = false;
};

/// A sweep's points at most: the work budget of `serve sweep`.
constexpr size_t kMaxSweepPoints = 256;
/// Why --requests and --concurrency stop at kMaxRequests.
constexpr std::string_view kRequestsWhy = "a simulation holds ~330 B per request (docs/serving.md, \"Work budget\")";

/// The system, the server of its deployment (llm.tp_size from --tp) and the `serve` parameters.
struct Setup {
  llm::SystemName sn;
  llm::KindParams kp;
  ServeParams sp;
  Json config;
  llm::ModelConfig model;
  std::unique_ptr<llm::DeploymentSearch> ds;
  const llm::Server* server = nullptr;
  std::string choice;  // why the deployment is not the preferred one ("" when it is)
  // --disaggregate P:D: this side decodes on `decode_instances` instances; `prefill` is the prefill side.
  std::unique_ptr<Setup> prefill;
  int64_t prefill_instances = 0, decode_instances = 0;
  std::vector<NamedPath> inputs;  // the files it read: the kind's config files and the model's description
};

/// The deployment that serves a workload whose longest request has `longest` tokens (prompt + output):
/// serve::serving_deployment (the preferred one when its KV memory holds that request, else the first candidate that
/// does, docs/llm.md, "Deployment").
void choose_deployment(Setup& s, int64_t longest) { s.server = serving_deployment(*s.ds, s.sp, longest, &s.choice); }

std::unique_ptr<Setup> make_side(accel::KindOptions k, const ServeOpts& o, const std::string& system, int64_t longest, bool quiet) {
  auto s = std::make_unique<Setup>();
  if (o.tp > 0) {
    k.sets.push_back(o.tp == 1 ? "llm.attention_parallel=dp" : "llm.attention_parallel=tp");
    if (o.tp > 1) k.sets.push_back(fmt::format("llm.tp_size={}", o.tp));
    k.sets.push_back("llm.deployment_search=fixed");
  }
  if (!o.precision.empty()) k.sets.push_back("llm.precision=" + o.precision);
  if (!o.scheduler.empty()) k.sets.push_back("serve.scheduler=" + o.scheduler);
  if (o.prefix_caching) k.sets.push_back("serve.prefix_caching=true");
  s->sn = llm::parse_system(system);
  const ConfigTree tree = k.tree(s->sn.kind);
  s->kp = llm::load_kind_params(tree, s->sn.kind);
  s->sp = load_params<ServeParams>(tree, "serve");
  s->config = accel::kind_json(s->kp);
  s->config["serve"] = dump_params(s->sp);
  s->model = llm::load_model(o.model);
  add_config_inputs(s->inputs, tree);
  s->inputs.push_back({"--model", s->model.origin});
  s->ds = std::make_unique<llm::DeploymentSearch>(s->model, s->kp, s->sn.gpus);
  choose_deployment(*s, longest);
  if (!s->choice.empty() && !quiet) fmt::print("deployment: {}\n", s->choice);
  return s;
}

/// "P:D" of --disaggregate: prefill and decode instances, 1 to 64 each.
std::pair<int64_t, int64_t> parse_instances(const std::string& text) {
  const size_t colon = text.find(':');
  int64_t p = 0, d = 0;
  const auto num = [](const std::string& t, int64_t& v) { return parse_decimal_integer(t, v) && v >= 1 && v <= 64; };
  if (colon == std::string::npos || !num(text.substr(0, colon), p) || !num(text.substr(colon + 1), d))
    throw ConfigError(fmt::format("--disaggregate '{}': expected P:D, prefill and decode instances, 1 to 64 each in decimal (e.g. 1:2)",
                                  text_brief(text)));
  return {p, d};
}

/// The system(s) that serve workload `w` (its lengths): one colocated engine on --system, or with --disaggregate P:D
/// P prefill instances of --prefill-system (default: --system) and D decode instances of --system, each deployment
/// chosen to hold what it must (the prompt and first token on the prefill side, the whole context on the decode side).
std::unique_ptr<Setup> make_setup(const accel::KindOptions& k, const ServeOpts& o, const Workload& w, bool quiet = false) {
  int64_t context = 0, prompt = 0;
  for (const auto& r : w.requests) context = std::max(context, r.input + r.output), prompt = std::max(prompt, r.input + 1);
  if (o.disaggregate.empty()) {
    if (!o.prefill_system.empty()) throw ConfigError("--prefill-system: only with --disaggregate P:D");
    return make_side(k, o, o.system, context, quiet);
  }
  const auto [p, d] = parse_instances(o.disaggregate);
  auto s = make_side(k, o, o.system, context, quiet);
  s->prefill = make_side(k, o, o.prefill_system.empty() ? o.system : o.prefill_system, prompt, quiet);
  s->prefill_instances = p;
  s->decode_instances = d;
  return s;
}

/// Every file a serve command reads: its options' files (--trace, --lengths, csv:FILE:COLUMN lengths), the kinds'
/// config files and the model descriptions of both sides. No output may be one of them (checked before any work).
std::vector<NamedPath> input_files(const ServeOpts& o, const Setup& s) {
  std::vector<NamedPath> in = s.inputs;
  if (s.prefill) in.insert(in.end(), s.prefill->inputs.begin(), s.prefill->inputs.end());
  in.push_back({"--trace", o.trace});
  in.push_back({"--lengths", o.lengths});
  for (const auto& [flag, text] : {std::pair<const char*, const std::string&>{"--input", o.input}, {"--output", o.output}})
    if (text.rfind("csv:", 0) == 0 && text.rfind(':') > 4) in.push_back({flag, text.substr(4, text.rfind(':') - 4)});
  return in;
}

Cluster cluster(const Setup& s) {
  Cluster c;
  if (!s.prefill) {
    c.colocated = s.server;
    return c;
  }
  c.prefill = {s.prefill->server, s.prefill_instances};
  c.decode = {s.server, s.decode_instances};
  return c;
}

/// The coefficient of variation of the inter-arrival times: --cv for gamma arrivals, 1 otherwise (Poisson's; constant
/// arrivals ignore it).
double arrival_cv(const ServeOpts& o) { return parse_arrival(o.arrival) == ArrivalKind::Gamma ? o.cv : 1.0; }

/// Output tokens one simulation of a serve command may decode: 2^26 (67 M; the capacity experiment's probes decode
/// ~51 M). A step decodes one token of each running request, ~0.25 us of CPU per step and ~30 B of latency records
/// per token at batch 1: at most ~17 s and ~2 GB (docs/serving.md, "Work budget").
constexpr double kMaxOutputTokensPerRun = double(int64_t(1) << 26);
/// ... and a sweep over all its rates: 2^28.
constexpr double kMaxSweepOutputTokens = double(int64_t(1) << 28);

/// Refuses `runs` simulations of `requests` requests that decode `tokens` output tokens each when they pass the
/// budgets; `what` names the command, `estimated` says the tokens are the lengths' mean, not yet drawn.
void check_tokens(double tokens, size_t requests, size_t runs, const std::string& what, bool estimated = false) {
  const std::string count = fmt::format("{} requests decode {}{:.4g} output tokens", requests, estimated ? "about " : "", tokens);
  if (tokens > kMaxOutputTokensPerRun)
    throw ConfigError(
        fmt::format("{}: {} in one simulation, more than the budget of {:.4g} (~0.25 us and ~30 B per token at batch 1); use fewer "
                    "--requests or shorter outputs",
                    what, count, kMaxOutputTokensPerRun));
  if (tokens * double(runs) > kMaxSweepOutputTokens)
    throw ConfigError(
        fmt::format("{}: {} simulations, in each of which {}: {:.4g} in all, more than the budget of {:.4g} per "
                    "command; use fewer rates or requests",
                    what, runs, count, tokens * double(runs), kMaxSweepOutputTokens));
}

/// Refuses, before anything is simulated, `runs` simulations of `reqs` that decode more than the budgets allow.
void check_work(const std::vector<Request>& reqs, size_t runs, const std::string& what) {
  double tokens = 0;
  for (const Request& r : reqs) tokens += double(r.output);
  check_tokens(tokens, reqs.size(), runs, what);
}

/// The requests of `o` with their lengths and no arrivals yet (they do not depend on the rate): drawn from --input and
/// --output or --lengths.
std::vector<Request> request_lengths(const ServeOpts& o) {
  if (o.requests < 1) throw ConfigError("serve: give the number of requests with --requests K (K >= 1)");
  if (!o.lengths.empty()) {
    if (!o.input.empty() || !o.output.empty()) throw ConfigError("--lengths: gives both lengths; leave out --input and --output");
    return sample_lengths(o.requests, read_trace(o.lengths, 0), o.seed);
  }
  if (o.input.empty() || o.output.empty()) throw ConfigError("serve: give the lengths with --input IN and --output OUT, or --lengths FILE");
  const LengthSpec in = LengthSpec::parse(o.input, "--input"), out = LengthSpec::parse(o.output, "--output");
  // The decoding work from the lengths' mean, before millions of requests are drawn (checked again once drawn).
  check_tokens(double(o.requests) * out.expected(), size_t(o.requests), 1, "serve", true);
  return make_requests(o.requests, in, out, o.seed);
}

/// `reqs` (their lengths) as the open-loop workload of `o` at `rate`.
Workload at_rate(const ServeOpts& o, std::vector<Request> reqs, double rate) {
  Workload w;
  w.requests = std::move(reqs);
  set_open_loop_arrivals(w.requests, rate, parse_arrival(o.arrival), arrival_cv(o), o.seed);
  return w;
}

/// The workload of `o`: a trace, a closed loop, or an open loop at `rate`.
Workload make_workload(const ServeOpts& o, double rate, CsvTraceInfo* info = nullptr) {
  Workload w;
  if (!o.trace.empty()) {
    w.requests = read_trace(o.trace, o.requests, info);
    return w;
  }
  if (o.concurrency <= 0) return at_rate(o, request_lengths(o), rate);
  if (o.concurrency > o.requests)
    throw ConfigError(
        fmt::format("--concurrency {}: more users than --requests {} (each user sends at least one)", o.concurrency, o.requests));
  w.requests = request_lengths(o);
  w.concurrency = o.concurrency;
  return w;
}

void check_mode(const ServeOpts& o, bool capacity) {
  const int modes = int(o.rate_given) + int(o.concurrency > 0) + int(!o.trace.empty());
  if (capacity) {
    if (o.concurrency > 0 || !o.trace.empty())
      throw ConfigError("serve capacity: searches the --rate of an open loop; --concurrency and --trace do not apply");
    return;
  }
  if (modes != 1) throw ConfigError("serve run: give exactly one of --rate R, --concurrency N, --trace FILE");
  // What the mode does not read is refused, not ignored (the JSON used to record lengths that were not used).
  if (!o.trace.empty() && o.seed_given) throw ConfigError("--seed: a --trace run draws nothing (the trace gives its arrivals and lengths)");
  if (!o.trace.empty() && (!o.input.empty() || !o.output.empty() || !o.lengths.empty()))
    throw ConfigError("--trace: the trace gives each request's lengths and arrival; leave out --input, --output and --lengths");
  if (!o.rate_given && parse_arrival(o.arrival) != ArrivalKind::Poisson)
    throw ConfigError(fmt::format("--arrival {}: only for an open loop (--rate); {} sets the arrivals", o.arrival,
                                  o.trace.empty() ? "--concurrency" : "--trace"));
  if (o.rate_given && (!std::isfinite(o.rate) || !(o.rate > 0)))
    throw ConfigError(fmt::format("--rate {}: need a finite rate above 0 requests/s", o.rate));
  if (parse_arrival(o.arrival) != ArrivalKind::Gamma && o.cv != 1) throw ConfigError("--cv: only with --arrival gamma");
}

Json header(const Setup& s, const ServeOpts& o) {
  Json j = {{"model", s.model.name},
            {"system", fmt::format("{}x{}", s.sn.kind, s.sn.gpus)},
            {"deployment", llm::deployment_json(s.server->deployment())},
            {"deployment_choice", s.choice.empty() ? Json("preferred") : Json(s.choice)},
            {"scheduler", std::string(s.sp.scheduler.name())},
            {"seed", o.seed}};
  if (s.prefill) {
    const Setup& p = *s.prefill;
    j["disaggregation"] = {
        {"prefill",
         {{"system", fmt::format("{}x{}", p.sn.kind, p.sn.gpus)},
          {"instances", s.prefill_instances},
          {"deployment", llm::deployment_json(p.server->deployment())},
          {"deployment_choice", p.choice.empty() ? Json("preferred") : Json(p.choice)}}},
        {"decode", {{"system", fmt::format("{}x{}", s.sn.kind, s.sn.gpus)}, {"instances", s.decode_instances}, {"scheduler", "chunked"}}},
        {"kv_link", "RDMA: llm.network.rdma per GPU of the smaller side, after llm.network.rdma_latency"}};
  }
  Json w;
  if (!o.trace.empty())
    w = {{"kind", "trace"}, {"file", o.trace}};
  else if (o.concurrency > 0)
    w = {{"kind", "closed_loop"}, {"concurrency", o.concurrency}};
  else
    w = {{"kind", "open_loop"}, {"arrival", o.arrival}, {"rate_per_s", o.rate}, {"cv", arrival_cv(o)}};
  if (o.trace.empty() && o.lengths.empty()) w["input"] = o.input, w["output"] = o.output;
  if (!o.lengths.empty()) w["lengths"] = o.lengths;
  if (o.trace.empty()) w["requests"] = o.requests;
  j["workload"] = w;
  return j;
}

void print_summary(const Setup& s, const SimResult& r, const Json& sum) {
  const auto line = [&](const char* name, const char* key) {
    const Json& d = sum[key];
    fmt::print("  {:<10} mean {:>10.2f}  p50 {:>10.2f}  p90 {:>10.2f}  p95 {:>10.2f}  p99 {:>10.2f} ms\n", name, d["mean"].get<double>(),
               d["p50"].get<double>(), d["p90"].get<double>(), d["p95"].get<double>(), d["p99"].get<double>());
  };
  if (s.prefill)
    fmt::print("{}: {} prefill instance(s) of {}x{} ({}, scheduler {}) -> {} decode instance(s) of {}x{} ({}): {} requests in {:.2f} s\n",
               s.model.name, s.prefill_instances, s.prefill->sn.kind, s.prefill->sn.gpus, s.prefill->server->deployment().describe(),
               s.sp.scheduler.name(), s.decode_instances, s.sn.kind, s.sn.gpus, s.server->deployment().describe(), r.requests.size(),
               r.makespan_s());
  else
    fmt::print("{} on {}x{} ({}), scheduler {}: {} requests in {:.2f} s\n", s.model.name, s.sn.kind, s.sn.gpus,
               s.server->deployment().describe(), s.sp.scheduler.name(), r.requests.size(), r.makespan_s());
  fmt::print("  KV memory: {} blocks of {} tokens ({} tokens per attention rank, {} bytes per token per GPU)\n", r.memory.blocks,
             s.sp.block_tokens, r.memory.tokens_per_rank, r.memory.kv_bytes_per_token);
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
          ? fmt::format("{} GPUs of {} instances at their board power", e["gpus"].get<int64_t>(), s.prefill_instances + s.decode_instances)
          : fmt::format("{:g} W per GPU x {} GPUs", e["board_power_w_per_gpu"].get<double>(), e["gpus"].get<int64_t>());
  fmt::print("  energy {:.1f} kJ ({} over the passes): {:.3f} output tokens/J, {:.1f} J per request\n", e["energy_j"].get<double>() * 1e-3,
             power, e["output_tokens_per_j"].get<double>(), e["per_request_j"]["mean"].get<double>());
  fmt::print("  {} iterations, {} preemptions ({} tokens recomputed), mean {:.1f} requests in the system, engine busy {:.1f}%\n",
             r.iterations, r.preemptions, r.recomputed_tokens, sum["mean_requests_in_system"].get<double>(),
             100 * sum["engine_busy_fraction"].get<double>());
}

void run_serve(const accel::KindOptions& k, const ServeOpts& o) {
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
  check_work(w.requests, 1, "serve run");
  const auto s = make_setup(k, o, w);
  check_distinct_files(outputs, input_files(o, *s));
  w.record_passes = !o.chrome_trace.empty();
  const bool csv_trace = !o.trace.empty() && std::filesystem::path(o.trace).extension() == ".csv";
  if (csv_trace && csv.skipped_failed > 0)
    fmt::print("{}: {} trace, {} rows of failed requests (0 response tokens) skipped\n", o.trace, to_string(csv.format),
               csv.skipped_failed);
  const SimResult r = simulate(cluster(*s), s->sp, std::move(w));
  const Json sum = summary(r, Slo{o.slo_ttft_ms, o.slo_tpot_ms});
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

void add_common(CLI::App& cmd, ServeOpts& o) {
  cmd.add_option("--model", o.model, "a model of configs/models/ by name, or a config.json path")->required();
  cmd.add_option("--system", o.system, "KIND x GPUS, e.g. h100x8 (KIND: a file of configs/gpus/ or a kind's YAML path)")->required();
  cmd.add_option("--tp", o.tp, "attention tensor-parallel degree (sets llm.tp_size, no deployment search; 1: data parallel)")
      ->check(whole_range(1, 1024, "GPUs"));
  cmd.add_option("--precision", o.precision, "weights, activations and KV: model, bf16, fp16, fp8, fp4 (sets llm.precision)");
  cmd.add_option("--scheduler", o.scheduler, "vllm, chunked, orca or static (sets serve.scheduler)");
  cmd.add_option("--arrival", o.arrival, "open loop arrivals: poisson, gamma or constant")
      ->check(CLI::IsMember({"poisson", "gamma", "constant"}));
  cmd.add_option("--cv", o.cv, "--arrival gamma: coefficient of variation of the gaps (1 = Poisson)")->check(finite_range(1e-3, 100, ""));
  cmd.add_option("--input", o.input, "prompt tokens: N, uniform:LO:HI, lognormal:MEAN:SIGMA or csv:FILE:COLUMN");
  cmd.add_option("--output", o.output, "output tokens: N, uniform:LO:HI, lognormal:MEAN:SIGMA or csv:FILE:COLUMN");
  cmd.add_option("--lengths", o.lengths,
                 "(prompt, output) pairs drawn with replacement from a trace file (any --trace format), instead of --input/--output");
  cmd.add_option("--requests", o.requests, "requests to simulate (with --trace: at most this many rows; 0 all)")
      ->check(whole_range(0, kMaxRequests, "requests", kRequestsWhy));
  cmd.add_option("--seed", o.seed, "seed of the arrivals and lengths (0 to 2^64 - 1)")
      ->check(CLI::Validator(
          [](std::string& v) {
            // a whole number that fits 64 bits (CLI11 would clamp 2^64 and -1 to 2^64 - 1 without a word)
            uint64_t x = 0;
            const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
            return ec == std::errc() && ptr == v.data() + v.size() && !v.empty()
                       ? std::string()
                       : fmt::format("'{}' is not a whole number in [0, 2^64 - 1]", v.substr(0, 40));
          },
          "UINT64"))
      ->each([&o](const std::string&) { o.seed_given = true; });
  cmd.add_option("--disaggregate", o.disaggregate,
                 "P:D: prefill/decode disaggregation, P prefill instances (of --prefill-system) and D decode instances (of --system)");
  cmd.add_option("--prefill-system", o.prefill_system, "with --disaggregate: KIND x GPUS of each prefill instance (default: --system)");
  cmd.add_flag("--prefix-caching", o.prefix_caching,
               "reuse the KV of a trace's shared prefixes across requests (sets serve.prefix_caching; needs --trace)");
  cmd.add_option("--json", o.json, "write the result (summary, config) to this file");
}

void capacity_serve(const accel::KindOptions& k, ServeOpts o) {
  check_mode(o, true);
  if (!o.json.empty()) check_json_output(o.json);
  if (!(o.p90_ttft_ms > 0) || !(o.p99_tpot_ms > 0)) throw ConfigError("serve capacity: give --slo-p90-ttft-ms and --slo-p99-tpot-ms");
  const std::vector<Request> lengths = request_lengths(o);
  check_work(lengths, 1, "serve capacity (per probe)");
  const auto s = make_setup(k, o, Workload{lengths});
  check_distinct_files({{"--json", o.json}}, input_files(o, *s));
  struct Probe {
    double rate = 0, p90_ttft = 0, p99_tpot = 0, throughput = 0;
    bool ok = false;
  };
  std::vector<Probe> probes;
  const auto probe = [&](double rate) {
    const SimResult r = simulate(cluster(*s), s->sp, at_rate(o, lengths, rate));
    const Json sum = summary(r, Slo{});
    Probe p{rate, sum["ttft_ms"]["p90"].get<double>(), sum["tpot_ms"]["p99"].get<double>(), sum["output_tokens_per_s"].get<double>()};
    p.ok = p.p90_ttft <= o.p90_ttft_ms && p.p99_tpot <= o.p99_tpot_ms;
    fmt::print("  rate {:>10.4f}/s: p90 TTFT {:>10.2f} ms, p99 TPOT {:>8.2f} ms, {:>10.1f} output tokens/s -> {}\n", rate, p.p90_ttft,
               p.p99_tpot, p.throughput, p.ok ? "meets" : "misses");
    std::fflush(stdout);
    probes.push_back(p);
    return p.ok;
  };
  fmt::print("{} on {}x{}: the highest rate with p90 TTFT <= {:g} ms and p99 TPOT <= {:g} ms ({} requests per probe)\n", s->model.name,
             s->sn.kind, s->sn.gpus, o.p90_ttft_ms, o.p99_tpot_ms, o.requests);
  // The two ends first. One request at a time (no queueing, every step at batch 1) is the best any rate can do: if it
  // misses, no rate meets the SLOs. All at once is the worst: if it meets, every rate does (checked after bracketing).
  {
    Workload alone{lengths};
    alone.concurrency = 1;
    const Json sum = summary(simulate(cluster(*s), s->sp, std::move(alone)), Slo{});
    const double ttft = sum["ttft_ms"]["p90"].get<double>(), tpot = sum["tpot_ms"]["p99"].get<double>();
    if (ttft > o.p90_ttft_ms || tpot > o.p99_tpot_ms)
      throw ModelError(fmt::format(
          "serve capacity: no arrival rate meets the SLOs: even one request at a time, with no queueing, has p90 TTFT {:.4g} ms "
          "(--slo-p90-ttft-ms {:g}) and p99 TPOT {:.4g} ms (--slo-p99-tpot-ms {:g}), and a higher rate can only add to them",
          ttft, o.p90_ttft_ms, tpot, o.p99_tpot_ms));
    const Json burst = summary(simulate(cluster(*s), s->sp, Workload{lengths}), Slo{});  // every arrival at 0
    if (burst["ttft_ms"]["p90"].get<double>() <= o.p90_ttft_ms && burst["tpot_ms"]["p99"].get<double>() <= o.p99_tpot_ms)
      throw ConfigError(fmt::format(
          "serve capacity: every rate meets the SLOs: the --requests {} arriving all at once are served with p90 TTFT "
          "{:.4g} ms and p99 TPOT {:.4g} ms, within {:g} and {:g} ms, so they have no capacity to find; give more "
          "--requests or tighter SLOs",
          o.requests, burst["ttft_ms"]["p90"].get<double>(), burst["tpot_ms"]["p99"].get<double>(), o.p90_ttft_ms, o.p99_tpot_ms));
  }
  // Bracket: from --rate-lo (or 0.1/s) double until a rate misses (at most 40 doublings), halve until one meets.
  double lo = o.rate_lo > 0 ? o.rate_lo : 0.1, hi = 0;
  bool found = false;
  if (!probe(lo)) {
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
          hi, o.requests));
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
    // Every rate met the SLOs: the whole workload arrives at once and is served within them, so no rate is the
    // capacity (the last probe that met is not a bound, and the next one was never run).
    if (!missed)
      throw ConfigError(
          fmt::format("serve capacity: every probe up to {:.4g} requests/s meets the SLOs: the --requests {} "
                      "arrive as one burst that the system serves within p90 TTFT {:g} ms and p99 TPOT {:g} "
                      "ms, so they have no capacity to find; give more --requests or tighter SLOs",
                      lo, o.requests, o.p90_ttft_ms, o.p99_tpot_ms));
  }
  while ((hi - lo) / hi > o.tolerance) {
    const double mid = std::sqrt(lo * hi);
    (probe(mid) ? lo : hi) = mid;
  }
  fmt::print("  capacity {:.4f} requests/s (the next probe, {:.4f}/s, misses)\n", lo, hi);
  if (!o.json.empty()) {
    Json j = header(*s, o);
    j["workload"].erase("rate_per_s");
    j["slo"] = {{"p90_ttft_ms", o.p90_ttft_ms}, {"p99_tpot_ms", o.p99_tpot_ms}};
    j["capacity_requests_per_s"] = lo;
    j["first_miss_requests_per_s"] = hi;
    Json ps = Json::array();
    for (const auto& p : probes)
      ps.push_back({{"rate_per_s", p.rate},
                    {"p90_ttft_ms", p.p90_ttft},
                    {"p99_tpot_ms", p.p99_tpot},
                    {"output_tokens_per_s", p.throughput},
                    {"meets", p.ok}});
    j["probes"] = ps;
    j["config"] = s->config;
    write_json_file(o.json, j);
    fmt::print("wrote {}\n", o.json);
  }
}

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
    check_work(l, rates.size(), "serve sweep");
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
    write_csv_file(o.csv, rows);
    fmt::print("wrote {}\n", o.csv);
  }
}

}  // namespace

void add_serve(CLI::App& app) {
  auto* group = app.add_subcommand("serve", "request-level LLM serving: arrivals, continuous batching, latency percentiles, goodput");
  group->require_subcommand(1);
  {
    auto* cmd = group->add_subcommand("run", "simulate one workload: TTFT/TPOT/ITL/E2E percentiles, throughput, goodput");
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
    cmd->add_option("--slo-ttft-ms", o->slo_ttft_ms, "goodput: time-to-first-token SLO, ms")->check(finite_range(1e-6, 3.6e6, "ms"));
    cmd->add_option("--slo-tpot-ms", o->slo_tpot_ms, "goodput: time-per-output-token SLO, ms")->check(finite_range(1e-6, 3.6e6, "ms"));
    cmd->add_option("--requests-out", o->requests_out, "write one record per request: F.jsonl (JSON lines) or F.csv");
    cmd->add_option("--chrome-trace", o->chrome_trace, "write the iterations as a Chrome trace (Perfetto, chrome://tracing)");
    cmd->callback([k, o, cmd] {
      o->rate_given = cmd->count("--rate") > 0;
      run_serve(*k, *o);
    });
  }
  {
    auto* cmd = group->add_subcommand("capacity", "the highest arrival rate whose p90 TTFT and p99 TPOT meet their SLOs");
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
  {
    auto* cmd = group->add_subcommand("sweep", "one open-loop run per arrival rate: throughput-latency curve, latency CDFs, goodput");
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
}

}  // namespace bitline::cli
