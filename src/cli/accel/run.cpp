// `bitline accel run`: one point (model, system, context, SLO) with a readable breakdown.
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/accel/common.hpp"
#include "cli/accel/report.hpp"
#include "core/error.hpp"
#include "llm/deployment.hpp"
#include "llm/prefill.hpp"
#include "llm/static_batch.hpp"

namespace bitline::cli::accel {
namespace {

using namespace bitline::llm;

struct RunOpts {
  std::string model, system, context, json, precision;
  int64_t gpus = 0, batch = 0;
  double slo = 0;
  bool breakdown = false, static_batch = false;
};

/// --system, with --gpus: `--system csi --gpus 8` and `--system csix8` name the same system.
SystemName run_system(const RunOpts& o, const KindOptions& k) {
  // --preset KIND names the kind as --system does (one convention for every command); both must agree.
  std::string system = o.system;
  const std::string pk = k.preset_kind();
  if (!pk.empty()) {
    if (system.empty()) system = pk;
    if (system != pk && parse_system(system).kind != pk)
      throw ConfigError(fmt::format("--preset {} names GPU kind '{}' but --system {} names another", k.preset, pk, o.system));
  }
  if (system.empty()) throw ConfigError("accel run: give the system with --system KINDxN (or --system KIND --gpus N, --preset KIND)");
  const auto known = available_kinds();
  std::error_code ec;
  const bool bare_kind = std::find(known.begin(), known.end(), system) != known.end() ||
                         (kind_is_path(system) && std::filesystem::is_regular_file(system, ec));
  if (bare_kind && o.gpus <= 0)
    throw ConfigError(fmt::format("--system {}: give the GPU count with --gpus N (or write {}x8)", system, system));
  return parse_system(bare_kind ? fmt::format("{}x{}", system, o.gpus) : system);
}

/// The resolved config of the run's kind, with the parameters the overrides change (also printed).
Json run_config(const KindOptions& k, const std::string& kind, const KindParams& kp) {
  Json j = kind_json(kp);
  Json o = k.overrides(kind);
  if (!o.empty()) j["overridden"] = std::move(o);
  return j;
}

/// The point at --batch on the preferred deployment (no search).
PointResult point_at_batch(const Server& s, const ModelConfig& m, const ContextSpec& c, const RunOpts& o, int64_t gpus) {
  PointResult p;
  p.model = m.name;
  p.context = c.name;
  p.gpus = gpus;
  p.slo_ms = o.slo;
  p.step = s.step(o.batch, c);
  p.feasible = p.step.capacity.fits;
  p.bound_by = p.step.step <= bitline::ms(o.slo) ? BoundBy::GivenBatch : BoundBy::GivenBatchMissesSlo;
  if (!p.feasible) p.reason = fmt::format("batch {} per rank does not fit ({} exhausted)", o.batch, to_string(p.step.capacity.limit));
  p.deployment = deployment_json(s.deployment());
  return p;
}

void write_run_json(const RunOpts& o, const PointResult& p, const RunExtras& x, const ContextSpec& c, const Json& config,
                    const std::vector<std::string>& warnings) {
  Json j = p.json();
  if (o.batch > 0) j["step"] = p.step.json();
  if (x.timed) {
    j["prefill"] = x.prefill.json();
    j["latency"] = x.latency.json();
    j["latency"]["prefill_engine_ms"] = to_s(x.prefill_engine) * 1e3;
    j["latency"]["request_engine_ms"] = to_s(x.request_engine) * 1e3;
    j["latency"]["input_tokens"] = c.input;
    j["latency"]["output_tokens"] = c.output;
  }
  if (x.timed && o.breakdown) j["breakdown_by_class"] = {{"prefill", x.prefill.breakdown.json()}, {"decode", x.decode.json()}};
  j["config"] = config;
  if (!warnings.empty()) j["model_warnings"] = warnings;
  write_json_file(o.json, j);
  fmt::print("wrote {}\n", o.json);
}

/// What both run modes start from: the system, context, model and kind's parameters, the overrides and model
/// warnings printed, the GPU count.
struct RunInputs {
  SystemName sn;
  ContextSpec c;
  ModelConfig m;
  KindParams kp;
  Json config;
  int64_t gpus = 0;
};

RunInputs run_inputs(const KindOptions& k, const RunOpts& o) {
  RunInputs in{run_system(o, k), context_arg(o.context), load_model(o.model), {}, {}, 0};
  in.kp = k.load(in.sn.kind);
  in.config = run_config(k, in.sn.kind, in.kp);
  fmt::print("{}", overrides_text({{in.sn.kind, in.kp}}, k));
  for (const auto& w : in.m.warnings) fmt::print("warning: model {}: {}\n", in.m.name, w);
  in.gpus = o.gpus > 0 ? o.gpus : in.sn.gpus;
  return in;
}

/// --static-batch: B prompts prefilled together, then OUT - 1 decode steps (llm/static_batch.hpp), no SLO search.
void run_static(const KindOptions& k, const RunOpts& o) {
  if (o.batch <= 0) throw ConfigError("--static-batch: give the batch with --batch N (the prompts of the whole system)");
  const RunInputs in = run_inputs(k, o);
  const auto& [sn, c, m, kp_loaded, config, gpus] = in;
  const KindParams kp = static_batch_params(kp_loaded);  // TensorRT-LLM's runtime: tensor-parallel attention
  DeploymentSearch ds(m, kp, gpus);
  const Server* sp = ds.preferred();
  if (!sp) throw ConfigError(ds.setup_error(0));
  const Server& s = *sp;
  // --batch is the whole batch (B prompts), shared by the attention ranks (1 under tensor parallelism); the timed
  // GPU's rank holds the most, ceil(B / ranks).
  const StaticBatchReport b = run_static_batch(s, o.batch, c);
  const auto ms = [](Time t) { return to_s(t) * 1e3; };
  const int64_t ranks = s.deployment().ranks;
  fmt::print("{} on {}x{} ({}), static batch of {}{}, {}:{} tokens, precision {}\n", m.name, sn.kind, gpus, s.deployment().describe(),
             b.batch, ranks > 1 ? fmt::format(" ({} on the busiest of {} attention ranks)", b.requests_per_rank, ranks) : "", c.input,
             c.output, kp.llm.precision.name());
  fmt::print("  prefill {:.2f} ms (GPU {:.2f} + engine {:.2f}{}) = time to first token\n", ms(b.ttft), ms(b.prefill.time),
             ms(b.prefill_engine), b.request_engine.raw() > 0 ? fmt::format(" + request {:.2f}", ms(b.request_engine)) : "");
  if (b.decode_steps > 0)
    fmt::print("  decode {} steps: {:.2f} ms (step {:.3f} ms at the first, {:.3f} ms at the last; engine {:.2f} ms; {} steps timed)\n",
               b.decode_steps, ms(b.decode), ms(b.first_step), ms(b.last_step), ms(b.decode_engine), b.steps_timed);
  fmt::print("  total {:.2f} ms -> {:.1f} output tokens/s per GPU\n", ms(b.total), b.output_tokens_per_s_per_gpu);
  RunExtras x;
  if (o.breakdown) {
    x.prefill = b.prefill;
    // A decode step in the middle of the run (every request at IN + OUT / 2 tokens).
    const StepGraph g = s.graph_at(std::vector<int64_t>(size_t(b.requests_per_rank), c.input + c.output / 2), c);
    x.decode = decode_breakdown(g, s.weights(), s.memory(), MemoryTiming::of(s.system()));
    print_class_table(x.prefill, x.decode, m.layers);
  }
  if (!o.json.empty()) {
    Json j = {{"model", m.name}, {"system", system_label(sn.kind, gpus)}, {"context", c.name}};
    j["deployment"] = deployment_json(s.deployment());
    j["static_batch"] = b.json();
    j["prefill"] = b.prefill.json();
    j["latency"] = {{"ttft_ms", ms(b.ttft)},
                    {"tpot_ms", b.decode_steps > 0 ? ms(b.decode) / double(b.decode_steps) : 0.0},
                    {"end_to_end_ms", ms(b.total)},
                    {"input_tokens", c.input},
                    {"output_tokens", c.output}};
    j["capacity"] = b.capacity.json();
    if (o.breakdown) j["breakdown_by_class"] = {{"prefill", x.prefill.breakdown.json()}, {"decode", x.decode.json()}};
    j["config"] = config;
    if (!m.warnings.empty()) j["model_warnings"] = m.warnings;
    write_json_file(o.json, j);
    fmt::print("wrote {}\n", o.json);
  }
  std::fflush(stdout);
}

void run_point(const KindOptions& k, const RunOpts& o) {
  check_json_output(o.json);
  check_distinct_files({{"--json", o.json}}, input_files(k, {o.model}, {o.system}));
  if (o.static_batch) return run_static(k, o);
  if (!(o.slo > 0)) throw ConfigError("accel run: --slo MS is required (unless --static-batch)");
  const RunInputs in = run_inputs(k, o);
  const auto& [sn, c, m, kp, config, gpus] = in;
  // The deployment is searched with the batch (llm.deployment_search); --batch times the preferred one.
  DeploymentSearch ds(m, kp, gpus);
  PointResult p;
  const Server* sp = ds.preferred();
  if (o.batch > 0) {
    if (!sp) throw ConfigError(ds.setup_error(0));
    p = point_at_batch(*sp, m, c, o, gpus);
  } else {
    p = ds.search(c, bitline::ms(o.slo));
    sp = ds.chosen();
    if (!sp) throw ConfigError(p.reason);  // no deployment can be built
  }
  p.system = system_label(sn.kind, gpus);
  const RunExtras x = run_extras(*sp, p, c, o.breakdown);
  print_point(p, *sp);
  print_extras(x, c, m.layers, o.breakdown);
  std::fflush(stdout);
  // No result file for no result (exit 1, as every command's): the reason is printed, and a sweep of points is
  // `accel sweep`, which records infeasible points with their reasons.
  if (!p.feasible) throw ModelError(fmt::format("no feasible batch: {}", p.reason));
  if (!o.json.empty()) write_run_json(o, p, x, c, config, m.warnings);
}

}  // namespace

void add_run(CLI::App& accel) {
  auto* cmd = accel.add_subcommand("run", "one point: the largest batch meeting the SLO, with a readable breakdown");
  auto k = std::make_shared<KindOptions>();
  auto o = std::make_shared<RunOpts>();
  k->add_to(*cmd);
  cmd->add_flag("--breakdown", o->breakdown,
                "print (and write to --json) the prefill and the decode step by operator class, per layer and per step");
  cmd->add_option("--model", o->model, "a model of configs/models/ by name, or a config.json path")->required();
  cmd->add_option("--system", o->system,
                  "KIND x GPUS (csix8, b200x8, ./mine.yamlx8; KIND: a file of configs/gpus/ or the path of a kind's YAML file), or a "
                  "kind with --gpus");
  cmd->add_option("--gpus", o->gpus, "GPUs (overrides the count in --system)")->check(whole_range(1, 99999, "GPUs"));
  cmd->add_option("--context", o->context,
                  "a context named in the evaluation experiment (e.g. long) or IN:OUT (average input and output tokens)")
      ->required();
  cmd->add_option("--slo", o->slo, "decode-step latency SLO, ms (required unless --static-batch)")->check(slo_ms());
  cmd->add_flag("--static-batch", o->static_batch,
                "static batching (TensorRT-LLM gptSessionBenchmark): --batch prompts of IN tokens prefilled together, then "
                "OUT - 1 decode steps; no SLO search (JSON: static_batch, latency.ttft_ms)");
  cmd->add_option("--precision", o->precision,
                  "number format of weights, activations and KV cache: model (default: the model's own), bf16, fp16, fp8, fp4 "
                  "(sets llm.precision)");
  cmd->add_option("--batch", o->batch,
                  "time this batch (requests per attention rank) instead of searching; with --static-batch the whole batch")
      ->check(whole_range(1, kMaxBatchOption, "requests"));
  cmd->add_option("--json", o->json, "write the point (and the resolved config) to this file");
  cmd->callback([k, o] {
    if (!o->precision.empty()) k->sets.push_back("llm.precision=" + o->precision);
    run_point(*k, *o);
  });
}

}  // namespace bitline::cli::accel
