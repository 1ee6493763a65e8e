// Where one GPU's weights and KV cache live, and the reads a decode step makes.
//
// HBM-only GPU (H200): everything is in HBM; each kernel reads its bytes.
//
// HBF GPU (CSI, CLI), following the FlashAccel runtime (hbf/runtime.hpp):
//  - Weights: one weight object cut into megapages and dealt round-robin over
//    the megaplanes (System::dealt) in the order of hbf.runtime.weight_layout:
//    execution order (FlashAccel) or the checkpoint's declaration order (names
//    sorted, as safetensors lists them). A kernel reads its tensors' megapages
//    in execution order, a tile of tile_hyperpages x K megapages at a time.
//    MoE kernels read the experts the batch touches (the first ones of the
//    GPU's experts: the count is what routing decides, see step.hpp).
//  - KV (serving.kv_layout = flashaccel): a layer's slice of a request is
//    cut into megapage-aligned slices of floor(megapage / bytes per token)
//    tokens; each request's full slices of a layer are a run of consecutive
//    positions of its window (hbf.runtime.kv_span: fit = the fewest
//    megaplanes that hold its expected KV in whole megablocks, windows of
//    successive requests one after the other; all = every megaplane from a
//    seeded random cursor), the layers one after the other, exactly as
//    Runtime::group_write places them. The partial last slice of every layer
//    is staged in HBM. For
//    every layer, selective offload (GroupArrange) copies the slices above
//    ceil(mean load) of overloaded megaplanes to HBM, within the HBM left for
//    replicas. Attention reads a layer in rounds (round r: the r-th slice on
//    every megaplane holding r or more), one hyperpage per tile; staged
//    slices and replicas come from HBM in the same tiles.
//  - KV (scatter): every slice on a random megaplane (a plane-oblivious paged
//    allocator), read request by request, no offload.
//  - KV (paged): PagedAttention as it is: blocks of serving.kv_block_bytes
//    (one layer's KV of a whole number of tokens), each in a flash block of a
//    random megaplane, at a block position of a pool cut from megablocks
//    (serving.kv_block_alignment = block; page: at a random page offset), so a
//    block's bytes run over consecutive megapages of its megaplane, each one
//    a read; the partial last block of a request stays in HBM; read request
//    by request; no offload.
//    scatter and paged: the attention kernel queues all its reads at once
//    (one tile; the megaplanes drain their queues in parallel, bounded by
//    page buffers, SRAM and the prefetch window), or with
//    hbf.runtime.kv_read_queue = tile in tiles of K megapages.
// Every KV placement decision (windows, loads, draws, offload, the reads' order) is the layout's class
// (hbf::KvLayoutPolicy, held by the shared hbf::KvPlacement), the object hbf::Runtime uses too
// (tests/llm/test_placement.cpp compares the two paths).
// The reads are produced as a TilePlan: tiles of flash megapages and HBM
// bytes with the kernel time that overlaps them; timing.hpp times a plan.
#pragma once

#include <cstdint>
#include <vector>

#include "hbf/kv_placement.hpp"
#include "hbf/system.hpp"
#include "llm/model.hpp"
#include "llm/step.hpp"

namespace bitline::llm {

/// Most flash reads (units) one step's plan holds: 2^25 units of 8 bytes are 256 MB, and a tile indexes
/// units with 32 bits. A step past it (a huge batch times long contexts) is refused before it is built,
/// naming the batch and the context (docs/commands.md, "Hardened inputs").
inline constexpr int64_t kMaxPlanUnits = int64_t(1) << 25;

struct FlashUnit {
  uint32_t megaplane = 0;
  uint32_t bytes = 0;
};

struct StepTile {
  uint32_t first = 0, count = 0;  // flash units [first, first + count) of the plan
  int64_t hbm_bytes = 0;          // read from HBM during the tile
  Time compute{};                 // kernel time overlapping the tile's reads (or the collective / overhead)
  Part part = Part::Compute;
  uint32_t op = 0;
  bool gate = false;      // prefetch of this tile and the ones after it waits until it starts (router-driven experts)
  bool streamed = false;  // `compute` is a weight-streaming kernel's time: accounted as the weights' read, not as math
};

struct TilePlan {
  std::vector<FlashUnit> units;
  std::vector<StepTile> tiles;
  // HBF: per KV op placed, its layer and the HBM replica slices of the layer's placement (the step's one placement
  // of that layer: GroupArrange's bytes read them, Server::arranged_bytes)
  std::vector<std::pair<int32_t, int64_t>> kv_replicas;
  void clear() {
    units.clear();
    tiles.clear();
    kv_replicas.clear();
  }
};

struct MemoryOptions {
  hbf::WeightLayoutChoice weight_layout = hbf::WeightLayoutChoice::named("execution");  // HBF
  // HBF: the KV placement (serving.kv_layout, kv_offload, seed, kv_block_bytes, kv_block_alignment), as the runtime
  // takes it.
  hbf::KvPolicy kv;
  int64_t tile_hyperpages = 1;
  uint64_t seed = 1;
  Time kernel_overhead{};
  // HBF: fraction of every weight tensor held as a copy in HBM (serving.hbm_weight_cache / the GPU's weights);
  // a kernel reads that part of its megapages from HBM while the rest streams from flash.
  double weight_cache_fraction = 0;
  // HBF, MoE experts (serving.expert_prefetch): false = static (every local expert read), true = router-driven.
  bool router_prefetch = false;
};

/// Per-layer KV statistics of the HBF placement (for reports and tests).
struct KvLayerStats {
  int64_t flash_units = 0, hbm_replicas = 0, rounds = 0;
  int64_t max_load_before = 0;
  double mean_load = 0;
  int64_t staged_bytes = 0;
};

class GpuMemory {
 public:
  /// `sys` with hbf.stacks = 0 is an HBM-only GPU.
  GpuMemory(const hbf::System& sys, const ModelConfig& m, const GpuWeights& w, const MemoryOptions& opt);

  bool has_hbf() const { return k_ > 0; }
  /// K: megaplanes.
  int64_t megaplanes() const { return k_; }
  /// Weight megapages in flash and the most any megaplane holds.
  int64_t weight_units() const { return weight_units_; }
  int64_t weight_units_max_per_megaplane() const { return k_ > 0 ? (weight_units_ + k_ - 1) / k_ : 0; }
  /// Tokens of one layer's KV per megapage slice (HBF).
  int64_t tokens_per_slice(int64_t kv_token_layer_bytes) const;
  /// Tokens of one layer's KV per PagedAttention block (HBF, kv_layout = paged).
  int64_t tokens_per_block(int64_t kv_token_layer_bytes) const;

  /// Appends the tiles of ops [first, first + count) of `g` to `plan`.
  void append_ops(const StepGraph& g, uint32_t first, uint32_t count, TilePlan& plan) const;
  /// Full KV slices of layer `layer` on each megaplane (by dealing index) in the flashaccel layout, before
  /// offload: what GroupWrite produces (hbf.runtime.kv_span); returns the layer's full slices.
  int64_t kv_loads(const StepGraph& g, int32_t layer, std::vector<int64_t>& loads) const;
  /// The placement of layer `layer`'s KV for the requests of `g` (HBF); with `flash_loads`, also the megapages each
  /// megaplane (by dealing index) senses for the layer after offload (what the runtime's per-stream loads must equal).
  KvLayerStats kv_layer_stats(const StepGraph& g, int32_t layer, std::vector<int64_t>* flash_loads = nullptr) const;
  /// The KV placement policy (shared with hbf::Runtime).
  const hbf::KvPlacement& kv_placement() const { return kv_; }
  /// Dealing positions of the tensors' first megapages (HBF), in GpuWeights order.
  const std::vector<int64_t>& tensor_positions() const { return pos_; }
  const MemoryOptions& options() const { return opt_; }

 private:
  void weight_tiles(const StepGraph& g, const Op& op, uint32_t op_index, TilePlan& plan) const;
  void kv_tiles(const StepGraph& g, const Op& op, uint32_t op_index, TilePlan& plan) const;
  /// Layer `layer`'s KV of `g` as the layout policies take it.
  hbf::LayerKv layer_kv(const StepGraph& g, int32_t layer) const;
  void embed_tiles(const Op& op, uint32_t op_index, TilePlan& plan) const;

  const hbf::System& sys_;
  const ModelConfig& m_;
  const GpuWeights& w_;
  MemoryOptions opt_;
  hbf::KvPlacement kv_;  // where KV slices go and what selective offload replicates: the runtime's policy object
  int64_t k_ = 0, unit_ = 0, tile_units_ = 0;
  Bandwidth hbm_bw_{};
  std::vector<uint32_t> deal_;   // dealing index -> megaplane
  std::vector<int64_t> pos_;     // per tensor: dealing position of its first megapage
  std::vector<int64_t> nunits_;  // per tensor: megapages
  int64_t weight_units_ = 0;
};

}  // namespace bitline::llm
