// KV placement, written once for the two users of a placement: the FTL-less runtime (hbf::Runtime, which stores and
// moves real KV objects) and the serving model (llm::GpuMemory, which derives a decode step's per-layer plane loads and
// reads without building objects).
//
// Each KV layout (serving.kv_layout) is one class implementing KvLayoutPolicy, built by name through the registry
// (kv_layouts() names them, kv_layout_policy() gives the class of a name):
//   flashaccel  hyperpage-packed runs per request inside its window, read a hyperpage at a time, selective offload
//   scatter     megapage slices on random megaplanes, read request by request, no offload
//   paged       PagedAttention blocks on random megaplanes at random block positions, no offload
// The serving model asks a layout for a layer's loads and reads (place); the runtime's GroupWrite asks it which of its
// write mechanisms applies (write) and whether objects are cut into blocks (whole_blocks). Both hold one KvPlacement,
// which keeps what the layouts share: the seeded streams, the windows and the closed forms below, so a layout cannot
// mean one thing in the runtime and another in the serving model:
//
//   window         the megaplanes a request's KV is dealt over (hbf.runtime.kv_span): kv_create / the model's loads
//   window_loads   flashaccel: the per-layer loads that GroupWrite's round-robin inside each window produces
//                  (the closed form of the runtime's per-request cursors; tests compare them megaplane by megaplane)
//   scatter_*      scatter: the random megaplane of each slice, one seeded stream per layer (GroupWrite draws from
//                  it in the same order as the model)
//   paged_*        paged: PagedAttention blocks at random page offsets of random megaplanes, one seeded stream per
//                  layer (GroupWrite draws a stream's blocks from it in the same order as the model) and each block
//                  cut at megapage boundaries into the reads it costs
//   offload        selective offload (GroupArrange): mean, or fill (bitline extension); the runtime applies it per
//                  group or per stream, the model per layer
//
// Loads are indexed by dealing index (System::dealt), as the layouts deal.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/registry.hpp"
#include "core/rng.hpp"
#include "core/units.hpp"

namespace bitline::hbf {

class System;

/// serving.kv_layout (table in hbf/kv_placement.cpp).
enum class KvLayout { FlashAccel, Scatter, Paged };
const Registry<KvLayout>& kv_layouts();
/// serving.kv_offload (table in hbf/kv_placement.cpp, KvPlacement::offload).
enum class KvOffload { Mean, Fill };
const Registry<KvOffload>& kv_offloads();
/// serving.kv_block_alignment (table in hbf/kv_placement.cpp, KvPlacement::paged_pick): where a paged block may start.
enum class KvBlockAlign { Block, Page };
const Registry<KvBlockAlign>& kv_block_aligns();

/// The policy a KvPlacement applies (the serving section's kv_layout, kv_offload, seed and kv_block_bytes).
struct KvPolicy {
  KvLayout layout = KvLayout::FlashAccel;
  KvOffload offload = KvOffload::Mean;
  uint64_t seed = 1;
  int64_t block_bytes = int64_t(256) << 10;  // paged: bytes of a PagedAttention block
  KvBlockAlign align = KvBlockAlign::Block;  // paged: blocks cut from megablocks (block), or at any page (page)
};

class KvLayoutPolicy;

/// One layer's KV in a decode step, as the serving model asks a layout about it.
struct LayerKv {
  std::span<const int64_t> contexts;  // tokens each request attends over, in batch order
  int64_t token_bytes = 0;            // KV of one token of the layer (on one GPU)
  int64_t tokens_per_slice = 0;       // tokens of a full slice (a megapage)
  int64_t block_tokens = 0;           // paged: tokens of a PagedAttention block
  int64_t window_tokens = 0;          // flashaccel, kv_span = fit: the context each window was sized for (at least its own)
  int64_t streams = 0;                // streams (layers) of a request's KV object
  int32_t layer = 0;
  int64_t replica_budget = 0;  // flashaccel: full slices the layer may copy to HBM (selective offload)
};

/// Where a layer's KV is read from, as its layout placed it.
struct LayerReads {
  int64_t flash_reads = 0;      // reads from flash (megapages, or the pieces of blocks)
  int64_t hbm_replicas = 0;     // full slices copied to HBM by selective offload
  int64_t staged_bytes = 0;     // partial slices or blocks still in HBM
  int64_t rounds = 0;           // the largest load after offload
  int64_t max_load_before = 0;  // the largest load before offload
  double mean_load = 0;
};

/// Receives a layer's flash reads in the order the attention kernel queues them, cut into tiles.
class KvReadSink {
 public:
  virtual void read(int64_t dealing_index, int64_t bytes) = 0;
  /// One round of the flashaccel layout: a read of `bytes` from every dealing index whose load exceeds `round`, in
  /// index order (the same reads as calling read() for each; a sink may take them without a call per read).
  virtual void read_round(std::span<const int64_t> loads, int64_t round, int64_t bytes) {
    for (size_t d = 0; d < loads.size(); ++d)
      if (loads[d] > round) read(int64_t(d), bytes);
  }
  virtual void end_tile() = 0;

 protected:
  ~KvReadSink() = default;
};

/// How a kernel's reads are cut into tiles (the serving model's options).
struct KvTiling {
  int64_t hyperpages = 1;     // flashaccel: flash rounds per tile
  int64_t queue = INT64_MAX;  // scatter, paged: reads per tile (hbf.runtime.kv_read_queue)
};

/// The runtime's write mechanisms, one per kind of layout (hbf::Runtime implements them; GroupWrite calls the one
/// its layout names through KvLayoutPolicy::write).
class KvWriter {
 public:
  virtual void write_runs() = 0;       // full slices in hyperpages, round-robin inside each request's window
  virtual void write_scattered() = 0;  // each full slice on its stream's next random megaplane
  virtual void write_blocks() = 0;     // whole blocks at random block positions of random megaplanes

 protected:
  ~KvWriter() = default;
};

class KvPlacement {
 public:
  /// `sys` must outlive the placement. A system without HBF stacks gives a placement with no megaplanes.
  KvPlacement(const System& sys, const KvPolicy& policy);

  const KvPolicy& policy() const { return p_; }
  /// The layout's class (serving.kv_layout).
  const KvLayoutPolicy& layout() const { return *layout_; }
  int64_t megaplanes() const { return k_; }
  int64_t megapage_bytes() const { return unit_; }
  /// flashaccel: a layer's full slices on each megaplane before offload, as GroupWrite deals them
  /// (hbf.runtime.kv_span: window_loads for fit, cursor_loads for all); returns the layer's full slices.
  int64_t run_loads(const LayerKv& kv, std::vector<int64_t>& loads) const;

  /// Width of the window of a request of `slices_per_stream` full slices in each of its `streams` streams
  /// (hbf.runtime.kv_span: all = K, fit = the fewest megaplanes that hold them in whole megablocks).
  int64_t window(int64_t slices_per_stream, int64_t streams) const;

  /// flashaccel: the full slices of stream (layer) `layer` on each megaplane, by dealing index, for requests that
  /// hold `slices[i]` full slices in every stream and were given windows of `window` megaplanes one after the other
  /// from dealing index 0 (kv_span = fit, Runtime::kv_create): each request deals its slices round-robin inside its
  /// window, stream after stream, as GroupWrite does. Returns the layer's slices.
  int64_t window_loads(std::span<const int64_t> slices, int64_t window, int32_t layer, std::vector<int64_t>& loads) const;
  /// flashaccel with kv_span = all: each request deals over all K megaplanes from a seeded random cursor (requests
  /// written at different times), the i-th request from the i-th draw of cursor_stream(). Returns the layer's slices.
  /// (The runtime's GroupWrite also keeps one slice per megaplane per hyperpage, which this closed form does not.)
  int64_t cursor_loads(std::span<const int64_t> slices, int32_t layer, std::vector<int64_t>& loads) const;
  /// kv_span = all: the requests' starting cursors (dealing indices), drawn in creation order with scatter_pick.
  Rng cursor_stream() const;

  /// scatter: the stream of random megaplanes of layer `layer`'s slices (request by request, slice by slice).
  Rng scatter_stream(int32_t layer) const;
  /// scatter: the dealing index of the next slice drawn from `s`.
  int64_t scatter_pick(Rng& s) const { return int64_t(s.below(uint64_t(k_))); }

  /// paged: the PagedAttention placement of layer `layer`'s KV of requests with `contexts` tokens of `token_bytes`
  /// each: each request's KV is cut into blocks of `block_tokens` tokens; a paged allocator that knows nothing of
  /// planes puts each block in a flash block of a random megaplane at a random page offset, so the block's bytes run
  /// over consecutive megapages of that megaplane, ceil((offset + bytes) / megapage) reads. Calls emit(dealing index,
  /// bytes) per megapage read, request by request; returns the bytes of the partial last blocks (in HBM).
  template <class Emit>
  int64_t paged_blocks(std::span<const int64_t> contexts, int64_t token_bytes, int64_t block_tokens, int32_t layer, Emit&& emit) const {
    const int64_t block = block_tokens * token_bytes;
    Rng rng = paged_stream(layer);
    int64_t staged = 0;
    for (int64_t c : contexts) {
      for (int64_t j = 0; j < c / block_tokens; ++j) {
        const PagedSpot at = paged_pick(rng, block);
        paged_cut(at.offset, block, [&](int64_t b) { emit(at.megaplane, b); });
      }
      staged += (c % block_tokens) * token_bytes;
    }
    return staged;
  }
  /// paged: the stream of layer `layer`'s block placements (request by request, block by block; the runtime's
  /// GroupWrite draws a stream's blocks from it in the same order).
  Rng paged_stream(int32_t layer) const;
  /// paged: where the next block of `block` bytes drawn from `s` goes: a random megaplane (dealing index), then its
  /// offset (bytes) inside the megapage it starts in. kv_block_alignment = block: the allocator's pool cuts each
  /// megablock into whole blocks one after the other, so a block starts at a random one of those positions
  /// (i x block bytes into the megablock; a 256 KiB block on 128 KiB megapages is always megapage-aligned);
  /// page: at a random page of the megapage (a page-granular allocator that knows nothing of megapages).
  struct PagedSpot {
    int64_t megaplane = 0, offset = 0;
  };
  PagedSpot paged_pick(Rng& s, int64_t block) const {
    PagedSpot at;
    at.megaplane = int64_t(s.below(uint64_t(k_)));
    if (p_.align == KvBlockAlign::Page) {
      at.offset = int64_t(s.below(uint64_t(std::max<int64_t>(1, unit_ / page_)))) * page_;
    } else {
      const int64_t per_megablock = std::max<int64_t>(1, unit_ * pages_per_block_ / std::max<int64_t>(1, block));
      at.offset = int64_t(s.below(uint64_t(per_megablock))) * block % unit_;
    }
    return at;
  }
  /// paged: a block of `bytes` starting `offset` bytes into a megapage runs over consecutive megapages: calls
  /// piece(bytes) for each, in order (ceil((offset + bytes) / megapage) pieces; the first megapage - offset bytes).
  template <class Piece>
  void paged_cut(int64_t offset, int64_t bytes, Piece&& piece) const {
    for (int64_t left = bytes; left > 0; offset = 0) {
      const int64_t b = std::min(left, unit_ - offset);
      piece(b);
      left -= b;
    }
  }

  /// Selective offload (GroupArrange) of one scope (a layer, or a whole group) whose flash loads are `loads`
  /// (lowered in place) and `total` slices: copies the slices above ceil(mean) of overloaded megaplanes to HBM
  /// (spec), and with kv_offload = fill keeps lowering the most loaded megaplanes to a level L while the replicas fit
  /// and the scope's HBM bytes (`hbm_bytes` so far plus the replicas at `slice_bytes`) move within L flash rounds.
  /// At most `budget` replicas. Returns the replicas; `rounds` = the largest load left.
  int64_t offload(std::vector<int64_t>& loads, int64_t total, int64_t budget, int64_t hbm_bytes, int64_t slice_bytes,
                  int64_t& rounds) const;
  /// One flash round of a layer read: max(tR + command cycles, a hyperpage over the stacks' interfaces).
  Time round_time() const { return t_round_; }

 private:
  const System& sys_;
  KvPolicy p_;
  const KvLayoutPolicy* layout_;
  int64_t k_ = 0, unit_ = 0, page_ = 0, pages_per_block_ = 1;
  Time t_round_{};
  Bandwidth hbm_bw_{};
};

/// One KV layout (serving.kv_layout). Contract: stateless (the system, the seeded streams and the closed forms are the
/// KvPlacement's, passed in); place() gives the serving model a layer's loads by dealing index and, with a sink, each
/// read in the order the attention kernel queues it; the runtime asks whole_blocks() when a KV object is created and
/// write() from GroupWrite.
class KvLayoutPolicy {
 public:
  virtual ~KvLayoutPolicy() = default;
  virtual KvLayout kind() const = 0;
  /// Upper bound on the layer's flash reads (the serving model checks it against its plan limit before place()).
  virtual int64_t max_reads(const KvPlacement& p, const LayerKv& kv) const = 0;
  /// The layer's flash loads per dealing index (after offload where the layout has it) into `loads`; with `sink`,
  /// also every read in the order the kernel queues it, tiles cut by `tiling`.
  virtual LayerReads place(const KvPlacement& p, const LayerKv& kv, std::vector<int64_t>& loads, KvReadSink* sink,
                           const KvTiling& tiling) const = 0;
  /// Whether KV objects are written in whole PagedAttention blocks (serving.kv_block_bytes), else in full megapage slices.
  virtual bool whole_blocks() const { return false; }
  /// Whether GroupArrange (selective offload: the overloaded megaplanes' pages copied to HBM) runs after each write
  /// phase, so that a step pays for the copies of its new KV.
  virtual bool arranges() const { return false; }
  /// GroupWrite: calls the runtime's write mechanism for this layout.
  virtual void write(KvWriter& w) const = 0;
};

/// The class of a registered layout (kv_layouts() names them).
const KvLayoutPolicy& kv_layout_policy(KvLayout k);

}  // namespace bitline::hbf
