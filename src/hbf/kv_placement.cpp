#include "hbf/kv_placement.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/search.hpp"
#include "hbf/system.hpp"

namespace bitline::hbf {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

const Registry<KvLayout>& kv_layouts() {
  static const Registry<KvLayout> r(
      "KV layout", {{"flashaccel",
                     "FlashAccel: hyperpage-packed runs per request (hbf.runtime.kv_span), read a hyperpage at a time, "
                     "selective offload per layer",
                     KvLayout::FlashAccel},
                    {"scatter",
                     "megapage-aligned slices on random megaplanes (a plane-oblivious allocator), read request by request, "
                     "no offload",
                     KvLayout::Scatter},
                    {"paged",
                     "PagedAttention: serving.kv_block_bytes blocks on random megaplanes (where in a megablock: "
                     "serving.kv_block_alignment), read request by request, no offload",
                     KvLayout::Paged}});
  return r;
}

const Registry<KvBlockAlign>& kv_block_aligns() {
  static const Registry<KvBlockAlign> r(
      "KV block alignment",
      {{"block",
        "a pool of fixed-size blocks cut from megablocks: a block starts i x kv_block_bytes into its megablock (a 256 KiB "
        "block on 128 KiB megapages spans exactly 2)",
        KvBlockAlign::Block},
       {"page", "at a random 4 KiB page of a megapage (a block spans one megapage more, ~3 reads for 256 KiB)", KvBlockAlign::Page}});
  return r;
}

const Registry<KvOffload>& kv_offloads() {
  static const Registry<KvOffload> r(
      "KV offload policy",
      {{"mean", "copy the slices of megaplanes above the mean load to HBM (FlashAccel, Data layout: until no plane exceeds the average)",
        KvOffload::Mean},
       {"fill",
        "mean, then keep lowering the most loaded megaplanes while HBM has room and its transfer time stays "
        "within the flash rounds (bitline extension)",
        KvOffload::Fill}});
  return r;
}

KvPlacement::KvPlacement(const System& sys, const KvPolicy& policy) : sys_(sys), p_(policy), layout_(&kv_layout_policy(policy.layout)) {
  k_ = sys.stacks() > 0 ? sys.megaplanes() : 0;
  unit_ = sys.megapage().raw();
  page_ = sys.page_size().raw();
  pages_per_block_ = std::max<int64_t>(1, sys.pages_per_block());
  hbm_bw_ = sys.hbm_bandwidth();
  if (k_ > 0)
    t_round_ = std::max(sys.t_sense(), Bytes(unit_ * k_) / Bandwidth(sys.hbf().timing.interface_bandwidth.raw() * double(sys.stacks())));
}

int64_t KvPlacement::window(int64_t slices_per_stream, int64_t streams) const { return sys_.kv_window(slices_per_stream * streams); }

int64_t KvPlacement::window_loads(std::span<const int64_t> slices, int64_t w, int32_t layer, std::vector<int64_t>& loads) const {
  std::vector<int64_t> diff(size_t(k_) + 1, 0);
  // Adds `v` to the dealing indices [a, a + len) modulo K (len <= K).
  const auto add = [&](int64_t a, int64_t len, int64_t v) {
    if (len <= 0 || v == 0) return;
    a %= k_;
    if (a + len <= k_) {
      diff[size_t(a)] += v;
      diff[size_t(a + len)] -= v;
    } else {
      diff[size_t(a)] += v;
      diff[size_t(k_)] -= v;
      diff[0] += v;
      diff[size_t(a + len - k_)] -= v;
    }
  };
  int64_t total = 0;
  // Each request deals its slices round-robin over its own window of W megaplanes, stream after stream (its cursor
  // continues), so layer l's run starts at window position l x n mod W; the windows of successive requests follow
  // each other round the megaplanes (Runtime::kv_create).
  for (size_t i = 0; i < slices.size(); ++i) {
    const int64_t n = slices[i], start = (int64_t(i) * w) % k_;
    total += n;
    add(start, w, n / w);
    const int64_t rem = n % w, p = (int64_t(layer) * n) % w;
    if (p + rem <= w) {
      add(start + p, rem, 1);
    } else {
      add(start + p, w - p, 1);
      add(start, p + rem - w, 1);
    }
  }
  loads.assign(size_t(k_), 0);
  int64_t run = 0;
  for (int64_t p = 0; p < k_; ++p) {
    run += diff[size_t(p)];
    loads[size_t(p)] = run;
  }
  return total;
}

int64_t KvPlacement::cursor_loads(std::span<const int64_t> slices, int32_t layer, std::vector<int64_t>& loads) const {
  Rng rng = cursor_stream();
  std::vector<int64_t> diff(size_t(k_) + 1, 0);
  const auto add = [&](int64_t a, int64_t len) {
    if (len <= 0) return;
    a %= k_;
    diff[size_t(a)] += 1;
    if (a + len <= k_) {
      diff[size_t(a + len)] -= 1;
    } else {
      diff[size_t(k_)] -= 1;
      diff[0] += 1;
      diff[size_t(a + len - k_)] -= 1;
    }
  };
  int64_t total = 0, all = 0;
  for (int64_t n : slices) {
    const int64_t cursor = scatter_pick(rng);
    total += n;
    all += n / k_;
    add(cursor + int64_t(layer) * n, n % k_);
  }
  loads.assign(size_t(k_), 0);
  int64_t run = 0;
  for (int64_t p = 0; p < k_; ++p) {
    run += diff[size_t(p)];
    loads[size_t(p)] = run + all;
  }
  return total;
}

int64_t KvPlacement::run_loads(const LayerKv& kv, std::vector<int64_t>& loads) const {
  std::vector<int64_t> slices(kv.contexts.size());
  for (size_t i = 0; i < kv.contexts.size(); ++i) slices[i] = kv.contexts[i] / kv.tokens_per_slice;
  switch (*sys_.hbf().runtime.kv_span) {
    case KvSpan::Fit: {
      // The windows are sized for the requests' expected KV (Runtime::kv_create).
      int64_t full_tokens = kv.window_tokens;
      for (int64_t c : kv.contexts) full_tokens = std::max(full_tokens, c);
      return window_loads(slices, window(ceil_div(full_tokens, kv.tokens_per_slice), kv.streams), kv.layer, loads);
    }
    case KvSpan::All:
      return cursor_loads(slices, kv.layer, loads);
  }
  throw std::logic_error("unhandled hbf.runtime.kv_span");
}

Rng KvPlacement::cursor_stream() const { return Rng::derive(p_.seed, "llm.kv.cursor"); }

Rng KvPlacement::scatter_stream(int32_t layer) const { return Rng::derive(p_.seed, fmt::format("llm.kv.scatter.{}", layer)); }

Rng KvPlacement::paged_stream(int32_t layer) const { return Rng::derive(p_.seed, fmt::format("llm.kv.paged.{}", layer)); }

int64_t KvPlacement::offload(std::vector<int64_t>& loads, int64_t total, int64_t budget, int64_t hbm_bytes, int64_t slice_bytes,
                             int64_t& rounds) const {
  // Spec: copy pages of overloaded megaplanes to HBM until no megaplane exceeds the (rounded-up) mean.
  const int64_t cap = ceil_div(total, k_);
  int64_t replicas = 0;
  for (auto& l : loads) {
    const int64_t take = std::min(std::max<int64_t>(0, l - cap), budget);
    l -= take;
    budget -= take;
    replicas += take;
  }
  switch (p_.offload) {
    case KvOffload::Mean:
      break;
    case KvOffload::Fill: {
      if (budget <= 0 || loads.empty() || hbm_bw_.raw() <= 0) break;
      // Lower the level L while the replicas fit and HBM's transfer time stays within L flash rounds.
      const auto cost = [&](int64_t level) {
        int64_t c = 0;
        for (int64_t l : loads) c += std::max<int64_t>(0, l - level);
        return c;
      };
      const auto ok = [&](int64_t level) {
        const int64_t c = cost(level);
        if (c > budget) return false;
        const Time hbm_time = Bytes(hbm_bytes + (replicas + c) * slice_bytes) / hbm_bw_;
        return hbm_time <= t_round_ * double(level);
      };
      int64_t hi = *std::max_element(loads.begin(), loads.end()), lo = 0;  // ok(hi) holds (nothing moves)
      if (ok(hi)) {
        hi = first_true(lo, hi, ok);
        for (auto& l : loads)
          if (l > hi) replicas += l - hi, l = hi;
      }
      break;
    }
  }
  rounds = 0;
  for (int64_t l : loads) rounds = std::max(rounds, l);
  return replicas;
}

// ---- the layouts -------------------------------------------------------------------------------------------------

namespace {

int64_t staged_slices(const LayerKv& kv) {
  int64_t staged = 0;
  for (int64_t c : kv.contexts) staged += (c % kv.tokens_per_slice) * kv.token_bytes;
  return staged;
}

int64_t full_slices(const LayerKv& kv) {
  int64_t n = 0;
  for (int64_t c : kv.contexts) n += c / kv.tokens_per_slice;
  return n;
}

/// Loads' largest and mean.
void load_stats(const std::vector<int64_t>& loads, int64_t total, LayerReads& r) {
  for (int64_t l : loads) r.max_load_before = std::max(r.max_load_before, l);
  r.mean_load = loads.empty() ? 0.0 : double(total) / double(loads.size());
}

/// The layouts read request by request (scatter, paged): `emit(read)` calls read(dealing index, bytes) for each read in
/// queue order and returns the bytes left in HBM; counts the loads and cuts a tile every `queue` reads. No offload.
template <class Emit>
LayerReads queued_reads(const KvPlacement& p, std::vector<int64_t>& loads, KvReadSink* sink, int64_t queue, Emit&& emit) {
  LayerReads r;
  loads.assign(size_t(p.megaplanes()), 0);
  int64_t in_tile = 0;
  r.staged_bytes = emit([&](int64_t d, int64_t bytes) {
    ++loads[size_t(d)], ++r.flash_reads;
    if (!sink) return;
    sink->read(d, bytes);
    if (++in_tile == queue) sink->end_tile(), in_tile = 0;
  });
  if (sink && in_tile > 0) sink->end_tile();
  load_stats(loads, r.flash_reads, r);
  r.rounds = r.max_load_before;
  return r;
}

/// FlashAccel: each request's full slices dealt round-robin inside its window (GroupWrite, hyperpage by hyperpage),
/// the layer's loads lowered by selective offload, read a hyperpage (a round over the megaplanes) at a time.
class FlashAccelLayout final : public KvLayoutPolicy {
 public:
  KvLayout kind() const override { return KvLayout::FlashAccel; }
  bool arranges() const override { return true; }
  int64_t max_reads(const KvPlacement&, const LayerKv& kv) const override { return full_slices(kv); }
  LayerReads place(const KvPlacement& p, const LayerKv& kv, std::vector<int64_t>& loads, KvReadSink* sink,
                   const KvTiling& tiling) const override {
    LayerReads r;
    r.staged_bytes = staged_slices(kv);
    const int64_t total = p.run_loads(kv, loads);
    load_stats(loads, total, r);
    r.hbm_replicas = p.offload(loads, total, kv.replica_budget, r.staged_bytes, kv.tokens_per_slice * kv.token_bytes, r.rounds);
    r.flash_reads = total - r.hbm_replicas;
    if (!sink) return r;
    const int64_t per_tile = std::max<int64_t>(1, tiling.hyperpages);
    const int64_t slice_bytes = kv.tokens_per_slice * kv.token_bytes;
    for (int64_t r0 = 0; r0 < r.rounds; r0 += per_tile) {
      for (int64_t round = r0; round < std::min(r.rounds, r0 + per_tile); ++round) sink->read_round(loads, round, slice_bytes);
      sink->end_tile();
    }
    return r;
  }
  void write(KvWriter& w) const override { w.write_runs(); }
};

/// Scatter: every full slice on a random megaplane (a plane-oblivious allocator), no offload.
class ScatterLayout final : public KvLayoutPolicy {
 public:
  KvLayout kind() const override { return KvLayout::Scatter; }
  int64_t max_reads(const KvPlacement&, const LayerKv& kv) const override { return full_slices(kv); }
  LayerReads place(const KvPlacement& p, const LayerKv& kv, std::vector<int64_t>& loads, KvReadSink* sink,
                   const KvTiling& tiling) const override {
    Rng rng = p.scatter_stream(kv.layer);
    const int64_t slice_bytes = kv.tokens_per_slice * kv.token_bytes;
    return queued_reads(p, loads, sink, tiling.queue, [&](auto&& read) {
      for (int64_t c : kv.contexts)
        for (int64_t j = 0; j < c / kv.tokens_per_slice; ++j) read(p.scatter_pick(rng), slice_bytes);
      return staged_slices(kv);
    });
  }
  void write(KvWriter& w) const override { w.write_scattered(); }
};

/// Paged: PagedAttention blocks of whole tokens, each at a random block position of a random megaplane, read piece
/// by piece (a block over megapage boundaries costs a read per megapage); the partial last block in HBM; no offload.
class PagedLayout final : public KvLayoutPolicy {
 public:
  KvLayout kind() const override { return KvLayout::Paged; }
  int64_t max_reads(const KvPlacement& p, const LayerKv& kv) const override {
    int64_t blocks = 0;
    for (int64_t c : kv.contexts) blocks += c / kv.block_tokens;
    const int64_t megapage = std::max<int64_t>(1, p.megapage_bytes());
    return checked_mul(blocks, kv.block_tokens * kv.token_bytes / megapage + 2, "KV reads of a layer");
  }
  LayerReads place(const KvPlacement& p, const LayerKv& kv, std::vector<int64_t>& loads, KvReadSink* sink,
                   const KvTiling& tiling) const override {
    return queued_reads(p, loads, sink, tiling.queue,
                        [&](auto&& read) { return p.paged_blocks(kv.contexts, kv.token_bytes, kv.block_tokens, kv.layer, read); });
  }
  bool whole_blocks() const override { return true; }
  void write(KvWriter& w) const override { w.write_blocks(); }
};

}  // namespace

const KvLayoutPolicy& kv_layout_policy(KvLayout k) {
  static const FlashAccelLayout flashaccel;
  static const ScatterLayout scatter;
  static const PagedLayout paged;
  switch (k) {
    case KvLayout::FlashAccel:
      return flashaccel;
    case KvLayout::Scatter:
      return scatter;
    case KvLayout::Paged:
      return paged;
  }
  throw std::logic_error("unhandled KV layout");
}

}  // namespace bitline::hbf
