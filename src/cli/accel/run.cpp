// `bitline accel run`: one point (model, system, context, SLO) with a readable breakdown.
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/accel/common.hpp"
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

double ms_of(Time t) { return to_s(t) * 1e3; }

/// The deployment search (llm/deployment.hpp): what the preferred deployment and the others tried gave.
void print_deployments_tried(const PointResult& p) {
  if (!p.deployment.contains("tried") || p.deployment["tried"].size() <= 1) return;
  const std::string label = p.deployment["label"].get<std::string>();
  fmt::print("  deployment {}; tried:", !p.feasible                             ? "none feasible (reported on the preferred " + label + ")"
                                        : p.deployment["preferred"].get<bool>() ? label + " (the preferred one)"
                                                                                : label + " (not the preferred one)");
  const char* sep = " ";
  for (const Json& t : p.deployment["tried"]) {
    fmt::print("{}{} -> {}", sep, t["deployment"].get<std::string>(),
               t["feasible"].get<bool>() ? fmt::format("batch {}", t["batch"].get<int64_t>()) : t["reason"].get<std::string>());
    sep = "; ";
  }
  fmt::print("\n");
}

/// The step: throughput, power, the critical path, the collectives and the bytes read.
void print_step(const PointResult& p, bool hbf) {
  const StepReport& r = p.step;
  fmt::print("  step {:.3f} ms -> {:.1f} tokens/s per GPU, {:.3f} tokens/J, {:.0f} W per GPU\n", ms_of(r.step), r.tokens_per_s_per_gpu,
             r.tokens_per_j, r.power.raw());
  fmt::print(
      "  board power {:.0f} W (GPU die {:.0f} + HBM stacks {:.0f} + HBF stacks {:.0f} + HBF base dies {:.0f}) -> {:.3f} tokens/J at board "
      "power\n",
      r.tdp.raw(), r.board_die.raw(), r.board_hbm.raw(), r.board_hbf.raw(), r.board_base.raw(), r.tokens_per_j_board);
  const Breakdown& b = r.breakdown;
  // The parts of the step on its critical path (they add up to the step; what overlaps with them is not listed).
  // Parts that cannot occur on this system (flash latency, erases, GroupArrange without HBF) are left out.
  const std::pair<const char*, Time> parts[] = {{"weights", b.weights},
                                                {"KV reads", b.kv},
                                                {"compute (exposed: not hidden under memory)", b.compute},
                                                {"communication", b.comm},
                                                {"kernel overhead", b.overhead},
                                                {"serving engine", b.engine},
                                                {"exposed flash latency", hbf ? b.flash_latency : Time(-1)},
                                                {hbf ? "KV programming (HBF)" : "KV writes (HBM)", b.kv_write},
                                                {"erasing finished requests", hbf ? b.kv_erase : Time(-1)},
                                                {"GroupArrange copy to HBM", hbf ? b.kv_arrange : Time(-1)}};
  std::string list;
  for (const auto& [name, t] : parts)
    if (t >= Time(0)) list += fmt::format("{}{} {:.3f}", list.empty() ? "" : ", ", name, ms_of(t));
  fmt::print("  step on its critical path (ms, adding up to the step): {}\n", list);
  // Collectives per step (llm/collectives.hpp; llm.network.all_reduce / all_to_all), by kind.
  fmt::print("  collectives per step (ms):");
  for (int i = 0; i < kCollectiveKinds; ++i) fmt::print(" {} {:.3f}", to_string(CollectiveKind(i)), ms_of(r.comm_by_kind[size_t(i)]));
  fmt::print("; {:.1f} MB over NVLink, {:.1f} MB over RDMA per GPU\n", double(r.comm_nvlink.raw()) * 1e-6,
             double(r.comm_rdma.raw()) * 1e-6);
  fmt::print("  bytes read per GPU: flash {:.1f} GB, HBM {:.1f} GB -> {:.3f} ms at peak bandwidth", r.flash_bytes * 1e-9,
             r.hbm_bytes * 1e-9, ms_of(r.memory_time));
  if (p.feasible)
    fmt::print("; bandwidth bound: batch {} (bytes alone at peak bandwidth within the SLO, capacity ignored)", p.bandwidth_bound_batch);
  fmt::print("\n");
}

/// Capacity per GPU, part by part (Server::capacity; llm.runtime_reserve, llm.workspace_buffers, ...), and the KV writes.
void print_memory(const StepReport& r, const Server& s) {
  const Capacity& c = r.capacity;
  // An HBM-less GPU keeps its workspace and KV staging in SRAM (on-chip and the HBF base dies'): Server::capacity.
  const auto gb = [](Bytes b) { return double(b.raw()) * 1e-9; };
  fmt::print(
      "  memory per GPU: weights {:.2f} GB ({}), KV {:.2f} GB ({}), activation workspace {:.3f} GB ({}), runtime reserve {:.2f} GB ({})",
      gb(c.weights), s.has_hbf() ? "HBF" : "HBM", gb(c.kv), s.has_hbf() ? "HBF" : "HBM", gb(c.workspace),
      s.params().system.hbm.stacks > 0 ? "HBM" : "SRAM", gb(c.reserve),
      c.reserve_in_flash ? fmt::format("HBF, {} block(s) per megaplane", c.reserve_blocks) : std::string("HBM"));
  if (c.staging.raw() > 0) fmt::print(", KV staging {:.2f} GB", gb(c.staging));
  fmt::print("\n  {} used {:.1f} of {:.1f} GB", s.params().system.hbm.stacks > 0 ? "HBM" : "SRAM (no HBM)", gb(c.hbm_used),
             gb(c.hbm_capacity));
  if (c.weight_cache.raw() > 0) fmt::print(" (weight cache {:.1f} GB)", double(c.weight_cache.raw()) * 1e-9);
  if (c.blocks_per_megaplane > 0)
    fmt::print(", up to {:.1f} GB for KV replicas; HBF blocks {} of {} per megaplane", double(c.replica_budget.raw()) * 1e-9, c.blocks_used,
               c.blocks_per_megaplane);
  fmt::print("\n  KV writes {:.3f} GB/s per GPU", r.kv_write_bytes_per_s * 1e-9);
  if (s.has_hbf())
    fmt::print(" (programming {:.2f}% and erasing {:.2f}% of the time; {}-year writes {:.3f} x TBW, erases {:.3f} x the P/E budget)",
               100 * r.program_time_fraction, 100 * r.erase_time_fraction, s.params().serving.endurance_years, r.lifetime_writes_fraction,
               r.lifetime_erase_fraction);
  fmt::print("\n");
}

void print_point(const PointResult& p, const Server& s) {
  fmt::print("{} on {} ({}), context {}, SLO {:g} ms\n", p.model, p.system, s.deployment().describe(), p.context, p.slo_ms);
  print_deployments_tried(p);
  const StepReport& r = p.step;
  if (!p.feasible) {
    fmt::print("  infeasible: {}\n", p.reason);
    if (r.step.raw() <= 0) return;
    fmt::print("  (the step at batch {}:)\n", r.batch);
  } else {
    fmt::print("  batch {} ({} per attention rank), bound by {}{}\n", r.batch, r.requests_per_rank, p.bound_by,
               p.capacity_limit.empty() ? "" : " (" + p.capacity_limit + ")");
  }
  print_step(p, s.params().system.hbf.stacks > 0);
  print_memory(r, s);
}

/// What `accel run` adds to a point: the prefill of one prompt (time to first token), the request-level latency,
/// and with --breakdown the decode step by operator class.
struct RunExtras {
  bool timed = false;
  PrefillReport prefill;
  Time prefill_engine{};  // the engine's host side of the prefill
  Time request_engine{};  // the engine's own cost of the request (serving.engine.request)
  RequestLatency latency;
  OpBreakdown decode;
};

void print_class_table(const PrefillReport& pf, const OpBreakdown& dec, int64_t layers) {
  fmt::print("  by operator class (ms; per layer = mean over the {} layers):\n", layers);
  fmt::print("    {:<22} {:>12} {:>12} {:>12} {:>12}\n", "class", "prefill", "per layer", "decode step", "per layer");
  const auto ms = [](Time t) { return to_s(t) * 1e3; };
  const auto mean = [&](const OpBreakdown& b, OpClass c) {
    Time s{};
    for (const ClassTimes& l : b.layers) s += l[c];
    return b.layers.empty() ? 0.0 : ms(s) / double(b.layers.size());
  };
  for (size_t i = 0; i < kOpClasses; ++i) {
    const OpClass c = OpClass(i);
    fmt::print("    {:<22} {:>12.3f} {:>12.4f} {:>12.3f} {:>12.4f}\n", to_string(c), ms(pf.breakdown.total[c]), mean(pf.breakdown, c),
               ms(dec.total[c]), mean(dec, c));
  }
  fmt::print("    {:<22} {:>12.3f} {:>12} {:>12.3f}\n", "total", ms(pf.breakdown.total.total()), "", ms(dec.total.total()));
  // Each kernel class: its kernels' time, what they achieved and what bound them (math or memory).
  fmt::print("  kernels by class (time incl. launch overheads; achieved rates; the bound that took most of the time):\n");
  fmt::print("    {:<22} {:>10} {:>9} {:>9} {:>8}   {:>10} {:>9} {:>9} {:>8}\n", "class", "prefill ms", "TFLOP/s", "GB/s", "bound",
             "decode ms", "TFLOP/s", "GB/s", "bound");
  for (size_t i = 0; i < kOpClasses; ++i) {
    const KernelClassStats &p = pf.breakdown.kernels[i], &d = dec.kernels[i];
    if (p.time.raw() <= 0 && d.time.raw() <= 0) continue;
    const auto row = [&](const KernelClassStats& k) {
      const Json j = k.json();
      return fmt::format("{:>10.3f} {:>9.1f} {:>9.1f} {:>8}", j["time_ms"].get<double>(), j["tflop_per_s"].get<double>(),
                         j["gb_per_s"].get<double>(), j["bound"].get<std::string>());
    };
    fmt::print("    {:<22} {}   {}\n", to_string(OpClass(i)), row(p), row(d));
  }
}

// Times the prefill, the request and (with --breakdown) the decode step by class; prints nothing, so that a refusal
// (a prefill beyond the time limit) comes before any output.
RunExtras run_extras(const Server& s, const PointResult& p, const ContextSpec& c, bool breakdown) {
  RunExtras x;
  if (p.step.requests_per_rank <= 0 || p.step.step.raw() <= 0) return x;
  const KindParams& kp = s.params();
  const ModelConfig& m = s.model();
  x.prefill = time_prefill(m, s.deployment(), s.weights(), s.gpu(), s.network(), prefill_memory(s.system()), c.input, kp.serving.prefill,
                           kp.serving.routing_skew);
  const StepGraph g = s.graph(p.step.requests_per_rank, c);
  // Disaggregated: the prompt's KV (this GPU's share) crosses to the decode GPUs over RDMA before the second token.
  const double kv_bytes = double(c.input) * double(g.kv_token_layer_bytes) * double(m.layers);
  const Time kv_transfer = ps(kv_bytes / kp.llm.network.rdma.raw() * 1e12);
  // The engine's host side of the prefill, and the request's own (serving.engine; none under the default engine here).
  const Deployment& d = s.deployment();
  const EngineOverheads engine = engine_overheads(kp.serving.engine, false, engine_workers(d));
  x.prefill_engine =
      engine.added(x.prefill.time, x.prefill.kernels,
                   engine_sequences(d, x.prefill.requests_per_rank, x.prefill.requests_per_rank * d.ranks), x.prefill.chunks);
  x.request_engine = engine.request;
  x.latency = request_latency(x.prefill.time + x.prefill_engine + x.request_engine, kv_transfer, p.step.step, c.output);
  x.timed = true;
  if (breakdown) {
    x.decode = decode_breakdown(g, s.weights(), s.memory(), MemoryTiming::of(s.system()));
    // Programming the step's new KV and erasing finished requests' blocks happen outside the kernels.
    x.decode.total[OpClass::KvWrite] += p.step.breakdown.kv_write + p.step.breakdown.kv_erase;
  }
  return x;
}

void print_extras(const RunExtras& x, const ContextSpec& c, int64_t layers, bool breakdown) {
  if (!x.timed) return;
  const auto ms = [](Time t) { return to_s(t) * 1e3; };
  const Time host = x.prefill_engine + x.request_engine;
  fmt::print("  prefill of {} prompt{} of {} tokens per rank ({} chunk{} of {}): {} {:.2f} ms ({:.3g} FLOP per GPU)\n",
             x.prefill.requests_per_rank, x.prefill.requests_per_rank > 1 ? "s" : "", x.prefill.prompt_tokens, x.prefill.chunks,
             x.prefill.chunks > 1 ? "s" : "", x.prefill.chunk_tokens, host > Time{} ? "GPU time" : "time to first token",
             ms(x.prefill.time), x.prefill.flops);
  if (host > Time{})
    fmt::print("  engine (serving.engine): {:.3f} ms of host time before the first token (prefill {:.3f}, request {:.3f})\n", ms(host),
               ms(x.prefill_engine), ms(x.request_engine));
  fmt::print("  request {}:{} tokens: TTFT {:.2f} ms + KV transfer {:.2f} ms, TPOT {:.3f} ms, end to end {:.3f} s\n", c.input, c.output,
             ms(x.latency.ttft), ms(x.latency.kv_transfer), ms(x.latency.tpot), to_s(x.latency.end_to_end));
  if (breakdown) print_class_table(x.prefill, x.decode, layers);
}

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
  p.bound_by = p.step.step <= bitline::ms(o.slo) ? "given batch" : "given batch (misses the SLO)";
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
    Json j = {{"model", m.name}, {"system", fmt::format("{}x{}", sn.kind, gpus)}, {"context", c.name}};
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
  p.system = fmt::format("{}x{}", sn.kind, gpus);
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
