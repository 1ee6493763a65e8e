// `bitline accel ...`: LLM serving on HBF-equipped GPUs, the FlashAccel evaluation.
//   eval      a matrix of models x contexts x SLOs x systems -> JSON + summary
//   ablation  one model at a fixed batch on variants (a kind and parameter overrides each)
//   sessions  multi-turn KV reuse (LRU retention) on several systems
//             (eval, ablation and sessions run an experiment file: by default the paper's,
//              configs/experiments/flashaccel-{eval,ablation,sessions}.yaml; --experiment FILE for another)
//   run       one point (model, system, context, SLO) with a readable breakdown
//   kinds     the GPU kinds found in configs/gpus/, with their descriptions
//   sweep     one point over a grid of parameter values (--vary KEY=V1,V2,...) -> JSON + table
//   validate  the fast step model against the event-driven memory simulation
// Each GPU kind is a file of configs/gpus/ (h200, csi, cli, a100, h100, b200, ... : discovered, never listed here),
// with --config and --set applied on top.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/common.hpp"
#include "core/distributed.hpp"
#include "core/error.hpp"
#include "core/json_io.hpp"
#include "core/worker_pool.hpp"
#include "llm/deployment.hpp"
#include "llm/experiment.hpp"
#include "llm/prefill.hpp"
#include "llm/serving.hpp"
#include "llm/sessions.hpp"

namespace bitline::cli {
namespace {

using namespace bitline::llm;

struct KindOptions {
  std::string file;
  std::vector<std::string> sets;
  void add_to(CLI::App& app) {
    app.add_option("--config", file, "YAML file merged over each GPU kind's file (configs/gpus/KIND.yaml)");
    app.add_option("--set", sets,
                   "override one parameter for every GPU kind: key.path=value (repeatable), e.g. llm.compute.kernel_overhead=3us");
  }
  /// The kind's tree: its preset, an experiment's `set:` overrides, --config, --set.
  ConfigTree tree(const std::string& kind, const std::vector<Override>& experiment = {}) const {
    ConfigTree t;
    t.load_preset(kind);
    apply_overrides(t, experiment);
    if (!file.empty()) t.load_file(file);
    for (const auto& s : sets) t.apply_set(s);
    check_top_level(t);
    return t;
  }
  KindParams load(const std::string& kind, const std::vector<Override>& experiment = {}) const {
    return load_kind_params(tree(kind, experiment), kind);
  }
  /// The kinds of `systems` (KIND x GPUS names) or of `kinds`: those an experiment runs, each loaded once.
  std::map<std::string, KindParams> load_all(const std::vector<std::string>& systems, const std::vector<Override>& experiment = {},
                                             const std::vector<std::string>& kinds = {}) const {
    std::map<std::string, KindParams> m;
    for (const auto& s : systems) {
      const std::string k = parse_system(s).kind;
      if (!m.count(k)) m.emplace(k, load(k, experiment));
    }
    for (const auto& k : kinds)
      if (!m.count(k)) m.emplace(k, load(k, experiment));
    return m;
  }
  /// The `sessions` section (kind-independent: read from the tree of `kind`, the experiment's first system).
  SessionParams sessions(const std::string& kind, const std::vector<Override>& experiment = {}) const {
    return load_params<SessionParams>(tree(kind, experiment), "sessions");
  }
};

/// --experiment FILE (default: the shipped NAME).
struct ExperimentOption {
  std::string file;
  void add_to(CLI::App& app, const std::string& name, const std::string& what) {
    file = shipped_experiment(name).string();
    app.add_option("--experiment", file,
                   fmt::format("experiment file: {} (default: the paper's, configs/experiments/{}.yaml)", what, name));
  }
};

/// A --context argument: IN:OUT tokens, or a context named in the shipped evaluation experiment (e.g. long).
ContextSpec context_arg(const std::string& s) {
  if (s.find(':') != std::string::npos) return parse_context(s);
  return parse_context(s, load_eval_experiment(shipped_experiment("flashaccel-eval")).contexts);
}

/// Loads an experiment's models, naming the experiment file when one cannot be read.
void load_models(ModelSet& models, const std::vector<std::string>& names, const std::string& file) {
  for (const auto& n : names) {
    try {
      models.get(n);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: models: {}", file, e.what()));
    }
  }
}

Json kind_json(const KindParams& k) {
  Json j = {{"gpu", dump_params(k.system.gpu)},
            {"hbm", dump_params(k.system.hbm)},
            {"hbf", dump_params(k.system.hbf)},
            {"llm", dump_params(k.llm)},
            {"serving", dump_params(k.serving)}};
  if (k.system.hbf.stacks > 0)  // the cell of the HBF planes: the parts of `nand` the HBF reads
    j["nand"] = {{"timing", dump_params(k.system.cell.timing)}, {"energy", dump_params(k.system.cell.energy)}};
  return j;
}

Json config_json(const std::map<std::string, KindParams>& kinds) {
  Json j;
  for (const auto& [name, k] : kinds) j[name] = kind_json(k);
  return j;
}

double ms_of(Time t) { return to_s(t) * 1e3; }

void print_point(const PointResult& p, const Server& s) {
  fmt::print("{} on {} ({}), context {}, SLO {:g} ms\n", p.model, p.system, s.deployment().describe(), p.context, p.slo_ms);
  if (p.deployment.contains("tried") && p.deployment["tried"].size() > 1) {
    // The deployment search (llm/deployment.hpp): what the preferred deployment and the others tried gave.
    const std::string label = p.deployment["label"].get<std::string>();
    fmt::print("  deployment {}; tried:", !p.feasible ? "none feasible (reported on the preferred " + label + ")"
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
  const StepReport& r = p.step;
  if (!p.feasible) {
    fmt::print("  infeasible: {}\n", p.reason);
    if (r.step.raw() <= 0) return;
    fmt::print("  (the step at batch {}:)\n", r.batch);
  } else {
    fmt::print("  batch {} ({} per attention rank), bound by {}{}\n", r.batch, r.requests_per_rank, p.bound_by,
               p.capacity_limit.empty() ? "" : " (" + p.capacity_limit + ")");
  }
  fmt::print("  step {:.3f} ms -> {:.1f} tokens/s per GPU, {:.3f} tokens/J, {:.0f} W per GPU\n", ms_of(r.step), r.tokens_per_s_per_gpu,
             r.tokens_per_j, r.power.raw());
  fmt::print(
      "  board power {:.0f} W (GPU die {:.0f} + HBM stacks {:.0f} + HBF stacks {:.0f} + HBF base dies {:.0f}) -> {:.3f} tokens/J at board "
      "power\n",
      r.tdp.raw(), r.board_die.raw(), r.board_hbm.raw(), r.board_hbf.raw(), r.board_base.raw(), r.tokens_per_j_board);
  const Breakdown& b = r.breakdown;
  fmt::print(
      "  breakdown (critical path, ms): weights {:.3f}, KV {:.3f}, compute {:.3f}, communication {:.3f}, kernel overhead {:.3f}, "
      "exposed flash latency {:.3f}, KV programming {:.3f}, erasing finished requests {:.3f}, GroupArrange copy to HBM {:.3f}\n",
      ms_of(b.weights), ms_of(b.kv), ms_of(b.compute), ms_of(b.comm), ms_of(b.overhead), ms_of(b.flash_latency), ms_of(b.kv_write),
      ms_of(b.kv_erase), ms_of(b.kv_arrange));
  {
    // Collectives per step (llm/collectives.hpp; llm.network.all_reduce / all_to_all), by kind.
    fmt::print("  collectives per step (ms):");
    for (int i = 0; i < kCollectiveKinds; ++i) fmt::print(" {} {:.3f}", to_string(CollectiveKind(i)), ms_of(r.comm_by_kind[size_t(i)]));
    fmt::print("; {:.1f} MB over NVLink, {:.1f} MB over RDMA per GPU\n", double(r.comm_nvlink.raw()) * 1e-6,
               double(r.comm_rdma.raw()) * 1e-6);
  }
  fmt::print("  bytes read per GPU: flash {:.1f} GB, HBM {:.1f} GB -> {:.3f} ms at peak bandwidth", r.flash_bytes * 1e-9,
             r.hbm_bytes * 1e-9, ms_of(r.memory_time));
  if (p.feasible)
    fmt::print("; bandwidth bound: batch {} (bytes alone at peak bandwidth within the SLO, capacity ignored)", p.bandwidth_bound_batch);
  fmt::print("\n");
  const Capacity& c = r.capacity;
  // An HBM-less GPU keeps its workspace and KV staging in SRAM (on-chip and the HBF base dies'): Server::capacity.
  // Capacity per GPU, part by part (Server::capacity; llm.runtime_reserve, llm.workspace_buffers, ...).
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

/// What `accel run` adds to a point: the prefill of one prompt (time to first token), the request-level latency,
/// and with --breakdown the decode step by operator class.
struct RunExtras {
  bool timed = false;
  PrefillReport prefill;
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
}

RunExtras run_extras(const Server& s, const PointResult& p, const ContextSpec& c, bool breakdown) {
  RunExtras x;
  if (p.step.requests_per_rank <= 0 || p.step.step.raw() <= 0) return x;
  const KindParams& kp = s.params();
  const ModelConfig& m = s.model();
  const GpuCompute gpu(kp.system.gpu.bf16_flops, kp.llm.compute);
  const Network net(kp.llm.network);
  x.prefill = time_prefill(m, s.deployment(), s.weights(), gpu, net, prefill_memory(s.system()), c.input, kp.serving.prefill,
                           kp.serving.routing_skew);
  const StepGraph g = s.graph(p.step.requests_per_rank, c);
  // Disaggregated: the prompt's KV (this GPU's share) crosses to the decode GPUs over RDMA before the second token.
  const double kv_bytes = double(c.input) * double(g.kv_token_layer_bytes) * double(m.layers);
  const Time kv_transfer = ps(kv_bytes / kp.llm.network.rdma.raw() * 1e12);
  x.latency = request_latency(x.prefill.time, kv_transfer, p.step.step, c.output);
  x.timed = true;
  const auto ms = [](Time t) { return to_s(t) * 1e3; };
  fmt::print("  prefill of {} prompt{} of {} tokens per rank ({} chunk{} of {}): time to first token {:.2f} ms ({:.3g} FLOP per GPU)\n",
             x.prefill.requests_per_rank, x.prefill.requests_per_rank > 1 ? "s" : "", x.prefill.prompt_tokens, x.prefill.chunks,
             x.prefill.chunks > 1 ? "s" : "", x.prefill.chunk_tokens, ms(x.prefill.time), x.prefill.flops);
  fmt::print("  request {}:{} tokens: TTFT {:.2f} ms + KV transfer {:.2f} ms, TPOT {:.3f} ms, end to end {:.3f} s\n", c.input, c.output,
             ms(x.latency.ttft), ms(x.latency.kv_transfer), ms(x.latency.tpot), to_s(x.latency.end_to_end));
  if (breakdown) {
    x.decode = decode_breakdown(g, s.weights(), s.memory(), MemoryTiming::of(s.system()));
    // Programming the step's new KV and erasing finished requests' blocks happen outside the kernels.
    x.decode.total[OpClass::KvWrite] += p.step.breakdown.kv_write + p.step.breakdown.kv_erase;
    print_class_table(x.prefill, x.decode, m.layers);
  }
  return x;
}

/// One --vary option: a parameter and the values it takes.
struct Vary {
  std::string key;
  std::vector<std::string> values;
};

Vary parse_vary(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw ConfigError(fmt::format("--vary '{}': expected KEY=V1,V2,... (e.g. nand.timing.t_read_slc=2us,4us)", text));
  Vary v{text.substr(0, eq), {}};
  size_t start = eq + 1;
  while (true) {
    const auto comma = text.find(',', start);
    const std::string value = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (value.empty()) throw ConfigError(fmt::format("--vary '{}': an empty value", text));
    v.values.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return v;
}

}  // namespace

void add_accel(CLI::App& app) {
  auto* accel = app.add_subcommand("accel", "LLM serving on HBF-equipped GPUs: the FlashAccel evaluation");
  accel->require_subcommand(1);

  // ---- kinds
  {
    auto* cmd = accel->add_subcommand("kinds", "the GPU kinds (the files of configs/gpus/) with their descriptions");
    cmd->callback([] {
      for (const auto& kind : available_kinds()) {
        ConfigTree t;
        t.load_preset(kind);
        const ConfigNode* d = t.root().find("description");
        fmt::print("{:<10} {}\n", kind, d && d->kind == ConfigNode::Kind::Scalar ? d->scalar : "(no description: key)");
      }
      fmt::print("(a system is KIND x GPUS, e.g. b200x8; add a kind by writing {}/NAME.yaml)\n", kinds_dir().string());
    });
  }

  // ---- eval
  {
    auto* cmd = accel->add_subcommand("eval", "a whole matrix: models x contexts x SLOs x systems (default: the paper's)");
    auto k = std::make_shared<KindOptions>();
    auto x = std::make_shared<ExperimentOption>();
    struct Opts {
      std::string json, baseline;
      bool quiet = false;
      int threads = WorkerPool::hardware_threads();
    };
    auto o = std::make_shared<Opts>();
    k->add_to(*cmd);
    x->add_to(*cmd, "flashaccel-eval", "models, contexts, SLOs, systems, the summary's baseline");
    cmd->add_option("--baseline", o->baseline,
                    "the reference system of the summary, one of the experiment's systems (default: the experiment's baseline:)");
    cmd->add_option("--json", o->json, "write points, summary and the resolved config to this file")->required();
    cmd->add_option("--threads", o->threads, "worker threads")->capture_default_str()->check(CLI::Range(1, 64));
    cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
    cmd->callback([k, o, x] {
      const Distributed& world = Distributed::world();  // first: under mpirun only rank 0 prints, errors included
      check_json_output(o->json);
      EvalExperiment ex = load_eval_experiment(x->file);
      if (!o->baseline.empty()) {
        if (std::find(ex.systems.begin(), ex.systems.end(), o->baseline) == ex.systems.end()) {
          std::string systems;
          for (const auto& sys : ex.systems) systems += (systems.empty() ? "" : ", ") + sys;
          throw ConfigError(fmt::format("--baseline {}: not one of the experiment's systems ({})", o->baseline, systems));
        }
        ex.baseline = o->baseline;
      }
      const auto kinds = k->load_all(ex.systems, ex.set);
      ModelSet models;
      load_models(models, ex.models, x->file);
      const auto t0 = std::chrono::steady_clock::now();
      // The jobs (model x system) over the MPI ranks (one process without mpirun), each rank on its worker pool.
      const auto jobs = world.map(
          eval_job_count(ex), [&](size_t i) { return run_eval_job(models, kinds, ex, i).dump(); }, o->threads,
          [&](size_t done, size_t n, size_t i) {
            if (!o->quiet) print_progress(done, n, ex.models[i / ex.systems.size()] + " on " + ex.systems[i % ex.systems.size()]);
          });
      if (!world.root()) return;  // rank 0 writes the results
      Json j;
      j["points"] = Json::array();
      for (const auto& text : jobs)
        for (auto& p : Json::parse(text)) j["points"].push_back(std::move(p));
      j["summary"] = eval_summary(j["points"], ex);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      j["config"] = config_json(kinds);
      // Run metadata (wall time, threads, ranks) is printed, not written: same inputs, same bytes.
      j["run"] = {{"experiment", x->file}};
      write_json_file(o->json, j);
      fmt::print("{:<18} {:>8} {:>8} {:>6}   (per-GPU decode throughput vs {}; tokens/J vs {}: activity-based, and at board power)\n",
                 "system@SLO", "mean", "geomean", "points", ex.baseline, ex.baseline);
      for (const auto& sys : ex.systems)
        for (double slo : ex.slos_ms) {
          const std::string key = fmt::format("{}@{:g}", sys, slo);
          if (!j["summary"]["throughput_vs_" + ex.baseline].contains(key)) continue;
          const Json& v = j["summary"]["throughput_vs_" + ex.baseline][key];
          const Json& e = j["summary"]["tokens_per_j_vs_" + ex.baseline][key];
          if (v["mean"].is_null()) {
            fmt::print("{:<18} {:>8} {:>8} {:>6}\n", key, "-", "-", 0);
            continue;
          }
          const Json& eb = j["summary"]["tokens_per_j_board_vs_" + ex.baseline][key];
          const Json& pb = j["summary"]["board_power_vs_" + ex.baseline][key];
          fmt::print("{:<18} {:>7.2f}x {:>7.2f}x {:>6}   tokens/J {:.2f}x, at board power {:.2f}x (power {:.2f}x)\n", key,
                     v["mean"].get<double>(), v["geomean"].get<double>(), v["points"].get<int>(), e["mean"].get<double>(),
                     eb["mean"].is_null() ? 0.0 : eb["mean"].get<double>(), pb["mean"].is_null() ? 0.0 : pb["mean"].get<double>());
        }
      // The deployment search (llm/deployment.hpp): the points not on their preferred deployment.
      for (const auto& p : j["points"])
        if (p.contains("deployment") && p["deployment"].contains("preferred") && !p["deployment"]["preferred"].get<bool>())
          fmt::print("deployment: {} {} @{:g} on {}: {} ({} has no feasible batch)\n", p["model"].get<std::string>(),
                     p["context"].get<std::string>(), p["slo_ms"].get<double>(), p["system"].get<std::string>(),
                     p["deployment"]["label"].get<std::string>(), p["deployment"]["tried"][0]["deployment"].get<std::string>());
      int infeasible = 0;
      for (const auto& p : j["points"]) infeasible += p["feasible"].get<bool>() ? 0 : 1;
      fmt::print("{} points ({} infeasible, listed in the JSON with the reason) in {:.1f} s on {} rank(s) x {} thread(s); wrote {}\n",
                 j["points"].size(), infeasible, wall, world.size(), o->threads, o->json);
    });
  }

  // ---- ablation
  {
    auto* cmd = accel->add_subcommand("ablation", "one model at a fixed batch on the experiment's variants (default: the paper's, on CSI)");
    auto k = std::make_shared<KindOptions>();
    auto x = std::make_shared<ExperimentOption>();
    struct Opts {
      std::string json, model, context;
      int64_t batch = 0, gpus = 0;
      double slo = 0;
      int threads = WorkerPool::hardware_threads();
    };
    auto o = std::make_shared<Opts>();
    k->add_to(*cmd);
    x->add_to(*cmd, "flashaccel-ablation", "model, GPUs, batch, context, SLO and the variants");
    cmd->add_option("--json", o->json, "write the variants to this file")->required();
    cmd->add_option("--model", o->model, "model (default: the experiment's)");
    cmd->add_option("--batch", o->batch, "requests per attention rank (per GPU for data-parallel attention; default: the experiment's)")
        ->check(CLI::Range(int64_t(1), kMaxBatchOption));
    cmd->add_option("--gpus", o->gpus, "GPUs (default: the experiment's)")->check(CLI::Range(int64_t(1), int64_t(99999)));
    cmd->add_option("--context", o->context,
                    "a context named in the evaluation experiment (e.g. long) or IN:OUT (default: the experiment's)");
    cmd->add_option("--slo", o->slo, "SLO of the throughput column, ms (default: the experiment's)")->check(slo_ms());
    cmd->add_option("--threads", o->threads, "worker threads (results do not depend on it)")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    cmd->callback([k, o, x] {
      check_json_output(o->json);
      AblationExperiment ex = load_ablation_experiment(x->file);
      if (!o->model.empty()) ex.model = o->model;
      if (o->batch > 0) ex.batch_per_rank = o->batch;
      if (o->gpus > 0) ex.gpus = o->gpus;
      if (!o->context.empty()) ex.context = context_arg(o->context);
      if (o->slo > 0) ex.slo_ms = o->slo;
      std::vector<std::string> variant_kinds;
      for (const auto& v : ex.variants) variant_kinds.push_back(v.kind);
      const auto kinds = k->load_all({}, ex.set, variant_kinds);
      const auto params = ablation_params(ex, [&](const std::string& kind) { return k->tree(kind, ex.set); });
      const ModelConfig m = load_model(ex.model);
      Json j = run_ablation(m, ex, params, o->threads);
      j["config"] = config_json(kinds);
      write_json_file(o->json, j);
      fmt::print("{} on {} GPUs, batch {} per rank, context {}:\n", m.name, ex.gpus, ex.batch_per_rank, ex.context.name);
      for (const auto& [name, v] : j["variants"].items())
        fmt::print("  {:<17} step {:>9.3f} ms{}   {:>8.1f} tokens/s/GPU at {:g} ms\n", name, v["step_ms"].get<double>(),
                   v["fits"].get<bool>() ? "" : " (does not fit)",
                   v[fmt::format("tokens_per_s_per_gpu_at_{:g}ms", ex.slo_ms)].get<double>(), ex.slo_ms);
      fmt::print("wrote {}\n", o->json);
    });
  }

  // ---- sessions
  {
    auto* cmd = accel->add_subcommand("sessions", "multi-turn KV reuse: hit rate and recomputed tokens with LRU retention");
    auto k = std::make_shared<KindOptions>();
    auto x = std::make_shared<ExperimentOption>();
    struct Opts {
      std::string json, trace, model;
    };
    auto o = std::make_shared<Opts>();
    k->add_to(*cmd);
    x->add_to(*cmd, "flashaccel-sessions", "the model and the systems");
    cmd->add_option("--json", o->json, "write the per-system results to this file")->required();
    cmd->add_option("--trace", o->trace,
                    "JSONL trace: bitline's (session, turn, input_tokens, output_tokens, timestamp) or Mooncake's (timestamp, "
                    "input_length, output_length, hash_ids); default: synthetic agentic sessions at each load of the experiment");
    cmd->add_option("--model", o->model, "model (default: sessions.model, else the experiment's)");
    cmd->callback([k, o, x] {
      check_json_output(o->json);
      const SessionsExperiment ex = load_sessions_experiment(x->file);
      const auto kinds = k->load_all(ex.systems, ex.set);
      const std::string kind = parse_system(ex.systems.front()).kind;
      SessionParams sp = k->sessions(kind, ex.set);
      if (!o->model.empty()) sp.model = o->model;
      if (sp.model.empty()) sp.model = ex.model;
      const ModelConfig m = load_model(sp.model);
      // The base load (the experiment's `set`), then, for the synthetic trace, each load of the sweep.
      std::vector<SessionLoad> loads;
      if (!o->trace.empty()) {
        loads.push_back({"trace", sp, read_any_trace(o->trace, sp.block_tokens)});
      } else {
        std::vector<SessionParams> ps = {sp};
        int64_t turns = synthetic_turns_max(sp);
        for (const auto& l : ex.loads) {
          std::vector<Override> set = ex.set;
          set.insert(set.end(), l.set.begin(), l.set.end());
          SessionParams lp = k->sessions(kind, set);
          lp.model = sp.model;
          try {
            turns += synthetic_turns_max(lp);
          } catch (const ConfigError& e) {
            throw ConfigError(fmt::format("{}: load '{}': {}", x->file, l.name, e.what()));
          }
          if (turns > kMaxTraceTurns)
            throw ConfigError(fmt::format("{}: loads: up to {} turns over all loads, more than the {} they may have together", x->file,
                                          turns, kMaxTraceTurns));
          ps.push_back(lp);
        }
        loads.push_back({"base", sp, synthetic_trace(sp)});
        for (size_t i = 0; i < ex.loads.size(); ++i) loads.push_back({ex.loads[i].name, ps[i + 1], synthetic_trace(ps[i + 1])});
      }
      const Json r = run_session_loads(m, kinds, loads, ex.systems);
      Json j;
      j["trace"] = r[0]["trace"];
      j["trace"]["source"] = o->trace.empty() ? "synthetic" : o->trace;
      j["systems"] = r[0]["systems"];
      j["loads"] = Json::array();
      for (size_t i = 1; i < r.size(); ++i) {
        Json l = r[i];
        const SessionParams& lp = loads[i].params;
        l["offered"] = {{"arrival_per_s", lp.arrival_per_s},
                        {"think_time_s", to_s(lp.think_time)},
                        {"turns_min", lp.turns_min},
                        {"turns_max", lp.turns_max},
                        {"sessions", lp.sessions}};
        j["loads"].push_back(std::move(l));
      }
      j["config"] = config_json(kinds);
      j["config"]["sessions"] = dump_params(sp);
      write_json_file(o->json, j);
      const Json& t = j["trace"];
      if (t.contains("sessions"))
        fmt::print("{} sessions, {} turns (mean prompt {:.0f} tokens, mean output {:.0f}), model {}\n", t["sessions"].get<int64_t>(),
                   t["turns"].get<int64_t>(), t["mean_input_tokens"].get<double>(), t["mean_output_tokens"].get<double>(), m.name);
      else
        fmt::print("{} requests, {} prompt blocks of {} tokens (mean prompt {:.0f} tokens, mean output {:.0f}), model {}\n",
                   t["turns"].get<int64_t>(), t["blocks"].get<int64_t>(), t["block_tokens"].get<int64_t>(),
                   t["mean_input_tokens"].get<double>(), t["mean_output_tokens"].get<double>(), m.name);
      for (const auto& [name, v] : j["systems"].items())
        fmt::print("  {:<8} retention {:>8.1f} GB: hit rate {:.3f}, recomputed {:.4g} tokens ({:.1f}% of prompts)\n", name,
                   v["retention_bytes"].get<double>() * 1e-9, v["hit_rate"].get<double>(), v["recomputed_tokens"].get<double>(),
                   100 * v["recomputed_fraction"].get<double>());
      if (!o->trace.empty() && !ex.loads.empty())
        fmt::print("(the experiment's {} loads vary the synthetic trace; a trace is replayed at its own load)\n", ex.loads.size());
      if (!j["loads"].empty()) {
        fmt::print(
            "hit rate (recomputed share of prompt tokens) by offered load; alive = sessions waiting for a next turn "
            "(Little's law):\n  {:<16} {:>8} {:>6}",
            "load", "sess/s", "alive");
        for (const auto& sys : ex.systems) fmt::print(" {:>12}", sys);
        fmt::print("\n");
        for (const auto& l : j["loads"]) {
          fmt::print("  {:<16} {:>8.4g} {:>6.0f}", l["name"].get<std::string>(), l["offered"]["arrival_per_s"].get<double>(),
                     l["trace"]["sessions_alive"].get<double>());
          for (const auto& sys : ex.systems)
            fmt::print(" {:>5.3f} ({:>3.0f}%)", l["systems"][sys]["hit_rate"].get<double>(),
                       100 * l["systems"][sys]["recomputed_fraction"].get<double>());
          fmt::print("\n");
        }
      }
      fmt::print("wrote {}\n", o->json);
    });
  }

  // ---- run
  {
    auto* cmd = accel->add_subcommand("run", "one point: the largest batch meeting the SLO, with a readable breakdown");
    auto k = std::make_shared<KindOptions>();
    struct Opts {
      std::string model, system, context, json;
      int64_t gpus = 0, batch = 0;
      double slo = 0;
      bool breakdown = false;
    };
    auto o = std::make_shared<Opts>();
    k->add_to(*cmd);
    cmd->add_flag("--breakdown", o->breakdown,
                  "print (and write to --json) the prefill and the decode step by operator class, per layer and per step");
    cmd->add_option("--model", o->model, "a model of configs/models/ by name, or a config.json path")->required();
    cmd->add_option("--system", o->system, "KIND x GPUS (csix8, b200x8, ...; KIND: a file of configs/gpus/), or a kind with --gpus")
        ->required();
    cmd->add_option("--gpus", o->gpus, "GPUs (overrides the count in --system)")->check(CLI::Range(int64_t(1), int64_t(99999)));
    cmd->add_option("--context", o->context,
                    "a context named in the evaluation experiment (e.g. long) or IN:OUT (average input and output tokens)")
        ->required();
    cmd->add_option("--slo", o->slo, "decode-step latency SLO, ms")->required()->check(slo_ms());
    cmd->add_option("--batch", o->batch, "time this batch (requests per attention rank) instead of searching")
        ->check(CLI::Range(int64_t(1), kMaxBatchOption));
    cmd->add_option("--json", o->json, "write the point (and the resolved config) to this file");
    cmd->callback([k, o] {
      check_json_output(o->json);
      // `--system csi --gpus 8` and `--system csix8` name the same system.
      const auto known = available_kinds();
      const bool bare_kind = std::find(known.begin(), known.end(), o->system) != known.end();
      if (bare_kind && o->gpus <= 0)
        throw ConfigError(fmt::format("--system {}: give the GPU count with --gpus N (or write {}x8)", o->system, o->system));
      const SystemName sn = parse_system(bare_kind ? fmt::format("{}x{}", o->system, o->gpus) : o->system);
      const ContextSpec c = context_arg(o->context);
      const ModelConfig m = load_model(o->model);
      const KindParams kp = k->load(sn.kind);
      const int64_t gpus = o->gpus > 0 ? o->gpus : sn.gpus;
      // The deployment is searched with the batch (llm.deployment_search); --batch times the preferred one.
      DeploymentSearch ds(m, kp, gpus);
      PointResult p;
      const Server* sp = ds.preferred();
      if (o->batch > 0) {
        if (!sp) throw ConfigError(ds.setup_error(0));
        const Server& s = *sp;
        p.model = m.name;
        p.context = c.name;
        p.gpus = gpus;
        p.slo_ms = o->slo;
        p.step = s.step(o->batch, c);
        p.feasible = p.step.capacity.fits;
        p.bound_by = p.step.step <= bitline::ms(o->slo) ? "given batch" : "given batch (misses the SLO)";
        if (!p.feasible)
          p.reason = fmt::format("batch {} per rank does not fit ({} exhausted)", o->batch, to_string(p.step.capacity.limit));
        p.deployment = deployment_json(s.deployment());
      } else {
        p = ds.search(c, bitline::ms(o->slo));
        sp = ds.chosen();
        if (!sp) throw ConfigError(p.reason);  // no deployment can be built
      }
      p.system = fmt::format("{}x{}", sn.kind, gpus);
      print_point(p, *sp);
      const RunExtras x = run_extras(*sp, p, c, o->breakdown);
      if (!o->json.empty()) {
        Json j = p.json();
        if (o->batch > 0) j["step"] = p.step.json();
        if (x.timed) {
          j["prefill"] = x.prefill.json();
          j["latency"] = x.latency.json();
          j["latency"]["input_tokens"] = c.input;
          j["latency"]["output_tokens"] = c.output;
        }
        if (x.timed && o->breakdown) j["breakdown_by_class"] = {{"prefill", x.prefill.breakdown.json()}, {"decode", x.decode.json()}};
        j["config"] = kind_json(kp);
        write_json_file(o->json, j);
        fmt::print("wrote {}\n", o->json);
      }
      std::fflush(stdout);
      if (!p.feasible) throw ModelError(fmt::format("no feasible batch: {}", p.reason));
    });
  }

  // ---- sweep
  {
    auto* cmd = accel->add_subcommand("sweep", "one point (model, system, context, SLO) over a grid of parameter values");
    auto k = std::make_shared<KindOptions>();
    struct Opts {
      std::string model, system, context, json;
      double slo = 0;
      std::vector<std::string> vary;
      int threads = WorkerPool::hardware_threads();
      bool quiet = false;
    };
    auto o = std::make_shared<Opts>();
    k->add_to(*cmd);
    cmd->add_option("--model", o->model, "a model of configs/models/ by name, or a config.json path")->required();
    cmd->add_option("--system", o->system, "KIND x GPUS (csix8, clix16, ...)")->required();
    cmd->add_option("--context", o->context,
                    "a context named in the evaluation experiment (e.g. long) or IN:OUT (average input and output tokens)")
        ->required();
    cmd->add_option("--slo", o->slo, "decode-step latency SLO, ms")->required()->check(slo_ms());
    cmd->add_option("--vary", o->vary, "a parameter and its values, KEY=V1,V2,... (repeatable: the grid is every combination)")->required();
    cmd->add_option("--json", o->json, "write the points (and the resolved base config) to this file");
    cmd->add_option("--threads", o->threads, "worker threads")->check(CLI::Range(1, 256))->capture_default_str();
    cmd->add_flag("--quiet", o->quiet, "no progress on stderr");
    cmd->callback([k, o] {
      const Distributed& world = Distributed::world();  // first: under mpirun only rank 0 prints, errors included
      check_json_output(o->json);
      const SystemName sn = parse_system(o->system);
      const ContextSpec c = context_arg(o->context);
      const ModelConfig m = load_model(o->model);
      std::vector<Vary> vary;
      for (const auto& v : o->vary) {
        vary.push_back(parse_vary(v));
        for (size_t i = 0; i + 1 < vary.size(); ++i)
          if (vary[i].key == vary.back().key)
            throw ConfigError(fmt::format("--vary {}: the key is varied twice (give all its values in one --vary)", vary.back().key));
      }
      // The grid is bounded before it is built: each point is a batch search (tens of ms).
      size_t grid = 1;
      for (const auto& v : vary) {
        grid *= v.values.size();
        if (grid > kMaxSweepPoints)
          throw ConfigError(
              fmt::format("--vary: the grid has more than {} points (the product of the value counts, up to --vary {}); "
                          "a sweep that large runs for hours; split it",
                          kMaxSweepPoints, v.key));
      }
      // Every combination's parameters are loaded (and so checked) before anything runs: no partial sweeps.
      std::vector<std::vector<std::string>> combos(1);
      for (const auto& v : vary) {
        std::vector<std::vector<std::string>> next;
        for (const auto& c0 : combos)
          for (const auto& value : v.values) {
            next.push_back(c0);
            next.back().push_back(value);
          }
        combos = std::move(next);
      }
      const auto label = [&](const std::vector<std::string>& combo) {
        std::string l;
        for (size_t i = 0; i < vary.size(); ++i) l += fmt::format("{}{}={}", i ? " " : "", vary[i].key, combo[i]);
        return l;
      };
      std::vector<KindParams> params;
      params.reserve(combos.size());
      for (const auto& combo : combos) {
        KindOptions ko = *k;
        for (size_t i = 0; i < vary.size(); ++i) ko.sets.push_back(vary[i].key + "=" + combo[i]);
        try {
          params.push_back(ko.load(sn.kind));
        } catch (const ConfigError& e) {
          throw ConfigError(fmt::format("--vary ({}): {}", label(combo), e.what()));
        }
      }
      // The grid over the MPI ranks (one process without mpirun), each rank on its worker pool.
      const auto texts = world.map(
          combos.size(),
          [&](size_t i) {
            DeploymentSearch ds(m, params[i], sn.gpus);
            PointResult p = ds.search(c, bitline::ms(o->slo));
            p.system = sn.name;
            Json j = p.json();
            Json values = Json::object();
            for (size_t v = 0; v < vary.size(); ++v) values[vary[v].key] = combos[i][v];
            j["values"] = values;
            return j.dump();
          },
          o->threads,
          [&](size_t done, size_t n, size_t i) {
            if (!o->quiet) print_progress(done, n, label(combos[i]));
          });
      if (!world.root()) return;  // rank 0 prints and writes the results
      std::vector<Json> points;
      for (const auto& t : texts) points.push_back(Json::parse(t));

      // The table: the varied values, then the point.
      std::vector<size_t> width;
      std::string head;
      for (const auto& v : vary) {
        size_t w = v.key.size();
        for (const auto& value : v.values) w = std::max(w, value.size());
        width.push_back(w);
        head += fmt::format("{:<{}} ", v.key, w);
      }
      fmt::print("{}{:>7} {:>9} {:>12}  {}\n", head, "batch", "step ms", "tok/s/GPU", "bound by");
      for (size_t i = 0; i < combos.size(); ++i) {
        std::string row;
        for (size_t v = 0; v < vary.size(); ++v) row += fmt::format("{:<{}} ", combos[i][v], width[v]);
        const Json& p = points[i];
        if (p["feasible"].get<bool>())
          fmt::print("{}{:>7} {:>9.2f} {:>12.1f}  {}\n", row, p["batch"].get<int64_t>(), p["step_ms"].get<double>(),
                     p["tokens_per_s_per_gpu"].get<double>(), p["bound_by"].get<std::string>());
        else
          fmt::print("{}{:>7} {:>9} {:>12}  infeasible: {}\n", row, "-", "-", "-", p["reason"].get<std::string>());
      }
      if (!o->json.empty()) {
        Json vj = Json::object();
        for (const auto& v : vary) vj[v.key] = v.values;
        Json out = {{"model", m.name},
                    {"system", sn.name},
                    {"context", c.name},
                    {"slo_ms", o->slo},
                    {"vary", vj},
                    {"points", points},
                    {"config", kind_json(k->load(sn.kind))}};  // threads and ranks: not written (same bytes)
        write_json_file(o->json, out);
        fmt::print("wrote {} ({} rank(s) x {} thread(s))\n", o->json, world.size(), o->threads);
      }
    });
  }

  // ---- validate
  {
    auto* cmd = accel->add_subcommand("validate", "fast step model vs the event-driven HBF memory simulation, per model and system");
    auto k = std::make_shared<KindOptions>();
    auto x = std::make_shared<ExperimentOption>();
    struct Opts {
      std::string json, context;
      std::vector<std::string> models, systems;
      int64_t batch = 0;
      double slo = 0;
    };
    auto o = std::make_shared<Opts>();
    k->add_to(*cmd);
    x->add_to(*cmd, "flashaccel-eval", "its models, systems, first context and largest SLO are the defaults");
    cmd->add_option("--json", o->json, "write the comparisons to this file");
    cmd->add_option("--models", o->models, "models (default: the experiment's)");
    cmd->add_option("--systems", o->systems, "systems (default: the experiment's)");
    cmd->add_option("--context", o->context, "a context named in the experiment or IN:OUT (default: its first)");
    cmd->add_option("--batch", o->batch, "requests per rank (default: the batch the --slo search finds)")
        ->check(CLI::Range(int64_t(1), kMaxBatchOption));
    cmd->add_option("--slo", o->slo, "SLO of the batch search, ms (default: the experiment's largest)")->check(slo_ms());
    cmd->callback([k, o, x] {
      check_json_output(o->json);
      const EvalExperiment ex = load_eval_experiment(x->file);
      const ContextSpec c = o->context.empty() ? ex.contexts.front() : parse_context(o->context, ex.contexts);
      const double slo = o->slo > 0 ? o->slo : *std::max_element(ex.slos_ms.begin(), ex.slos_ms.end());
      const auto models = o->models.empty() ? ex.models : o->models;
      const auto systems = o->systems.empty() ? ex.systems : o->systems;
      const auto kinds = k->load_all(systems, ex.set);
      Json out = Json::array();
      double worst = 0;
      for (const auto& mn : models) {
        const ModelConfig m = load_model(mn);
        for (const auto& sysname : systems) {
          const SystemName sn = parse_system(sysname);
          std::unique_ptr<Server> s;
          try {
            s = std::make_unique<Server>(m, kinds.at(sn.kind), sn.gpus);
          } catch (const ConfigError& e) {
            fmt::print("{:<18} {:<8} skipped: {}\n", mn, sysname, e.what());
            continue;
          }
          int64_t r = o->batch;
          if (r <= 0) {
            const PointResult p = s->search(c, bitline::ms(slo));
            r = p.feasible ? p.step.requests_per_rank : 1;
          }
          if (!s->capacity(r, c).fits && s->max_requests(c) == 0) {
            fmt::print("{:<18} {:<8} skipped: nothing fits\n", mn, sysname);
            continue;
          }
          const ValidationPoint v = validate_step(*s, r, c);
          worst = std::max(worst, std::abs(v.error()));
          fmt::print(
              "{:<18} {:<8} r={:<4} fast {:>9.3f} ms (all layers {:>9.3f})  event {:>9.3f} ms  error {:+.2f}% "
              "({:+.2f}%)  wall {:.3f} s vs {:.2f} s\n",
              mn, sysname, r, v.fast_ms, v.fast_all_layers_ms, v.event_ms, 100 * v.error(), 100 * v.error_all_layers(), v.fast_wall_s,
              v.event_wall_s);
          out.push_back(v.json());
        }
      }
      fmt::print("largest |error| of the fast model: {:.2f}%\n", 100 * worst);
      if (!o->json.empty()) {
        write_json_file(o->json, {{"points", out}, {"max_abs_error", worst}, {"config", config_json(kinds)}});
        fmt::print("wrote {}\n", o->json);
      }
    });
  }
}

}  // namespace bitline::cli
