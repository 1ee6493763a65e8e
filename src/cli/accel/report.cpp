#include "cli/accel/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace bitline::cli::accel {

using namespace bitline::llm;

namespace {

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

}  // namespace

void print_point(const PointResult& p, const Server& s) {
  fmt::print("{} on {} ({}), context {}, SLO {:g} ms\n", p.model, p.system, s.deployment().describe(), p.context, p.slo_ms);
  print_deployments_tried(p);
  const StepReport& r = p.step;
  if (!p.feasible) {
    fmt::print("  infeasible: {}\n", p.reason);
    if (r.step.raw() <= 0) return;
    fmt::print("  (the step at batch {}:)\n", r.batch);
  } else {
    fmt::print("  batch {} ({} per attention rank), bound by {}{}\n", r.batch, r.requests_per_rank, to_string(p.bound_by),
               p.capacity_limit.empty() ? "" : " (" + p.capacity_limit + ")");
  }
  print_step(p, s.params().system.hbf.stacks > 0);
  print_memory(r, s);
}

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

}  // namespace bitline::cli::accel
