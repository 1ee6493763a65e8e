#include "cli/serve/common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/param_dump.hpp"
#include "core/text.hpp"

namespace bitline::cli::serve_cli {

namespace {

/// The deployment that serves a workload whose longest request has `longest` tokens (prompt + output):
/// serve::serving_deployment (the preferred one when its KV memory holds that request, else the first candidate that
/// does, docs/llm.md, "Deployment").
void choose_deployment(Setup& s, int64_t longest) { s.server = serving_deployment(*s.ds, s.sp, longest, &s.choice, s.engine); }

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
  k.engine = o.engine;
  s->sn = llm::parse_system(system);
  const ConfigTree tree = k.tree(s->sn.kind);
  s->kp = llm::load_kind_params(tree, s->sn.kind);
  s->sp = load_params<ServeParams>(tree, "serve");
  s->engine = load_engine(tree, s->sp, engine_context(s->kp));
  s->engine.profile = o.engine;  // as given: a shipped profile's name, or the file
  if (!s->engine.ideal() && *s->kp.serving.engine.kind != llm::EngineKind::Auto && *s->kp.serving.engine.kind != llm::EngineKind::None)
    throw ConfigError(
        fmt::format("serving.engine.kind = {}: the engine profile '{}' gives the host costs; use --engine ideal to "
                    "add serving.engine's kind to the kernels instead",
                    s->kp.serving.engine.kind.name(), o.engine));
  s->config = accel::kind_json(s->kp);
  s->config["serve"] = dump_params(s->sp);
  s->config["engine"] = s->engine.json();
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

/// The coefficient of variation of the inter-arrival times: --cv for gamma arrivals, 1 otherwise (Poisson's; constant
/// arrivals ignore it).
double arrival_cv(const ServeOpts& o) { return parse_arrival(o.arrival) == ArrivalKind::Gamma ? o.cv : 1.0; }

}  // namespace

std::unique_ptr<Setup> make_setup(const accel::KindOptions& k, const ServeOpts& o, const Workload& w, bool quiet) {
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
  c.engine = s.engine;
  if (!s.prefill) {
    c.colocated = s.server;
    return c;
  }
  c.prefill = {s.prefill->server, s.prefill_instances};
  c.decode = {s.server, s.decode_instances};
  return c;
}

std::vector<Request> request_lengths(const ServeOpts& o) {
  if (o.requests < 1) throw ConfigError("serve: give the number of requests with --requests K (K >= 1)");
  if (!o.lengths.empty()) {
    if (!o.input.empty() || !o.output.empty()) throw ConfigError("--lengths: gives both lengths; leave out --input and --output");
    return sample_lengths(o.requests, read_trace(o.lengths, 0), o.seed);
  }
  if (o.input.empty() || o.output.empty()) throw ConfigError("serve: give the lengths with --input IN and --output OUT, or --lengths FILE");
  const LengthSpec in = LengthSpec::parse(o.input, "--input"), out = LengthSpec::parse(o.output, "--output");
  // The decoding work from the lengths' mean, before millions of requests are drawn (checked again once drawn).
  check_decode_work(double(o.requests) * out.expected(), size_t(o.requests), 1, "serve", true);
  return make_requests(o.requests, in, out, o.seed);
}

Workload at_rate(const ServeOpts& o, std::vector<Request> reqs, double rate) {
  Workload w;
  w.requests = std::move(reqs);
  set_open_loop_arrivals(w.requests, rate, parse_arrival(o.arrival), arrival_cv(o), o.seed);
  return w;
}

Workload make_workload(const ServeOpts& o, double rate, CsvTraceInfo* info) {
  Workload w;
  if (!o.trace.empty()) {
    w.requests = read_trace(o.trace, o.requests, info);
    if (o.trace_speed != 1) scale_trace_speed(w.requests, o.trace_speed);
    w.max_concurrency = o.max_concurrency;
    return w;
  }
  if (o.concurrency <= 0) {
    w = at_rate(o, request_lengths(o), rate);
    w.max_concurrency = o.max_concurrency;
    return w;
  }
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
  if (o.trace_speed != 1 && o.trace.empty()) throw ConfigError("--trace-speed: replays a --trace faster or slower; give one");
  if (o.max_concurrency > 0 && o.concurrency > 0)
    throw ConfigError("--max-concurrency: caps an open loop (--rate) or a trace; a closed loop's --concurrency is its own cap");
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
            {"system", s.sn.label},
            {"deployment", llm::deployment_json(s.server->deployment())},
            {"deployment_choice", s.choice.empty() ? Json("preferred") : Json(s.choice)},
            {"engine", s.engine.profile},
            {"engine_family", std::string(family_name(s.engine.family))},
            {"engine_version", s.engine.version},
            {"scheduler", std::string(s.sp.scheduler.name())},
            {"seed", o.seed}};
  if (s.prefill) {
    const Setup& p = *s.prefill;
    j["disaggregation"] = {{"prefill",
                            {{"system", p.sn.label},
                             {"instances", s.prefill_instances},
                             {"deployment", llm::deployment_json(p.server->deployment())},
                             {"deployment_choice", p.choice.empty() ? Json("preferred") : Json(p.choice)}}},
                           {"decode", {{"system", s.sn.label}, {"instances", s.decode_instances}, {"scheduler", "chunked"}}},
                           {"kv_link", "RDMA: llm.network.rdma per GPU of the smaller side, after llm.network.rdma_latency"}};
  }
  Json w;
  if (!o.trace.empty())
    w = {{"kind", "trace"}, {"file", o.trace}};
  else if (o.concurrency > 0)
    w = {{"kind", "closed_loop"}, {"concurrency", o.concurrency}};
  else
    w = {{"kind", "open_loop"}, {"arrival", o.arrival}, {"rate_per_s", o.rate}, {"cv", arrival_cv(o)}};
  if (!o.trace.empty() && o.trace_speed != 1) w["speed"] = o.trace_speed;
  if (o.max_concurrency > 0) w["max_concurrency"] = o.max_concurrency;
  if (o.trace.empty() && o.lengths.empty()) w["input"] = o.input, w["output"] = o.output;
  if (!o.lengths.empty()) w["lengths"] = o.lengths;
  if (o.trace.empty()) w["requests"] = o.requests;
  j["workload"] = w;
  return j;
}

std::vector<double> percentile_list(const ServeOpts& o) {
  std::vector<double> out;
  if (o.percentiles.empty()) return out;
  for (const std::string& item : split_list(o.percentiles, ',', "--percentiles")) {
    double p = 0;
    if (!parse_decimal_number(item, p) || !(p > 0 && p < 100))
      throw ConfigError(fmt::format("--percentiles: '{}' is not a percentile in (0, 100), in decimal", text_brief(item)));
    if (out.size() >= 16) throw ConfigError("--percentiles: more than 16 percentiles");
    out.push_back(p);
  }
  return out;
}

void add_common(CLI::App& cmd, ServeOpts& o) {
  cmd.add_option("--model", o.model, "a model of configs/models/ by name, or a config.json path")->required();
  cmd.add_option("--system", o.system, "KIND x GPUS, e.g. h100x8 (KIND: a file of configs/gpus/ or a kind's YAML path)")->required();
  cmd.add_option("--tp", o.tp, "attention tensor-parallel degree (sets llm.tp_size, no deployment search; 1: data parallel)")
      ->check(whole_range(1, 1024, "GPUs"));
  cmd.add_option("--precision", o.precision, "weights, activations and KV: model, bf16, fp16, fp8, fp4 (sets llm.precision)");
  cmd.add_option("--engine", o.engine,
                 "the serving engine: a profile of configs/engines/ (vllm, vllm-v0, sglang, tensorrt-llm, ideal: bitline describe "
                 "--engines) or a profile's YAML path; its options set with --set engine.OPTION=VALUE")
      ->capture_default_str();
  cmd.add_option("--scheduler", o.scheduler, fmt::format("{} (sets serve.scheduler; with --engine ideal)", schedulers().joined(", ")));
  cmd.add_option("--arrival", o.arrival, "open loop arrivals: poisson, gamma or constant")
      ->check(CLI::IsMember({"poisson", "gamma", "constant"}));
  cmd.add_option("--cv", o.cv, "--arrival gamma: coefficient of variation of the gaps (1 = Poisson)")->check(finite_range(1e-3, 100, ""));
  cmd.add_option("--input", o.input, "prompt tokens: N, uniform:LO:HI, lognormal:MEAN:SIGMA or csv:FILE:COLUMN");
  cmd.add_option("--output", o.output, "output tokens: N, uniform:LO:HI, lognormal:MEAN:SIGMA or csv:FILE:COLUMN");
  cmd.add_option("--lengths", o.lengths,
                 "(prompt, output) pairs drawn with replacement from a trace file (any --trace format), instead of --input/--output");
  cmd.add_option("--max-concurrency", o.max_concurrency,
                 "an open loop (--rate) or a trace with at most this many requests in flight: one due while all are is sent when "
                 "one finishes, its latencies counted from then (vLLM benchmark_serving's --max-concurrency)")
      ->check(whole_range(1, kMaxRequests, "requests", kRequestsWhy));
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
  cmd.add_option("--percentiles", o.percentiles,
                 "P1,P2,...: more percentiles of TTFT, TPOT, ITL and E2E in the JSON summary (keys pP, '.' as '_': 99.9 -> p99_9), "
                 "as benchmark_serving's --metric-percentiles");
}

}  // namespace bitline::cli::serve_cli
