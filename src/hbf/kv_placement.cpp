#include "hbf/kv_placement.hpp"

#include <fmt/format.h>

#include <algorithm>

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

KvPlacement::KvPlacement(const System& sys, const KvPolicy& policy) : sys_(sys), p_(policy) {
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
        while (hi - lo > 1) {
          const int64_t mid = lo + (hi - lo) / 2;
          (ok(mid) ? hi : lo) = mid;
        }
        if (ok(lo)) hi = lo;
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

}  // namespace bitline::hbf
