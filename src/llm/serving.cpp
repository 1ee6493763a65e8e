#include "llm/serving.hpp"
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/search.hpp"
#include "llm/deployment.hpp"

namespace bitline::llm {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
double to_ms(Time t) { return to_s(t) * 1e3; }
constexpr double kSecondsPerYear = 365.25 * 24 * 3600;

}  // namespace

// ---- server -----------------------------------------------------------------

const Registry<CapacityContext>& capacity_contexts() {
  static const Registry<CapacityContext> r(
      "KV reservation", {{"paged",
                          "a paged engine's steady state: requests hold input + output / 2 on average, and the batch fits at its mean plus "
                          "serving.preemption_z standard deviations (preempting in 1 - Phi(z) of the steps)",
                          CapacityContext::Paged},
                         {"full", "each request reserves KV for its full context, input + output (no preemption)", CapacityContext::Full},
                         {"mean", "each request reserves KV for its mean context, input + output / 2", CapacityContext::Mean}});
  return r;
}

const Registry<ExpertPrefetch>& expert_prefetches() {
  static const Registry<ExpertPrefetch> r(
      "expert prefetch",
      {{"static", "the compute graph's prefetch queue: every local expert of a MoE layer is prefetched and read", ExpertPrefetch::Static},
       {"router",
        "only the experts the router picked are read; their prefetch starts when the first expert kernel does (after "
        "the router and the dispatch)",
        ExpertPrefetch::Router}});
  return r;
}

const Registry<KvArrange>& kv_arranges() {
  static const Registry<KvArrange> r(
      "GroupArrange copy",
      {{"new_kv",
        "the replicas of the step's new KV: the layers' replicas x (KV written this step / KV resident); the rest was "
        "copied in earlier steps",
        KvArrange::NewKv},
       {"whole", "every replica, every step (the unified KV cache rearranged from scratch): an upper bound", KvArrange::Whole}});
  return r;
}

const Registry<StepModel>& step_models() {
  static const Registry<StepModel> r(
      "step model",
      {{"fast", "the fast step model (llm/timing.hpp): sampled layers, validated against event by accel validate", StepModel::Fast},
       {"event",
        "the event-driven memory simulation (hbf::simulate_reads) of the whole step: slow; for settings outside "
        "the fast model's validated range, e.g. SRAM smaller than the prefetch window",
        StepModel::Event}});
  return r;
}

namespace {
// The memory system a step is timed on: HBM at its achievable bandwidth (llm.compute.hbm_efficiency).
hbf::SystemParams timed_system(const KindParams& k) {
  hbf::SystemParams p = k.system;
  p.hbm.bandwidth_per_stack = Bandwidth(p.hbm.bandwidth_per_stack.raw() * k.llm.compute.hbm_efficiency);
  return p;
}

// The model in the kind's number format (llm.precision).
ModelConfig served_model(const ModelConfig& m, const KindParams& k) {
  check_precision(*k.llm.precision, k);
  return with_precision(m, *k.llm.precision);
}

// The peak HBM bandwidth of a GPU whose weights are in HBM (GpuCompute's weight-streaming floor); 0 with HBF (flash reads
// are timed by the memory system).
Bandwidth weight_hbm_bandwidth(const KindParams& k) {
  if (k.system.hbf.stacks > 0) return Bandwidth{};
  return Bandwidth(k.system.hbm.bandwidth_per_stack.raw() * double(k.system.hbm.stacks));
}

// The bandwidth a GPU's weights stream at: its HBF stacks' (interface or sensing, the lower) or its HBM's.
Bandwidth weight_bandwidth(const hbf::System& sys) {
  if (sys.stacks() > 0)
    return Bandwidth(std::min(sys.hbf().timing.interface_bandwidth, sys.stack_sense_bandwidth()).raw() * double(sys.stacks()));
  return sys.hbm_bandwidth();
}
}  // namespace

Server::Server(const ModelConfig& m, const KindParams& k, int64_t gpus)
    : m_(served_model(m, k)),
      k_(k),
      d_(make_deployment(m_, gpus, k.llm)),
      w_(gpu_weights(m_, d_)),
      sys_(timed_system(k)),
      gpu_(k.system.gpu.bf16_flops, k.llm.compute, sys_.hbm_bandwidth(), weight_bandwidth(sys_), weight_hbm_bandwidth(k)),
      net_(k.llm.network),
      mt_(MemoryTiming::of(sys_)) {
  MemoryOptions o;
  o.weight_layout = k.system.hbf.runtime.weight_layout;
  o.kv = hbf::KvPolicy{*k.serving.kv_layout, *k.serving.kv_offload, uint64_t(k.serving.seed), k.serving.kv_block_bytes.raw(),
                       *k.serving.kv_block_alignment};
  o.tile_hyperpages = k.system.hbf.runtime.tile_hyperpages;
  o.kernel_overhead = k.llm.compute.kernel_overhead;
  o.router_prefetch = *k.serving.expert_prefetch == ExpertPrefetch::Router;
  if (sys_.stacks() > 0 && w_.total.raw() > 0)
    o.weight_cache_fraction = std::min(1.0, double(k.serving.hbm_weight_cache.raw()) / double(w_.total.raw()));
  mem_ = std::make_unique<GpuMemory>(sys_, m_, w_, o);
}

Capacity Server::capacity(int64_t r, const ContextSpec& c) const {
  Capacity cap;
  int64_t ctx = 0;
  switch (*k_.serving.capacity_context) {
    case CapacityContext::Full:
      ctx = c.input + c.output;
      break;
    case CapacityContext::Mean:
      ctx = c.input + c.output / 2;
      break;
    case CapacityContext::Paged: {
      // r requests at independent uniform points of their output hold r (input + output / 2) tokens on average,
      // with a standard deviation of output sqrt(r / 12): the per-request share of mean + z sigma.
      const double z = k_.serving.preemption_z;
      ctx = c.input + c.output / 2 + int64_t(std::ceil(z * double(c.output) / std::sqrt(12.0 * double(std::max<int64_t>(r, 1)))));
      ctx = std::min(ctx, c.input + c.output);
      cap.preemption_probability = 0.5 * std::erfc(z / std::sqrt(2.0));
      break;
    }
  }
  const bool mla = m_.attention == AttentionKind::Mla;
  const int64_t tok_layer = mla ? m_.kv_bytes_per_token_layer() : 2 * d_.kv_heads * m_.head_dim * m_.kv_value_bytes;
  cap.hbm_capacity = sys_.hbm_capacity();
  cap.reserve = k_.llm.runtime_reserve;
  if (k_.system.hbm.stacks == 0 && has_hbf()) {
    // An HBM-less (HBF-only) GPU: flash cannot hold the writable working set (erase before write, endurance), so
    // the activation workspace and the KV staging live in its SRAM: the on-chip SRAM and the HBF base dies' SRAM
    // (which the program path fills anyway). The runtime reserve (CUDA context, kernel images, library buffers)
    // is charged to HBF blocks below (llm.runtime_reserve).
    cap.hbm_capacity = k_.system.gpu.onchip_sram + Bytes(k_.system.hbf.sram.base_sram.raw() * k_.system.hbf.stacks);
    cap.reserve_in_flash = true;
  }
  cap.weights = w_.total;
  cap.kv = Bytes(r * ctx * tok_layer * m_.layers);
  // Activation workspace: the widest activations of the step (x4 for inputs, outputs and temporaries) and the logits.
  const double M = double(r), T = double(r * d_.ranks);
  const double moe_tokens = m_.is_moe() ? T * double(m_.top_k) / double(d_.gpus) : 0.0;
  const double widest = std::max({M * double(m_.hidden), M * double(m_.mlp_matrices() - 1) * double(m_.intermediate) / double(d_.tp),
                                  moe_tokens * 2.0 * double(m_.moe_intermediate), M * double(d_.q_heads) * 1024.0});
  const double head_rows = d_.tensor_parallel ? M : T;
  const LlmParams& lp = k_.llm;
  cap.workspace = Bytes(int64_t(widest * double(lp.activation_bytes) * lp.workspace_buffers +
                                head_rows * std::ceil(double(m_.vocab) / double(d_.vocab_shards)) * double(lp.logit_bytes)));
  if (!has_hbf()) {
    cap.hbm_used = cap.weights + cap.kv + cap.reserve + cap.workspace;
    cap.fits = cap.hbm_used <= cap.hbm_capacity;
    if (!cap.fits) cap.limit = Exhausted::Hbm;
    return cap;
  }
  const int64_t k = sys_.megaplanes(), ppb = sys_.pages_per_block();
  const int64_t tps = mem_->tokens_per_slice(tok_layer);
  cap.staging = Bytes(r * m_.layers * sys_.megapage().raw());
  cap.weight_cache = std::min(k_.serving.hbm_weight_cache, w_.total);
  cap.hbm_used = (cap.reserve_in_flash ? Bytes{} : cap.reserve) + cap.workspace + cap.staging + cap.weight_cache;
  cap.blocks_per_megaplane = sys_.blocks_per_plane();
  const int64_t megablock = sys_.megapage().raw() * ppb;
  cap.reserve_blocks = cap.reserve_in_flash ? ceil_div(ceil_div(cap.reserve.raw(), k), megablock) : 0;
  const int64_t weight_blocks = ceil_div(mem_->weight_units_max_per_megaplane(), ppb) + cap.reserve_blocks;
  // Isolated blocks (one owner per megablock): a request holds its own blocks on every megaplane of its window
  // (all K, or the fewest that fit it: hbf.runtime.kv_span); successive windows follow each other round the
  // megaplanes, so the fullest megaplane is in ceil(r W / K) of them.
  const int64_t slices = m_.layers * ceil_div(ctx, tps);
  const int64_t w = sys_.kv_window(slices);
  if (slices >= w)
    cap.blocks_used = weight_blocks + ceil_div(r * w, k) * ceil_div(ceil_div(slices, w), ppb);
  else  // fewer slices than megaplanes: one block on each of `slices` megaplanes
    cap.blocks_used = weight_blocks + int64_t(std::ceil(double(slices) / double(k) * double(r) - 1e-9));
  const bool blocks_ok = cap.blocks_used <= cap.blocks_per_megaplane, hbm_ok = cap.hbm_used <= cap.hbm_capacity;
  cap.fits = blocks_ok && hbm_ok;
  if (!blocks_ok)
    cap.limit = Exhausted::FlashBlocks;
  else if (!hbm_ok)
    cap.limit = Exhausted::Hbm;
  cap.replica_budget = hbm_ok ? cap.hbm_capacity - cap.hbm_used : Bytes{};
  return cap;
}

int64_t Server::max_requests(const ContextSpec& c) const {
  const int64_t hi = k_.serving.max_requests_per_rank;
  if (!capacity(1, c).fits) return 0;
  if (capacity(hi, c).fits) return hi;
  return last_true(1, hi, [&](int64_t r) { return capacity(r, c).fits; });
}

int64_t Server::max_context(int64_t r) const {
  const auto fits = [&](int64_t tokens) { return capacity(r, ContextSpec{"", tokens, 0}).fits; };
  if (!fits(1)) return 0;
  // Doubling to a bracket, then bisection.
  int64_t lo = 1, hi = 2;
  const int64_t limit = (int64_t(1) << 40) / r;
  while (hi < limit && fits(hi)) lo = hi, hi *= 2;
  if (hi >= limit && fits(limit)) return limit;
  return last_true(lo, hi, fits);
}

StepGraph Server::graph(int64_t r, const ContextSpec& c) const { return graph_at(steady_contexts(r, c.input, c.output), c); }

StepGraph Server::graph_at(std::vector<int64_t> contexts, const ContextSpec& c, int64_t requests_total) const {
  const int64_t r = int64_t(contexts.size());
  StepGraph g = build_step(m_, d_, w_, gpu_, net_, std::move(contexts), k_.serving.routing_skew, requests_total);
  g.kv_full_tokens = c.input + c.output;
  if (has_hbf()) {
    const Capacity cap = capacity(r, c);
    g.replica_units_per_layer = cap.replica_budget.raw() / sys_.megapage().raw() / m_.layers;
  }
  return g;
}

StepTiming Server::time_reads(const StepGraph& g) const {
  StepTiming st;
  switch (*k_.serving.step_model) {
    case StepModel::Fast:
      st = time_step_fast(g, *mem_, mt_, k_.llm.sample_layers);
      break;
    case StepModel::Event: {
      // The event-driven simulation sets the time; the critical-path breakdown is the fast model's (every layer
      // timed), scaled to it.
      st = time_step_fast(g, *mem_, mt_, 0);
      const Time event = time_step_event(sys_, g, *mem_).elapsed;
      if (st.time.raw() > 0) st.breakdown = st.breakdown.scaled(double(event.raw()) / double(st.time.raw()));
      st.time = event;
      break;
    }
  }
  return st;
}

Server::KvWrites Server::kv_writes(const StepGraph& g, int64_t r, const ContextSpec& c, bool disaggregated) const {
  KvWrites w;
  // New KV per step on this GPU: the decode tokens plus (disaggregated) the prefill KV arriving at the workload's
  // input/output ratio.
  w.kv_token = double(g.kv_token_layer_bytes * m_.layers);
  w.written = double(r) * w.kv_token * (1.0 + (disaggregated ? double(c.input) / double(c.output) : 0.0));
  w.write_time = has_hbf() ? Bytes(int64_t(w.written)) / sys_.program_bandwidth() : Bytes(int64_t(w.written)) / sys_.hbm_bandwidth();
  // Erases: in steady state r / output requests finish per step, and each erases its megablocks (isolated
  // blocks: at least one on every megaplane it touched). Like programming, erasing occupies the planes; it is
  // amortised over the steps (erase suspend lets reads through, so no step waits a whole tBERS).
  if (has_hbf()) {
    const int64_t k = sys_.megaplanes();
    const int64_t tps = mem_->tokens_per_slice(g.kv_token_layer_bytes);
    w.megablocks_per_request = double(sys_.kv_megablocks(m_.layers * ceil_div(c.input + c.output, tps)));
    w.finished_per_step = double(r) / double(c.output);
    w.erase_time = k_.system.hbf.timing.t_erase * (w.finished_per_step * w.megablocks_per_request / double(k));
  }
  return w;
}

double Server::arranged_bytes(const StepGraph& g, const KvWrites& w, const StepTiming& st) const {
  // GroupArrange (selective offload) runs after each write phase: the replicas of the step's new KV are read from
  // their overloaded megaplanes and written to HBM, in the step (the paper counts it). The replicas are those of
  // the placement the step reads (every layer), in the share of the resident KV that is new this step: a layer's
  // placement as the timing made it (st.kv_replicas), placed here only for the layers the fast model did not sample.
  if (!has_hbf() || sys_.hbm_bandwidth().raw() <= 0 || !hbf::kv_layout_policy(*k_.serving.kv_layout).arranges())
    return 0;  // (no HBM: no replicas)
  const int64_t slice = mem_->tokens_per_slice(g.kv_token_layer_bytes) * g.kv_token_layer_bytes;
  double replicas = 0, resident = 0;
  for (int32_t l = 0; l < m_.layers; ++l) {
    const bool placed = size_t(l) < st.kv_replicas.size() && st.kv_replicas[size_t(l)] >= 0;
    replicas += double(placed ? st.kv_replicas[size_t(l)] : mem_->kv_layer_stats(g, l).hbm_replicas) * double(slice);
  }
  for (int64_t ctx : g.contexts) resident += double(ctx) * w.kv_token;
  switch (*k_.serving.kv_arrange) {
    case KvArrange::NewKv:
      return resident > 0 ? replicas * std::min(1.0, w.written / resident) : 0.0;
    case KvArrange::Whole:
      return replicas;
  }
  return 0;
}

Time Server::arrange_time(double arranged) const {
  if (arranged <= 0) return Time{};
  const Bandwidth flash(std::min(k_.system.hbf.timing.interface_bandwidth, sys_.stack_sense_bandwidth()).raw() *
                        double(k_.system.hbf.stacks));
  return Bytes(int64_t(arranged)) / flash + Bytes(int64_t(arranged)) / sys_.hbm_bandwidth();
}

Time Server::memory_time(double flash_bytes, double hbm_bytes) const {
  const Bandwidth hbm_peak(k_.system.hbm.bandwidth_per_stack.raw() * double(k_.system.hbm.stacks));
  Time t = hbm_bytes > 0 ? Bytes(int64_t(hbm_bytes)) / hbm_peak : Time{};  // (an HBM-less GPU reads none)
  if (has_hbf()) {
    const auto& hp = k_.system.hbf;
    const Bandwidth per_stack = std::min(hp.timing.interface_bandwidth, sys_.stack_sense_bandwidth());
    t = std::max(t, Bytes(int64_t(flash_bytes)) / Bandwidth(per_stack.raw() * double(hp.stacks)));
  }
  return t;
}

void Server::add_energy(StepReport& s, const StepGraph& g, const StepTiming& st, const KvWrites& w, double arranged) const {
  const auto& hp = k_.system;
  const auto& ep = k_.llm.energy;
  s.e_flash = hp.hbf.energy.read * Bytes(int64_t(st.reads.flash_units * double(sys_.megapage().raw()) + arranged));
  const double hbm_written = (has_hbf() ? 2.0 * w.written : w.written) + arranged;  // HBF: staged in HBM, read back to program
  s.e_hbm = hp.hbm.energy * Bytes(int64_t(st.reads.hbm_bytes + hbm_written));
  if (has_hbf()) {
    s.e_program = hp.hbf.energy.program * Bytes(int64_t(w.written));
    s.e_erase = hp.hbf.energy.erase_block * (w.finished_per_step * w.megablocks_per_request * double(sys_.lanes()));
  }
  double flop_j = 0;
  for (const Op& o : g.ops) flop_j += o.flops * ep.flop.raw() * (o.fp8 ? 0.5 : 1.0);
  s.e_compute = Energy(flop_j);
  s.e_comm = ep.nvlink * g.comm_nvlink + ep.rdma * g.comm_rdma;
  s.e_static = (ep.gpu_static + ep.hbf_stack_static * double(hp.hbf.stacks) + ep.hbm_stack_static * double(hp.hbm.stacks)) * s.step;
  s.tokens_per_j = g.tokens_per_gpu / s.energy().raw();
  s.power = s.energy() / s.step;
}

void Server::add_board_power(StepReport& s) const {
  // Board power from its parts (docs/llm.md, "Energy"): the GPU die = the GPU's TDP less its HBM stacks at full
  // bandwidth (datasheet TDP; 2.99 pJ/bit, spec); each HBM stack at full bandwidth; each HBF stack's flash dies
  // at its full interface rate (8 pJ/bit, spec); each HBF base die (llm.energy.hbf_base_die, assumption).
  const auto& hp = k_.system;
  const auto& ep = k_.llm.energy;
  const Power hbm_stack(hp.hbm.bandwidth_per_stack.raw() * 8 * hp.hbm.energy.raw() + ep.hbm_stack_static.raw());
  s.board_die = ep.gpu_tdp - hbm_stack * double(ep.tdp_hbm_stacks);
  s.board_hbm = hbm_stack * double(hp.hbm.stacks);
  s.board_hbf = Power(double(hp.hbf.stacks) * hp.hbf.timing.interface_bandwidth.raw() * 8 * hp.hbf.energy.read.raw());
  s.board_base = ep.hbf_base_die * double(hp.hbf.stacks);
  s.tdp = s.board_die + s.board_hbm + s.board_hbf + s.board_base;
  s.tokens_per_j_board = s.tdp.raw() > 0 ? s.tokens_per_s_per_gpu / s.tdp.raw() : 0.0;
}

double Server::lifetime_writes_fraction(double bytes_per_s) const {
  if (!has_hbf()) return 0;
  const double life = k_.serving.endurance_years * kSecondsPerYear;
  return bytes_per_s * life / (double(sys_.flash_capacity().raw()) * double(k_.system.hbf.endurance.pe_cycles));
}

void Server::add_endurance(StepReport& s, const KvWrites& w) const {
  const double step_s = to_s(s.step);
  s.kv_write_bytes_per_s = w.written / step_s;
  if (!has_hbf()) return;
  const auto& hp = k_.system;
  s.program_time_fraction = to_s(w.write_time) / step_s;
  s.erase_time_fraction = to_s(w.erase_time) / step_s;
  const double life = k_.serving.endurance_years * kSecondsPerYear;
  const double pe = double(hp.hbf.endurance.pe_cycles);
  s.lifetime_writes_fraction = lifetime_writes_fraction(s.kv_write_bytes_per_s);
  const double finished_per_s = w.finished_per_step / step_s;
  s.lifetime_erase_fraction = finished_per_s * w.megablocks_per_request * life / (double(sys_.megaplanes() * sys_.blocks_per_plane()) * pe);
}

StepReport Server::step(int64_t r, const ContextSpec& c) const {
  return step_at(steady_contexts(r, c.input, c.output), c, true, engine_overheads(k_.serving.engine, false, engine_workers(d_)));
}

StepReport Server::step_at(const std::vector<int64_t>& contexts, const ContextSpec& c, bool disaggregated, const EngineOverheads& engine,
                           int64_t requests_total) const {
  StepReport s;
  const int64_t r = int64_t(contexts.size());
  const StepGraph g = graph_at(contexts, c, requests_total);
  const StepTiming st = time_reads(g);
  s.requests_per_rank = r;
  s.batch = g.requests_total;
  s.capacity = capacity(r, c);
  s.breakdown = st.breakdown;
  s.flops = g.flops;
  for (const Op& o : g.ops)  // every layer is in the graph (the fast model samples only the memory timing)
    if (o.is_comm()) s.comm_by_kind[size_t(o.comm.kind)] += o.comm.time;
  s.comm_nvlink = g.comm_nvlink;
  s.comm_rdma = g.comm_rdma;
  // The step: reads and compute, then this step's KV writes, its share of the erases and of GroupArrange.
  const KvWrites w = kv_writes(g, r, c, disaggregated);
  const double arranged = arranged_bytes(g, w, st);
  s.breakdown.kv_write = w.write_time;
  s.breakdown.kv_erase = w.erase_time;
  s.breakdown.kv_arrange = arrange_time(arranged);
  const Time gpu_time = st.time + w.write_time + w.erase_time + s.breakdown.kv_arrange;
  int64_t kernels = 0;
  for (const Op& o : g.ops) kernels += o.launches();
  s.breakdown.engine = engine.added(gpu_time, kernels, engine_sequences(d_, g.requests_per_rank, g.requests_total));
  s.step = gpu_time + s.breakdown.engine;
  s.tokens_per_s_per_gpu = g.tokens_per_gpu / to_s(s.step);
  s.flash_bytes = st.reads.flash_bytes;
  s.hbm_bytes = st.reads.hbm_bytes;
  s.memory_time = memory_time(s.flash_bytes, s.hbm_bytes);
  add_energy(s, g, st, w, arranged);
  add_board_power(s);
  add_endurance(s, w);
  return s;
}

namespace {

/// The largest r in [lo, hi] with metric(eval(r)) <= target, given metric(eval(lo)) <= target < metric(eval(hi))
/// and a metric nearly linear and non-decreasing in r: interpolation, with a bisection step whenever an
/// interpolation step did not halve the bracket (~6-10 evaluations).
template <class Eval, class Metric>
int64_t largest_within(Eval& eval, const Metric& metric, int64_t lo, int64_t hi, Time target) {
  bool bisect = false;
  while (hi - lo > 1) {
    int64_t mid;
    if (!bisect) {
      const double tl = to_ms(metric(eval(lo))), th = to_ms(metric(eval(hi))), t = to_ms(target);
      mid = lo + int64_t(std::floor((t - tl) / std::max(th - tl, 1e-12) * double(hi - lo)));
    } else {
      mid = lo + (hi - lo) / 2;
    }
    mid = std::clamp<int64_t>(mid, lo + 1, hi - 1);
    const int64_t width = hi - lo;
    (metric(eval(mid)) <= target ? lo : hi) = mid;
    if (!bisect && hi - lo > 1 && metric(eval(lo)) <= target) {
      // After an interpolation step, probe the other side of the bracket's new edge.
      const int64_t probe = lo + 1;
      if (probe < hi) (metric(eval(probe)) <= target ? lo : hi) = probe;
    }
    bisect = !bisect && (hi - lo) * 2 > width;
  }
  return lo;
}

}  // namespace

PointResult Server::search(const ContextSpec& c, Time slo, StepMemo* memo) const {
  PointResult p;
  p.model = m_.name;
  p.context = c.name;
  p.gpus = d_.gpus;
  p.slo_ms = to_ms(slo);
  p.deployment = deployment_json(d_);
  const int64_t cap = max_requests(c);
  if (cap == 0) {
    const Capacity c0 = capacity(0, c), c1 = capacity(1, c);
    if (!c0.fits && has_hbf() && c0.limit == Exhausted::Hbm)
      p.reason = fmt::format(
          "HBM cannot hold its fixed contents: {:.1f} GB of weight cache (serving.hbm_weight_cache) + {:.1f} GB "
          "reserve + {:.1f} GB workspace exceed {:.1f} GB",
          double(c0.weight_cache.raw()) * 1e-9, double((c0.reserve_in_flash ? Bytes{} : c0.reserve).raw()) * 1e-9,
          double(c0.workspace.raw()) * 1e-9, double(c0.hbm_capacity.raw()) * 1e-9);
    else if (!c0.fits)
      p.reason = fmt::format("the weights do not fit: {:.1f} GB per GPU{}", double(w_.total.raw()) * 1e-9,
                             c0.limit == Exhausted::FlashBlocks
                                 ? " exceed the HBF blocks"
                                 : fmt::format(" + reserve exceed {:.1f} GB of HBM", double(c0.hbm_capacity.raw()) * 1e-9));
    else
      p.reason = fmt::format(
          "a context of {} tokens cannot fit even at batch 1 ({} exhausted: {:.1f} GB of KV per request on "
          "this GPU, {:.1f} GB of HBM used of {:.1f} GB{})",
          c.input + c.output, to_string(c1.limit), double(c1.kv.raw()) * 1e-9, double(c1.hbm_used.raw()) * 1e-9,
          double(c1.hbm_capacity.raw()) * 1e-9,
          c1.blocks_per_megaplane > 0 ? fmt::format(", {} of {} blocks per megaplane", c1.blocks_used, c1.blocks_per_megaplane) : "");
    p.bound_by = BoundBy::Capacity;
    p.capacity_limit = to_string(c1.limit);
    return p;
  }
  StepMemo own;
  StepMemo& steps = memo ? *memo : own;
  std::map<int64_t, const StepReport*> seen;  // the steps this search looked at
  auto eval = [&](int64_t r) -> const StepReport& {
    auto it = seen.find(r);
    if (it == seen.end()) {
      auto s = steps.find(r);
      if (s == steps.end()) s = steps.emplace(r, step(r, c)).first;
      it = seen.emplace(r, &s->second).first;
      ++p.evaluations;
    }
    return *it->second;
  };
  if (eval(1).step > slo) {
    p.reason = fmt::format("no batch meets the SLO: the step takes {:.2f} ms at batch {} (> {:.0f} ms)", to_ms(eval(1).step), eval(1).batch,
                           to_ms(slo));
    p.bound_by = BoundBy::Slo;
    p.step = eval(1);
    return p;
  }
  int64_t best = 1;
  if (eval(cap).step <= slo) {
    best = cap;
    p.bound_by = BoundBy::Capacity;
    p.capacity_limit = capacity(cap + 1, c).fits ? "serving.max_requests_per_rank" : to_string(capacity(cap + 1, c).limit);
  } else {
    best = largest_within(
        eval, [](const StepReport& s) { return s.step; }, 1, cap, slo);
    p.bound_by = BoundBy::Slo;
  }
  // The bandwidth bound: memory_time <= step, so it lies at or above `best`; find where it crosses the SLO.
  const auto memory_time = [](const StepReport& s) { return s.memory_time; };
  const int64_t rmax = k_.serving.max_requests_per_rank;
  int64_t lo = best, hi = std::min(rmax, std::max<int64_t>(best + 1, 2 * best));
  while (hi < rmax && eval(hi).memory_time <= slo) lo = hi, hi = std::min(rmax, 2 * hi);
  const int64_t rb = eval(hi).memory_time <= slo ? hi : largest_within(eval, memory_time, lo, hi, slo);
  p.bandwidth_bound_requests_per_rank = rb;
  p.bandwidth_bound_batch = rb * d_.ranks;
  p.feasible = true;
  p.step = eval(best);
  return p;
}

Json ValidationPoint::json() const {
  return {{"model", model},
          {"system", system},
          {"requests_per_rank", requests_per_rank},
          {"fast_ms", fast_ms},
          {"fast_all_layers_ms", fast_all_layers_ms},
          {"event_ms", event_ms},
          {"error", error()},
          {"error_all_layers", error_all_layers()},
          {"events", events}};  // wall times are printed, not written: the JSON depends only on the inputs
}

ValidationPoint validate_step(const Server& s, int64_t r, const ContextSpec& c) {
  ValidationPoint v;
  v.model = s.model().name;
  v.system = system_label(s.params().kind, s.deployment().gpus);
  v.requests_per_rank = r;
  const StepGraph g = s.graph(r, c);
  const MemoryTiming mt = MemoryTiming::of(s.system());
  auto t0 = std::chrono::steady_clock::now();
  v.fast_ms = to_ms(time_step_fast(g, s.memory(), mt, s.params().llm.sample_layers).time);
  v.fast_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  v.fast_all_layers_ms = to_ms(time_step_fast(g, s.memory(), mt, 0).time);
  t0 = std::chrono::steady_clock::now();
  const hbf::ReadResult e = time_step_event(s.system(), g, s.memory());
  v.event_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  v.event_ms = to_ms(e.elapsed);
  v.events = e.events;
  return v;
}

KindParams load_kind_params(const ConfigTree& tree, const std::string& kind) {
  KindParams k;
  k.kind = kind;
  k.system = hbf::load_system_params(tree);
  k.llm = load_params<LlmParams>(tree, "llm");
  k.serving = load_params<ServingParams>(tree, "serving");
  // A kind gives its hardware (or names the kind it builds on): no value of another GPU is taken unnoticed.
  check_required_kind_keys(tree, kind, k);
  // The board power is built from its parts (add_board_power): the TDP must hold its HBM stacks at full bandwidth
  // and the GPU's static power, or the GPU die would draw a negative (or no) power.
  const auto& ep = k.llm.energy;
  const Power hbm_stack(k.system.hbm.bandwidth_per_stack.raw() * 8 * k.system.hbm.energy.raw() + ep.hbm_stack_static.raw());
  const Power parts = hbm_stack * double(ep.tdp_hbm_stacks) + ep.gpu_static;
  if (!(ep.gpu_tdp > parts)) {
    const ConfigNode* at = tree.at("llm.energy.gpu_tdp");
    throw ConfigError(
        fmt::format("{}llm.energy.gpu_tdp = {}: at most its parts, {} (llm.energy.gpu_static {} + "
                    "llm.energy.tdp_hbm_stacks {} x {} per HBM stack at full bandwidth: hbm.bandwidth_per_stack "
                    "x hbm.energy + llm.energy.hbm_stack_static); the GPU die's power would be {}",
                    at ? at->origin + ": " : "", format(ep.gpu_tdp), format(parts), format(ep.gpu_static), ep.tdp_hbm_stacks,
                    format(hbm_stack), format(ep.gpu_tdp - parts)));
  }
  // A serving-engine cost set for a kind that has its own values is refused here, at load, naming where it was set.
  check_engine_costs(k.serving.engine, tree);
  // The collectives' curves and choices are checked once here, naming the kind, not once per deployment tried.
  try {
    const Network check(k.llm.network);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("GPU kind '{}': {}", kind, e.what()));
  }
  return k;
}

}  // namespace bitline::llm
