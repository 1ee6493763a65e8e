#include "llm/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "hbf/layout.hpp"

namespace bitline::llm {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

GpuMemory::GpuMemory(const hbf::System& sys, const ModelConfig& m, const GpuWeights& w, const MemoryOptions& opt)
    : sys_(sys), m_(m), w_(w), opt_(opt), kv_(sys, opt.kv) {
  k_ = sys.stacks() > 0 ? sys.megaplanes() : 0;
  unit_ = sys.megapage().raw();
  hbm_bw_ = sys.hbm_bandwidth();  // 0 on an HBM-less GPU: activations and staged KV are not timed as HBM reads
  if (k_ == 0) return;
  tile_units_ = k_ * std::max<int64_t>(1, opt.tile_hyperpages);
  if (!(opt.weight_cache_fraction >= 0 && opt.weight_cache_fraction <= 1))
    throw ModelError(fmt::format("weight cache fraction {} outside [0, 1]", opt.weight_cache_fraction));
  deal_.resize(size_t(k_));
  for (int64_t i = 0; i < k_; ++i) deal_[size_t(i)] = sys.dealt(i);

  // The weight object as the runtime stores it: tensors in declaration order, read in execution order,
  // dealt in the order of the layout policy from dealing position 0.
  hbf::WeightSpec spec;
  spec.name = m.name;
  const size_t n = w.tensors.size();
  std::vector<uint32_t> decl_pos(n);
  for (size_t j = 0; j < n; ++j) {
    const GpuTensor& t = w.tensors[w.declaration[j]];
    spec.tensors.push_back(hbf::TensorSpec{t.name, t.bytes});
    decl_pos[w.declaration[j]] = uint32_t(j);
  }
  spec.execution_order = decl_pos;  // execution index i -> declaration position
  const auto layout = opt.weight_layout.make();
  const std::vector<uint32_t> order = layout->placement_order(spec);
  pos_.assign(n, 0);
  nunits_.assign(n, 0);
  int64_t p = 0;
  for (uint32_t dj : order) {
    const uint32_t i = w.declaration[dj];
    pos_[i] = p;
    nunits_[i] = ceil_div(w.tensors[i].bytes.raw(), unit_);
    p += nunits_[i];
  }
  weight_units_ = p;
}

int64_t GpuMemory::tokens_per_slice(int64_t kv_token_layer_bytes) const {
  if (kv_token_layer_bytes <= 0) return 0;
  const int64_t t = unit_ / kv_token_layer_bytes;
  if (t < 1)
    throw ModelError(
        fmt::format("model {}: one token's KV of a layer ({} B) exceeds a megapage ({} B)", m_.name, kv_token_layer_bytes, unit_));
  return t;
}

int64_t GpuMemory::tokens_per_block(int64_t kv_token_layer_bytes) const {
  if (kv_token_layer_bytes <= 0) return 0;
  const int64_t t = opt_.kv.block_bytes / kv_token_layer_bytes;
  if (t < 1)
    throw ModelError(fmt::format("model {}: one token's KV of a layer ({} B) exceeds a KV block (serving.kv_block_bytes = {} B)", m_.name,
                                 kv_token_layer_bytes, opt_.kv.block_bytes));
  return t;
}

void GpuMemory::append_ops(const StepGraph& g, uint32_t first, uint32_t count, TilePlan& plan) const {
  for (uint32_t i = first; i < first + count; ++i) {
    const Op& op = g.ops[i];
    if (op.is_comm()) {
      plan.tiles.push_back(StepTile{uint32_t(plan.units.size()), 0, 0, op.comm.time, Part::Comm, i});
      continue;
    }
    if (op.kernels > 0 && opt_.kernel_overhead.raw() > 0)
      plan.tiles.push_back(StepTile{uint32_t(plan.units.size()), 0, 0, opt_.kernel_overhead * double(op.kernels), Part::Overhead, i});
    const size_t before = plan.tiles.size();
    if (op.kv)
      kv_tiles(g, op, i, plan);
    else if (op.embed_rows > 0)
      embed_tiles(op, i, plan);
    else if (op.tensor_count > 0)
      weight_tiles(g, op, i, plan);
    if (plan.tiles.size() == before)  // no reads: the kernel's math alone
      plan.tiles.push_back(StepTile{uint32_t(plan.units.size()), 0, 0, op.compute, Part::Compute, i});
    // Activations are read and written in HBM during the op's first tile (an HBM-less GPU keeps them in SRAM,
    // whose time the compute covers: not timed as reads).
    if (hbm_bw_.raw() > 0) plan.tiles[before].hbm_bytes += op.act_bytes.raw();
  }
}

namespace {
// Spreads `total` over tiles [first, end) in proportion to `weight(tile)`.
template <class F>
void spread_compute(TilePlan& plan, size_t first, Time total, F weight) {
  double sum = 0;
  for (size_t t = first; t < plan.tiles.size(); ++t) sum += weight(plan.tiles[t]);
  int64_t left = total.raw();
  for (size_t t = first; t < plan.tiles.size(); ++t) {
    const int64_t c = t + 1 == plan.tiles.size() ? left : int64_t(double(total.raw()) * weight(plan.tiles[t]) / std::max(sum, 1.0));
    plan.tiles[t].compute = Time(std::min(c, left));
    left -= plan.tiles[t].compute.raw();
  }
}
}  // namespace

void GpuMemory::weight_tiles(const StepGraph&, const Op& op, uint32_t op_index, TilePlan& plan) const {
  int64_t bytes_total = 0, units_total = 0;
  for (uint32_t t = op.first_tensor; t < op.first_tensor + op.tensor_count; ++t) {
    bytes_total += w_.tensors[t].bytes.raw();
    if (k_ > 0) units_total += nunits_[t];
  }
  const size_t first_tile = plan.tiles.size();
  if (k_ == 0) {
    const int64_t b = int64_t(std::llround(double(bytes_total) * op.read_fraction));
    plan.tiles.push_back(StepTile{uint32_t(plan.units.size()), 0, b, op.compute, Part::Weights, op_index});
    plan.tiles.back().streamed = op.weight_stream;
    return;
  }
  // Routed experts with the static prefetch queue (serving.expert_prefetch): the queue comes from the compute graph,
  // which does not know the routing, so every local expert is prefetched and read (the math is the touched ones').
  const double fraction = op.routed != 0 && !opt_.router_prefetch ? 1.0 : op.read_fraction;
  const int64_t want = std::min<int64_t>(units_total, int64_t(std::llround(double(units_total) * fraction)));
  if (want <= 0) return;
  if (int64_t(plan.units.size()) + want > kMaxPlanUnits)
    throw ConfigError(
        fmt::format("model {}: a decode step reads more than {} megapages of weights and KV per GPU (the most a step "
                    "may plan, about 256 MB); the model is too large for this HBF geometry",
                    m_.name, kMaxPlanUnits));
  int64_t taken = 0, hbm = 0;
  StepTile cur{uint32_t(plan.units.size()), 0, 0, Time{}, Part::Weights, op_index};
  for (uint32_t t = op.first_tensor; t < op.first_tensor + op.tensor_count && taken < want; ++t) {
    const int64_t bytes = w_.tensors[t].bytes.raw();
    const int64_t reading = std::min(nunits_[t], want - taken);
    // The cached part of what is read (the first units of the range: a prefix of every expert / shard) comes from HBM.
    const int64_t cached = int64_t(std::floor(double(reading) * opt_.weight_cache_fraction));
    // (the dealing position of unit u is (pos_[t] + u) mod k_: counted on, not divided per unit)
    int64_t d = cached < reading ? (pos_[t] + cached) % k_ : 0;
    for (int64_t u = 0; u < reading; ++u, ++taken) {
      const int64_t b = std::min(unit_, bytes - u * unit_);
      if (u < cached) {
        hbm += b;
        continue;
      }
      plan.units.push_back(FlashUnit{deal_[size_t(d)], uint32_t(b)});
      if (++d == k_) d = 0;
      if (++cur.count == uint32_t(tile_units_)) {
        plan.tiles.push_back(cur);
        cur = StepTile{uint32_t(plan.units.size()), 0, 0, Time{}, Part::Weights, op_index};
      }
    }
  }
  if (cur.count > 0 || plan.tiles.size() == first_tile) plan.tiles.push_back(cur);
  // Router-driven expert prefetch: the experts' reads can be issued only once the router has picked them, i.e. when
  // the first expert kernel starts; the prefetch queue (in graph order) waits there.
  if (op.routed == 1 && opt_.router_prefetch) plan.tiles[first_tile].gate = true;
  // Cached bytes stream from HBM alongside, spread evenly over the kernel's tiles.
  const int64_t nt = int64_t(plan.tiles.size() - first_tile);
  if (hbm_bw_.raw() > 0)
    for (int64_t i = 0; i < nt; ++i) plan.tiles[first_tile + size_t(i)].hbm_bytes += hbm / nt + (i < hbm % nt ? 1 : 0);
  spread_compute(plan, first_tile, op.compute, [&](const StepTile& t) { return double(t.count) * double(unit_) + double(t.hbm_bytes); });
}

void GpuMemory::embed_tiles(const Op& op, uint32_t op_index, TilePlan& plan) const {
  const GpuTensor& t = w_.tensors[op.first_tensor];
  const int64_t row_bytes = op.embed_cols * m_.weight_bytes;
  if (k_ == 0) {
    plan.tiles.push_back(StepTile{uint32_t(plan.units.size()), 0, op.embed_rows * row_bytes, op.compute, Part::Weights, op_index});
    return;
  }
  // Rows of the tokens being decoded: pseudo-random rows of the table.
  Rng rng = Rng::derive(opt_.kv.seed, "llm.embed.rows");
  const int64_t rows = std::max<int64_t>(1, t.bytes.raw() / row_bytes);
  StepTile cur{uint32_t(plan.units.size()), 0, 0, op.compute, Part::Weights, op_index};
  for (int64_t r = 0; r < op.embed_rows; ++r) {
    const int64_t row = int64_t(rng.below(uint64_t(rows)));
    const int64_t u = std::min(row * row_bytes / unit_, nunits_[op.first_tensor] - 1);
    plan.units.push_back(FlashUnit{deal_[size_t((pos_[op.first_tensor] + u) % k_)], uint32_t(std::min(row_bytes, unit_))});
    ++cur.count;
  }
  plan.tiles.push_back(cur);
}

namespace {
// The KV slices of one layer read from flash at this step (one plan unit each), checked against the plan limit
// before any loop over them runs.
int64_t checked_kv_units(const StepGraph& g, int64_t tps, size_t planned) {
  int64_t units = 0, longest = 0;
  for (int64_t c : g.contexts) units += c / tps, longest = std::max(longest, c);
  if (units + int64_t(planned) > kMaxPlanUnits)
    throw ConfigError(
        fmt::format("a decode step at batch {} with contexts up to {} tokens reads {} KV slices of a layer from flash, "
                    "more than the {} reads a step may plan (about 256 MB); lower the batch (--batch, "
                    "serving.max_requests_per_rank) or the context",
                    g.contexts.size(), longest, units, kMaxPlanUnits));
  return units;
}

/// The layout's bound on the reads of a layer (paged: a block at an offset spans a megapage more), checked against
/// the plan limit before any loop over them runs.
void checked_layer_reads(const hbf::KvPlacement& kv, const hbf::LayerKv& l, size_t planned) {
  const int64_t reads = kv.layout().max_reads(kv, l);
  if (reads + int64_t(planned) > kMaxPlanUnits)
    throw ConfigError(
        fmt::format("a decode step at batch {} reads up to {} KV megapages of a layer from flash, more than the {} reads a "
                    "step may plan (about 256 MB); lower the batch (--batch, serving.max_requests_per_rank) or the context",
                    l.contexts.size(), reads, kMaxPlanUnits));
}
}  // namespace

hbf::LayerKv GpuMemory::layer_kv(const StepGraph& g, int32_t layer) const {
  hbf::LayerKv l;
  l.contexts = g.contexts;
  l.token_bytes = g.kv_token_layer_bytes;
  l.tokens_per_slice = tokens_per_slice(g.kv_token_layer_bytes);
  if (kv_.layout().whole_blocks()) l.block_tokens = tokens_per_block(g.kv_token_layer_bytes);
  l.window_tokens = g.kv_full_tokens;
  l.streams = m_.layers;
  l.layer = layer;
  l.replica_budget = g.replica_units_per_layer;
  return l;
}

int64_t GpuMemory::kv_loads(const StepGraph& g, int32_t layer, std::vector<int64_t>& loads) const {
  return kv_.run_loads(layer_kv(g, layer), loads);
}

KvLayerStats GpuMemory::kv_layer_stats(const StepGraph& g, int32_t layer, std::vector<int64_t>* flash_loads) const {
  KvLayerStats s;
  std::vector<int64_t> own;
  std::vector<int64_t>& loads = flash_loads ? *flash_loads : own;
  loads.clear();
  if (k_ == 0) return s;
  const hbf::LayerKv l = layer_kv(g, layer);
  checked_kv_units(g, l.tokens_per_slice, 0);
  checked_layer_reads(kv_, l, 0);
  const hbf::LayerReads r = kv_.layout().place(kv_, l, loads, nullptr, {});
  s.flash_units = r.flash_reads;
  s.hbm_replicas = r.hbm_replicas;
  s.rounds = r.rounds;
  s.max_load_before = r.max_load_before;
  s.mean_load = r.mean_load;
  s.staged_bytes = r.staged_bytes;
  return s;
}

namespace {
/// A layer's flash reads into a TilePlan's units and tiles (dealing indices to megaplanes).
class PlanSink final : public hbf::KvReadSink {
 public:
  PlanSink(TilePlan& plan, const std::vector<uint32_t>& deal, uint32_t op) : plan_(plan), deal_(deal), op_(op) { start(); }
  void read(int64_t d, int64_t bytes) override {
    plan_.units.push_back(FlashUnit{deal_[size_t(d)], uint32_t(bytes)});
    ++cur_.count;
  }
  void read_round(std::span<const int64_t> loads, int64_t round, int64_t bytes) override {
    const size_t before = plan_.units.size();
    for (size_t d = 0; d < loads.size(); ++d)
      if (loads[d] > round) plan_.units.push_back(FlashUnit{deal_[d], uint32_t(bytes)});
    cur_.count += uint32_t(plan_.units.size() - before);
  }
  void end_tile() override {
    plan_.tiles.push_back(cur_);
    start();
  }

 private:
  void start() { cur_ = StepTile{uint32_t(plan_.units.size()), 0, 0, Time{}, Part::Kv, op_}; }
  TilePlan& plan_;
  const std::vector<uint32_t>& deal_;
  uint32_t op_;
  StepTile cur_;
};
}  // namespace

void GpuMemory::kv_tiles(const StepGraph& g, const Op& op, uint32_t op_index, TilePlan& plan) const {
  const size_t first_tile = plan.tiles.size();
  const int64_t tb = g.kv_token_layer_bytes;
  if (k_ == 0) {
    int64_t bytes = 0;
    for (int64_t c : g.contexts) bytes = checked_add(bytes, checked_mul(c, tb, "KV bytes of a layer"), "KV bytes of a layer");
    plan.tiles.push_back(StepTile{uint32_t(plan.units.size()), 0, bytes, op.compute, Part::Kv, op_index});
    return;
  }
  const hbf::LayerKv l = layer_kv(g, op.layer);
  checked_kv_units(g, l.tokens_per_slice, plan.units.size());
  checked_layer_reads(kv_, l, plan.units.size());
  const uint32_t slice_bytes = uint32_t(l.tokens_per_slice * tb);
  // The layout's reads in the order the kernel queues them: flashaccel a hyperpage (round) at a time, in tiles of
  // tile_hyperpages rounds; scatter and paged request by request, in one queue (one tile) or in tiles of K megapages
  // (hbf.runtime.kv_read_queue).
  hbf::KvTiling tiling;
  tiling.hyperpages = opt_.tile_hyperpages;
  tiling.queue = *sys_.hbf().runtime.kv_read_queue == hbf::KvReadQueue::Kernel ? int64_t(UINT32_MAX) : tile_units_;
  std::vector<int64_t> loads;
  PlanSink sink(plan, deal_, op_index);
  const hbf::LayerReads r = kv_.layout().place(kv_, l, loads, &sink, tiling);
  plan.kv_replicas.push_back({op.layer, r.hbm_replicas});
  const int64_t hbm = r.staged_bytes + r.hbm_replicas * int64_t(slice_bytes);  // staged partial slices or blocks + replicas
  if (plan.tiles.size() == first_tile) plan.tiles.push_back(StepTile{uint32_t(plan.units.size()), 0, 0, Time{}, Part::Kv, op_index});
  // HBM slices spread evenly over the tiles; the kernel's math in proportion to the bytes.
  const int64_t nt = int64_t(plan.tiles.size() - first_tile);
  // (An HBM-less GPU has no weight cache or replicas; its staged KV slices are in the base dies' SRAM: not timed.)
  if (hbm_bw_.raw() > 0)
    for (int64_t i = 0; i < nt; ++i) plan.tiles[first_tile + size_t(i)].hbm_bytes += hbm / nt + (i < hbm % nt ? 1 : 0);
  spread_compute(plan, first_tile, op.compute, [&](const StepTile& t) { return double(t.count) * slice_bytes + double(t.hbm_bytes); });
}

}  // namespace bitline::llm
